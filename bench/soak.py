"""Soak: a stack under steady use for minutes, with a NATS restart, an S3 restart and an
extract worker killed on the way; whether anything grows with requests or is lost.

    python -m bench.soak [--minutes 10] [--uploaders 3] [--pollers 50]

Loopback only, bounded in time: ``--uploaders`` clients upload real corpus sets one after
another (each waits for its job's report before the next), ``--pollers`` clients read a job's
status and download a finished report about once a second each. At 30 %, 50 % and 70 % of
the run NATS is restarted, S3 is restarted and the extract worker is SIGKILLed (each
restarted as ``sheetflow up``'s supervisor would); a fault's window lasts until the API is
ready again plus ``FAULT_GRACE_S``. Uploads stop at the end of the run; jobs still running
are given ``--drain`` seconds more.

Prints the p50/p99 latency of uploads and status reads, the 5xx answers inside and outside
the fault windows, the consumers on the stream and the job store over time, each process's
RSS after the warm-up (every set uploaded once, before the run's clock starts) and at the
end, pages lost or duplicated, and jobs not finished. Last
line: ``RESULT soak_pages_lost_or_duplicated N``.
"""

import argparse
import asyncio
import contextlib
import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx
import nats

from bench.common import embedded_servers, isolated, result_line, rss_mb, services
from bench.corpus import CORPUS
from shared.infra.settings import Settings
from sheetflow.cli.events import nats_options
from sheetflow.runtime import ManagedProcess, stop_processes

# After a fault, answers are counted as the fault's until the API is ready again and then
# this long (clients' retries and redeliveries settle).
FAULT_GRACE_S = 15.0
# The fault schedule: when (share of the run) and what.
FAULTS = ((0.3, "nats restart"), (0.5, "s3 restart"), (0.7, "extract kill"))
CONSUMERS_EVERY_S = 30.0
# The warm-up waits at most this long for each set's job.
WARM_UP_JOB_S = 300.0
# Sets of at most this many pages are uploaded: the run is about staying power, not size.
MAX_SET_PAGES = 12


@dataclass
class Answer:
    at: float  # seconds into the run
    kind: str  # "upload", "status", "report"
    status: int  # HTTP status, 0 for a transport error
    seconds: float


@dataclass
class Soak:
    settings: Settings
    started: float = field(default_factory=time.monotonic)
    answers: list[Answer] = field(default_factory=list)
    windows: list[tuple[str, float, float]] = field(default_factory=list)
    jobs: dict[str, int] = field(default_factory=dict)  # job id -> pages uploaded
    finished: set[str] = field(default_factory=set)
    consumers: list[tuple[float, int, int]] = field(default_factory=list)

    @property
    def api(self) -> str:
        return f"http://127.0.0.1:{self.settings.api_port}"

    def now(self) -> float:
        return time.monotonic() - self.started

    async def call(self, client: httpx.AsyncClient, kind: str, send) -> httpx.Response | None:
        began = time.monotonic()
        try:
            r = await send()
        except httpx.HTTPError:
            self.answers.append(Answer(self.now(), kind, 0, time.monotonic() - began))
            return None
        self.answers.append(Answer(self.now(), kind, r.status_code, time.monotonic() - began))
        return r


def corpus_sets() -> list[tuple[str, bytes, int]]:
    entries = json.loads((CORPUS / "manifest.json").read_text())["files"]
    sets = []
    for entry in entries:
        pages = int(entry["pages"])
        if pages <= MAX_SET_PAGES:
            sets.append((entry["file"], (CORPUS / "pdfs" / entry["file"]).read_bytes(), pages))
    return sets


async def uploader(
    soak: Soak, sets: list[tuple[str, bytes, int]], until: float, drain: float
) -> None:
    """Upload a set, wait for its job to end (``drain`` seconds past ``until`` at most), and
    again, until ``until``."""
    async with httpx.AsyncClient(base_url=soak.api, timeout=60) as client:
        while soak.now() < until:
            name, pdf, pages = random.choice(sets)
            files = {"file": (name, pdf, "application/pdf")}
            r = await soak.call(client, "upload", lambda f=files: client.post("/v1/jobs", files=f))
            if r is None or r.status_code != 202:
                await asyncio.sleep(float(r.headers.get("Retry-After", 2)) if r else 2)
                continue
            job_id = r.json()["job_id"]
            soak.jobs[job_id] = pages
            await wait_finished(soak, client, job_id, until + drain)


