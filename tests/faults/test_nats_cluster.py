"""A 3-node NATS JetStream cluster loses a node mid-job: the stream and the job KV keep three
copies, the services fail over to the surviving nodes, and no page is lost or doubled."""

import asyncio
from collections.abc import Iterator
from pathlib import Path

import httpx
import nats.errors
import pytest
from nats.js.api import ClusterInfo, StreamInfo
from typer.testing import CliRunner

from shared.infra.settings import Settings
from sheetflow import cli
from sheetflow.services import SERVICES
from tests.faults.conftest import assert_every_page_once, small_set, wait_for
from tests.support.flows import wait_started
from tests.support.nats_cluster import NatsCluster
from tests.support.stack import Stack, nats_client, stack

pytestmark = pytest.mark.slow

JOB_PAGES = 40


@pytest.fixture
def cluster(tmp_path: Path, settings: Settings) -> Iterator[tuple[NatsCluster, Settings]]:
    """Three NATS nodes on loopback; settings that connect to all three and ask for R3."""
    nodes = NatsCluster(tmp_path / "cluster")
    nodes.start()
    try:
        yield nodes, settings.model_copy(update={"nats_url": nodes.url, "stream_replicas": 3})
    finally:
        nodes.stop()


def started(s: Stack) -> Stack:
    """``s`` once every worker service has its consumers (a worker still starting when its
    node dies exits, for its supervisor to restart: these tests are about a running system)."""
    asyncio.run(wait_started([p for name, p in s.procs.items() if name != "ingest"]))
    return s


def stream_info(settings: Settings, stream: str) -> StreamInfo:
    async def ask() -> StreamInfo:
        async with nats_client(settings) as nc:
            return await nc.jetstream().stream_info(stream)

    return asyncio.run(ask())


def kv_stream(settings: Settings) -> str:
    return f"KV_{settings.kv_bucket}"


def leader(settings: Settings, stream: str) -> str | None:
    """The server leading ``stream`` now; None while an election is on."""
    try:
        cluster = stream_info(settings, stream).cluster
        assert cluster is not None, f"{stream} is not clustered"
        return cluster.leader
    except (nats.errors.Error, TimeoutError):  # no responders during the election
        return None


def wait_for_leaders(settings: Settings, without: str) -> None:
    """Until the stream and the job KV have each elected a leader other than ``without``."""
    for name in (settings.stream_name, kv_stream(settings)):
        wait_for(
            lambda name=name: leader(settings, name) not in (None, without),
            60,
            f"a leader of {name} other than {without}",
        )


def all_current(cluster: ClusterInfo | None, size: int) -> bool:
    """A leader and every other replica caught up with it."""
    assert cluster is not None, "the stream is not clustered"
    replicas = cluster.replicas or []
    return bool(cluster.leader) and len(replicas) == size - 1 and all(r.current for r in replicas)


def terminal_pages(s: Stack, job_id: str) -> int:
    """Pages verified or failed so far (0 while the status read fails during an election)."""
    try:
        return s.status(job_id).get("pages_terminal", 0)
    except (httpx.HTTPError, ValueError):
        return 0


def worker_healthy(nodes: NatsCluster, name: str) -> bool:
    """The container healthcheck of worker ``name``, asking every node of the cluster."""
    result = CliRunner().invoke(cli.app, ["healthcheck", name, "--monitor", nodes.monitor_urls])
    return result.exit_code == 0


def run_job(s: Stack, pages: int) -> None:
    created = s.upload(small_set(pages))
    assert created.status_code == 202, created.text
    job_id = created.json()["job_id"]
    assert_every_page_once(s.wait_report(job_id, timeout=120), pages)


def test_stream_and_kv_have_three_replicas_and_survive_the_stream_leader_killed_mid_job(cluster):
    """The node leading the stream SIGKILLed mid-job: the job completes on the other two, every
    one of its 40 pages in the report exactly once, and every worker's healthcheck finds its
    connection on a surviving node."""
    nodes, settings = cluster
    with stack(settings, *SERVICES) as s:
        started(s)
        job_id = s.submit(small_set(JOB_PAGES))
        for name in (settings.stream_name, kv_stream(settings)):
            assert stream_info(settings, name).config.num_replicas == 3, name
        wait_for(lambda: terminal_pages(s, job_id) >= 2, 180, "the first pages to finish")
        doomed = leader(settings, settings.stream_name)
        assert doomed, "the stream has no leader"
        assert terminal_pages(s, job_id) < JOB_PAGES, "the job finished before the kill"
        nodes.kill(doomed)
        report = s.wait_report(job_id, timeout=180)
        successor = leader(settings, settings.stream_name)
        for worker in ("extract", "coverage", "verify", "report"):
            wait_for(lambda w=worker: worker_healthy(nodes, w), 30, f"{worker}'s healthcheck")
        assert not worker_healthy(nodes, "nobody")
    assert successor and successor != doomed
    assert_every_page_once(report, JOB_PAGES)


def test_killed_node_restarts_catches_up_and_holds_the_quorum(cluster):
    """The stream leader killed, a job run on the two left, the node started again: it catches
    up on the stream and the KV, and carries the next job while another node is down."""
    nodes, settings = cluster
    with stack(settings, *SERVICES) as s:
        started(s)
        doomed = leader(settings, settings.stream_name)
        assert doomed, "the stream has no leader"
        nodes.kill(doomed)
        wait_for_leaders(settings, without=doomed)
        run_job(s, 6)

        nodes.start_node(doomed)
        nodes.wait_healthy()
        for name in (settings.stream_name, kv_stream(settings)):
            wait_for(
                lambda name=name: all_current(stream_info(settings, name).cluster, 3),
                60,
                f"{doomed} to catch up on {name}",
            )

        # With a second node down, quorum (2 of 3) needs the restarted node.
        other = next(name for name in nodes.nodes if name != doomed)
        nodes.kill(other)
        wait_for_leaders(settings, without=other)
        run_job(s, 6)
