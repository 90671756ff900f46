"""Fair turns: a one-page job's time to its report alone, and while a large job runs on the
same stack (offline extractor), side by side in one run.

    python -m bench.fairness [--pages 2000] [--runs 3]

The large job is uploaded after the alone runs; the beside runs start once its first page is
extracted and must end before it does (else they measured nothing). The large
job's report must then hold every page once. Last line:
``RESULT fairness_beside_minus_alone_s X`` (the median beside less the median alone; the
goal is at most 5 s).
"""

import argparse
import asyncio
import statistics
import time

import httpx

from bench.common import (
    embedded_servers,
    fetch_report,
    isolated,
    report_pages_ok,
    result_line,
    run_job,
    services,
    upload,
    watch,
)
from bench.synthetic import set_bytes
from shared.infra.settings import Settings


async def measure(settings: Settings, pages: int, runs: int) -> tuple[list[float], list[float]]:
    one = set_bytes(1)
    alone = [(await run_job(settings, one))[1] for _ in range(runs)]
    api = f"http://127.0.0.1:{settings.api_port}"
    async with watch(settings) as watcher, httpx.AsyncClient() as client:
        large, _ = await upload(client, api, set_bytes(pages), name="large.pdf")
        await watcher.first_extracted(large, timeout=600)
        beside = [(await run_job(settings, one))[1] for _ in range(runs)]
        if large in watcher.reports:
            raise SystemExit("the large job ended before the small ones: use more --pages")
        await watcher.report(large, timeout=pages * 10)
        report = await fetch_report(client, api, large)
        if not report_pages_ok(report, pages):
            raise SystemExit("the large job's report does not hold every page once")
    return alone, beside


def main() -> None:
    parser = argparse.ArgumentParser(description="a small job beside a large one")
    parser.add_argument("--pages", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    started = time.perf_counter()
    with embedded_servers("fairness") as servers:
        settings = isolated(servers.settings)
        with services(settings):
            asyncio.run(run_job(settings, set_bytes(2)))  # warm-up
            alone, beside = asyncio.run(measure(settings, args.pages, args.runs))
    a, b = statistics.median(alone), statistics.median(beside)
    print(f"1-page job alone: {', '.join(f'{s:.2f}' for s in alone)} s (median {a:.2f})")
    print(f"beside a {args.pages}-page job: {', '.join(f'{s:.2f}' for s in beside)} s")
    print(f"  median {b:.2f} s; the whole run {time.perf_counter() - started:.0f} s")
    print(result_line("fairness_beside_minus_alone_s", b - a))


if __name__ == "__main__":
    main()
