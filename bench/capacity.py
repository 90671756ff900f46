"""Per-page resource figures for capacity planning (deploy/SCALING.md), measured on one job
of ``--pages`` synthetic sheets after a warm-up job, in three runs on stacks started here:

- ``offline``: no model, one NATS node;
- ``model``: a scripted OpenAI-compatible model (vision pass and judge, each call answered
  after ``--latency`` s) on loopback, one NATS node;
- ``cluster``: no model, a 3-node NATS cluster on loopback with SHEETFLOW_STREAM_REPLICAS=3.

Per page, less what the idle stack uses in as long (pull loops polling, RAFT heartbeats: a
cost per second and per process, shown apart): CPU ms of every process (services, NATS, the
S3 server; the model server runs in this process and is not counted), objects, bytes and
requests in S3, events and bytes on the stream, messages and bytes through the NATS servers,
KV writes/reads/watches, JetStream acks and pulls, model calls and the bytes sent to the
model. Then the arithmetic for
``--pages-per-day`` at ``--peak`` times the mean rate: workers per service, NATS and S3
throughput, storage, model calls in flight.

    python -m bench.capacity [--pages 40] [--latency 0.5] [--pages-per-day 1000000]

Last line: ``RESULT capacity_cpu_ms_per_page <offline CPU ms per page, all processes>``.
"""

import argparse
import asyncio
import contextlib
import dataclasses
import json
import math
import re
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import nats
from faststream.nats.subscriber.usecases.basic import DefaultSubscriber
from pydantic import SecretStr

from bench.common import (
    OUT_DIR,
    cpu_by_name,
    cpu_delta,
    isolated,
    report_pages_ok,
    result_line,
    run_job,
    services,
)
from bench.synthetic import set_bytes
from services.extract.app import create_app as create_extract_app
from services.verify.app import create_app as create_verify_app
from shared.infra.settings import Settings
from shared.infra.storage import Keys, ObjectStore
from sheetflow.cli.events import nats_options
from sheetflow.credentials import embedded_s3_credentials
from sheetflow.runtime import (
    ManagedProcess,
    free_port,
    start_nats,
    start_s3,
)
from sheetflow.services import SERVICES
from tests.support.flows import JUDGE_MODEL, is_judge, is_structuring, model_settings, route
from tests.support.model_server import ModelReply, ScriptedModelServer
from tests.support.nats_cluster import NatsCluster

WARMUP_PAGES = 4
IDLE_S = 10.0
DAY_S = 86400
S3_REQUESTS = re.compile(r'^SeaweedFS_s3_request_total\{bucket="([^"]*)",code="\d+",type="(\w+)"\}')


@dataclass
class Nats:
    """The NATS of one run: its processes, client URL(s) and monitoring ports."""

    processes: list[ManagedProcess]
    url: str
    monitor_ports: list[int]
    replicas: int = 1


@dataclass
class PerPage:
    """What one job cost, divided by its page count."""

    cpu_ms: dict[str, float]
    nats_node_cpu_ms: list[float]
    s3_objects: float
    s3_bytes: float
    source_bytes: float
    s3_requests: dict[str, float]
    stream_events: dict[str, float]
    stream_event_bytes: float
    stream_stored_bytes: float
    nats_msgs: float
    nats_bytes: float
    kv: dict[str, float]
    pages_per_s: float
    idle_cpu_ms_per_s: float  # the stack with nothing to do, every process
    idle_nats_msgs_per_s: float
    model_calls: dict[str, float] = field(default_factory=dict)
    model_request_bytes: float = 0.0

    @property
    def cpu_total_ms(self) -> float:
        return sum(self.cpu_ms.values())


@dataclass
class Traffic:
    """Counted on core NATS subscriptions while a job runs: JetStream publishes, KV and
    JetStream API requests are plain NATS messages too, so reading them disturbs nothing."""

    events: Counter = field(default_factory=Counter)
    event_bytes: int = 0
    kv: Counter = field(default_factory=Counter)


