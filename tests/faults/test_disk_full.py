"""A full disk survived: the embedded NATS store on a small tmpfs under the data dir is filled
while a job runs. Uploads are then refused with a 507 and nothing kept, /readyz names the
store that cannot write; once the space is freed the stack recovers by itself (the
supervisor restarts NATS, which reopens its store) and every job finishes, each page once."""

import contextlib
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from shared.infra.settings import Settings
from shared.infra.storage import ObjectStore
from sheetflow.runtime import free_port, supervised_stack, wait_api_ready
from tests.faults.conftest import assert_every_page_once, small_set
from tests.faults.test_supervised_up import report_when_done

pytestmark = pytest.mark.slow

TMPFS_MB = 64


@contextlib.contextmanager
def small_disk(where: Path) -> Iterator[Path]:
    """A tmpfs of ``TMPFS_MB`` mounted at ``where`` (skips where mounting is not allowed:
    it needs root with CAP_SYS_ADMIN, as CI has)."""
    where.mkdir(parents=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={TMPFS_MB}m,mode=0700", "tmpfs", str(where)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(disk: Path) -> Path:
    """Write zeros to ``disk`` until it is full; the file written."""
    filler = disk / "filler"
    with filler.open("wb") as out, contextlib.suppress(OSError):
        while True:
            out.write(b"\0" * 2**20)
            out.flush()
    return filler


@contextlib.contextmanager
def supervising(settings: Settings) -> Iterator[Settings]:
    """``sheetflow up``'s stack and supervisor, checked every half second in a thread."""
    with supervised_stack(settings) as (live, supervisor):
        stop = threading.Event()

        def check() -> None:
            while not stop.wait(0.5):
                supervisor.check()

        checker = threading.Thread(target=check, daemon=True)
        checker.start()
        try:
            yield live
        finally:
            stop.set()
            checker.join(10)


def readyz(api: str) -> httpx.Response:
    return httpx.get(f"{api}/readyz", timeout=10)


def until(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.HTTPError):
            if found := predicate():
                return found
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}")


def upload(api: str, pdf: bytes) -> httpx.Response:
    files = {"file": ("set.pdf", pdf, "application/pdf")}
    return httpx.post(f"{api}/v1/jobs", files=files, timeout=60)


async def test_a_full_disk_is_refused_named_and_recovered_from(tmp_path: Path):
    """Full: an upload is 507 and keeps nothing, /readyz is 503 naming NATS's writes. Freed:
    ready again without a person, and the job in flight and a new one finish, every page once."""
    data_dir = tmp_path / "data"
    settings = Settings(
        _env_file=None, data_dir=data_dir, api_port=free_port(), outage_patience_s=600.0
    )
    api = f"http://127.0.0.1:{settings.api_port}"
    pdf = small_set(6)
    with small_disk(data_dir / "nats") as disk, supervising(settings) as live:
        wait_api_ready(api, [], 120)
        running = upload(api, pdf)
        assert running.status_code == 202, running.text
        filler = fill(disk)

        full = until(
            lambda: (
                (r := readyz(api)).status_code == 503 and r.json()["nats_writes"] is False and r
            ),
            60,
            "/readyz to name the store that cannot write",
        )
        body = full.json()
        assert body["nats"] is True and body["s3_writes"] is True
        assert "NATS JetStream" in body["detail"]
        kept = set(await ObjectStore(live).list_keys("jobs/"))
        refused = upload(api, pdf)
        assert refused.status_code == 507, refused.text
        assert refused.json()["error"] == "disk_full"
        assert "nothing was kept" in refused.json()["detail"]

        filler.unlink()
        until(lambda: readyz(api).status_code == 200, 120, "the stack to recover by itself")
        assert set(await ObjectStore(live).list_keys("jobs/")) >= kept
        report = report_when_done(api, running.json()["job_id"], 300)
        assert_every_page_once(report, 6)
        after = upload(api, pdf)
        assert after.status_code == 202, after.text
        assert_every_page_once(report_when_done(api, after.json()["job_id"], 300), 6)
        # Nothing of the refused upload: every job's objects are those of the two accepted.
        jobs = {key.split("/")[1] for key in await ObjectStore(live).list_keys("jobs/")}
        assert jobs == {running.json()["job_id"], after.json()["job_id"]}
