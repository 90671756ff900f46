"""`sheetflow up` keeps what it started running: a SIGKILLed extract worker and a SIGKILLed
embedded NATS come back by themselves and the job in flight completes with every page once;
a service that keeps dying stops everything with a clear error and leaves nothing behind."""

import contextlib
import subprocess
import time
from pathlib import Path

import httpx
import psutil
import pytest

from shared.infra.settings import Settings
from sheetflow.credentials import AUTH_DIR
from sheetflow.runtime import find_binary, free_port, settings_env
from tests.faults.conftest import (
    assert_every_page_once,
    echo_page,
    small_set,
    wait_for,
    with_model,
)
from tests.flow.test_cli_run import (
    assert_no_leftovers,
    clean_env,
    wait_api_ready,
    watch_descendants,
)
from tests.flow.test_embedded_servers import world_readable_files
from tests.support.model_server import ModelReply, request_text

pytestmark = pytest.mark.slow
SECRETS = ("SHEETFLOW_S3_SECRET_KEY", "SHEETFLOW_NATS_PASSWORD")


def child_running(up: subprocess.Popen, marker: str) -> psutil.Process | None:
    """The live child of `sheetflow up` whose command line contains ``marker``, if any."""
    with contextlib.suppress(psutil.Error):
        for child in psutil.Process(up.pid).children():
            with contextlib.suppress(psutil.Error):
                if child.status() != psutil.STATUS_ZOMBIE and marker in " ".join(child.cmdline()):
                    return child
    return None


def live_child(up: subprocess.Popen, marker: str) -> psutil.Process:
    """The live child of `sheetflow up` whose command line contains ``marker``."""
    child = child_running(up, marker)
    assert child is not None, f"no live child of `sheetflow up` runs {marker}"
    return child