@contextlib.asynccontextmanager
async def tap(settings: Settings) -> AsyncIterator[Traffic]:
    traffic = Traffic()
    stream, bucket = settings.stream_name, settings.kv_bucket
    kv_stream = f"KV_{bucket}"

    def counting(kind: str):
        async def count(msg) -> None:
            traffic.kv[kind] += 1

        return count

    async def on_event(msg) -> None:
        traffic.events[msg.subject.removeprefix(f"{settings.namespace}.")] += 1
        traffic.event_bytes += len(msg.data)

    watched = {
        f"{settings.namespace}.>": on_event,
        f"$KV.{bucket}.>": counting("writes"),
        f"$JS.API.DIRECT.GET.{kv_stream}": counting("reads"),
        f"$JS.API.DIRECT.GET.{kv_stream}.>": counting("reads"),
        f"$JS.API.STREAM.MSG.GET.{kv_stream}": counting("reads"),
        f"$JS.API.CONSUMER.CREATE.{kv_stream}": counting("watches"),
        f"$JS.API.CONSUMER.CREATE.{kv_stream}.>": counting("watches"),
        f"$JS.ACK.{stream}.>": counting("acks"),
        f"$JS.API.CONSUMER.MSG.NEXT.{stream}.>": counting("pulls"),
    }
    nc = await nats.connect(settings.nats_servers, **nats_options(settings))
    try:
        for subject, callback in watched.items():
            await nc.subscribe(subject, cb=callback)
        await nc.flush()
        yield traffic
    finally:
        await nc.close()


def varz(ports: list[int]) -> tuple[int, int]:
    """Messages and bytes in + out of every NATS server so far (clients and routes)."""
    msgs = data = 0
    for port in ports:
        v = httpx.get(f"http://127.0.0.1:{port}/varz", timeout=5).json()
        msgs += v["in_msgs"] + v["out_msgs"]
        data += v["in_bytes"] + v["out_bytes"]
    return msgs, data


def s3_requests(metrics_port: int | None, bucket: str) -> Counter:
    """S3 requests so far on ``bucket`` by type (PUT, GET, HEAD, ...), from SeaweedFS's
    Prometheus metrics; empty when the S3 server is not SeaweedFS."""
    counts: Counter = Counter()
    if metrics_port is None:
        return counts
    text = httpx.get(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5).text
    for line in text.splitlines():
        if (m := S3_REQUESTS.match(line)) and m.group(1) == bucket:
            counts[m.group(2)] += int(float(line.rsplit(" ", 1)[1]))  # a count, printed as float
    return counts


async def stored(settings: Settings, job_id: str) -> tuple[int, int, int]:
    """Objects under the job's prefix, their bytes, and the source PDF's bytes."""
    store = ObjectStore(settings)
    keys = await store.list_keys(Keys.job(job_id))
    sizes = {key: len(await store.get_bytes(key)) for key in keys}
    return len(keys), sum(sizes.values()), sizes.get(Keys.source(job_id), 0)


async def stream_state(settings: Settings) -> int:
    async with await nats.connect(settings.nats_servers, **nats_options(settings)) as nc:
        info = await nc.jetstream().stream_info(settings.stream_name)
        return info.state.bytes


def nats_node_cpu(nats_procs: list[ManagedProcess]) -> list[float]:
    return [cpu_by_name([p]).get("nats", 0.0) for p in nats_procs]


@dataclass
class Usage:
    """What the stack used over a window of ``seconds``."""

    seconds: float = 0.0
    cpu: dict[str, float] = field(default_factory=dict)  # CPU s by process kind
    node_cpu: list[float] = field(default_factory=list)  # CPU s of each NATS node
    nats_msgs: float = 0.0
    nats_bytes: float = 0.0
    s3: Counter = field(default_factory=Counter)
    traffic: Traffic = field(default_factory=Traffic)

    def less_idle(self, idle: "Usage") -> "Usage":
        """This window less what the idle stack uses in as long (pull loops polling, RAFT
        heartbeats): what the work itself cost. Events, KV writes, objects: never idle."""
        k = self.seconds / idle.seconds

        def less(a: float, b: float) -> float:
            return max(0.0, a - k * b)

        return Usage(
            seconds=self.seconds,
            cpu={n: less(v, idle.cpu.get(n, 0.0)) for n, v in self.cpu.items()},
            node_cpu=[less(a, b) for a, b in zip(self.node_cpu, idle.node_cpu, strict=True)],
            nats_msgs=less(self.nats_msgs, idle.nats_msgs),
            nats_bytes=less(self.nats_bytes, idle.nats_bytes),
            s3=self.s3,
            traffic=Traffic(
                events=self.traffic.events,
                event_bytes=self.traffic.event_bytes,
                kv=Counter({n: less(v, idle.traffic.kv[n]) for n, v in self.traffic.kv.items()}),
            ),
        )


