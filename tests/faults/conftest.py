"""Fault-test helpers: servers a test may stop and restart, a model that echoes the page, a
small drawing set, and the check that a report holds every page exactly once."""

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pymupdf
import pytest
from pydantic import SecretStr

from shared.infra.settings import Settings
from sheetflow.credentials import embedded_s3_credentials
from sheetflow.runtime import (
    WEED_PORT_OFFSETS,
    ManagedProcess,
    free_port,
    start_nats,
    start_s3,
    stop_processes,
)
from tests.support.flows import line_objects, model_settings, reply
from tests.support.model_server import ModelReply, ScriptedModelServer
from tests.support.pdfs import add_notes_page, add_plan_page, add_schedule_page, make_pdf


def small_set(pages: int = 6) -> bytes:
    builders: list[Callable[[pymupdf.Document], object]] = [
        add_notes_page,
        add_plan_page,
        add_schedule_page,
    ]
    return make_pdf(*(builders[i % 3] for i in range(pages)))


def assert_every_page_once(report: dict, pages: int) -> None:
    assert [p["page_number"] for p in report["pages"]] == list(range(1, pages + 1))
    assert report["status"] == "complete", report["summary"]["failed_pages"]
    for page in report["pages"]:
        ids = [o["object_id"] for o in page["objects"]]
        assert len(ids) == len(set(ids)), f"duplicated objects on page {page['page_number']}"


def wait_for(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def echo_page(request: dict) -> ModelReply:
    """A model that reads perfectly: one object per text-layer line it was given."""
    return reply(line_objects(request))


@pytest.fixture
def model() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer(echo_page) as server:
        yield server


def with_model(settings: Settings, server: ScriptedModelServer) -> Settings:
    return model_settings(
        settings, server, llm_api_key=SecretStr("sk-test-model-key-123"), llm_max_retries=1
    )


def s3_keys(data_dir: Path) -> dict[str, object]:
    """Settings holding the keys of the S3 server started with ``data_dir``."""
    access, secret = embedded_s3_credentials(data_dir)
    return {"s3_access_key": access, "s3_secret_key": SecretStr(secret)}


@dataclass
class RestartableServers:
    """A NATS and an S3 server of this test alone, on fixed ports, so they can be restarted."""

    data_dir: Path
    nats_port: int
    s3_port: int
    nats: ManagedProcess | None = None
    s3: ManagedProcess | None = None

    def start_nats(self) -> None:
        self.nats, _ = start_nats(self.data_dir, port=self.nats_port)

    def start_s3(self) -> None:
        self.s3, _ = start_s3(self.data_dir, port=self.s3_port)

    def stop_s3(self) -> None:
        """As the launcher stops it: ``weed`` may not exit on SIGTERM (DESIGN.md), so it is
        killed after a moment instead of a stop's full timeout."""
        if self.s3:
            stop_processes([self.s3])

    def stop(self) -> None:
        stop_processes(proc for proc in (self.nats, self.s3) if proc)


@pytest.fixture
def own_servers(
    tmp_path: Path, settings: Settings
) -> Iterator[tuple[RestartableServers, Settings]]:
    servers = RestartableServers(
        data_dir=tmp_path / "own",
        nats_port=free_port(),
        s3_port=free_port(also_free=WEED_PORT_OFFSETS),
    )
    servers.start_nats()
    servers.start_s3()
    try:
        yield (
            servers,
            settings.model_copy(
                update={
                    "nats_url": f"nats://127.0.0.1:{servers.nats_port}",
                    "s3_endpoint": f"127.0.0.1:{servers.s3_port}",
                    **s3_keys(servers.data_dir),
                }
            ),
        )
    finally:
        servers.stop()
