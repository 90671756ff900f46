"""Run sheetflow's services as real processes against the test servers, and talk to them."""

import asyncio
import contextlib
import json
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import nats
from nats.aio.client import Client as NATS

from shared.infra.settings import Settings
from sheetflow.cli.events import nats_options
from sheetflow.runtime import (
    ManagedProcess,
    free_port,
    process_logs,
    start_service,
    stop_processes,
    wait_api_ready,
)
from tests.support.buckets import remove_bucket
from tests.support.report_contract import assert_valid_report

# What every test's services are given (the ``settings`` fixture and the modules' shared
# stacks): a redelivery, an outage and a retry each cost a test seconds, not minutes.
TEST_TIMINGS: dict[str, Any] = {
    "ack_wait_s": 10.0,
    "outage_patience_s": 120.0,
    "in_progress_interval_s": 2.0,
    "retry_backoff_s": 0.2,
    "retry_backoff_max_s": 2.0,
}

# A 503 at upload (NATS or S3 restarting, every inspector busy) is retried this many times in
# all, waiting at most this long each time.
SUBMIT_TRIES = 3
SUBMIT_RETRY_MAX_S = 10.0

# Ports a stack's ingest tries before its start is called failed.
PORT_TRIES = 3


class Stack:
    """Service processes of one test; stopped (process groups killed) at the end."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.procs: dict[str, ManagedProcess] = {}
        self.api = f"http://127.0.0.1:{settings.api_port}"

    def start(
        self,
        name: str,
        *,
        tag: str = "",
        args: list[str] | None = None,
        settings: Settings | None = None,
    ) -> ManagedProcess:
        proc = start_service(name, settings or self.settings, tag=tag, extra_args=args)
        self.procs[f"{name}{tag}"] = proc
        return proc

    def stop_all(self) -> None:
        # All at once, as the CLI stops a stack: one by one, each service's own graceful
        # shutdown (up to a second) would be waited out in turn.
        stop_processes(self.procs.values())

    def logs(self) -> str:
        return process_logs(self.procs.values())

    def wait_ready(self, timeout: float = 60) -> None:
        for _ in range(PORT_TRIES):
            try:
                wait_api_ready(self.api, self.procs.values(), timeout)
                return
            except RuntimeError as exc:
                if not self._port_taken():
                    raise AssertionError(f"{exc}\n{self.logs()}") from None
                self._move_ingest()
        raise AssertionError(f"ingest found no free port in {PORT_TRIES} tries\n{self.logs()}")

    def _port_taken(self) -> bool:
        ingest = self.procs.get("ingest")
        return bool(
            ingest
            and not ingest.alive()
            and ingest.log_path
            and "address already in use" in ingest.log_path.read_text(errors="replace")
        )

    def _move_ingest(self) -> None:
        """Start ingest again on another port: tests on other xdist workers choose ports too,
        and one may bind the port this stack chose before ingest does."""
        self.procs["ingest"].stop()
        self.settings = self.settings.model_copy(update={"api_port": free_port()})
        self.api = f"http://127.0.0.1:{self.settings.api_port}"
        self.start("ingest")

    def upload(
        self,
        pdf: bytes,
        *,
        name: str = "set.pdf",
        options: dict | None = None,
        headers: dict | None = None,
    ) -> httpx.Response:
        data = {"options": json.dumps(options)} if options else None
        return httpx.post(
            f"{self.api}/v1/jobs",
            files={"file": (name, pdf, "application/pdf")},
            data=data,
            headers=headers,
            timeout=60,
        )

    def submit(self, pdf: bytes, **upload: Any) -> str:
        """Upload as a well-behaved client does (a 503 is retried after its Retry-After, a
        few times) and return the job id; anything but a 202 in the end fails the test."""
        for _ in range(SUBMIT_TRIES - 1):
            r = self.upload(pdf, **upload)
            if r.status_code != 503:
                break
            time.sleep(min(float(r.headers.get("Retry-After", 1)), SUBMIT_RETRY_MAX_S))
        else:
            r = self.upload(pdf, **upload)
        assert r.status_code == 202, f"upload answered {r.status_code}: {r.text}\n{self.logs()}"
        return r.json()["job_id"]

    def status(self, job_id: str) -> dict[str, Any]:
        return httpx.get(f"{self.api}/v1/jobs/{job_id}", timeout=10).json()

    def wait_report(self, job_id: str, timeout: float = 120) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            r = httpx.get(f"{self.api}/v1/jobs/{job_id}/report", timeout=10)
            if r.status_code == 200:
                return assert_valid_report(r.json())
            time.sleep(0.3)
        raise AssertionError(
            f"no report for {job_id} in {timeout}s; status={self.status(job_id)}\n{self.logs()}"
        )


@contextlib.contextmanager
def stack(settings: Settings, *services: str) -> Iterator[Stack]:
    s = Stack(settings)
    try:
        for name in services:
            s.start(name)
        if "ingest" in services:
            s.wait_ready()
        yield s
    finally:
        s.stop_all()


def module_settings(session: Settings, data_dir: Path, prefix: str, **update: Any) -> Settings:
    """Settings of their own (namespace and bucket named ``prefix`` + a fresh tag) on the
    session's servers, for a module of tests that share one stack."""
    tag = uuid.uuid4().hex[:10]
    return session.model_copy(
        update={
            "namespace": f"{prefix}{tag}",
            "s3_bucket": f"{prefix}-{tag}",
            "data_dir": data_dir,
            "api_port": free_port(),
            **update,
        }
    )


@contextlib.contextmanager
def shared_stack(settings: Settings, *services: str) -> Iterator[Stack]:
    """``stack`` for a module's tests (settings from ``module_settings``); its bucket is
    removed afterwards."""
    with stack(settings, *services) as s:
        yield s
    remove_bucket(settings)


@contextlib.contextmanager
def ingest_alone(session: Settings, data_dir: Path, prefix: str, **update: Any) -> Iterator[Stack]:
    """An ingest service of its own on the session's servers, for a module of tests that only
    talk to the API."""
    with shared_stack(module_settings(session, data_dir, prefix, **update), "ingest") as s:
        yield s


@contextlib.asynccontextmanager
async def nats_client(settings: Settings) -> AsyncIterator[NATS]:
    nc = await nats.connect(settings.nats_servers, **nats_options(settings))
    try:
        yield nc
    finally:
        await nc.close()


async def stream_messages(
    settings: Settings, name: str, *, expect: int, timeout: float = 10
) -> list[dict]:
    """Every message on ``{namespace}.{name}`` in the stream (an ephemeral consumer; reads, never acks others')."""
    async with nats_client(settings) as nc:
        js = nc.jetstream()
        sub = await js.subscribe(settings.subject(name), ordered_consumer=True)
        out: list[dict] = []
        deadline = time.monotonic() + timeout
        while len(out) < expect and time.monotonic() < deadline:
            with contextlib.suppress(asyncio.TimeoutError, nats.errors.TimeoutError):
                msg = await sub.next_msg(timeout=0.5)
                out.append(json.loads(msg.data))
        # Give a surplus message a moment to show up: "exactly N" matters.
        with contextlib.suppress(asyncio.TimeoutError, nats.errors.TimeoutError):
            while True:
                msg = await sub.next_msg(timeout=0.5)
                out.append(json.loads(msg.data))
        await sub.unsubscribe()
        return out
