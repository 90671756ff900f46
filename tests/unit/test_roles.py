"""Tokens with roles: each /v1 route takes a least role (reader < submitter < reviewer <
admin), says so in OpenAPI, and refuses a weaker token with 403; the single
SHEETFLOW_API_TOKEN still works, as an admin; access lines name the token, never its value.
No servers: past the role check the API answers 503 (it never connected)."""

import logging

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr, ValidationError

from services.ingest.accesslog import CallerContext, DropQueryStrings, log_config
from services.ingest.app import create_app
from services.ingest.roles import ROLES, identify
from shared.infra.settings import ApiToken, Settings
from sheetflow.runtime import settings_env

JOB = "/v1/jobs/j_" + "0" * 32
# Every /v1 operation and the least role it takes.
ROUTES = {
    ("get", "/v1/jobs/{job_id}"): "reader",
    ("get", "/v1/jobs/{job_id}/report"): "reader",
    ("get", "/v1/jobs/{job_id}/report.html"): "reader",
    ("get", "/v1/jobs/{job_id}/pages/{page_number}/image.png"): "reader",
    ("get", "/v1/jobs/{job_id}/sheets.json"): "reader",
    ("get", "/v1/jobs/{job_id}/sheets.csv"): "reader",
    ("get", "/v1/jobs/{job_id}/sheets/{sheet}.pdf"): "reader",
    ("get", "/v1/jobs/{job_id}/sheets.zip"): "reader",
    ("get", "/v1/jobs/{job_id}/set.pdf"): "reader",
    ("get", "/v1/{resource}/link"): "reader",
    ("post", "/v1/jobs"): "submitter",
    ("delete", "/v1/jobs/{job_id}"): "submitter",
    ("post", "/v1/jobs/{job_id}/pages/{page_number}/sheet"): "reviewer",
    ("post", "/v1/jobs/{job_id}/pages/{page_number}/problems/{problem}"): "reviewer",
    ("get", "/v1/jobs/{job_id}/review"): "reader",
    ("post", "/v1/webhooks"): "admin",
    ("get", "/v1/webhooks"): "admin",
    ("delete", "/v1/webhooks/{webhook_id}"): "admin",
    ("get", "/v1/webhooks/{webhook_id}/deliveries"): "admin",
    ("post", "/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/replay"): "admin",
    ("post", "/v1/projects/{project}/jobs"): "submitter",
    ("get", "/v1/projects/{project}/sheets"): "reader",
    ("get", "/v1/projects/{project}/sheets/{sheet}/versions"): "reader",
    ("get", "/v1/projects/{project}/sheets/{sheet}/delta"): "reader",
    ("get", "/v1/projects/{project}/sheets/{sheet}/overlay.png"): "reader",
    ("get", "/v1/projects/{project}/proposals"): "reader",
    ("post", "/v1/projects/{project}/proposals/{proposal_id}"): "reviewer",
    ("get", "/v1/projects/{project}/review"): "reader",
}
TOKENS = [
    ApiToken(name=f"{role}-bot", role=role, token=SecretStr(f"tok-{role}-9x")) for role in ROLES
]


def settings(**more) -> Settings:
    return Settings(
        _env_file=None, nats_url="nats://127.0.0.1:1", s3_endpoint="127.0.0.1:1", **more
    )


def api(**more) -> TestClient:
    return TestClient(create_app(settings(**more)))  # no lifespan: 503 past the role check


def request(client: TestClient, method: str, path: str, token: str | None):
    url = path.replace("{job_id}", JOB.rsplit("/", 1)[1]).replace("{page_number}", "1")
    url = url.replace("{webhook_id}", "wh_1").replace("{delivery_id}", "d1")
    url = url.replace("{resource}", f"{JOB[4:]}/set.pdf").replace("{proposal_id}", "A1--A2")
    url = url.replace("{problem}", "1").replace("{project}", "tower-b").replace("{sheet}", "A-1")
    if path.endswith(("/delta", "/overlay.png")):
        url += "?from=1&to=2"
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    if method == "post" and path.endswith("/jobs"):
        return client.post(url, headers=headers, files={"file": ("a.pdf", b"%PDF-1.7")})
    if method == "post":
        body = {"url": "https://example.com/h", "events": ["report.ready"]}
        if "/proposals/" in path:
            body = {"decision": "accepted", "reason": "the same drawing"}
        if "/pages/" in path:
            body = {"sheet_number": "A-1", "decision": "dismiss", "reason": "checked"}
        return client.post(url, headers=headers, json=body)
    return client.request(method.upper(), url, headers=headers)


def test_every_route_is_listed_with_its_role_in_openapi():
    """OpenAPI's security requirement of each /v1 operation names the role this test expects."""
    paths = api().get("/openapi.json").json()["paths"]
    found = {
        (method, path): operation["security"][0]["HTTPBearer"][0]
        for path, operations in paths.items()
        if path.startswith("/v1/")
        for method, operation in operations.items()
    }
    assert found == ROUTES


