"""Uploads a hostile or careless client sends get a clear 4xx with a JSON body, leak nothing
about the server, and the links the API hands out point where the operator says."""

from collections.abc import Iterator

import httpx
import pytest
from pydantic import ValidationError

from shared.infra.settings import Settings
from shared.infra.storage import ObjectStore
from sheetflow.runtime import EmbeddedServers
from tests.support.bombs import lying_page_count_pdf
from tests.support.pdfs import notes_pdf
from tests.support.stack import Stack, ingest_alone

PUBLIC_URL = "https://drawings.example.com/sheetflow"


@pytest.fixture(scope="module")
def api(servers: EmbeddedServers, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with ingest_alone(
        servers.settings, tmp_path_factory.mktemp("guard"), "guard", public_url=PUBLIC_URL
    ) as s:
        yield s


async def source_keys(api: Stack) -> list[str]:
    return await ObjectStore(api.settings).list_keys("jobs/")


async def test_two_file_parts_are_refused(api):
    """Two `file` parts in one request are a 400, never one PDF glued from both."""
    before = await source_keys(api)
    pdf = notes_pdf()
    r = httpx.post(
        f"{api.api}/v1/jobs",
        files=[("file", ("a.pdf", pdf, "application/pdf")), ("file", ("b.pdf", pdf, "x"))],
        timeout=30,
    )
    assert r.status_code == 400, r.text
    assert r.json()["error"] == "too_many_files"
    assert "one PDF" in r.json()["detail"]
    assert await source_keys(api) == before


@pytest.mark.parametrize("count", [b"1999", b"1e9"])
async def test_a_lying_page_count_is_a_422(api, count):
    """A page tree whose /Count disagrees with its one page is refused with a reason, not a 500."""
    r = api.upload(lying_page_count_pdf(count))
    assert r.status_code == 422, r.text
    assert r.json()["error"] in ("bad_page_tree", "empty_pdf")
    assert "page" in r.json()["detail"]


async def test_error_details_name_no_server_path(api):
    """A PDF MuPDF cannot open is refused without naming the server's temporary file."""
    r = api.upload(b"%PDF-1.7\n" + b"\x00garbage" * 200)
    assert r.status_code == 422, r.text
    detail = r.json()["detail"]
    assert "/tmp" not in detail and "sheetflow-upload" not in detail and "source.pdf" not in detail


async def test_a_token_in_the_url_is_refused_and_never_logged(api):
    """`?token=` is a 401 that says where a token goes, and no query string reaches the access log."""
    r = httpx.get(f"{api.api}/v1/jobs/j_{'0' * 32}?token=query-secret-Zq81x", timeout=10)
    assert r.status_code == 401 and r.json()["error"] == "token_in_url"
    assert "Authorization" in r.json()["detail"]
    assert httpx.get(f"{api.api}/healthz?note=other-secret-Zq81x", timeout=10).status_code == 200
    logs = api.logs()
    assert "GET /healthz" in logs  # the access log is on: the secrets are missing, not the lines
    assert "query-secret-Zq81x" not in logs and "other-secret-Zq81x" not in logs


async def test_links_are_built_from_the_public_url(api):
    """With SHEETFLOW_PUBLIC_URL set, status and report links ignore the request's Host header."""
    r = httpx.post(
        f"{api.api}/v1/jobs",
        files={"file": ("a.pdf", notes_pdf(), "application/pdf")},
        headers={"Host": "attacker.example"},
        timeout=30,
    )
    assert r.status_code == 202, r.text
    body = r.json()
    assert body["status_url"] == f"{PUBLIC_URL}/v1/jobs/{body['job_id']}"
    assert body["report_url"] == f"{PUBLIC_URL}/v1/jobs/{body['job_id']}/report"


def test_a_public_url_without_a_scheme_is_refused_at_start():
    """A public URL that could not make a working link is a configuration error, not bad links."""
    with pytest.raises(ValidationError):
        Settings(_env_file=None, public_url="drawings.example.com")
