"""What the stack benchmarks share: settings for a throwaway embedded stack, uploads, and a
NATS watcher that timestamps ``page.extracted`` and ``report.ready`` events as they happen.

Every figure a script prints is a ratio of runs made side by side in the same process:
the machines are shared and noisy, so an absolute time means little on its own.
"""

import asyncio
import contextlib
import json
import os
import shutil
import tempfile
import time
import uuid
from collections import defaultdict
from collections.abc import AsyncIterator, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import nats
import psutil

from shared.contracts.report import Report
from shared.infra.settings import Settings
from sheetflow.cli.events import nats_options
from sheetflow.runtime import (
    EmbeddedServers,
    ManagedProcess,
    free_port,
    process_logs,
    running_stack,
    wait_api_ready,
)

OUT_DIR = Path(__file__).resolve().parent / "out"

# A benchmark must not pick up a developer's .env or SHEETFLOW_ variables.
for _name in [n for n in os.environ if n.startswith("SHEETFLOW_")]:
    del os.environ[_name]


def result_line(name: str, value: float) -> str:
    """The machine-readable last line every bench script prints."""
    return f"RESULT {name} {value:.3f}"


def ratio(a: float, b: float) -> float:
    return a / b if b else float("inf")


@contextlib.contextmanager
def embedded_servers(label: str) -> Iterator[EmbeddedServers]:
    """Embedded NATS and S3 in a scratch directory under bench/out/ (removed afterwards);
    ``.settings`` points at them, ``.processes`` are theirs."""
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    data_dir = Path(tempfile.mkdtemp(prefix=f"{label}-", dir=OUT_DIR))
    servers = EmbeddedServers(Settings(_env_file=None, data_dir=data_dir, log_level="WARNING"))
    try:
        servers.start()
        yield servers
    finally:
        servers.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


def _tree(pid: int) -> list[psutil.Process]:
    with contextlib.suppress(psutil.NoSuchProcess):
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    return []


def cpu_by_name(procs: Iterable[ManagedProcess]) -> dict[str, float]:
    """User + system CPU seconds used so far by each of ``procs`` (and its children), summed
    by kind: replicas ``extract-1``, ``extract-2`` count as ``extract``, ``nats-4222`` as
    ``nats``."""
    totals: dict[str, float] = defaultdict(float)
    for proc in procs:
        kind = proc.name.split("-")[0]
        for p in _tree(proc.pid):
            with contextlib.suppress(psutil.NoSuchProcess):
                t = p.cpu_times()
                totals[kind] += t.user + t.system
    return dict(totals)


def cpu_seconds(procs: Iterable[ManagedProcess]) -> float:
    """User + system CPU seconds used so far by ``procs`` and their children."""
    return sum(cpu_by_name(procs).values())


