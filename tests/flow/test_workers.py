"""Horizontal extract workers against a scripted model, on real NATS and S3 with every
worker a real process: pages spread over workers, and long work keeps its message."""

import asyncio
from collections import Counter

from shared.contracts import subjects
from shared.infra.service import PULL_IDLE_S
from tests.support.flows import (
    is_vision,
    line_objects,
    model_settings,
    page_of,
    reply,
    requests_of,
    wait_extracted,
    wait_pulling,
    wait_started,
)
from tests.support.model_server import ModelReply, ScriptedModelServer
from tests.support.pdfs import add_notes_page, make_pdf
from tests.support.stack import Stack, stack, stream_messages


async def start_two_workers(s: Stack) -> None:
    """Two extract processes, one page in flight each, both pulling before anything is sent."""
    workers = [s.start("extract", tag=tag, args=["--concurrency", "1"]) for tag in ("-1", "-2")]
    await wait_started(workers)
    await wait_pulling(s.settings, "extract", workers=2)


async def test_two_workers_split_the_pages_each_extracted_once(settings):
    """Two extract worker processes share one consumer: a 12-page job's pages are split between them and no page is extracted twice."""
    pages = 12
    slow_faithful = lambda req: reply(line_objects(req), delay_s=0.3)  # noqa: E731
    with ScriptedModelServer(slow_faithful) as server:
        settings = model_settings(settings, server)
        with stack(settings, "ingest") as s:
            await start_two_workers(s)
            job_id = s.submit(make_pdf(*[add_notes_page] * pages))
            extracted = await wait_extracted(settings, job_id, pages, timeout=90)
            events = await stream_messages(settings, subjects.PAGE_EXTRACTED, expect=pages)

    workers = Counter(e["worker_id"] for e in extracted.values())
    assert len(workers) == 2 and min(workers.values()) >= 2, workers
    assert all(e["status"] == "ok" for e in extracted.values())
    per_page = Counter(page_of(r) for r in requests_of(server, is_vision))
    assert per_page == Counter(range(1, pages + 1)), "every page reached the model exactly once"
    assert sorted(e["page_number"] for e in events) == list(range(1, pages + 1))


async def test_model_call_longer_than_ack_wait_is_not_redelivered(settings):
    """A model call three times longer than the ack deadline keeps its message alive (in-progress acks): the idle second worker never gets the page again."""
    settings = settings.model_copy(update={"ack_wait_s": 1.0, "in_progress_interval_s": 0.3})
    slow_faithful = lambda req: reply(line_objects(req), delay_s=3.0)  # noqa: E731
    with ScriptedModelServer(slow_faithful) as server:
        settings = model_settings(settings, server)
        with stack(settings, "ingest") as s:
            await start_two_workers(s)
            job_id = s.submit(make_pdf(add_notes_page))
            extracted = await wait_extracted(settings, job_id, 1, timeout=60)
            events = await stream_messages(settings, subjects.PAGE_EXTRACTED, expect=1)

    assert extracted[1]["status"] == "ok"
    assert [page_of(r) for r in requests_of(server, is_vision)] == [1], "the page was redelivered"
    assert [e["page_number"] for e in events] == [1]


async def test_a_slow_page_does_not_hold_up_the_others(settings):
    """With two pages in flight, a page whose model call is slow holds one slot only: the
    other slot works through the rest of the job meanwhile, so the slow page's event comes
    last (a worker waiting for a whole fetched batch would announce it second)."""
    pages = 6

    def page_one_slow(request: dict) -> ModelReply:
        return reply(line_objects(request), delay_s=8.0 if page_of(request) == 1 else 0.1)

    with ScriptedModelServer(page_one_slow) as server:
        settings = model_settings(settings, server)
        with stack(settings, "ingest") as s:
            worker = s.start("extract", args=["--concurrency", "2"])
            await wait_started([worker])
            await wait_pulling(settings, "extract", workers=1)
            job_id = s.submit(make_pdf(*[add_notes_page] * pages))
            await wait_extracted(settings, job_id, pages, timeout=90)
            events = await stream_messages(settings, subjects.PAGE_EXTRACTED, expect=pages)

    order = [e["page_number"] for e in events]
    assert sorted(order) == list(range(1, pages + 1))
    assert order[-1] == 1, order


async def test_idle_services_log_no_errors(settings):
    """Pull loops that find nothing for longer than their idle wait renew their pulls
    quietly: no traceback or ERROR in any service's log."""
    with stack(settings, "ingest", "extract", "coverage", "verify", "report") as s:
        await wait_started([p for name, p in s.procs.items() if name != "ingest"])
        await asyncio.sleep(PULL_IDLE_S * 1.5)
        logs = s.logs()
    assert "Traceback" not in logs and " ERROR " not in logs, logs
