"""Ingest latency: upload a 500-page set to a running embedded stack (1 extract worker,
offline), time to the 202 and to the first ``page.extracted`` event (seen on NATS).

    python -m bench.ingest [--pages 500]

Last line: ``RESULT ingest_202_vs_goal <seconds to 202 / the 1 s goal>`` (goal <= 1.0).
"""

import argparse
import asyncio
import time

import httpx

from bench.common import (
    embedded_servers,
    isolated,
    result_line,
    run_job,
    services,
    upload,
    watch,
)
from bench.synthetic import set_bytes
from shared.infra.settings import Settings

GOAL_S = 1.0
WARMUP_PAGES = 4


async def time_upload(settings: Settings, pdf: bytes) -> tuple[float, float]:
    """Seconds from the start of the upload to its 202, and to the job's first page.extracted."""
    api = f"http://127.0.0.1:{settings.api_port}"
    async with watch(settings) as watcher, httpx.AsyncClient() as client:
        started = time.perf_counter()
        job_id, to_202 = await upload(client, api, pdf, name="big-set.pdf")
        first = await watcher.first_extracted(job_id, timeout=120)
        return to_202, first - started


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="time to 202 and to the first page.extracted")
    parser.add_argument("--pages", type=int, default=500)
    return parser.parse_args(argv)


def main() -> None:
    args = parse_args()
    pdf, warmup = set_bytes(args.pages), set_bytes(WARMUP_PAGES)
    with embedded_servers("ingest") as servers:
        settings = isolated(servers.settings)
        with services(settings, extract_workers=1):
            asyncio.run(run_job(settings, warmup))  # first-request costs out of the way
            to_202, to_first = asyncio.run(time_upload(settings, pdf))
    print(f"{args.pages} sheets, {len(pdf) / 2**20:.1f} MiB upload")
    vs_goal = to_202 / GOAL_S
    print(f"  upload to 202                  {to_202:6.2f} s  ({vs_goal:.2f}x the 1 s goal)")
    print(f"  upload to first page.extracted {to_first:6.2f} s")
    print(result_line("ingest_202_vs_goal", vs_goal))


if __name__ == "__main__":
    main()
