"""The ingest API against real NATS and S3: uploads, bad input, cancel, auth, outages."""

import json
import socket
from collections.abc import Iterator

import httpx
import pymupdf
import pytest
from pydantic import SecretStr

from shared.contracts import subjects
from shared.infra.storage import Keys, ObjectStore
from sheetflow.runtime import EmbeddedServers, free_port
from tests.support.stack import Stack, ingest_alone, stack, stream_messages

# The tests whose uploads are all refused share one ingest (``refusing``), in one worker.
REFUSALS = pytest.mark.xdist_group("ingest_refusals")


def make_pdf(pages: int = 3, text: str = "GENERAL NOTES") -> bytes:
    doc = pymupdf.open()
    for i in range(pages):
        page = doc.new_page(width=792, height=612)
        page.insert_text((72, 72), f"{text} SHEET {i + 1}", fontsize=12)
    return doc.tobytes()


def encrypted_pdf() -> bytes:
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "SECRET")
    return doc.tobytes(
        encryption=pymupdf.mupdf.PDF_ENCRYPT_AES_256, owner_pw="owner", user_pw="user"
    )


ZERO_PAGE_PDF = (
    b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n"
    b"2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\n"
    b"trailer<</Root 1 0 R>>\n%%EOF\n"
)


async def bucket_keys(settings) -> list[str]:
    store = ObjectStore(settings)
    await store.ensure_bucket()
    return await store.list_keys("jobs/")