@pytest.mark.parametrize("role", ROLES)
def test_each_role_is_allowed_and_refused_where_it_should_be(role):
    """A token reaches every route its role allows (503: no servers here) and is refused
    403 with a JSON body by every other."""
    client = api(api_tokens=TOKENS)
    for (method, path), least in ROUTES.items():
        r = request(client, method, path, f"tok-{role}-9x")
        if ROLES.index(role) >= ROLES.index(least):
            assert r.status_code == 503, (role, method, path, r.text)
        else:
            assert r.status_code == 403, (role, method, path, r.text)
            assert r.json()["error"] == "forbidden" and f"{role}-bot" in r.json()["detail"]


def test_no_token_or_an_unknown_one_is_401_on_every_route():
    """Without a token, or with one no setting names, every /v1 route answers 401."""
    client = api(api_tokens=TOKENS)
    for method, path in ROUTES:
        for token in (None, "tok-nobody"):
            r = request(client, method, path, token)
            assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer", path


def test_the_single_api_token_is_an_admin_beside_the_named_ones():
    """SHEETFLOW_API_TOKEN keeps working, as an admin named 'default'."""
    configured = settings(api_token=SecretStr("legacy-t0ken"), api_tokens=TOKENS[:1])
    caller = identify(configured, "legacy-t0ken")
    assert caller and (caller.name, caller.role) == ("default", "admin")
    assert (
        request(
            api(api_token=SecretStr("legacy-t0ken")), "delete", "/v1/jobs/{job_id}", "legacy-t0ken"
        ).status_code
        == 503
    )


def test_tokens_must_be_told_apart_and_placeholders_refused():
    """Two tokens with one name or one value are refused; in production, a placeholder too."""
    twin = ApiToken(name="reader-bot", role="admin", token=SecretStr("other-value"))
    with pytest.raises(ValidationError, match="names must differ"):
        settings(api_tokens=[TOKENS[0], twin])
    same = ApiToken(name="x", role="admin", token=SecretStr("tok-reader-9x"))
    with pytest.raises(ValidationError, match="value of its own"):
        settings(api_tokens=[TOKENS[0], same])
    weak = ApiToken(name="x", role="admin", token=SecretStr("changeme"))
    with pytest.raises(ValidationError, match="placeholder"):
        settings(environment="production", s3_secret_key=SecretStr("real-one"), api_tokens=[weak])


def test_tokens_load_from_the_environment_as_json(monkeypatch):
    """SHEETFLOW_API_TOKENS is a JSON list of name, role and token."""
    monkeypatch.setenv(
        "SHEETFLOW_API_TOKENS", '[{"name": "ci", "role": "submitter", "token": "abc-123-xyz"}]'
    )
    [token] = Settings(_env_file=None).api_tokens
    assert (token.name, token.role, token.token.get_secret_value()) == (
        "ci",
        "submitter",
        "abc-123-xyz",
    )


def test_access_lines_name_the_token_never_its_value():
    """An access line names the request's token by its name; its value is in no line."""
    app = create_app(settings(api_tokens=TOKENS))
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    # uvicorn writes access lines from its protocol; here the app's own requests stand in,
    # logged inside the middleware's context as uvicorn logs inside the request's task.
    access = logging.getLogger("test.access")
    access.addHandler(Keep())
    access.addFilter(DropQueryStrings())
    access.setLevel(logging.INFO)

    async def logging_app(scope, receive, send):
        async def logged_send(message):
            if message["type"] == "http.response.start":
                access.info(
                    '%s - "%s %s HTTP/%s" %d',
                    "c",
                    scope["method"],
                    scope["path"] + "?x=1",
                    "1.1",
                    message["status"],
                )
            await send(message)

        await app(scope, receive, logged_send)

    client = TestClient(CallerContext(logging_app))
    client.get(JOB, headers={"Authorization": "Bearer tok-reviewer-9x"})
    client.get(JOB)
    assert "%(token_name)s" in log_config()["formatters"]["access"]["fmt"]
    assert [r.token_name for r in records] == ["reviewer-bot", "-"]  # type: ignore[attr-defined]
    for record in records:
        assert "tok-reviewer-9x" not in record.getMessage() and "?x=1" not in record.getMessage()


def test_tokens_reach_a_child_service_as_they_were_set(monkeypatch):
    """`sheetflow up` hands the tokens to each service in its environment, values intact."""
    for key, value in settings_env(settings(api_tokens=TOKENS)).items():
        if key.startswith("SHEETFLOW_"):
            monkeypatch.setenv(key, value)
    child = Settings(_env_file=None)
    assert [(t.name, t.role, t.token.get_secret_value()) for t in child.api_tokens] == [
        (t.name, t.role, t.token.get_secret_value()) for t in TOKENS
    ]
