"""Fixtures: real NATS (JetStream) and a real S3 server, started once per session by the
same launcher the CLI uses; each test gets its own namespace (stream, subjects, KV) and bucket.
Page reading in process (extract's pipeline) uses one set of page readers per session, as a
worker does."""

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.extract.bootstrap import page_readers
from services.extract.reading.page import Readers
from shared.infra.settings import Settings
from sheetflow.runtime import EmbeddedServers, free_port
from tests.support.buckets import remove_bucket
from tests.support.screen import ScreenStack, screen_stack
from tests.support.stack import TEST_TIMINGS

# Tests must not pick up a developer's .env or SHEETFLOW_ variables.
for _name in [n for n in os.environ if n.startswith("SHEETFLOW_")]:
    del os.environ[_name]


@pytest.fixture(scope="session")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServers]:
    data_dir = tmp_path_factory.mktemp("embedded")
    embedded = EmbeddedServers(Settings(_env_file=None, data_dir=data_dir))
    embedded.start()
    yield embedded
    embedded.stop()


@pytest.fixture(scope="session", autouse=True)
def readers() -> Iterator[Readers]:
    """Extract's page readers (bounded children, the OCR engine), built by its bootstrap
    before any test runs, as a worker builds them at start: the children's forkserver
    preloads the modules of the pools made before it started (``shared.infra.bounded``), so a
    test's own pool must not start it first."""
    with page_readers() as built:
        yield built


@pytest.fixture
def settings(servers: EmbeddedServers, tmp_path: Path) -> Iterator[Settings]:
    """Settings pointing at the session's servers, isolated for this test; its bucket is
    removed after it."""
    tag = uuid.uuid4().hex[:10]
    isolated = servers.settings.model_copy(
        update={
            "namespace": f"t{tag}",
            "s3_bucket": f"test-{tag}",
            "data_dir": tmp_path / "data",
            "api_port": free_port(),
            **TEST_TIMINGS,
        }
    )
    yield isolated
    remove_bucket(isolated)


@pytest.fixture(scope="session")
def screen(
    servers: EmbeddedServers, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ScreenStack]:
    """Every service, tokens of three roles, a project with two uploads: the review screen's
    API and browser tests share it (mark them ``xdist_group("screen")``)."""
    with screen_stack(servers.settings, tmp_path_factory.mktemp("screen")) as shared:
        yield shared