def cpu_delta(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    return {name: after[name] - before.get(name, 0.0) for name in after}


def cpu_line(delta: dict[str, float], pages: int) -> str:
    """CPU milliseconds per page by process kind, largest first."""
    parts = sorted(delta.items(), key=lambda kv: -kv[1])
    return ", ".join(f"{name} {1000 * sec / pages:.0f}" for name, sec in parts)


def own_cpu_seconds() -> float:
    """CPU seconds of this process (threads included: the scripted model server runs here)."""
    t = psutil.Process().cpu_times()
    return t.user + t.system


def rss_mb(proc: ManagedProcess) -> float:
    """Resident memory of ``proc`` and its children, in MB."""
    total = 0
    for p in _tree(proc.pid):
        with contextlib.suppress(psutil.NoSuchProcess):
            total += p.memory_info().rss
    return total / 2**20


def isolated(settings: Settings, **updates: object) -> Settings:
    """``settings`` with its own namespace, bucket and API port, so stacks on the same
    servers never see each other's messages."""
    tag = uuid.uuid4().hex[:8]
    fresh = {"namespace": f"b{tag}", "s3_bucket": f"bench-{tag}", "api_port": free_port()}
    return settings.model_copy(update={**fresh, **updates})


@dataclass
class Services:
    """Service processes started for one measurement; stopped (process groups) at exit."""

    settings: Settings
    procs: list[ManagedProcess] = field(default_factory=list)

    @property
    def api(self) -> str:
        return f"http://127.0.0.1:{self.settings.api_port}"

    def by_name(self) -> dict[str, ManagedProcess]:
        return {p.name: p for p in self.procs}

    def wait_ready(self, timeout: float = 90) -> None:
        try:
            wait_api_ready(self.api, self.procs, timeout)
        except RuntimeError as exc:
            raise RuntimeError(f"{exc}:\n{self.logs()}") from None

    def logs(self, tail: int = 3000) -> str:
        return process_logs(self.procs, tail)


@contextlib.contextmanager
def services(settings: Settings, *, extract_workers: int = 1) -> Iterator[Services]:
    """Every sheetflow service as a process (``running_stack``), ready to take uploads.
    With ``settings`` pointing at running servers only the services start, so one pair of
    servers serves several side-by-side measurements."""
    with running_stack(settings, extract_workers=extract_workers) as (started, procs):
        running = Services(started, procs)
        running.wait_ready()
        yield running


async def upload(
    client: httpx.AsyncClient,
    api: str,
    pdf: bytes,
    *,
    name: str = "set.pdf",
    options: dict | None = None,
) -> tuple[str, float]:
    """POST the PDF; the job id and the seconds until the 202 came back."""
    data = {"options": json.dumps(options)} if options else None
    started = time.perf_counter()
    r = await client.post(
        f"{api}/v1/jobs", files={"file": (name, pdf, "application/pdf")}, data=data, timeout=120
    )
    elapsed = time.perf_counter() - started
    if r.status_code != 202:
        raise RuntimeError(f"upload refused: {r.status_code} {r.text}")
    return r.json()["job_id"], elapsed


class Watcher:
    """Arrival times (``time.perf_counter``) of ``page.extracted`` per job and of
    ``report.ready``, seen on a plain NATS subscription (JetStream publishes are
    ordinary NATS messages too, so this reads without consuming anyone's messages)."""

    def __init__(self) -> None:
        self.extracted: dict[str, list[float]] = defaultdict(list)
        self.reports: dict[str, float] = {}
        self._waiters: dict[str, asyncio.Event] = defaultdict(asyncio.Event)
        self._first: dict[str, asyncio.Event] = defaultdict(asyncio.Event)

    async def _on_extracted(self, msg) -> None:
        job_id = json.loads(msg.data)["job_id"]
        self.extracted[job_id].append(time.perf_counter())
        self._first[job_id].set()

    async def _on_report(self, msg) -> None:
        job_id = json.loads(msg.data)["job_id"]
        self.reports.setdefault(job_id, time.perf_counter())
        self._waiters[job_id].set()

    async def report(self, job_id: str, timeout: float) -> float:
        """When the job's report was announced (waits for it)."""
        await asyncio.wait_for(self._waiters[job_id].wait(), timeout)
        return self.reports[job_id]

    async def first_extracted(self, job_id: str, timeout: float) -> float:
        await asyncio.wait_for(self._first[job_id].wait(), timeout)
        return self.extracted[job_id][0]


@contextlib.asynccontextmanager
async def watch(settings: Settings) -> AsyncIterator[Watcher]:
    watcher = Watcher()
    nc = await nats.connect(settings.nats_servers, **nats_options(settings))
    try:
        await nc.subscribe(settings.subject("page.extracted"), cb=watcher._on_extracted)
        await nc.subscribe(settings.subject("report.ready"), cb=watcher._on_report)
        await nc.flush()
        yield watcher
    finally:
        await nc.close()


async def fetch_report(client: httpx.AsyncClient, api: str, job_id: str) -> Report:
    """The job's report. Fetched once: ``report.ready`` is published only after the job
    record says finished, so a 404 here is a bug worth failing on."""
    r = await client.get(f"{api}/v1/jobs/{job_id}/report", timeout=30)
    r.raise_for_status()
    return Report.model_validate_json(r.content)


async def run_job(
    settings: Settings, pdf: bytes, *, options: dict | None = None, timeout: float = 900
) -> tuple[Report, float]:
    """Upload ``pdf`` to a running stack and wait for its report: the report and the
    seconds from the start of the upload to ``report.ready``."""
    api = f"http://127.0.0.1:{settings.api_port}"
    async with watch(settings) as watcher, httpx.AsyncClient() as client:
        started = time.perf_counter()
        job_id, _ = await upload(client, api, pdf, options=options)
        done = await watcher.report(job_id, timeout)
        return await fetch_report(client, api, job_id), done - started


def report_pages_ok(report: Report, pages: int) -> bool:
    """Every page of the set is in the report, once, in order."""
    return [p.page_number for p in report.pages] == list(range(1, pages + 1))
