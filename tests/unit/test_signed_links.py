"""Signed links: a reader asks for one (`GET …/link?expires=…`) and anyone opens it without a
token until it expires; an expired link, a tampered signature, another path, a changed query
or a link to what a reader may not read is refused. No servers: past the checks the API
answers 503 (it never connected)."""

import time
from urllib.parse import parse_qs, urlsplit

from fastapi.testclient import TestClient
from pydantic import SecretStr

from services.ingest import signing
from services.ingest.app import create_app
from shared.contracts import links
from shared.infra.settings import ApiToken, Settings

JOB = "j_" + "0" * 32
KEY = "k" * 43
READER = {"Authorization": "Bearer tok-reader-9x"}


def api(**more) -> TestClient:
    settings = Settings(
        _env_file=None,
        nats_url="nats://127.0.0.1:1",
        s3_endpoint="127.0.0.1:1",
        api_tokens=[ApiToken(name="dana", role="reader", token=SecretStr("tok-reader-9x"))],
        **more,
    )
    return TestClient(create_app(settings))


def link(client: TestClient, resource: str, expires: int = 600) -> str:
    r = client.get(f"/v1/{resource}/link", params={"expires": expires}, headers=READER)
    assert r.status_code == 200, r.text
    return r.json()["url"]


def test_a_signature_verifies_only_its_own_path_query_and_expiry():
    now = time.time()
    query = {"from": "1", "to": "2"}
    mark = signing.signature(KEY, "/v1/a", query, int(now) + 60, "dana")
    signed = {**query, "expires": str(int(now) + 60), "by": "dana", "signature": mark}
    # The last digit changed (a signature ending in "0" was "tampered" into itself once in 16).
    tampered = "1" if mark.endswith("0") else "0"
    assert signing.verify(KEY, "/v1/a", signed, now) == "dana"
    refusals = [
        ("/v1/b", signed, now),  # another path
        ("/v1/a", {**signed, "to": "3"}, now),  # a changed query
        ("/v1/a", {**signed, "by": "admin"}, now),  # another maker
        ("/v1/a", {**signed, "expires": str(int(now) + 9999)}, now),  # a later expiry
        ("/v1/a", {**signed, "signature": mark[:-1] + tampered}, now),
    ]
    for path, given, at in refusals:
        try:
            signing.verify(KEY, path, given, at)
        except signing.LinkRefused as refused:
            assert refused.error == "bad_signature"
        else:
            raise AssertionError(f"accepted {path} {given}")
    try:
        signing.verify(KEY, "/v1/a", signed, now + 61)
    except signing.LinkRefused as refused:
        assert refused.error == "link_expired"
    else:
        raise AssertionError("an expired link was accepted")


def test_a_signed_link_opens_without_a_token_and_nothing_else_does():
    client = api(link_key=SecretStr(KEY), public_url="https://sheets.example.com")
    url = link(client, f"jobs/{JOB}/set.pdf")
    parts = urlsplit(url)
    assert f"{parts.scheme}://{parts.netloc}" == "https://sheets.example.com"
    assert parts.path == f"/v1/jobs/{JOB}/set.pdf"
    assert set(parse_qs(parts.query)) == {"expires", "by", "signature"}
    opened = client.get(f"{parts.path}?{parts.query}")
    assert opened.status_code == 503  # past the check: no servers here
    assert client.get(parts.path).status_code == 401
    other = client.get(f"/v1/jobs/{JOB}/report?{parts.query}")
    assert other.status_code == 401 and other.json()["error"] == "bad_signature"
    tampered = client.get(f"{parts.path}?{parts.query[:-2]}00")
    assert tampered.status_code == 401 and tampered.json()["error"] == "bad_signature"


def test_an_expired_link_is_refused():
    client = api(link_key=SecretStr(KEY))
    expires = int(time.time()) - 1
    query = signing.signed_query(KEY, f"/v1/jobs/{JOB}/report", {}, expires, "dana")
    r = client.get(f"/v1/jobs/{JOB}/report?{query}")
    assert r.status_code == 401 and r.json()["error"] == "link_expired"


def test_links_open_only_what_a_reader_reads_and_make_no_links():
    client = api(link_key=SecretStr(KEY), link_max_s=3600)
    refused = client.get("/v1/webhooks/link", headers=READER)
    assert refused.status_code == 404 and refused.json()["error"] == "not_linkable"
    too_far = client.get(f"/v1/jobs/{JOB}/link", params={"expires": 7200}, headers=READER)
    assert too_far.status_code == 422 and too_far.json()["error"] == "expires_too_far"
    url = link(client, f"jobs/{JOB}")
    parts = urlsplit(url)
    assert not parts.netloc  # no public URL: the link is relative, never the request's Host
    again = client.get(f"/v1/jobs/{JOB}/link?{parts.query}")
    assert again.status_code == 401  # signed for another path
    forged = signing.signed_query(KEY, "/v1/webhooks", {}, int(time.time()) + 60, "dana")
    assert client.get(f"/v1/webhooks?{forged}").status_code == 403


def test_without_a_link_key_no_link_is_made_or_opened():
    client = api()
    r = client.get(f"/v1/jobs/{JOB}/report/link", headers=READER)
    assert r.status_code == 503
    query = signing.signed_query(KEY, f"/v1/jobs/{JOB}/report", {}, int(time.time()) + 60, "x")
    assert client.get(f"/v1/jobs/{JOB}/report?{query}").status_code == 401


def test_links_are_built_on_the_public_url_or_relative():
    """Events' links: on SHEETFLOW_PUBLIC_URL (a trailing slash or not), or relative."""
    on = links.job_links("https://sheets.example.com/", JOB)
    assert on.screen == f"https://sheets.example.com/app/jobs/{JOB}"
    assert on.sheets_zip == f"https://sheets.example.com/v1/jobs/{JOB}/sheets.zip"
    change = links.project_links(None, "tower-b", "A-1/2", (1, 2))
    assert change.sheet == "/app/projects/tower-b/sheets/A-1%2F2"
    assert change.change == "/app/projects/tower-b/sheets/A-1%2F2/change?from=1&to=2"
