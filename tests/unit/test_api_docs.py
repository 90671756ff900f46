"""The API's own documentation: /docs and /redoc work without internet (their assets are
served by the API), responses are typed in OpenAPI, the bearer token is a security scheme.
No servers: the app is asked directly, without connecting to NATS or S3."""

import re

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from services.ingest.app import create_app
from shared.infra.settings import Settings

ASSET = re.compile(r"""(?:src|href)=["']([^"']+\.(?:js|css))["']""")


def client(**settings) -> TestClient:
    app = create_app(
        Settings(
            _env_file=None, nats_url="nats://127.0.0.1:1", s3_endpoint="127.0.0.1:1", **settings
        )
    )
    return TestClient(app)  # its lifespan never runs: the API answers 503 past auth


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_docs_pages_load_their_assets_from_the_api_itself(page):
    """Every script and style sheet of the docs page is a path on the API, and it is served."""
    api = client()
    html = api.get(page)
    assert html.status_code == 200
    assets = ASSET.findall(html.text)
    assert assets, "the page names no script or style sheet"
    for asset in assets:
        assert asset.startswith("/"), f"{asset} is not served by the API"
        served = api.get(asset)
        assert served.status_code == 200 and len(served.content) > 1000, asset
    assert "cdn." not in html.text


def test_job_and_report_responses_are_typed_in_openapi():
    """Creating, reading and canceling a job, and its report, document their JSON schema."""
    paths = client().get("/openapi.json").json()["paths"]

    def schema(path: str, method: str, status: str) -> str:
        content = paths[path][method]["responses"][status]["content"]["application/json"]
        return content["schema"]["$ref"].rsplit("/", 1)[1]

    assert schema("/v1/jobs", "post", "202") == "JobCreated"
    assert schema("/v1/jobs/{job_id}", "get", "200") == "JobStatusBody"
    assert schema("/v1/jobs/{job_id}", "delete", "202") == "JobCanceling"
    assert schema("/v1/jobs/{job_id}/report", "get", "200") == "Report"


def test_the_bearer_token_is_a_security_scheme_of_every_v1_route():
    """OpenAPI declares HTTP bearer auth, and every /v1 operation requires it, naming the
    least role it takes."""
    document = client().get("/openapi.json").json()
    schemes = document["components"]["securitySchemes"]
    [(name, scheme)] = schemes.items()
    assert scheme["type"] == "http" and scheme["scheme"] == "bearer"
    for path, operations in document["paths"].items():
        if path.startswith("/v1/"):
            for operation in operations.values():
                [requirement] = operation["security"]
                [role] = requirement[name]
                assert role in ("reader", "submitter", "reviewer", "admin"), path


def test_the_token_is_still_checked():
    """No token or a wrong one: 401 with the JSON body; the right one passes to the route."""
    api = client(api_token=SecretStr("t0ken-Zq81x"))
    job = "/v1/jobs/j_" + "0" * 32
    for headers in ({}, {"Authorization": "Bearer nope"}, {"Authorization": "Basic t0ken-Zq81x"}):
        r = api.get(job, headers=headers)
        assert r.status_code == 401 and r.json()["error"] == "unauthorized", headers
        assert r.headers["www-authenticate"] == "Bearer"
    r = api.get(job, headers={"Authorization": "Bearer t0ken-Zq81x"})
    assert r.status_code == 503 and r.json()["error"] == "unavailable"
