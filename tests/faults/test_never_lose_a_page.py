"""Break things on purpose: every page still ends in the report, exactly once."""

import asyncio
import time

import httpx
import nats
import pytest

from shared.infra.storage import ObjectStore
from sheetflow.cli.events import nats_options
from tests.faults.conftest import (
    assert_every_page_once,
    echo_page,
    small_set,
    wait_for,
    with_model,
)
from tests.support.model_server import ModelReply, request_text
from tests.support.stack import stack

pytestmark = pytest.mark.slow


async def test_sigkill_extract_worker_mid_page(settings, model):
    """A worker SIGKILLed while the model holds its page: another worker finishes the job, no page twice."""
    settings = with_model(settings, model).model_copy(
        update={"ack_wait_s": 3.0, "in_progress_interval_s": 1.0}
    )
    held = []

    def slow_echo(request: dict) -> ModelReply:
        reply = echo_page(request)
        if "authoritative for alphanumeric" in request_text(request):
            held.append(time.monotonic())
            reply.delay_s = 4.0
        return reply

    model.responder = slow_echo
    with stack(settings, "ingest", "coverage", "verify", "report") as s:
        doomed = s.start("extract", tag="-doomed", args=["--concurrency", "2"])
        job_id = s.submit(small_set(4))
        wait_for(lambda: held, 30, "the first vision call")
        doomed.kill()
        s.start("extract", tag="-rescuer")
        report = s.wait_report(job_id, timeout=120)
    assert_every_page_once(report, 4)
    store = ObjectStore(settings)
    workers = {
        (await store.get_json(f"jobs/{job_id}/pages/{n}/extracted.json"))["worker_id"]
        for n in range(1, 5)
    }
    assert all(str(doomed.pid) not in w for w in workers), workers


async def test_restart_coverage_verify_report_mid_job(settings):
    """Coverage, verify and report killed and restarted mid-job: ladder and job state live in KV."""
    with stack(settings, "ingest", "extract", "coverage", "verify", "report") as s:
        job_id = s.submit(small_set(8))
        wait_for(lambda: s.status(job_id)["pages"]["queued"] <= 6, 60, "two pages past extraction")
        for name in ("coverage", "verify", "report"):
            s.procs[name].kill()
        assert s.status(job_id)["pages_terminal"] < 8, "the job finished before the restart"
        time.sleep(1.0)
        for name in ("coverage", "verify", "report"):
            s.start(name)
        report = s.wait_report(job_id, timeout=120)
    assert_every_page_once(report, 8)


async def test_restart_embedded_nats_mid_job(own_servers):
    """NATS (file storage) restarted mid-job: ingest answers 503 meanwhile, the job completes."""
    servers, settings = own_servers
    with stack(settings, "ingest", "extract", "coverage", "verify", "report") as s:
        job_id = s.submit(small_set(8))
        wait_for(lambda: s.status(job_id)["pages"]["queued"] < 8, 60, "extraction to start")
        servers.nats.stop()
        r = s.upload(small_set(1))
        assert r.status_code == 503 and r.json()["error"] == "unavailable"
        servers.start_nats()
        report = s.wait_report(job_id, timeout=180)
    assert_every_page_once(report, 8)


async def test_s3_outage_mid_job_and_ingest_503(own_servers):
    """S3 down for a few seconds: ingest answers 503 meanwhile, stages retry, the job completes."""
    servers, settings = own_servers
    with stack(settings, "ingest", "extract", "coverage", "verify", "report") as s:
        job_id = s.submit(small_set(6))
        wait_for(lambda: s.status(job_id)["pages"]["queued"] < 6, 60, "extraction to start")
        servers.stop_s3()
        r = s.upload(small_set(1))
        assert r.status_code == 503 and r.json()["error"] == "unavailable"
        time.sleep(3.0)
        servers.start_s3()
        report = s.wait_report(job_id, timeout=180)
    assert_every_page_once(report, 6)


async def test_model_failing_for_one_page_is_rescued_or_named(settings, model):
    """A model that always fails one page: that page is read from its text layer instead
    (degraded, the failure counted), never missing."""
    settings = with_model(settings, model).model_copy(update={"retry_backoff_s": 0.05})

    def fail_schedule(request: dict) -> ModelReply:
        if "DOOR SCHEDULE" in request_text(request).upper():
            return ModelReply(status=500, body={"error": {"message": "boom"}})
        return echo_page(request)

    model.responder = fail_schedule
    with stack(settings, "ingest", "extract", "coverage", "verify", "report") as s:
        job_id = s.submit(small_set(3))
        report = s.wait_report(job_id, timeout=120)
    assert [p["page_number"] for p in report["pages"]] == [1, 2, 3]
    schedule = report["pages"][2]
    if schedule["status"] == "verified":
        assert schedule["degraded"] and schedule["objects"]
        assert schedule["coverage"]["ratio"] >= 0.6
        assert [f["page_number"] for f in report["summary"]["model_failures"]] == [3]
    else:
        assert schedule["failure_reason"]
        assert report["summary"]["failed_pages"][0]["page_number"] == 3