@dataclass
class Meter:
    settings: Settings
    everyone: list[ManagedProcess]
    servers: Nats
    s3_metrics: int | None

    def _read(self) -> tuple:
        msgs, data = varz(self.servers.monitor_ports)
        return (
            time.monotonic(),
            cpu_by_name(self.everyone),
            nats_node_cpu(self.servers.processes),
            msgs,
            data,
            s3_requests(self.s3_metrics, self.settings.s3_bucket),
        )

    @contextlib.asynccontextmanager
    async def window(self) -> AsyncIterator[Usage]:
        """Fills the yielded Usage with what the stack used while the block ran."""
        usage = Usage()
        t0, cpu0, node0, msgs0, bytes0, s3_0 = self._read()
        async with tap(self.settings) as traffic:
            yield usage
        t1, cpu1, node1, msgs1, bytes1, s3_1 = self._read()
        usage.seconds = t1 - t0
        usage.cpu = cpu_delta(cpu0, cpu1)
        usage.node_cpu = [b - a for a, b in zip(node0, node1, strict=True)]
        usage.nats_msgs, usage.nats_bytes = msgs1 - msgs0, bytes1 - bytes0
        usage.s3 = s3_1 - s3_0
        usage.traffic = traffic


async def measure(
    meter: Meter, pdf: bytes, pages: int, model: ScriptedModelServer | None
) -> PerPage:
    """What the idle stack uses per second; then one job of ``pdf``, less that idle use,
    divided by ``pages``."""
    settings = meter.settings
    async with meter.window() as idle:
        await asyncio.sleep(IDLE_S)
    stream0 = await stream_state(settings)
    calls0 = len(model.requests) if model else 0
    async with meter.window() as job:
        report, elapsed = await run_job(settings, pdf)
        await asyncio.sleep(1.0)  # the last acks and KV writes after report.ready
    stream1 = await stream_state(settings)
    if not report_pages_ok(report, pages):
        raise RuntimeError("the report does not hold every page once")
    objects, object_bytes, source = await stored(settings, report.job_id)
    requests = list(model.requests)[calls0:] if model else []
    work = job.less_idle(idle)

    def each(value: float) -> float:
        return value / pages

    kinds = Counter(
        "judge" if is_judge(r) else "structuring" if is_structuring(r) else "vision"
        for r in requests
    )
    return PerPage(
        cpu_ms={name: 1000 * each(sec) for name, sec in work.cpu.items()},
        nats_node_cpu_ms=[1000 * each(sec) for sec in work.node_cpu],
        s3_objects=each(objects),
        s3_bytes=each(object_bytes),
        source_bytes=each(source),
        s3_requests={kind: each(n) for kind, n in work.s3.items()},
        stream_events={name: each(n) for name, n in work.traffic.events.items()},
        stream_event_bytes=each(work.traffic.event_bytes),
        stream_stored_bytes=each(stream1 - stream0),
        nats_msgs=each(work.nats_msgs),
        nats_bytes=each(work.nats_bytes),
        kv={kind: each(n) for kind, n in work.traffic.kv.items()},
        pages_per_s=pages / elapsed,
        idle_cpu_ms_per_s=sum(idle.cpu.values()) * 1000 / idle.seconds,
        idle_nats_msgs_per_s=idle.nats_msgs / idle.seconds,
        model_calls={kind: each(n) for kind, n in kinds.items()},
        model_request_bytes=each(sum(len(json.dumps(r)) for r in requests)),
    )


@contextlib.contextmanager
def single_node(data_dir: Path) -> Iterator[Nats]:
    port = free_port()
    proc, url = start_nats(data_dir, extra_args=["-m", str(port)])
    try:
        yield Nats([proc], url, [port])
    finally:
        proc.stop()


