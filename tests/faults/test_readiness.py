"""Honest readiness: with NATS frozen (SIGSTOP, its connections left open) ``/readyz`` is 503
naming NATS, and an upload caught by the freeze after its job record was written is
refused with "nothing was kept" and leaves no record, marker or object once NATS is back."""

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Callable, Iterator

import httpx
import pymupdf
import pytest

from shared.infra.settings import Settings
from shared.infra.storage import ObjectStore
from sheetflow.runtime import ManagedProcess
from tests.support.jobstore import first_kv_key, kv_keys
from tests.support.stack import stack

pytestmark = pytest.mark.slow

# Enough pages that the intake is still announcing them when the freeze lands (400 were all
# announced before it once, at load 14, when the wait for the job record began late).
PAGES = 1200
INTAKE_TIMEOUT_S = 3.0


def light_set() -> bytes:
    doc = pymupdf.open()
    for n in range(PAGES):
        doc.new_page(width=612, height=792).insert_text((72, 72), f"SHEET A-{n + 1:03d}")
    return doc.tobytes()


@contextlib.contextmanager
def frozen(proc: ManagedProcess) -> Iterator[None]:
    """The server's whole process group stopped, as a hung host would leave it."""
    os.killpg(proc.pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.killpg(proc.pid, signal.SIGCONT)


def readyz(api: str) -> httpx.Response:
    return httpx.get(f"{api}/readyz", timeout=10)


async def test_readyz_fails_while_nats_is_frozen_and_a_refused_upload_keeps_nothing(
    own_servers,
):
    """Ready before; 503 naming NATS on every probe while it is frozen; ready again after.
    The upload frozen mid-announcement is a 503 saying nothing was kept, and nothing is."""
    servers, settings = own_servers
    # Every page queued by the intake itself (no window), so the freeze lands mid-intake.
    update = {"intake_timeout_s": INTAKE_TIMEOUT_S, "job_window_pages": PAGES}
    settings = settings.model_copy(update=update)
    with stack(settings, "ingest") as s:
        assert readyz(s.api).status_code == 200
        # The watch is on before the upload starts: the freeze lands within moments of the
        # job record, long before 1,200 pages are announced, however loaded the machine.
        watching, pdf = asyncio.Event(), light_set()
        recorded = asyncio.ensure_future(first_kv_key("job", watching=watching)(settings))
        await asyncio.wait_for(watching.wait(), timeout=60)
        upload = asyncio.create_task(asyncio.to_thread(s.upload, pdf))
        await asyncio.wait_for(recorded, timeout=60)
        assert servers.nats is not None
        with frozen(servers.nats):
            refused = await upload
            probes = []
            deadline = time.monotonic() + 6
            while time.monotonic() < deadline:
                probes.append(await asyncio.to_thread(readyz, s.api))
        assert refused.status_code == 503, refused.text
        assert "nothing was kept" in refused.json()["detail"]
        assert probes and all(p.status_code == 503 for p in probes), [p.text for p in probes]
        assert all(p.json()["nats"] is False and p.json()["s3"] is True for p in probes)
        await wait_empty(settings, 60, s.logs)
        # Ready again once ingest's own NATS client has reconnected (its reconnect backs off
        # for seconds after the thaw; the cleanup above used connections of its own).
        deadline = time.monotonic() + 20
        while (again := await asyncio.to_thread(readyz, s.api)).status_code != 200:
            if time.monotonic() > deadline:
                break
            await asyncio.sleep(0.5)
        assert again.status_code == 200, again.text


async def wait_empty(settings: Settings, timeout: float, logs: Callable[[], str]) -> None:
    """Until the job store holds no job or intake and the bucket no job's object."""
    store = ObjectStore(settings)
    deadline = time.monotonic() + timeout
    while True:
        left = {
            **await kv_keys(settings, "job"),
            **await kv_keys(settings, "intake"),
            **{k: {} for k in await store.list_keys("jobs/")},
        }
        if not left:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"left behind: {sorted(left)}\n{logs()}")
        await asyncio.sleep(1.0)


async def test_requests_during_an_s3_stall_answer_within_ten_seconds(own_servers):
    """S3 frozen: a report download and an upload each answer 503 with Retry-After within
    10 s (not the S3 client's minute), a status read (NATS only) answers 200, and /readyz
    names S3; all is well again once S3 thaws."""
    servers, settings = own_servers
    with stack(settings, "ingest") as s:
        job_id = s.submit(light_set_of(2))
        assert servers.s3 is not None
        with frozen(servers.s3):
            answers = {}
            for what, call in {
                "report": lambda: httpx.get(f"{s.api}/v1/jobs/{job_id}/report.html", timeout=60),
                "page": lambda: httpx.get(
                    f"{s.api}/v1/jobs/{job_id}/pages/1/image.png", timeout=60
                ),
                "upload": lambda: s.upload(light_set_of(2)),
                "status": lambda: httpx.get(f"{s.api}/v1/jobs/{job_id}", timeout=60),
            }.items():
                started = time.monotonic()
                answers[what] = (await asyncio.to_thread(call), time.monotonic() - started)
            probe = await asyncio.to_thread(readyz, s.api)
        for what in ("page", "upload"):
            r, seconds = answers[what]
            assert r.status_code == 503 and seconds < 10, (what, r.status_code, seconds, r.text)
            assert int(r.headers["Retry-After"]) > 0
        r, seconds = answers["status"]
        assert r.status_code == 200 and seconds < 10, (r.status_code, seconds)
        assert answers["report"][0].status_code in (404, 503) and answers["report"][1] < 10
        assert probe.status_code == 503 and probe.json()["s3"] is False
        deadline = time.monotonic() + 30
        while (await asyncio.to_thread(readyz, s.api)).status_code != 200:
            assert time.monotonic() < deadline, "S3 thawed but the API never became ready"
            await asyncio.sleep(0.5)


def light_set_of(pages: int) -> bytes:
    doc = pymupdf.open()
    for n in range(pages):
        doc.new_page(width=612, height=792).insert_text((72, 72), f"SHEET S-{n + 1:03d}")
    return doc.tobytes()