# Which page of a job reads a font's line and which cite that reading depends on the order
# verify takes the pages: the verdicts do not, the count of lines read does.
SCHEDULED = ("ocr_lines", "fonts_cited")


def _without_scheduling(verification: dict | None) -> dict | None:
    if not verification or not verification.get("checked"):
        return verification
    checked = {k: v for k, v in verification["checked"].items() if k not in SCHEDULED}
    return verification | {"checked": checked}


def comparable(report: dict) -> dict:
    """A report without what differs between two runs of the same file (ids, clocks, workers,
    which page read a font the others cite)."""
    pages = []
    for page in report["pages"]:
        objects = [
            {k: v for k, v in o.items() if k not in ("verification",)}
            | {"verdict": (o.get("verification") or {}).get("verdict")}
            for o in page["objects"]
        ]
        pages.append(
            {
                "page_number": page["page_number"],
                "status": page["status"],
                "sheet": page["sheet"],
                "objects": objects,
                "coverage": page["coverage"],
                "rungs": page["rungs"],
                "verification": _without_scheduling(page["verification"]),
            }
        )
    summary = {k: v for k, v in report["summary"].items() if k not in ("timings",)}
    summary["verification"] = {
        k: v for k, v in summary["verification"].items() if k not in SCHEDULED
    }
    return {
        "status": report["status"],
        "page_count": report["page_count"],
        "pages": pages,
        "summary": summary,
    }


async def duplicate_every_stage_message(settings, stop: asyncio.Event, seen: list[str]) -> None:
    """Republish every stage message once more, without its de-duplication id."""
    nc = await nats.connect(settings.nats_url, **nats_options(settings))
    js = nc.jetstream()

    async def twice(msg) -> None:
        if msg.headers and msg.headers.get("X-Test-Duplicate"):
            return
        seen.append(msg.subject)
        await js.publish(msg.subject, msg.data, headers={"X-Test-Duplicate": "1"})

    sub = await nc.subscribe(f"{settings.namespace}.page.>", cb=twice)
    await stop.wait()
    await sub.unsubscribe()
    await nc.drain()


async def test_every_stage_message_twice_gives_identical_report(settings):
    """Every page.* message delivered twice: the report equals a clean run's, no page or object doubled."""
    pdf = small_set(4)
    with stack(settings, "ingest", "extract", "coverage", "verify", "report") as s:
        clean = s.wait_report(s.submit(pdf))
        stop, seen = asyncio.Event(), list[str]()
        tap = asyncio.create_task(duplicate_every_stage_message(settings, stop, seen))
        await asyncio.sleep(0.5)
        job_id = await asyncio.to_thread(lambda: s.submit(pdf))
        doubled = await asyncio.to_thread(s.wait_report, job_id)
        await asyncio.sleep(2.0)  # let late duplicates land: they must not change anything
        stop.set()
        await tap
        again = httpx.get(f"{s.api}/v1/jobs/{job_id}/report").json()
    assert any(subject.endswith("page.verified") for subject in seen)
    assert comparable(doubled) == comparable(clean)
    assert comparable(again) == comparable(clean)
    assert_every_page_once(doubled, 4)


async def test_malformed_message_is_terminated_not_redelivered(settings):
    """Garbage on page.extract is terminated once (no endless redelivery) and the worker serves on."""
    with stack(settings, "ingest", "extract", "coverage", "verify", "report") as s:
        nc = await nats.connect(settings.nats_url, **nats_options(settings))
        js = nc.jetstream()
        await js.publish(settings.subject("page.extract"), b'{"job_id": 7, "nonsense": true}')
        job_id = await asyncio.to_thread(lambda: s.submit(small_set(2)))
        report = await asyncio.to_thread(s.wait_report, job_id)
        info = await js.consumer_info(settings.stream_name, "extract")
        await nc.close()
        logs = s.logs()
    assert_every_page_once(report, 2)
    assert info.num_ack_pending == 0 and info.num_redelivered == 0
    assert "terminated a malformed message" in logs
