"""A NATS JetStream cluster on loopback: three ``nats-server`` processes (the pip-installed
binary the embedded launcher uses) joined by cluster routes, each with its own store dir and
free ports, so a test can kill the node that leads a stream and start it again."""

import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from sheetflow.runtime import ManagedProcess, RuntimeStartError, free_port, start_nats

# Starts of the cluster on fresh ports where one chosen free was taken before it was bound.
PORT_ATTEMPTS = 3


@dataclass
class Node:
    name: str
    client_port: int
    route_port: int
    monitor_port: int
    process: ManagedProcess | None = None

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.client_port}"

    @property
    def route(self) -> str:
        return f"nats://127.0.0.1:{self.route_port}"

    def healthy(self) -> bool:
        """The node serves JetStream and is current with the cluster (NATS ``/healthz``)."""
        try:
            url = f"http://127.0.0.1:{self.monitor_port}/healthz"
            return httpx.get(url, timeout=1.0).status_code == 200
        except httpx.HTTPError:
            return False


@dataclass
class NatsCluster:
    data_dir: Path
    size: int = 3
    name: str = "sheetflow-test"
    nodes: dict[str, Node] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._choose_ports()

    def _choose_ports(self) -> None:
        for i in range(1, self.size + 1):
            name = f"n{i}"
            self.nodes[name] = Node(name, free_port(), free_port(), free_port())

    @property
    def url(self) -> str:
        """Every node's client URL, comma-separated (the form ``SHEETFLOW_NATS_URL`` takes)."""
        return ",".join(node.url for node in self.nodes.values())

    @property
    def monitor_urls(self) -> str:
        """Every node's monitoring URL, comma-separated (what ``sheetflow healthcheck`` takes)."""
        return ",".join(f"http://127.0.0.1:{node.monitor_port}" for node in self.nodes.values())

    def start_node(self, name: str) -> None:
        """Start (or restart, on the same ports and store) one node."""
        node = self.nodes[name]
        routes = ",".join(n.route for n in self.nodes.values() if n.name != name)
        node.process, _ = start_nats(
            self.data_dir / name,
            port=node.client_port,
            extra_args=[
                "--server_name",
                name,
                "--cluster_name",
                self.name,
                "--cluster",
                node.route,
                "--routes",
                routes,
                "-m",
                str(node.monitor_port),
            ],
        )

    def kill(self, name: str) -> None:
        """SIGKILL one node: no goodbye to its peers, as when a machine dies."""
        process = self.nodes[name].process
        assert process, f"{name} is not running"
        process.kill()
        self.nodes[name].process = None

    def wait_healthy(self, timeout: float = 60) -> None:
        """Until every running node reports JetStream current (a meta leader is elected)."""
        deadline = time.monotonic() + timeout
        running = [n for n in self.nodes.values() if n.process]
        while time.monotonic() < deadline:
            if all(n.healthy() for n in running):
                return
            time.sleep(0.2)
        sick = [n.name for n in running if not n.healthy()]
        raise RuntimeError(f"NATS nodes {sick} not healthy within {timeout:.0f}s")

    def start(self) -> None:
        """Start every node. A port chosen free can be taken by another process before its
        node binds it (the other test worker starts servers too): the cluster then starts
        again from empty stores on fresh ports."""
        for attempt in range(1, PORT_ATTEMPTS + 1):
            try:
                for name in self.nodes:
                    self.start_node(name)
                break
            except RuntimeStartError as exc:
                self.stop()
                if "address already in use" not in str(exc) or attempt == PORT_ATTEMPTS:
                    raise
                shutil.rmtree(self.data_dir, ignore_errors=True)
                self._choose_ports()
        self.wait_healthy()

    def stop(self) -> None:
        for node in self.nodes.values():
            if node.process:
                node.process.stop()
                node.process = None
