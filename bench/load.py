"""Load: 20 concurrent uploads of a 20-page set against one embedded stack
(offline extractor): every report completes and holds every page exactly once.

    python -m bench.load [--jobs 20] [--pages 20] [--workers 1]

Last line: ``RESULT load_complete_share <complete reports with every page / jobs>`` (1.000).
"""

import argparse
import asyncio
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
from shared.contracts.report import Report
from shared.infra.settings import Settings

WARMUP_PAGES = 4


async def burst(
    settings: Settings, pdf: bytes, jobs: int, timeout: float
) -> tuple[list[Report], list[float], float]:
    """Upload ``jobs`` copies of ``pdf`` at once; every report, the upload latencies and the
    seconds from the first upload to the last report."""
    api = f"http://127.0.0.1:{settings.api_port}"
    async with watch(settings) as watcher, httpx.AsyncClient() as client:
        started = time.perf_counter()
        accepted = await asyncio.gather(
            *(upload(client, api, pdf, name=f"load-{i}.pdf") for i in range(jobs))
        )
        job_ids = [job_id for job_id, _ in accepted]
        done = await asyncio.gather(*(watcher.report(job_id, timeout) for job_id in job_ids))
        reports = await asyncio.gather(*(fetch_report(client, api, job_id) for job_id in job_ids))
        return reports, [s for _, s in accepted], max(done) - started


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="concurrent uploads against one stack")
    parser.add_argument("--jobs", type=int, default=20)
    parser.add_argument("--pages", type=int, default=20)
    parser.add_argument("--workers", type=int, default=1, help="extract workers")
    parser.add_argument("--timeout", type=float, default=1800)
    return parser.parse_args(argv)


def main() -> None:
    args = parse_args()
    pdf, warmup = set_bytes(args.pages), set_bytes(WARMUP_PAGES)
    with embedded_servers("load") as servers:
        settings = isolated(servers.settings)
        with services(settings, extract_workers=args.workers):
            asyncio.run(run_job(settings, warmup))
            reports, latencies, seconds = asyncio.run(burst(settings, pdf, args.jobs, args.timeout))

    complete = [r for r in reports if r.status == "complete"]
    whole = [r for r in reports if report_pages_ok(r, args.pages)]
    verified = sum(1 for r in reports for p in r.pages if p.status == "verified")
    good = [r for r in complete if report_pages_ok(r, args.pages)]
    total = args.jobs * args.pages
    print(f"{args.jobs} concurrent uploads of {args.pages} pages, {args.workers} extract worker(s)")
    print(f"  reports complete                 {len(complete)}/{args.jobs}")
    print(f"  reports with every page once     {len(whole)}/{args.jobs}")
    print(f"  pages verified                   {verified}/{total}")
    mean = sum(latencies) / len(latencies)
    print(f"  202 latency                      max {max(latencies):.2f} s, mean {mean:.2f} s")
    print(f"  first upload to last report      {seconds:.1f} s = {total / seconds:.2f} pages/s")
    print(result_line("load_complete_share", len(good) / args.jobs))


if __name__ == "__main__":
    main()
