"""An upload names its project by ``options.project`` or by the project's route; a project id
that is not one is refused with a JSON body before anything is done, and the routes of a
project's register are in OpenAPI."""

import json

import pytest
from fastapi.testclient import TestClient

from services.ingest.app import create_app
from services.ingest.refusals import Refusal
from services.ingest.usecases import job_options
from shared.infra.settings import Settings


def api() -> TestClient:
    settings = Settings(_env_file=None, nats_url="nats://127.0.0.1:1", s3_endpoint="127.0.0.1:1")
    return TestClient(create_app(settings))  # no lifespan: 503 past the checks


@pytest.mark.parametrize("project", ["has.dot", "-lead", "x" * 65, "sp ace", "ünï"])
def test_a_bad_project_id_in_the_route_is_refused_by_name(project):
    client = api()
    for method, path in (
        ("POST", f"/v1/projects/{project}/jobs"),
        ("GET", f"/v1/projects/{project}/sheets"),
        ("GET", f"/v1/projects/{project}/sheets/A-1/versions"),
        ("GET", f"/v1/projects/{project}/proposals"),
        ("GET", f"/v1/projects/{project}/review"),
    ):
        r = client.request(
            method, path, files={"file": ("a.pdf", b"%PDF-1.7")} if method == "POST" else None
        )
        assert r.status_code == 422, (path, r.text)
        assert r.json()["error"] == "bad_project" and "letters, digits" in r.json()["detail"]


def test_a_good_project_id_passes_the_check():
    r = api().get("/v1/projects/Tower_B-2/sheets")
    assert r.status_code == 503  # no servers here: the id itself was accepted


def test_options_name_the_project_and_the_route_agrees_or_is_refused():
    assert job_options(json.dumps({"project": "tower-b"}).encode(), None).project == "tower-b"
    assert job_options(None, "tower-b").project == "tower-b"
    assert job_options(b'{"project": "tower-b"}', "tower-b").project == "tower-b"
    with pytest.raises(Refusal) as mismatch:
        job_options(b'{"project": "tower-a"}', "tower-b")
    assert mismatch.value.error == "project_mismatch"
    with pytest.raises(Refusal) as bad:
        job_options(b'{"project": "no/slash"}', None)
    assert bad.value.error == "bad_options" and "project" in bad.value.detail


def test_openapi_documents_the_project_routes_and_option():
    spec = api().get("/openapi.json").json()
    paths = spec["paths"]
    assert {
        "/v1/projects/{project}/jobs",
        "/v1/projects/{project}/sheets",
        "/v1/projects/{project}/sheets/{sheet}/versions",
        "/v1/projects/{project}/sheets/{sheet}/delta",
        "/v1/projects/{project}/sheets/{sheet}/overlay.png",
        "/v1/projects/{project}/proposals",
        "/v1/projects/{project}/proposals/{proposal_id}",
        "/v1/projects/{project}/review",
    } <= set(paths)
    decide = paths["/v1/projects/{project}/proposals/{proposal_id}"]["post"]
    assert {"200", "201", "404", "409"} <= set(decide["responses"])
    assert decide["security"] == [{"HTTPBearer": ["reviewer"]}]
    delta = paths["/v1/projects/{project}/sheets/{sheet}/delta"]["get"]
    assert {p["name"] for p in delta["parameters"]} >= {"project", "sheet", "from", "to"}
    option = spec["components"]["schemas"]["JobOptions"]["properties"]["project"]
    assert option["anyOf"][0]["pattern"]
