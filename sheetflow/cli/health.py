"""Container health checks: ingest answers ``/readyz``; a worker holds its NATS connection
(on any node of a cluster: each node lists only its own clients)."""

import socket
from typing import Any

import httpx

from shared.infra.settings import Settings, nats_server_list
from sheetflow.cli.client import api_url


def healthy(name: str, settings: Settings, monitor: str) -> bool:
    """Whether service ``name`` is healthy; ``monitor`` is the NATS monitoring URL (every
    cluster node's, comma-separated)."""
    if name == "ingest":
        try:
            return httpx.get(f"{api_url(settings)}/readyz", timeout=3).status_code == 200
        except (httpx.HTTPError, OSError):
            return False
    client = f"sheetflow-{name}"
    return any(holds_connection(url, client) for url in nats_server_list(monitor))


def holds_connection(monitor: str, client_name: str) -> bool:
    """Whether the NATS server monitored at ``monitor`` has ``client_name`` connected from
    this host; False when that server does not answer."""
    try:
        url = f"{monitor.rstrip('/')}/connz"
        connz = httpx.get(url, params={"limit": 4096}, timeout=3).json()
        return has_connection(connz, client_name, own_ip(monitor))
    except (httpx.HTTPError, OSError, ValueError):
        return False


def has_connection(connz: dict[str, Any], client_name: str, ip: str) -> bool:
    """Whether NATS's ``/connz`` lists a connection named ``client_name`` from ``ip``."""
    connections = connz.get("connections") or []
    return any(c.get("name") == client_name and c.get("ip") == ip for c in connections)


def own_ip(url: str) -> str:
    """This host's address on the route to ``url`` (what NATS sees as the client ip)."""
    host = httpx.URL(url).host
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect((host, 9))  # UDP connect sends nothing; it only picks the route
        return s.getsockname()[0]