@contextlib.contextmanager
def three_nodes(data_dir: Path) -> Iterator[Nats]:
    cluster = NatsCluster(data_dir)
    cluster.start()
    try:
        nodes = list(cluster.nodes.values())
        yield Nats(
            [n.process for n in nodes if n.process], cluster.url, [n.monitor_port for n in nodes], 3
        )
    finally:
        cluster.stop()


@dataclass
class S3:
    """The embedded S3 server of the runs: the settings that reach it, its process, and its
    Prometheus port when it is SeaweedFS (request counts by type)."""

    settings: dict[str, object]
    process: ManagedProcess
    metrics_port: int | None


@contextlib.contextmanager
def s3_server(data_dir: Path) -> Iterator[S3]:
    metrics = None if shutil.which("minio") else free_port()
    extra = [f"-metricsPort={metrics}"] if metrics else []
    proc, endpoint = start_s3(data_dir, extra_args=extra)
    access, secret = embedded_s3_credentials(data_dir)
    reach = {"s3_endpoint": endpoint, "s3_access_key": access, "s3_secret_key": SecretStr(secret)}
    try:
        yield S3(reach, proc, metrics)
    finally:
        proc.stop()


def run(
    label: str,
    base: Settings,
    servers: Nats,
    s3: S3,
    pdf: bytes,
    pages: int,
    model: ScriptedModelServer | None = None,
) -> PerPage:
    settings = isolated(base, nats_url=servers.url, stream_replicas=servers.replicas, **s3.settings)
    if model:
        settings = model_settings(settings, model, llm_verify_model=JUDGE_MODEL)
    print(f"  {label}: {pages} sheets ...", flush=True)
    with services(settings) as running:
        everyone = [*running.procs, *servers.processes, s3.process]
        asyncio.run(run_job(settings, set_bytes(WARMUP_PAGES)))
        meter = Meter(settings, everyone, servers, s3.metrics_port)
        return asyncio.run(measure(meter, pdf, pages, model))


def pages_in_flight_per_process() -> dict[str, int]:
    """Pull loops per process (pages one process works at once), as the code declares them:
    extract's follows SHEETFLOW_EXTRACT_CONCURRENCY, verify's is fixed."""
    settings = Settings(_env_file=None, nats_url="nats://unused:4222", s3_endpoint="unused:1")
    loops = {}
    for name, create in (("extract", create_extract_app), ("verify", create_verify_app)):
        broker = create(settings).broker
        assert broker is not None
        loops[name] = sum(
            1
            for s in broker.subscribers
            if isinstance(s, DefaultSubscriber) and s.config.durable_name == name
        )
    return loops


