"""Intake cannot be starved or hung: uploads built to exhaust the PDF reader are cut off at the
inspection limit while a plain upload and the other routes go on, and a stalled S3 gets the
client a 503 with Retry-After while what the upload left is removed once S3 answers again."""

import asyncio
import os
import signal
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from shared.infra.storage import ObjectStore
from tests.support.bombs import many_objects_pdf
from tests.support.pdfs import notes_pdf
from tests.support.stack import stack

pytestmark = pytest.mark.slow


def test_heavy_uploads_do_not_starve_a_light_one_or_other_routes(settings):
    """Three uploads whose inspection would take tens of seconds each are refused at the 3 s
    limit; a one-page upload sent meanwhile is accepted, and readyz and job status answer."""
    settings = settings.model_copy(update={"inspect_timeout_s": 3.0, "inspect_workers": 4})
    heavy = many_objects_pdf(1_000_000)  # ~9.5 MB; every object visited on inspection
    with stack(settings, "ingest") as s, ThreadPoolExecutor(8) as pool:
        known = s.upload(notes_pdf()).json()["job_id"]
        heavies = [pool.submit(s.upload, heavy, name=f"heavy-{i}.pdf") for i in range(3)]
        time.sleep(0.5)  # the heavy ones are being inspected
        light = pool.submit(s.upload, notes_pdf(), name="light.pdf")
        ready = httpx.get(f"{s.api}/readyz", timeout=10)
        status = httpx.get(f"{s.api}/v1/jobs/{known}", timeout=10)
        light_answer = light.result(timeout=60)
        heavy_answers = [h.result(timeout=60) for h in heavies]
    assert ready.status_code == 200, ready.text
    assert status.status_code == 200, status.text
    assert light_answer.status_code == 202, light_answer.text
    for r in heavy_answers:
        assert r.status_code == 422, r.text
        assert r.json()["error"] == "too_complex"
        assert "within 3 s" in r.json()["detail"]


async def test_s3_stall_at_intake_is_a_503_and_leaves_nothing(own_servers):
    """With S3 frozen (accepting connections, never answering) an upload gets a 503 with
    Retry-After at the intake deadline; once S3 answers again its source is removed."""
    servers, settings = own_servers
    settings = settings.model_copy(update={"intake_timeout_s": 2.0})
    store = ObjectStore(settings)
    with stack(settings, "ingest") as s:
        os.kill(servers.s3.pid, signal.SIGSTOP)
        try:
            r = await asyncio.to_thread(s.upload, notes_pdf())
        finally:
            os.kill(servers.s3.pid, signal.SIGCONT)
        assert r.status_code == 503, r.text
        assert r.json()["error"] == "unavailable"
        assert int(r.headers["Retry-After"]) > 0
        deadline = time.monotonic() + 120
        while (left := await store.list_keys("jobs/")) and time.monotonic() < deadline:
            await asyncio.sleep(0.5)
        assert left == [], f"the refused upload left {left}\n{s.logs()}"
        assert "Traceback" not in s.logs()