async def warm_up(soak: Soak, sets: list[tuple[str, bytes, int]]) -> None:
    """Every set once, one after another: what a new set fills (caches, the largest page
    so far) is filled before RSS is first taken, so the run measures growth with use."""
    async with httpx.AsyncClient(base_url=soak.api, timeout=60) as client:
        for name, pdf, pages in sets:
            r = await client.post("/v1/jobs", files={"file": (name, pdf, "application/pdf")})
            r.raise_for_status()
            job_id = r.json()["job_id"]
            soak.jobs[job_id] = pages
            await wait_finished(soak, client, job_id, soak.now() + WARM_UP_JOB_S)


async def wait_finished(soak: Soak, client: httpx.AsyncClient, job_id: str, until: float) -> None:
    while soak.now() < until:
        with contextlib.suppress(httpx.HTTPError, ValueError):
            r = await client.get(f"/v1/jobs/{job_id}")
            if r.status_code == 200 and r.json().get("finished_at"):
                soak.finished.add(job_id)
                return
        await asyncio.sleep(1.0)


async def poller(soak: Soak, until: float, interval: float) -> None:
    """Read a random job's status and download a random finished job's report."""
    async with httpx.AsyncClient(base_url=soak.api, timeout=30) as client:
        await asyncio.sleep(random.random() * interval)
        while soak.now() < until:
            if soak.jobs:
                job_id = random.choice(list(soak.jobs))
                await soak.call(client, "status", lambda j=job_id: client.get(f"/v1/jobs/{j}"))
            if soak.finished:
                job_id = random.choice(sorted(soak.finished))
                url = f"/v1/jobs/{job_id}/report"
                await soak.call(client, "report", lambda u=url: client.get(u))
            await asyncio.sleep(interval)


async def count_consumers(soak: Soak, stop: asyncio.Event) -> None:
    """The consumers on the stream and on the job store, every ``CONSUMERS_EVERY_S`` and once
    more when ``stop`` is set."""
    settings = soak.settings

    async def quiet(_: Exception) -> None:  # the NATS restart is expected: no tracebacks
        pass

    nc = await nats.connect(
        settings.nats_servers,
        error_cb=quiet,
        max_reconnect_attempts=-1,
        **nats_options(settings),
    )
    try:
        while True:
            with contextlib.suppress(Exception):
                js = nc.jetstream(timeout=5)
                stream = len(await js.consumers_info(settings.stream_name))
                kv = len(await js.consumers_info(f"KV_{settings.kv_bucket}"))
                soak.consumers.append((soak.now(), stream, kv))
            if stop.is_set():
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), CONSUMERS_EVERY_S)
    finally:
        await nc.close()


async def fault(soak: Soak, name: str, at: float, act: Callable[[], None]) -> None:
    """At ``at`` seconds, do ``act``, then keep the window open until the API is ready again
    plus the grace. ``act`` runs in the main thread, holding up the clients for the seconds a
    restart takes (inside the window): a process started from another thread is killed when
    that thread ends (the launcher's parent-death signal)."""
    await asyncio.sleep(max(0.0, at - soak.now()))
    began = soak.now()
    act()
    async with httpx.AsyncClient(base_url=soak.api, timeout=5) as client:
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if (await client.get("/readyz")).status_code == 200:
                    break
            await asyncio.sleep(0.5)
    await asyncio.sleep(FAULT_GRACE_S)
    soak.windows.append((name, began, soak.now()))


def restarter(procs: list[ManagedProcess], index: int, *, kill: bool = False) -> Callable[[], None]:
    """Stop (or SIGKILL) ``procs[index]`` and start it again in its place."""

    def act() -> None:
        proc = procs[index]
        if kill:
            proc.kill()
        else:
            stop_processes([proc])
        assert proc.restart is not None
        procs[index] = proc.restart()

    return act


