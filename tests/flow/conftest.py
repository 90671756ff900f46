"""Flow-test fixtures shared across modules."""

from collections.abc import Iterator

import pytest

from sheetflow.runtime import EmbeddedServers
from sheetflow.services import PIPELINE
from tests.support.flows import JUDGE_MODEL, ModelStack, model_stack
from tests.support.stack import TEST_TIMINGS, Stack, module_settings, shared_stack

# Mark the tests that use ``offline_pipeline``, ``pipeline`` and ``judged_pipeline``: one
# worker runs each group, on one stack.
OFFLINE_GROUP = pytest.mark.xdist_group("offline_pipeline")
PIPELINE_GROUP = pytest.mark.xdist_group("pipeline")
JUDGED_GROUP = pytest.mark.xdist_group("judged_pipeline")


@pytest.fixture(scope="session")
def offline_pipeline(
    servers: EmbeddedServers, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    """Every service, no model: each test runs jobs of its own."""
    data_dir = tmp_path_factory.mktemp("offline")
    settings = module_settings(servers.settings, data_dir, "offline", **TEST_TIMINGS)
    with shared_stack(settings, *PIPELINE) as s:
        yield s


@pytest.fixture(scope="session")
def pipeline(
    servers: EmbeddedServers, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ModelStack]:
    """Every service against a scripted model (no judge): each test scripts the model and
    runs a job of its own."""
    with model_stack(servers.settings, tmp_path_factory.mktemp("pipeline"), "pipe") as shared:
        yield shared


@pytest.fixture(scope="session")
def judged_pipeline(
    servers: EmbeddedServers, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ModelStack]:
    """Every service against a scripted model, the judge on: each test scripts the model and
    runs a job of its own."""
    data_dir = tmp_path_factory.mktemp("judged")
    with model_stack(servers.settings, data_dir, "judged", llm_verify_model=JUDGE_MODEL) as shared:
        yield shared