def table(columns: dict[str, PerPage]) -> list[str]:
    names = list(columns)
    runs = list(columns.values())
    rows: list[tuple[str, list[str]]] = []

    def row(label: str, values: list[float | None], fmt: str = "{:.1f}") -> None:
        rows.append((label, ["-" if v is None else fmt.format(v) for v in values]))

    row("pages/s of this run", [r.pages_per_s for r in runs])
    row("idle stack: CPU ms/s, all processes", [r.idle_cpu_ms_per_s for r in runs], "{:.0f}")
    row("idle stack: NATS msgs/s", [r.idle_nats_msgs_per_s for r in runs], "{:.0f}")
    kinds = [*SERVICES, "nats", "weed", "minio"]
    for kind in kinds:
        if any(kind in r.cpu_ms for r in runs):
            row(f"CPU ms  {kind}", [r.cpu_ms.get(kind) for r in runs], "{:.0f}")
    row("CPU ms  total", [r.cpu_total_ms for r in runs], "{:.0f}")
    row("CPU ms  busiest NATS node", [max(r.nats_node_cpu_ms) for r in runs], "{:.0f}")
    row("S3  objects written", [r.s3_objects for r in runs])
    row("S3  KB stored (source PDF share incl.)", [r.s3_bytes / 1e3 for r in runs], "{:.0f}")
    row("S3  KB of it source PDF", [r.source_bytes / 1e3 for r in runs], "{:.0f}")
    for kind in sorted({k for r in runs for k in r.s3_requests}):
        row(f"S3  {kind} requests", [r.s3_requests.get(kind, 0.0) for r in runs])
    row("stream  events", [sum(r.stream_events.values()) for r in runs])
    row("stream  event payload KB", [r.stream_event_bytes / 1e3 for r in runs], "{:.2f}")
    row("stream  KB stored (one copy)", [r.stream_stored_bytes / 1e3 for r in runs])
    row("NATS  msgs through servers", [r.nats_msgs for r in runs], "{:.0f}")
    row("NATS  KB through servers", [r.nats_bytes / 1e3 for r in runs])
    for kind in ("writes", "reads", "watches", "acks", "pulls"):
        label = f"{'KV' if kind in ('writes', 'reads', 'watches') else 'JS'}  {kind}"
        row(label, [r.kv.get(kind, 0.0) for r in runs])
    for kind in ("vision", "structuring", "judge"):
        if any(kind in r.model_calls for r in runs):
            row(f"model  {kind} calls", [r.model_calls.get(kind, 0.0) for r in runs], "{:.2f}")
    row("model  KB sent", [r.model_request_bytes / 1e3 for r in runs], "{:.0f}")

    width = max(len(label) for label, _ in rows) + 2
    out = ["  " + " " * width + "".join(f"{n:>12}" for n in names)]
    out += ["  " + label.ljust(width) + "".join(f"{v:>12}" for v in vals) for label, vals in rows]
    out.append(
        "  events per page: "
        + ", ".join(f"{name} {n:.2f}" for name, n in sorted(runs[0].stream_events.items()))
    )
    return out


