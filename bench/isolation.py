"""What bounding page work costs: a page's render and text reading (``read_page``) run in a
worker thread, as before pages were bounded, beside the same work in a bounded child process
(``read_page_bounded``: a forkserver child, the source sent once, the page's products sent
back through a pipe), on the same sheets, interleaved, the fastest run of each kept.

    python -m bench.isolation [--pages 40] [--runs 3]

Last line: ``RESULT isolation_ratio <bounded seconds / in-thread seconds>`` (goal <= 1.1).
"""

import argparse
import asyncio
import time

from bench.common import ratio, result_line
from bench.synthetic import set_bytes
from services.extract.bootstrap import page_readers
from services.extract.reading.page import read_page, read_page_bounded
from shared.contracts.interfaces import PageReader
from shared.infra.settings import Settings

GOAL = 1.1


async def in_thread(pdf: bytes, pages: int, settings: Settings) -> float:
    started = time.perf_counter()
    for n in range(1, pages + 1):
        await asyncio.to_thread(read_page, pdf, n, settings)
    return time.perf_counter() - started


async def bounded(pdf: bytes, pages: int, settings: Settings, readers: PageReader) -> float:
    started = time.perf_counter()
    for n in range(1, pages + 1):
        await read_page_bounded(pdf, n, settings, readers)
    return time.perf_counter() - started


async def measure(pages: int, runs: int) -> tuple[list[float], list[float]]:
    pdf, settings = set_bytes(pages), Settings(_env_file=None)
    with page_readers() as readers:
        # the forkserver and first child start once per worker
        await bounded(pdf, 1, settings, readers.pages)
        await in_thread(pdf, 1, settings)
        threads, children = [], []
        for _ in range(runs):
            threads.append(await in_thread(pdf, pages, settings))
            children.append(await bounded(pdf, pages, settings, readers.pages))
    return threads, children


def main() -> None:
    parser = argparse.ArgumentParser(description="page work in a thread vs a bounded child")
    parser.add_argument("--pages", type=int, default=40)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    threads, children = asyncio.run(measure(args.pages, args.runs))
    thread, child = min(threads), min(children)
    print(f"{args.pages} sheets, 36x24 in, one page at a time")
    print(
        f"  in a thread:            {1000 * thread / args.pages:7.1f} ms/page  runs (s): "
        + ", ".join(f"{t:.2f}" for t in threads)
    )
    print(
        f"  in a bounded child:     {1000 * child / args.pages:7.1f} ms/page  runs (s): "
        + ", ".join(f"{t:.2f}" for t in children)
    )
    print(f"  bounded / thread        {ratio(child, thread):.2f}x the time (goal <= {GOAL})")
    print(result_line("isolation_ratio", ratio(child, thread)))


if __name__ == "__main__":
    main()