@pytest.fixture(scope="module")
def refusing(servers: EmbeddedServers, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """One ingest (at most 5 pages, 1 MB) for the tests that keep nothing: each one's check
    that nothing was published or stored covers every refusal made before it too."""
    data_dir = tmp_path_factory.mktemp("refusing")
    with ingest_alone(servers.settings, data_dir, "refuse", max_pages=5, max_upload_mb=1) as s:
        yield s


async def test_upload_stores_source_and_fans_out_pages(settings):
    """An upload answers 202, stores the PDF, publishes one page.extract per page and job.accepted."""
    pdf = make_pdf(4)
    with stack(settings, "ingest") as s:
        r = s.upload(pdf, name="../../etc/A set.pdf")
        assert r.status_code == 202, r.text
        body = r.json()
        job_id = body["job_id"]
        assert body["status_url"] == f"/v1/jobs/{job_id}"  # relative: no public URL is set
        assert body["report_url"] == f"/v1/jobs/{job_id}/report"

        stored = await ObjectStore(settings).get_bytes(Keys.source(job_id))
        assert stored == pdf

        pages = await stream_messages(settings, subjects.PAGE_EXTRACT, expect=4)
        assert sorted(m["page_number"] for m in pages) == [1, 2, 3, 4]
        assert {m["job_id"] for m in pages} == {job_id}
        accepted = await stream_messages(settings, subjects.JOB_ACCEPTED, expect=1)
        assert [a["page_count"] for a in accepted] == [4]
        assert accepted[0]["file_name"] == "A set.pdf"

        status = s.status(job_id)
        assert status["page_count"] == 4
        assert status["pages"]["queued"] == 4
        assert status["status"] == "running"

        report = httpx.get(f"{s.api}/v1/jobs/{job_id}/report")
        assert report.status_code == 404
        assert report.json()["error"] == "report_not_ready"


@pytest.mark.parametrize(
    ("payload", "status", "error"),
    [
        (b"hello, I am a text file pretending to be a PDF", 415, "not_a_pdf"),
        (encrypted_pdf(), 422, "encrypted_pdf"),
        (b"%PDF-1.7\n" + b"\x00garbage" * 200, 422, None),
        (ZERO_PAGE_PDF, 422, None),
        (make_pdf(6), 422, "too_many_pages"),
    ],
    ids=["not-a-pdf", "encrypted", "corrupt", "zero-pages", "too-many-pages"],
)
@REFUSALS
async def test_bad_uploads_are_refused_and_leave_nothing(refusing, payload, status, error):
    """Each bad upload gets its status and a JSON error; nothing is published or stored."""
    s = refusing
    r = s.upload(payload, name="drawings.pdf")
    assert r.status_code == status, r.text
    body = r.json()
    assert set(body) >= {"error", "detail"}
    assert len(body["detail"]) > 10
    if error:
        assert body["error"] == error
    if error == "encrypted_pdf":
        assert "password" in body["detail"]
    assert await stream_messages(s.settings, subjects.PAGE_EXTRACT, expect=0, timeout=1) == []
    assert await bucket_keys(s.settings) == []


@REFUSALS
async def test_oversized_upload_is_refused_while_streaming(refusing):
    """A body over SHEETFLOW_MAX_UPLOAD_MB is 413 with a JSON body, nothing kept."""
    big = b"%PDF-1.7\n" + b"0" * (3 * 1024 * 1024)
    s = refusing
    r = s.upload(big)
    assert r.status_code == 413
    assert r.json()["error"] == "upload_too_large"

    def chunks():  # no Content-Length: the limit must hold on the stream itself
        boundary = b"--xyz"
        yield (
            boundary + b'\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\n\r\n'
        )
        for _ in range(48):
            yield b"%PDF" + b"1" * 65536
        yield b"\r\n" + boundary + b"--\r\n"

    r = httpx.post(
        f"{s.api}/v1/jobs",
        content=chunks(),
        headers={"content-type": "multipart/form-data; boundary=xyz"},
        timeout=30,
    )
    assert r.status_code == 413
    assert await bucket_keys(s.settings) == []


@REFUSALS
async def test_missing_file_field_and_bad_options(refusing):
    """No `file` field → 400; invalid options JSON → 422 bad_options; both JSON bodies."""
    s = refusing
    r = httpx.post(f"{s.api}/v1/jobs", data={"note": "x"}, files={"other": ("a.txt", b"x")})
    assert r.status_code == 400 and r.json()["error"] == "missing_file"
    r = s.upload(make_pdf(1), options={"coverage_floor": 7})
    assert r.status_code == 422 and r.json()["error"] == "bad_options"
    assert await bucket_keys(s.settings) == []


async def test_cancel_marks_job_and_unknown_jobs_are_404(settings):
    """DELETE cancels a running job; unknown or malformed ids are 404 with JSON bodies."""
    with stack(settings, "ingest") as s:
        job_id = s.submit(make_pdf(2))
        r = httpx.delete(f"{s.api}/v1/jobs/{job_id}")
        assert r.status_code == 202
        assert s.status(job_id)["canceled"] is True
        for bad in ("j_" + "0" * 32, "../../etc/passwd", "job.>"):
            r = httpx.get(f"{s.api}/v1/jobs/{bad}")
            assert r.status_code == 404
            assert r.json()["error"] == "not_found"


async def test_token_required_when_configured(settings):
    """With SHEETFLOW_API_TOKEN set every /v1 route needs the bearer token; probes do not."""
    settings = settings.model_copy(update={"api_token": SecretStr("s3cret-token-value")})
    with stack(settings, "ingest") as s:
        r = s.upload(make_pdf(1))
        assert r.status_code == 401 and r.json()["error"] == "unauthorized"
        assert "s3cret" not in r.text
        r = s.upload(make_pdf(1), headers={"Authorization": "Bearer wrong"})
        assert r.status_code == 401
        r = s.upload(make_pdf(1), headers={"Authorization": "Bearer s3cret-token-value"})
        assert r.status_code == 202
        assert httpx.get(f"{s.api}/healthz").status_code == 200


@pytest.mark.parametrize("down", ["s3", "nats"])
async def test_unreachable_backend_answers_503(settings, down):
    """With S3 or NATS unreachable, /readyz and uploads answer 503 with JSON, never a stack trace."""
    dead = f"127.0.0.1:{free_port()}"
    update = {"s3_endpoint": dead} if down == "s3" else {"nats_url": f"nats://{dead}"}
    settings = settings.model_copy(update=update)
    with stack(settings) as s:
        s.start("ingest")
        deadline_ok = False
        for _ in range(100):
            try:
                httpx.get(f"{s.api}/healthz", timeout=1)
                deadline_ok = True
                break
            except httpx.HTTPError:
                import time

                time.sleep(0.1)
        assert deadline_ok, s.logs()
        r = httpx.get(f"{s.api}/readyz")
        assert r.status_code == 503 and r.json()["error"] == "not_ready"
        r = s.upload(make_pdf(1))
        assert r.status_code == 503, r.text
        assert r.json()["error"] == "unavailable"
        assert "Traceback" not in r.text


@REFUSALS
async def test_openapi_and_asyncapi_are_served(refusing):
    """The API documents itself (OpenAPI at /docs) and serves the AsyncAPI of every event."""
    s = refusing
    assert httpx.get(f"{s.api}/docs").status_code == 200
    spec = httpx.get(f"{s.api}/openapi.json").json()
    assert "/v1/jobs" in spec["paths"]
    events = httpx.get(f"{s.api}/asyncapi.json").json()
    assert s.settings.subject(subjects.REPORT_READY) in events["channels"]


def _raw(api: str, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send ``request`` as is over a socket to the API; the status, headers and body."""
    host, port = api.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as conn:
        conn.sendall(request)
        reply = b""
        while chunk := conn.recv(65536):
            reply += chunk
    head, _, body = reply.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, v in (line.split(":", 1) for line in lines)}
    return int(status_line.split()[1]), headers, body


@REFUSALS
async def test_every_refusal_is_json_the_server_s_own_included(refusing):
    """What the HTTP server refuses before the API sees it (a Content-Length of 10^23, a
    request line that is not HTTP) is JSON with its error kind, as an unknown route and a
    wrong method are."""
    s = refusing
    for request in (
        b"POST /v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000000000000000000\r\n\r\n",
        b"NOT HTTP AT ALL\r\n\r\n",
    ):
        status, headers, body = _raw(s.api, request)
        assert status == 400 and headers["content-type"] == "application/json"
        assert json.loads(body)["error"] == "malformed_request"
    for response in (httpx.get(f"{s.api}/v1/nowhere"), httpx.delete(f"{s.api}/v1/jobs")):
        assert response.status_code in (404, 405) and "error" in response.json()
    assert await bucket_keys(s.settings) == []
