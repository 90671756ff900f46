"""Start-up and shut-down: what a small run costs beyond its pages.

Measured side by side in one run: the time from nothing to a ready stack (embedded NATS and
S3, every service, the API answering ``/readyz``) as ``sheetflow up`` builds it; the wall time
of ``sheetflow run`` on a one-sheet set, as a user runs it (a fresh process, embedded servers
started and stopped), split into "until the report is printed" and "until the command
exits"; and the raw PyMuPDF time for the same sheet's page work, so the run's overhead reads
as a ratio.

    python -m bench.startup [--runs 3]

Last lines: ``RESULT startup_s <seconds to a ready stack>`` (goal < 4) and
``RESULT one_page_run_s <seconds of a one-page sheetflow run>`` (goal < 4), fastest of the runs.
"""

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pymupdf

from bench.common import OUT_DIR, result_line
from bench.overhead import pymupdf_png, raw_page_work
from bench.synthetic import set_path
from shared.infra.settings import Settings
from sheetflow.runtime import find_binary, free_port, running_stack, wait_api_ready

STARTUP_GOAL_S = 4.0
RUN_GOAL_S = 4.0
REPORT_LINE = "report: "  # what `sheetflow run` prints once the report is written


@dataclass
class OnePageRun:
    to_report_s: float  # until the report paths are printed
    to_exit_s: float  # until the command has stopped everything and exited


def time_to_ready(data_dir: Path) -> float:
    """Seconds from nothing to an API that says NATS and S3 answer, as `sheetflow up` starts
    things (embedded servers, every service); everything is stopped afterwards."""
    settings = Settings(_env_file=None, data_dir=data_dir, api_port=free_port())
    started = time.perf_counter()
    with running_stack(settings) as (live, procs):
        wait_api_ready(f"http://127.0.0.1:{live.api_port}", procs, 120)
        return time.perf_counter() - started


def one_page_run(pdf: Path, workdir: Path) -> OnePageRun:
    """`sheetflow run` on ``pdf`` in a fresh process with a clean environment."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHEETFLOW_")}
    env["SHEETFLOW_DATA_DIR"] = str(workdir / "data")
    argv = [find_binary("sheetflow"), "run", str(pdf), "--out", str(workdir / "out")]
    started = time.perf_counter()
    proc = subprocess.Popen(
        argv, cwd=workdir, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    to_report = None
    assert proc.stdout is not None  # stdout=PIPE
    for line in proc.stdout:
        if to_report is None and line.startswith(REPORT_LINE):
            to_report = time.perf_counter() - started
    code = proc.wait()
    to_exit = time.perf_counter() - started
    if code not in (0, 2) or to_report is None:
        raise RuntimeError(f"`sheetflow run` exited {code} without printing its report")
    return OnePageRun(to_report, to_exit)


def raw_page_seconds(pdf: Path, max_px: int, repeats: int = 3) -> float:
    """The fastest of ``repeats`` plain PyMuPDF passes over the page: open, words, text,
    render, PNG."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        with pymupdf.open(pdf) as doc:
            raw_page_work(doc[0], max_px, pymupdf_png)
        times.append(time.perf_counter() - started)
    return min(times)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="time to a ready stack and of a 1-page run")
    parser.add_argument("--runs", type=int, default=3, help="runs of each; the fastest counts")
    parser.add_argument("--pages", type=int, default=1, help="sheets in the run's set")
    return parser.parse_args(argv)


def main() -> None:
    args = parse_args()
    pdf = set_path(args.pages)
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    max_px = Settings(_env_file=None).page_image_max_px
    raw_page_seconds(pdf, max_px, repeats=1)  # fonts and first-call costs out of the way
    startups: list[float] = []
    runs: list[OnePageRun] = []
    raws: list[float] = []
    for _ in range(args.runs):  # interleaved, so a noisy minute hurts every kind alike
        with tempfile.TemporaryDirectory(prefix="startup-", dir=OUT_DIR) as scratch:
            startups.append(time_to_ready(Path(scratch) / "up"))
            runs.append(one_page_run(pdf, Path(scratch)))
        raws.append(raw_page_seconds(pdf, max_px))
    startup = min(startups)
    fastest = min(runs, key=lambda r: r.to_exit_s)
    raw = min(raws)
    print(f"{args.pages} sheet(s), 36x24 in, {os.cpu_count()} cores, {args.runs} runs each")
    print(
        f"  ready stack (servers + services + /readyz)  {startup:6.2f} s  "
        f"(runs: {', '.join(f'{s:.2f}' for s in startups)}; goal < {STARTUP_GOAL_S:g} s)"
    )
    print(f"  sheetflow run, until the report is printed   {fastest.to_report_s:6.2f} s")
    print(
        f"  sheetflow run, until it exits                {fastest.to_exit_s:6.2f} s  "
        f"(runs: {', '.join(f'{r.to_exit_s:.2f}' for r in runs)}; goal < {RUN_GOAL_S:g} s)"
    )
    print(
        f"  shut-down after the report (median)          "
        f"{statistics.median(r.to_exit_s - r.to_report_s for r in runs):6.2f} s"
    )
    print(f"  raw PyMuPDF page work (open, words, render, PNG)  {raw:6.3f} s")
    print(
        f"  sheetflow run / raw PyMuPDF                  {fastest.to_exit_s / raw:6.0f}x the time"
    )
    print(result_line("startup_s", startup))
    print(result_line("one_page_run_s", fastest.to_exit_s))


if __name__ == "__main__":
    main()