def arithmetic(
    args: argparse.Namespace, offline: PerPage, model: PerPage, cluster: PerPage
) -> list[str]:
    """What ``args.pages_per_day`` needs, from the per-page figures."""
    mean = args.pages_per_day / DAY_S
    peak = mean * args.peak
    util = args.utilisation
    out: list[str] = []
    say = out.append

    say(
        f"{args.pages_per_day:,.0f} pages/day: mean {mean:.1f} pages/s, peak x{args.peak:g} = "
        f"{peak:.1f} pages/s; a worker process uses one core, at most {util:.0%} busy"
    )
    say("  offline (text layer), R3 cluster figures: worker processes per service at peak")
    for name in SERVICES:
        cores = cluster.cpu_ms.get(name, 0.0) * peak / 1000
        say(f"    {name:<9} {cores:5.2f} cores -> {max(1, math.ceil(cores / util))} workers")
    servers = ", ".join(
        f"{k} {v * peak / 1000:.2f} cores" for k, v in cluster.cpu_ms.items() if k not in SERVICES
    )
    busiest = max(cluster.nats_node_cpu_ms) * peak / 1000
    say(f"    servers   {servers} (NATS: 3 nodes, the busiest {busiest:.2f} cores)")
    total = cluster.cpu_total_ms * peak / 1000
    say(f"    all       {total:.1f} cores at peak, {total / args.peak:.1f} on average")

    say("  model-bound: pages in flight = rate x model latency (Little's law)")
    extract_flight = peak * args.vision_latency
    extract_cpu = max(1, math.ceil(model.cpu_ms.get("extract", 0.0) * peak / 1000 / util))
    for slots in sorted({pages_in_flight_per_process()["extract"], 16, 32}):
        say(
            f"    extract   {extract_flight:.0f} pages in flight at "
            f"{args.vision_latency:g} s/call, "
            f"{slots} per worker (SHEETFLOW_EXTRACT_CONCURRENCY and _LLM_CONCURRENCY >= {slots})"
            f" -> {max(extract_cpu, math.ceil(extract_flight / slots))} workers"
        )
    verify_slots = pages_in_flight_per_process()["verify"]
    verify_flight = peak * args.judge_latency
    verify_cpu = max(1, math.ceil(model.cpu_ms.get("verify", 0.0) * peak / 1000 / util))
    say(
        f"    verify    {verify_flight:.0f} pages in flight at {args.judge_latency:g} s/call, "
        f"{verify_slots} per worker (fixed in code) -> "
        f"{max(verify_cpu, math.ceil(verify_flight / verify_slots))} workers"
    )
    calls = sum(model.model_calls.values()) * peak
    say(
        f"    model     {calls:.0f} calls/s ({calls * 60:,.0f}/min), "
        f"{model.model_request_bytes * peak * 8 / 1e6:.0f} Mbit/s of requests"
    )

    say("  NATS (3 nodes, R3) at peak")
    say(
        f"    {cluster.nats_msgs * peak:,.0f} msgs/s and {cluster.nats_bytes * peak / 1e6:.1f} MB/s"
        " through the servers (clients, routes, replication)"
    )
    kv_ops = sum(cluster.kv.get(k, 0.0) for k in ("writes", "reads")) * peak
    say(
        f"    {sum(cluster.stream_events.values()) * peak:.0f} stream events/s, "
        f"{kv_ops:.0f} KV ops/s"
    )
    per_day = cluster.stream_stored_bytes * args.pages_per_day
    say(
        f"    stream on disk: {per_day / 1e9:.2f} GB/day per copy, "
        f"{per_day * args.retention_days * 3 / 1e9:.0f} GB for {args.retention_days:g} days x 3"
    )

    puts = offline.s3_requests.get("PUT", offline.s3_objects)
    gets = offline.s3_requests.get("GET", 0.0)
    stored_per_day = offline.s3_bytes * args.pages_per_day
    say("  S3 at peak")
    say(
        f"    {puts * peak:.0f} PUT/s, {gets * peak:.0f} GET/s, "
        f"{offline.s3_bytes * peak / 1e6:.1f} MB/s written"
    )
    say(
        f"    {stored_per_day / 1e9:.0f} GB/day, {stored_per_day * args.retention_days / 1e12:.1f}"
        f" TB kept {args.retention_days:g} days (before erasure coding or replication)"
    )
    return out


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="per-page resource figures for capacity planning")
    parser.add_argument("--pages", type=int, default=40, help="sheets in the measured job")
    parser.add_argument("--latency", type=float, default=0.5, help="scripted model s/call")
    parser.add_argument("--scanned-every", type=int, default=None, help="every k-th sheet a scan")
    parser.add_argument("--pages-per-day", type=float, default=1_000_000)
    parser.add_argument("--peak", type=float, default=3.0, help="peak rate / mean rate")
    parser.add_argument("--utilisation", type=float, default=0.7, help="target CPU per worker")
    parser.add_argument("--vision-latency", type=float, default=20.0, help="real model s/call")
    parser.add_argument("--judge-latency", type=float, default=10.0, help="real judge s/call")
    parser.add_argument("--retention-days", type=float, default=30.0)
    return parser.parse_args(argv)


def main() -> None:
    args = parse_args()
    pdf = set_bytes(args.pages, scanned_every=args.scanned_every)
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    data_dir = Path(tempfile.mkdtemp(prefix="capacity-", dir=OUT_DIR))
    base = Settings(_env_file=None, data_dir=data_dir, log_level="WARNING")

    def slow(reply: ModelReply) -> ModelReply:
        return dataclasses.replace(reply, delay_s=args.latency)

    respond = route()
    try:
        with s3_server(data_dir / "s3") as s3:
            with single_node(data_dir / "r1") as r1:
                offline = run("offline", base, r1, s3, pdf, args.pages)
                with ScriptedModelServer(lambda req: slow(respond(req))) as server:
                    model = run("model", base, r1, s3, pdf, args.pages, server)
            with three_nodes(data_dir / "r3") as r3:
                cluster = run("cluster", base, r3, s3, pdf, args.pages)
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)

    scans = f", every {args.scanned_every}th a scan" if args.scanned_every else ""
    print(
        f"per page (less the idle stack's use), one job of {args.pages} sheets of 36x24 in{scans}"
    )
    print("\n".join(table({"offline": offline, "model": model, "offline R3": cluster})))
    print()
    print("\n".join(arithmetic(args, offline, model, cluster)))
    print(result_line("capacity_cpu_ms_per_page", offline.cpu_total_ms))


if __name__ == "__main__":
    main()
