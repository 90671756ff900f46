"""The `sheetflow` command's stack as a user meets it: the report printed before everything
stops, `up` telling `events` where it listens, a lost NATS connection reported."""

import asyncio
import contextlib
import json
import signal
import subprocess
import time

import nats
import psutil
import pytest

from shared.infra.settings import Settings
from sheetflow.cli import events
from sheetflow.cli.events import nats_options
from sheetflow.credentials import embedded_nats_login
from sheetflow.endpoints import read_endpoints
from sheetflow.runtime import find_binary, free_port, start_nats
from tests.flow.test_cli_run import clean_env, start_up, wait_api_ready
from tests.support.pdfs import add_notes_page, make_pdf


def service_children(pid: int) -> list[str]:
    """Command lines of the live sheetflow service processes under ``pid`` (a service's own,
    or the host that runs several in one)."""
    found = []
    with contextlib.suppress(psutil.Error):
        for child in psutil.Process(pid).children(recursive=True):
            with contextlib.suppress(psutil.Error):
                cmdline = " ".join(child.cmdline())
                serves = "services." in cmdline or "sheetflow.host" in cmdline
                if serves and child.status() != psutil.STATUS_ZOMBIE:
                    found.append(cmdline)
    return found


def test_run_prints_its_report_before_stopping_and_cleans_up_finished_runs(tmp_path):
    """The summary and report paths appear while the services still run (stopping comes
    after); a successful run leaves no run directory behind, nor one of an ended run."""
    data_dir = tmp_path / "data"
    ended = data_dir / "runs" / "20260101-000000-999999999"
    (ended / "logs").mkdir(parents=True)
    pdf = tmp_path / "set.pdf"
    pdf.write_bytes(make_pdf(add_notes_page))
    argv = [find_binary("sheetflow"), "run", str(pdf), "--out", str(tmp_path / "out")]
    proc = subprocess.Popen(
        argv, cwd=tmp_path, env=clean_env(data_dir), stdout=subprocess.PIPE, text=True
    )
    alive_at_report: list[str] = []
    assert proc.stdout
    for line in proc.stdout:
        if line.startswith("report: "):
            alive_at_report = service_children(proc.pid)
    assert proc.wait(timeout=240) == 0
    assert alive_at_report, "the report was printed only after the services had stopped"
    assert (tmp_path / "out" / "report.json").exists()
    assert list((data_dir / "runs").iterdir()) == []


def test_up_tells_events_where_it_listens(tmp_path):
    """`up` writes its addresses into its data dir while it runs; `events` with no --nats
    follows that NATS; the file is gone once `up` stops; its service logs are plain text."""
    up, data_dir, api = start_up(tmp_path)
    events = None
    try:
        wait_api_ready(up, api)
        deadline = time.monotonic() + 30
        while (found := read_endpoints(data_dir.resolve())) is None:
            assert time.monotonic() < deadline, "no endpoints file"
            time.sleep(0.2)
        assert found.api == api and found.pid == up.pid
        events = subprocess.Popen(
            [find_binary("sheetflow"), "events", "--subject", "report.ready"],
            cwd=tmp_path,
            env=clean_env(data_dir),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        login = nats_options(Settings(_env_file=None, **embedded_nats_login(data_dir.resolve())))
        line = asyncio.run(publish_until_printed(found.nats_url, login, events))
        assert json.loads(line)["data"] == {"job_id": "j_1"}
    finally:
        if events:
            events.kill()
        up.send_signal(signal.SIGTERM)
        up.communicate(timeout=120)
    assert read_endpoints(data_dir.resolve()) is None
    assert not (data_dir / "endpoints.json").exists()
    logs = {log.name: log.read_text(errors="replace") for log in (data_dir / "logs").glob("*.log")}
    assert "report.log" in logs and "started successfully" in logs["report.log"]
    assert [name for name, text in logs.items() if "\x1b[" in text] == [], "ANSI codes in logs"


async def publish_until_printed(url: str, login: dict, events: subprocess.Popen) -> str:
    """Publish a report.ready event until the `events` process prints a line; that line."""
    assert events.stdout and events.stderr
    nc = await nats.connect(url, **login)
    loop = asyncio.get_running_loop()
    reading = loop.run_in_executor(None, events.stdout.readline)
    try:
        for _ in range(150):
            await nc.publish("sheetflow.report.ready", b'{"job_id": "j_1"}')
            done, _ = await asyncio.wait({reading}, timeout=0.2)
            if done:
                return reading.result()
    finally:
        await nc.close()
    pytest.fail(f"`events` printed nothing: {events.stderr.read() if events.poll() else ''}")


async def test_events_reports_a_lost_connection_and_its_return(tmp_path):
    """When NATS goes away the events printer says so instead of still "listening", and
    says again when it is back."""
    port = free_port()
    server, url = start_nats(tmp_path, port=port)
    said: list[str] = []
    task = asyncio.create_task(events.print_events(url, ["sheetflow.>"], {}, say=said.append))
    try:
        await wait_for(lambda: any("listening" in s for s in said))
        server.stop()
        await wait_for(lambda: any("lost the connection" in s for s in said))
        server, _ = start_nats(tmp_path, port=port)
        await wait_for(lambda: any("reconnected" in s for s in said))
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        server.stop()
    assert url in next(s for s in said if "lost the connection" in s)


async def wait_for(condition, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met"
        await asyncio.sleep(0.1)