def percentile(values: list[float], share: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def fetch_reports(soak: Soak) -> tuple[int, int, list[str]]:
    """Pages lost and duplicated over every finished job's report, and the jobs not finished."""
    lost = duplicated = 0
    async with httpx.AsyncClient(base_url=soak.api, timeout=60) as client:
        ready = await client.get("/readyz")
        print(f"  readyz at the end: {ready.status_code} {ready.text[:200]}")
        for job_id in sorted(soak.finished):
            r = await client.get(f"/v1/jobs/{job_id}/report")
            numbers = [p["page_number"] for p in r.json()["pages"]] if r.status_code == 200 else []
            expected = set(range(1, soak.jobs[job_id] + 1))
            lost += len(expected - set(numbers))
            duplicated += len(numbers) - len(set(numbers))
            if set(numbers) != expected or len(numbers) != len(expected):
                print(f"  {job_id}: report {r.status_code} {r.text[:120]}, {len(expected)} pages")
        for job_id in sorted(set(soak.jobs) - soak.finished):
            r = await client.get(f"/v1/jobs/{job_id}")
            body = r.json() if r.status_code == 200 else {"answer": r.text[:200]}
            said = {k: body.get(k) for k in ("file_name", "pages", "stalled", "idle_seconds")}
            print(f"  not finished {job_id}: {r.status_code} {said}")
    return lost, duplicated, sorted(set(soak.jobs) - soak.finished)


def rss_by_process(procs: list[ManagedProcess]) -> dict[str, float]:
    return {p.name.split("-")[0]: rss_mb(p) for p in procs if p.alive()}


async def run(soak: Soak, servers: list[ManagedProcess], stack: list[ManagedProcess], args) -> dict:
    total = args.minutes * 60
    sets = corpus_sets()
    extract = next(i for i, p in enumerate(stack) if p.name.startswith("extract"))
    acts = {
        "nats restart": restarter(servers, 0),
        "s3 restart": restarter(servers, 1),
        "extract kill": restarter(stack, extract, kill=True),
    }
    await warm_up(soak, sets)
    rss = {"start": rss_by_process(servers + stack)}
    soak.started = time.monotonic()  # the run's clock starts after the warm-up
    stop = asyncio.Event()
    counting = asyncio.create_task(count_consumers(soak, stop))
    await asyncio.gather(
        *(uploader(soak, sets, total, args.drain) for _ in range(args.uploaders)),
        *(poller(soak, total, args.poll_interval) for _ in range(args.pollers)),
        *(fault(soak, name, share * total, acts[name]) for share, name in FAULTS),
    )
    stop.set()
    await counting
    rss["end"] = rss_by_process(servers + stack)
    return rss


def in_window(soak: Soak, at: float) -> bool:
    return any(began <= at <= ended for _, began, ended in soak.windows)


def report(soak: Soak, rss: dict[str, dict[str, float]], pages: tuple[int, int, list[str]]):
    lost, duplicated, unfinished = pages
    print(f"soak: {soak.now() / 60:.1f} min, {len(soak.jobs)} jobs uploaded")
    for kind in ("upload", "status", "report"):
        seconds = [a.seconds for a in soak.answers if a.kind == kind and a.status]
        print(
            f"  {kind:7} {len(seconds):6} answers, p50 {1000 * percentile(seconds, 0.5):7.1f} ms,"
            f" p99 {1000 * percentile(seconds, 0.99):7.1f} ms"
        )
    failures = [a for a in soak.answers if a.status >= 500 or a.status == 0]
    outside = [a for a in failures if not in_window(soak, a.at)]
    print(f"  5xx or no answer: {len(failures)} in all, {len(outside)} outside the fault windows")
    for a in outside[:10]:
        print(f"    at {a.at:.0f} s: {a.kind} {a.status or 'no answer'}")
    for name, began, ended in soak.windows:
        print(f"  fault {name:13} at {began:5.0f} s, window {ended - began:5.1f} s")
    series = ", ".join(f"{at:.0f}s {s}/{kv}" for at, s, kv in soak.consumers)
    print(f"  consumers (stream/job store) over time: {series}")
    for name in sorted(rss.get("end", {})):
        start, end = rss.get("start", {}).get(name, float("nan")), rss["end"][name]
        print(f"  rss {name:9} {start:7.0f} MB after warm-up, {end:7.0f} MB at the end")
    print(f"  pages lost {lost}, duplicated {duplicated}; jobs not finished {len(unfinished)}")
    print(result_line("soak_pages_lost_or_duplicated", lost + duplicated))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="a stack under steady use, with faults")
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--uploaders", type=int, default=3)
    parser.add_argument("--pollers", type=int, default=50)
    parser.add_argument("--poll-interval", type=float, default=1.0)
    parser.add_argument("--drain", type=float, default=300, help="seconds to let jobs end")
    return parser.parse_args(argv)


def main() -> None:
    args = parse_args()
    with embedded_servers("soak") as servers:
        settings = isolated(servers.settings)
        with services(settings) as stack:
            soak = Soak(settings)
            rss = asyncio.run(run(soak, servers.processes, stack.procs, args))
            pages = asyncio.run(fetch_reports(soak))
            if pages[0] or pages[1] or pages[2]:  # what the services said, before it is gone
                print(stack.logs(tail=4000))
    report(soak, rss, pages)


if __name__ == "__main__":
    main()
