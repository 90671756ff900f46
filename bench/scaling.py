"""Worker scaling when the model is the bottleneck: a scripted OpenAI-compatible server
answers every vision call after a fixed latency; pages/s end to end with 1, 2 and 4
extract workers, each with 8 pages in flight; efficiency = speed-up / workers.

    python -m bench.scaling [--pages 96] [--latency 1 8] [--workers 1 2 4]

Each latency is measured in turn. At 1 s the 32 pages in flight of 4 workers ask for more
CPU than 2 cores have, so that run shows the CPU cap, not the workers. The goal is about
the model-bound case: 8 s per call, still quick for a vision model reading a 2048-px sheet
and writing out its objects (hosted models take 10-60 s). Each table says how many cores
its ideal rate needs.

The scripted reply returns one object per text-layer line, so coverage passes on rung 1
and the model is called once per page (rung 2 and the judge are off for the job too).
Last line: ``RESULT scaling_efficiency_4 <efficiency at the most workers, longest latency>``
(goal >= 0.9).
"""

import argparse
import asyncio
import os
import time
from dataclasses import dataclass

from bench.common import (
    cpu_by_name,
    cpu_delta,
    cpu_line,
    embedded_servers,
    isolated,
    own_cpu_seconds,
    report_pages_ok,
    result_line,
    run_job,
    services,
    watch,
)
from bench.synthetic import set_bytes
from shared.infra.settings import Settings
from sheetflow.runtime import EmbeddedServers
from tests.support.flows import line_objects, reply
from tests.support.model_server import ScriptedModelServer

GOAL = 0.9
CONCURRENCY = 8
WARMUP_PAGES = 4
JOB_OPTIONS = {"text_retry": False, "judge": False}


def responder(latency_s: float):
    """The faithful scripted model (one object per text-layer line), answering after
    ``latency_s``."""
    return lambda request: reply(line_objects(request), delay_s=latency_s)


async def timed_job(settings: Settings, pdf: bytes, pages: int) -> tuple[float, float]:
    """Seconds from upload to report, and to the last ``page.extracted``."""
    async with watch(settings) as watcher:
        started = time.perf_counter()
        report, _ = await run_job(settings, pdf, options=JOB_OPTIONS)
        if not report_pages_ok(report, pages):
            raise RuntimeError("the report does not hold every page once")
        job_id = report.job_id
        return watcher.reports[job_id] - started, max(watcher.extracted[job_id]) - started


@dataclass
class Measured:
    total_s: float  # upload to report.ready
    extract_s: float  # upload to the last page.extracted
    cpu: dict[str, float]  # CPU seconds by process kind (services, NATS, S3, "bench" = this
    # process, which hosts the scripted model server)

    @property
    def cpu_s(self) -> float:
        return sum(self.cpu.values())


def measure(
    servers: EmbeddedServers, model_url: str, workers: int, pdf: bytes, warmup: bytes, pages: int
) -> Measured:
    """One timed job on a fresh set of services with ``workers`` extract workers."""
    settings = isolated(
        servers.settings,
        llm_base_url=model_url,
        llm_extract_model="scripted-vision",
        llm_concurrency=CONCURRENCY,
        extract_concurrency=CONCURRENCY,
    )
    with services(settings, extract_workers=workers) as running:
        asyncio.run(run_job(settings, warmup, options=JOB_OPTIONS))
        everyone = [*running.procs, *servers.processes]
        before = {**cpu_by_name(everyone), "bench": own_cpu_seconds()}
        total, extract = asyncio.run(timed_job(settings, pdf, pages))
        after = {**cpu_by_name(everyone), "bench": own_cpu_seconds()}
    return Measured(total, extract, cpu_delta(before, after))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="pages/s with 1, 2 and 4 extract workers")
    parser.add_argument("--pages", type=int, default=96)
    parser.add_argument(
        "--latency", type=float, nargs="+", default=[1.0, 8.0], help="seconds per model call"
    )
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    return parser.parse_args(argv)


def scale_at(latency: float, args: argparse.Namespace, pdf: bytes, warmup: bytes) -> float:
    """Measure every worker count at one model latency, print its table, return the
    efficiency at the most workers."""
    results: dict[int, Measured] = {}
    model = ScriptedModelServer(responder(latency))
    with model, embedded_servers("scaling") as servers:
        for workers in args.workers:
            model.requests.clear()
            results[workers] = measure(servers, model.base_url, workers, pdf, warmup, args.pages)
            calls = len(model.requests)
            timed = calls - WARMUP_PAGES
            print(f"  {workers} worker(s): {calls} model calls, {timed} timed", flush=True)

    base = min(results)
    base_pps = args.pages / results[base].total_s
    base_extract_pps = args.pages / results[base].extract_s
    cores = os.cpu_count() or 1
    print(
        f"{args.pages} sheets, model latency {latency:.1f} s/call, "
        f"{CONCURRENCY} pages in flight per worker, {cores} cores"
    )
    print(
        f"  {'workers':>7} {'pages/s':>8} {'ideal':>6} {'speed-up':>9} {'efficiency':>10}"
        f" {'extract pages/s':>16} {'CPU s/page':>11} {'CPU cap pages/s':>16}"
        f" {'cores for ideal':>16}"
    )
    efficiency = 0.0
    for workers, m in results.items():
        pps = args.pages / m.total_s
        ideal = workers * CONCURRENCY / latency
        speedup = pps / base_pps
        efficiency = speedup / (workers / base)
        extract_pps = args.pages / m.extract_s
        cpu_per_page = m.cpu_s / args.pages
        print(
            f"  {workers:>7} {pps:>8.2f} {ideal:>6.1f} {speedup:>8.2f}x {efficiency:>10.2f}"
            f" {extract_pps:>8.2f} ({extract_pps / base_extract_pps:.2f}x)"
            f" {cpu_per_page:>11.3f} {cores / cpu_per_page:>16.1f}"
            f" {ideal * cpu_per_page:>16.1f}"
        )
    for workers, m in results.items():
        print(f"  CPU ms/page by process, {workers} worker(s): {cpu_line(m.cpu, args.pages)}")
    print(
        "  ideal = workers x in-flight / latency; CPU cap = cores / CPU seconds per page;"
        " cores for ideal = ideal x CPU seconds per page (model-bound only when <= cores)"
    )
    return efficiency


def main() -> None:
    args = parse_args()
    pdf, warmup = set_bytes(args.pages), set_bytes(WARMUP_PAGES)
    efficiencies = {latency: scale_at(latency, args, pdf, warmup) for latency in args.latency}
    most = max(args.workers)
    summary = ", ".join(f"{latency:g} s: {e:.2f}" for latency, e in efficiencies.items())
    print(f"efficiency at {most} workers by model latency: {summary} (goal >= {GOAL})")
    print(result_line(f"scaling_efficiency_{most}", efficiencies[max(efficiencies)]))


if __name__ == "__main__":
    main()
