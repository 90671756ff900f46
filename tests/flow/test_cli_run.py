"""The `sheetflow` command as a user runs it: real processes, embedded servers, no leftovers."""

import asyncio
import contextlib
import csv
import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import nats
import psutil
import pymupdf

from sheetflow.cli import events
from sheetflow.runtime import find_binary, free_port
from tests.support.report_contract import assert_valid_report

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "drawing-set.pdf"


def clean_env(data_dir: Path, **extra: str) -> dict[str, str]:
    """The caller's environment without any SHEETFLOW_ variable, data under ``data_dir``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHEETFLOW_")}
    return env | {"SHEETFLOW_DATA_DIR": str(data_dir)} | extra


@contextlib.contextmanager
def watch_descendants(pid: int) -> Iterator[dict[int, float]]:
    """Record every descendant of ``pid`` (pid → create time) while the block runs."""
    seen: dict[int, float] = {}
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            with contextlib.suppress(psutil.Error):
                for child in psutil.Process(pid).children(recursive=True):
                    with contextlib.suppress(psutil.Error):
                        seen.setdefault(child.pid, child.create_time())
            time.sleep(0.1)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield seen
    finally:
        done.set()
        thread.join()


def leftovers(seen: dict[int, float], marker: str) -> list[str]:
    """Processes still alive that the CLI started, or that use its data dir."""
    left = []
    for pid, created in seen.items():
        with contextlib.suppress(psutil.Error):
            proc = psutil.Process(pid)
            if proc.create_time() == created and proc.status() != psutil.STATUS_ZOMBIE:
                left.append(" ".join(proc.cmdline()))
    for proc in psutil.process_iter(["pid", "cmdline"]):
        with contextlib.suppress(psutil.Error):
            cmdline = " ".join(proc.info["cmdline"] or [])
            if marker in cmdline or marker in proc.environ().get("SHEETFLOW_DATA_DIR", ""):
                left.append(cmdline)
    return left


def assert_no_leftovers(seen: dict[int, float], marker: str, *, grace_s: float = 5.0) -> None:
    deadline = time.monotonic() + grace_s
    while (left := leftovers(seen, marker)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not left, f"processes left behind: {left}"


def test_run_processes_the_example_and_leaves_nothing_running(tmp_path):
    """`sheetflow run examples/drawing-set.pdf` writes both reports with every page and the
    sheet log, exits 0 or 2 as the report says, and leaves no server or service process
    behind."""
    data_dir, out = tmp_path / "data", tmp_path / "out"
    argv = [find_binary("sheetflow"), "run", str(EXAMPLE), "--out", str(out), "--timeout", "240"]
    proc = subprocess.Popen(
        argv,
        cwd=tmp_path,
        env=clean_env(data_dir),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    with watch_descendants(proc.pid) as seen:
        stdout, stderr = proc.communicate(timeout=280)
    assert proc.returncode in (0, 2), f"exit {proc.returncode}\n{stdout}\n{stderr}"
    assert len(seen) >= 7, "the watcher saw too few children (nats, weed, five services)"

    report = assert_valid_report(json.loads((out / "report.json").read_text()))
    assert (out / "report.html").read_text().lstrip().lower().startswith("<!doctype html")
    page_count = pymupdf.open(EXAMPLE).page_count
    assert report["page_count"] == page_count
    assert sorted(p["page_number"] for p in report["pages"]) == list(range(1, page_count + 1))
    # The sheet log beside them: a header and one row per page.
    with (out / "sheets.csv").open(encoding="utf-8-sig", newline="") as sheets:
        sheet_log = list(csv.reader(sheets))
    assert sheet_log[0][:4] == ["page", "sheet_number", "sheet_number_printed", "sheet_title"]
    assert [row[0] for row in sheet_log[1:]] == [str(n) for n in range(1, page_count + 1)]
    # The set bookmarked and labelled with its sheets beside them.
    with pymupdf.open(out / "set.pdf") as linked:
        assert linked.page_count == page_count
        numbered = [p for p in report["pages"] if p["sheet"]["sheet_number"]]
        labels = [linked[p["page_number"] - 1].get_label() for p in numbered]
        assert labels == [p["sheet"]["sheet_number"] for p in numbered]
        assert linked.get_toc()
    failed = report["summary"]["failed_pages"]
    assert proc.returncode == (2 if failed else 0), stderr
    assert report["status"] == ("partial" if failed else "complete")
    for f in failed:
        assert f"page {f['page_number']} " in stderr
    for page in report["pages"]:
        if page["sheet"]["sheet_number"]:
            assert page["sheet"]["sheet_number"] in stdout

    assert_no_leftovers(seen, str(data_dir))
    assert not list(data_dir.glob("runs/*/nats")) and not list(data_dir.glob("runs/*/s3"))


def start_up(tmp_path: Path) -> tuple[subprocess.Popen, Path, str]:
    data_dir, port = tmp_path / "data", free_port()
    proc = subprocess.Popen(
        [find_binary("sheetflow"), "up"],
        cwd=tmp_path,
        env=clean_env(data_dir, SHEETFLOW_API_PORT=str(port)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    return proc, data_dir, f"http://127.0.0.1:{port}"


def wait_api_ready(proc: subprocess.Popen, api: str, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{api}/readyz", timeout=2).status_code == 200:
                return
        time.sleep(0.3)
    raise AssertionError(f"`sheetflow up` not ready within {timeout}s")


def test_up_stops_everything_on_sigterm(tmp_path):
    """`sheetflow up` serves the API, prints where things listen; SIGTERM stops every process,
    its children's forkservers and resource trackers included, before `up` itself exits."""
    proc, data_dir, api = start_up(tmp_path)
    try:
        with watch_descendants(proc.pid) as seen:
            wait_api_ready(proc, api)
            time.sleep(0.5)  # let the watcher see every child
            proc.send_signal(signal.SIGTERM)
            stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, stderr
    assert api in stdout and f"{api}/docs" in stdout and "nats://127.0.0.1:" in stdout
    assert str(data_dir / "logs") in stdout.replace("\n", "")
    assert len(seen) >= 7  # nats, weed and five services
    assert_no_leftovers(seen, str(data_dir), grace_s=0.0)


async def test_events_prints_each_event_as_a_json_line(settings):
    """The events printer gets what a plain NATS publisher sends on the subscribed subject only."""
    lines: list[str] = []
    subject = settings.subject("report.ready")
    options = events.nats_options(settings)
    task = asyncio.create_task(
        events.print_events(settings.nats_url, [subject], options, write=lines.append)
    )
    nc = await nats.connect(settings.nats_url, **options)
    try:
        deadline = time.monotonic() + 10
        while not lines and time.monotonic() < deadline:
            await nc.publish(settings.subject("page.verified"), b'{"ignored": true}')
            await nc.publish(subject, b'{"job_id": "j_1", "status": "complete"}')
            await asyncio.sleep(0.2)
    finally:
        await nc.close()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    assert lines, "no event printed"
    event = json.loads(lines[0])
    assert event["subject"] == subject
    assert event["data"] == {"job_id": "j_1", "status": "complete"}
    assert all(json.loads(line)["subject"] == subject for line in lines)
