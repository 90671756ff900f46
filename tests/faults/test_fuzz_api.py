"""Fuzz the ingest API from its own OpenAPI document: whatever arrives, never a 500."""

import uuid
from collections.abc import Iterator

import pytest
import schemathesis
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

from services.ingest.app import create_app
from shared.settings import Settings
from sheetflow.runtime import EmbeddedServers, free_port
from tests.support.buckets import remove_bucket
from tests.support.stack import Stack, stack

pytestmark = pytest.mark.slow

schema = schemathesis.openapi.from_dict(create_app(Settings(_env_file=None)).openapi())


@pytest.fixture(scope="module")
def api(servers: EmbeddedServers, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    tag = uuid.uuid4().hex[:10]
    settings = servers.settings.model_copy(
        update={
            "namespace": f"fuzz{tag}",
            "s3_bucket": f"fuzz-{tag}",
            "data_dir": tmp_path_factory.mktemp("fuzz"),
            "api_port": free_port(),
        }
    )
    with stack(settings, "ingest") as s:
        yield s
    remove_bucket(settings)


@schema.parametrize()
@hypothesis_settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_server_errors(case, api: Stack):
    """Generated requests for every operation get a 2xx/4xx with a JSON error body, never a 5xx."""
    response = case.call(base_url=api.api, timeout=30)
    assert response.status_code < 500, response.text
    if response.status_code >= 400 and "json" in response.headers.get("content-type", ""):
        body = response.json()
        assert "error" in body and "detail" in body
