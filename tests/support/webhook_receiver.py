"""A webhook receiver on loopback for flow and fault tests: it answers each path as told
(a list of statuses in turn, a redirect, or a long silence), verifies each delivery's
signature as the README tells receivers to, and counts events by idempotency key."""

import contextlib
import hashlib
import hmac
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SIGNATURE_TOLERANCE_S = 300


def verify_signature(secret: str, body: bytes, header: str) -> bool:
    """The README's verification snippet."""
    fields = dict(part.split("=", 1) for part in header.split(","))
    timestamp = int(fields["t"])
    expected = hmac.new(
        secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256
    ).hexdigest()
    fresh = abs(time.time() - timestamp) <= SIGNATURE_TOLERANCE_S
    return fresh and hmac.compare_digest(expected, fields["v1"])


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def event(self) -> dict[str, Any]:
        return json.loads(self.body)


@dataclass
class Receiver:
    url: str
    # path → statuses answered in turn (the last one from then on); "redirect" and "slow"
    # are answered so whatever the list says
    answers: dict[str, list[int]] = field(default_factory=dict)
    received: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def on(self, path: str) -> list[Received]:
        with self.lock:
            return [r for r in self.received if r.path == path]

    def events_by_key(self, path: str) -> dict[str, list[Received]]:
        """The deliveries to ``path`` grouped by idempotency key: one event each."""
        keys: dict[str, list[Received]] = {}
        for r in self.on(path):
            keys.setdefault(r.headers["idempotency-key"], []).append(r)
        return keys

    def wait_for(self, path: str, count: int, timeout: float = 60) -> list[Received]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if len(found := self.on(path)) >= count:
                return found
            time.sleep(0.1)
        raise AssertionError(f"{path} received {len(self.on(path))} of {count} in {timeout}s")


@contextlib.contextmanager
def receiver(slow_s: float = 5.0) -> Iterator[Receiver]:
    """Serve a :class:`Receiver` on 127.0.0.1 for the block."""
    state: dict[str, Receiver] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            me = state["receiver"]
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            headers = {k.lower(): v for k, v in self.headers.items()}
            with me.lock:
                me.received.append(Received(self.path, headers, body))
                seen = sum(r.path == self.path for r in me.received)
                statuses = me.answers.get(self.path, [200])
            if self.path.startswith("/slow"):
                time.sleep(slow_s)
            if self.path.startswith("/redirect"):
                self.send_response(302)
                self.send_header("Location", f"{me.url}/ok")
            else:
                self.send_response(statuses[min(seen, len(statuses)) - 1])
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:  # quiet
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state["receiver"] = Receiver(f"http://127.0.0.1:{server.server_address[1]}")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state["receiver"]
    finally:
        server.shutdown()
        server.server_close()