def report_when_done(api: str, job_id: str, timeout: float) -> dict:
    """The job's report, riding out the 503s and refused connections of a NATS restart."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.HTTPError):
            r = httpx.get(f"{api}/v1/jobs/{job_id}/report", timeout=10)
            if r.status_code == 200:
                return r.json()
        time.sleep(0.5)
    raise AssertionError(f"no report for {job_id} within {timeout}s")


def test_up_restarts_a_killed_worker_and_nats_and_stops_on_a_crash_loop(tmp_path: Path, model):
    held: list[float] = []

    def slow_echo(request: dict) -> ModelReply:
        reply = echo_page(request)
        if "authoritative for alphanumeric" in request_text(request):
            held.append(time.monotonic())
            reply.delay_s = 1.5
        return reply

    model.responder = slow_echo
    data_dir, port = tmp_path / "data", free_port()
    settings = with_model(Settings(_env_file=None), model).model_copy(
        update={
            "data_dir": data_dir,
            "api_port": port,
            "ack_wait_s": 3.0,
            "in_progress_interval_s": 1.0,
            "restart_limit": 2,
        }
    )
    api = f"http://127.0.0.1:{port}"
    stderr_path = tmp_path / "stderr.txt"
    with stderr_path.open("w") as err:
        up = subprocess.Popen(
            [find_binary("sheetflow"), "up", "--extract-workers", "2"],
            cwd=tmp_path,
            env=settings_env(settings),
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    said = stderr_path.read_text
    try:
        with watch_descendants(up.pid) as seen:
            wait_api_ready(up, api)
            job_id = httpx.post(
                f"{api}/v1/jobs",
                files={"file": ("set.pdf", small_set(6), "application/pdf")},
                timeout=60,
            ).json()["job_id"]
            wait_for(lambda: held, 60, "the first vision call")
            live_child(up, "services.extract").kill()
            wait_for(
                lambda: "extract-1 restarted" in said() or "extract-2 restarted" in said(),
                60,
                "the worker's restart",
            )
            live_child(up, "nats-server").kill()
            wait_for(lambda: "restarted" in said().split("nats-", 1)[-1], 60, "NATS's restart")
            report = report_when_done(api, job_id, timeout=180)
            assert_every_page_once(report, 6)

            for _ in range(3):  # limit 2: the third crash within the window stops everything
                doomed = live_child(up, "services.report")
                doomed.kill()

                def replaced_or_stopped(gone: int = doomed.pid) -> bool:
                    successor = child_running(up, "services.report")
                    return up.poll() is not None or (
                        successor is not None and successor.pid != gone
                    )

                wait_for(replaced_or_stopped, 60, "the report service's restart or the stop")
            up.wait(120)
    finally:
        if up.poll() is None:
            up.kill()
    text = said()
    assert "exited unexpectedly (code -9); restarting it in" in text
    assert up.returncode == 1, text
    assert "report exited unexpectedly (code -9): 3 crash(es) within 60 s" in text
    assert "report.log" in text and "Traceback" not in text
    assert_no_leftovers(seen, str(data_dir))


def page_readers_started(up: subprocess.Popen) -> bool:
    """Whether ingest and extract each run their bounded page readers (the forkserver's
    children), so that a kill finds every kind of process `up` makes."""
    readers = set()
    with contextlib.suppress(psutil.Error):
        for child in psutil.Process(up.pid).children():
            with contextlib.suppress(psutil.Error):
                service = " ".join(child.cmdline()).rsplit("services.", 1)[-1]
                grandchildren = child.children(recursive=True)
                if any(g.ppid() != child.pid for g in grandchildren):
                    readers.add(service)
    return {"ingest", "extract"} <= readers


def alive(processes: dict[int, float]) -> list[str]:
    """The processes (pid → create time) still running."""
    left = []
    for pid, created in processes.items():
        with contextlib.suppress(psutil.Error):
            proc = psutil.Process(pid)
            if proc.create_time() == created and proc.status() != psutil.STATUS_ZOMBIE:
                left.append(f"{pid} {' '.join(proc.cmdline())[:100]}")
    return left


def test_kill_9_of_up_ends_everything_it_started_and_up_starts_again(tmp_path: Path):
    """`kill -9` of `sheetflow up` ends every process it started (NATS, SeaweedFS, the
    services and their page readers) within 10 s; a new `up` on the same data dir starts
    and finishes a job. While it ran, no file others can read (endpoints.json, the logs)
    held a secret."""
    data_dir, port = tmp_path / "data", free_port()
    api = f"http://127.0.0.1:{port}"
    env = clean_env(data_dir, SHEETFLOW_API_PORT=str(port))
    argv = [find_binary("sheetflow"), "up"]
    first = subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL)
    try:
        wait_api_ready(first, api)
        wait_for(lambda: page_readers_started(first), 60, "the page readers")
        # `up` writes it once the API is ready and the registers are restored (slow on a
        # loaded machine), as it says ready.
        wait_for((data_dir / "endpoints.json").exists, 60, "up's endpoints.json")
        started = {
            p.pid: p.create_time() for p in psutil.Process(first.pid).children(recursive=True)
        }
        credentials = (data_dir / AUTH_DIR / "credentials.env").read_text().splitlines()
        secrets = [v for n, v in (line.split("=", 1) for line in credentials) if n in SECRETS]
        for path in world_readable_files(data_dir):
            text = path.read_text(errors="replace")
            assert not any(secret in text for secret in secrets), f"a secret in {path}"
        assert (data_dir / "endpoints.json") in world_readable_files(data_dir)
        first.kill()
        first.wait(10)
        deadline = time.monotonic() + 10
        while alive(started) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not alive(started), f"left running after kill -9 of up: {alive(started)}"
    finally:
        if first.poll() is None:
            first.kill()

    second = subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL)
    try:
        wait_api_ready(second, api)
        r = httpx.post(
            f"{api}/v1/jobs",
            files={"file": ("set.pdf", small_set(2), "application/pdf")},
            timeout=60,
        )
        assert r.status_code == 202, r.text
        report = report_when_done(api, r.json()["job_id"], timeout=120)
        assert_every_page_once(report, 2)
    finally:
        second.terminate()
        second.wait(120)
