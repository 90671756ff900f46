"""Fuzz the ingest API from its own OpenAPI document: whatever arrives, never a 500."""

from collections.abc import Iterator

import pytest
import schemathesis
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

from services.ingest.app import create_app
from shared.infra.settings import Settings
from sheetflow.runtime import EmbeddedServers
from tests.support.stack import Stack, ingest_alone

pytestmark = pytest.mark.slow

schema = schemathesis.openapi.from_dict(create_app(Settings(_env_file=None)).openapi())


@pytest.fixture(scope="module")
def api(servers: EmbeddedServers, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with ingest_alone(servers.settings, tmp_path_factory.mktemp("fuzz"), "fuzz") as s:
        yield s


@schema.parametrize()
@hypothesis_settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_server_errors(case, api: Stack):
    """Generated requests for every operation get a 2xx/4xx with a JSON error body, never a 5xx."""
    response = case.call(base_url=api.api, timeout=30)
    assert response.status_code < 500, response.text
    if response.status_code >= 400 and "json" in response.headers.get("content-type", ""):
        body = response.json()
        assert "error" in body and "detail" in body
