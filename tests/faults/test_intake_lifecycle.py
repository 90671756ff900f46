"""No job is stuck: ingest SIGKILLed at each step of an intake (once it has marked the intake
under way, once the job record exists, while it announces the pages) leaves jobs that end,
each page once, by report's supervision; a job that never got its record keeps nothing."""

import asyncio
import contextlib
import os
import time
from collections.abc import Awaitable, Callable

import httpx
import pymupdf
import pytest

from shared.infra.settings import Settings
from shared.infra.storage import Keys, ObjectStore
from tests.support.jobstore import first_kv_key, kv_keys
from tests.support.stack import Stack, nats_client, stack, stream_messages

pytestmark = pytest.mark.slow

PAGES = 600
# Short, so that report's supervision takes an intake for abandoned soon after the kill.
INTAKE_TIMEOUT_S = 4.0


def large_set() -> bytes:
    """Many light pages, and one picture that cannot be compressed: storing the source takes
    long enough for a kill to land between the intake's first mark and its job record."""
    doc = pymupdf.open()
    for n in range(PAGES):
        doc.new_page(width=612, height=792).insert_text((72, 72), f"SHEET A-{n + 1:03d}")
    side = 2400
    noise = pymupdf.Pixmap(pymupdf.csRGB, side, side, os.urandom(side * side * 3), 0)
    doc[0].insert_image(pymupdf.Rect(72, 100, 540, 568), pixmap=noise)
    return doc.tobytes()


async def kill_when(s: Stack, pdf: bytes, seen: Callable[[Settings], Awaitable[None]]) -> str:
    """Upload ``pdf`` and SIGKILL ingest the moment ``seen`` returns; ingest is started anew.
    The id of the job whose intake was cut short."""
    before = set(await kv_keys(s.settings, "intake"))
    upload = asyncio.create_task(asyncio.to_thread(s.upload, pdf))
    try:
        await asyncio.wait_for(seen(s.settings), timeout=60)
    finally:
        s.procs["ingest"].kill()
    with contextlib.suppress(httpx.HTTPError):
        await upload
    [cut] = set(await kv_keys(s.settings, "intake")) - before
    s.start("ingest")
    s.wait_ready()
    return cut.split(".", 1)[1]


def announcements(count: int) -> Callable[[Settings], Awaitable[None]]:
    async def seen(settings: Settings) -> None:
        async with nats_client(settings) as nc:
            arrived = asyncio.Event()
            got = 0

            async def one(_msg) -> None:  # type: ignore[no-untyped-def]
                nonlocal got
                got += 1
                if got >= count:
                    arrived.set()

            await nc.subscribe(settings.subject("page.extract"), cb=one)
            await arrived.wait()

    return seen


async def wait_cleared(settings: Settings, timeout: float, s: Stack) -> None:
    deadline = time.monotonic() + timeout
    while await kv_keys(settings, "intake"):
        if time.monotonic() > deadline:
            raise AssertionError(f"an intake was never cleared\n{s.logs()}")
        await asyncio.sleep(0.5)


async def test_ingest_killed_at_each_step_of_an_intake_leaves_no_job_stuck(settings):
    """Killed after marking the intake, after the job record, and mid-announcement: each
    job with a record ends with its report (every page once, the pages never queued failed
    with the reason); one without keeps no source."""
    settings = settings.model_copy(update={"intake_timeout_s": INTAKE_TIMEOUT_S})
    pdf = large_set()
    steps = {
        "after the intake mark": first_kv_key("intake"),
        "after the job record": first_kv_key("job"),
        "during announcements": announcements(PAGES // 3),
    }
    with stack(settings, "ingest", "report") as s:
        jobs = [await kill_when(s, pdf, seen) for seen in steps.values()]
        recorded = {key.split(".", 1)[1] for key in await kv_keys(settings, "job")}
        queued = await stream_messages(settings, "page.extract", expect=PAGES, timeout=2)
        midway = sum(m["job_id"] == jobs[2] for m in queued)
        # Each kill landed where it was meant to: before the record, after it, mid-way.
        assert jobs[0] not in recorded and {jobs[1], jobs[2]} <= recorded
        assert PAGES // 3 <= midway < PAGES, f"{midway} of {PAGES} pages queued before the kill"
        for job_id in jobs[1:]:
            report = s.wait_report(job_id, timeout=INTAKE_TIMEOUT_S + 60)
            assert [p["page_number"] for p in report["pages"]] == list(range(1, PAGES + 1))
            reasons = {f["reason"] for f in report["summary"]["failed_pages"]}
            assert len(report["summary"]["failed_pages"]) == PAGES, report["summary"]
            assert all("intake did not finish" in r for r in reasons), reasons
        await wait_cleared(settings, 60, s)
        assert not await ObjectStore(settings).list_keys(Keys.job(jobs[0])), "a source was kept"
