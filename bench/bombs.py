"""Valid uploads under a bomb attack: six clients send PDFs built to exhaust the inspectors,
back to back, while one client sends a small valid set every second; how long the valid
uploads wait for their 202, with the first look (``SHEETFLOW_INSPECT_QUICK_S``) off and on,
side by side on the same servers.

    python -m bench.bombs [--pages 4] [--seconds 60] [--bombers 6]

Last line: ``RESULT bombs_valid_max_vs_goal <slowest valid 202 with the first look / the 2 s
goal>`` (goal <= 1.0).
"""

import argparse
import asyncio
import contextlib
import itertools
import statistics
import time
from collections import Counter

import httpx

from bench.common import embedded_servers, isolated, result_line
from bench.synthetic import set_bytes
from shared.infra.settings import Settings
from sheetflow.runtime import start_service, wait_api_ready
from tests.support.bombs import lying_page_count_pdf, many_objects_pdf

GOAL_S = 2.0
# Bombers start first, so that every inspector is busy before the first valid upload.
HEAD_START_S = 5.0
VALID_EVERY_S = 1.0


def bombs() -> list[bytes]:
    """The hostile uploads, in turn: a flood of objects (about 20 s of inspection each),
    a smaller flood, and a page tree that lies about its size."""
    return [many_objects_pdf(1_000_000), many_objects_pdf(300_000), lying_page_count_pdf(b"99")]


async def bomber(api: str, stop: asyncio.Event, hostile: list[bytes], answers: list[int]) -> None:
    async with httpx.AsyncClient(timeout=120) as client:
        for pdf in itertools.cycle(hostile):
            if stop.is_set():
                return
            with contextlib.suppress(httpx.HTTPError):
                r = await client.post(
                    f"{api}/v1/jobs", files={"file": ("bomb.pdf", pdf, "application/pdf")}
                )
                answers.append(r.status_code)


async def valid_client(api: str, stop: asyncio.Event, pdf: bytes) -> list[float | None]:
    """Seconds to each valid upload's 202 (None: refused)."""
    waits: list[float | None] = []
    async with httpx.AsyncClient(timeout=120) as client:
        while not stop.is_set():
            started = time.perf_counter()
            r = await client.post(
                f"{api}/v1/jobs", files={"file": ("set.pdf", pdf, "application/pdf")}
            )
            waits.append(time.perf_counter() - started if r.status_code == 202 else None)
            await asyncio.sleep(VALID_EVERY_S)
    return waits


Outcome = tuple[list[float | None], Counter[int]]


async def attack(settings: Settings, pdf: bytes, seconds: float, bombers: int) -> Outcome:
    """The valid uploads' waits, and how the bombs were answered (status → count)."""
    api = f"http://127.0.0.1:{settings.api_port}"
    stop, answers = asyncio.Event(), list[int]()
    hostile = bombs()
    attackers = [
        asyncio.create_task(bomber(api, stop, hostile[i % 3 :] + hostile[: i % 3], answers))
        for i in range(bombers)
    ]
    await asyncio.sleep(HEAD_START_S)
    valid = asyncio.create_task(valid_client(api, stop, pdf))
    await asyncio.sleep(seconds)
    stop.set()
    waits = await valid
    for task in attackers:
        task.cancel()
    await asyncio.gather(*attackers, return_exceptions=True)
    return waits, Counter(answers)


def measure(settings: Settings, pdf: bytes, seconds: float, bombers: int) -> Outcome:
    proc = start_service("ingest", settings)
    try:
        wait_api_ready(f"http://127.0.0.1:{settings.api_port}", [proc], 90)
        return asyncio.run(attack(settings, pdf, seconds, bombers))
    finally:
        proc.stop()


def summary(label: str, outcome: Outcome) -> tuple[float, float]:
    waits, bombs_answered = outcome
    done = sorted(w for w in waits if w is not None)
    refused = len(waits) - len(done)
    p50, worst = (statistics.median(done), done[-1]) if done else (float("inf"),) * 2
    print(
        f"  {label:<22} {len(waits):3d} valid uploads, {refused} refused; "
        f"202 after p50 {p50:6.2f} s, max {worst:6.2f} s; bombs answered "
        + ", ".join(f"{status}: {n}" for status, n in sorted(bombs_answered.items()))
    )
    print(f"    slowest: {', '.join(f'{w:.2f}' for w in done[-5:][::-1])} s")
    return p50, (worst if not refused else float("inf"))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="valid uploads' wait while bombs are inspected")
    parser.add_argument("--pages", type=int, default=4, help="pages of the valid set")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--bombers", type=int, default=6)
    return parser.parse_args(argv)


def main() -> None:
    args = parse_args()
    pdf = set_bytes(args.pages)
    with embedded_servers("bombs") as servers:
        base = servers.settings
        without = measure(isolated(base, inspect_quick_s=0.0), pdf, args.seconds, args.bombers)
        with_look = measure(isolated(base), pdf, args.seconds, args.bombers)
    print(
        f"{args.bombers} clients sending bombs back to back, "
        f"a valid {args.pages}-sheet set a second"
    )
    summary("without a first look", without)
    _, worst = summary("with a first look", with_look)
    print(result_line("bombs_valid_max_vs_goal", worst / GOAL_S))


if __name__ == "__main__":
    main()
