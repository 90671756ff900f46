"""The API under sustained use, against real NATS and S3: a status read leaves nothing behind
on the server, links never come from the request's Host, and a request that frames its body
twice or wrongly is refused with a JSON 400."""

import asyncio
import json
import socket
from collections.abc import Iterator

import httpx
import pymupdf
import pytest

from sheetflow.runtime import EmbeddedServers
from tests.support.stack import Stack, ingest_alone, nats_client

STATUS_READS = 1000


def small_pdf(pages: int = 3) -> bytes:
    doc = pymupdf.open()
    for n in range(pages):
        doc.new_page(width=612, height=792).insert_text((72, 72), f"SHEET A-{n + 1}")
    return doc.tobytes()


@pytest.fixture(scope="module")
def api(servers: EmbeddedServers, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """One ingest on the session's servers (no workers: pages stay queued)."""
    with ingest_alone(servers.settings, tmp_path_factory.mktemp("sustained"), "sus") as s:
        yield s


async def consumers(stack: Stack) -> dict[str, int]:
    """The consumers the server holds on the stack's stream and job store, by stream."""
    settings = stack.settings
    async with nats_client(settings) as nc:
        js = nc.jetstream()
        return {
            stream: len(await js.consumers_info(stream))
            for stream in (settings.stream_name, f"KV_{settings.kv_bucket}")
        }


async def test_status_reads_leave_no_consumer_behind(api):
    """1,000 status requests leave the server's consumer count unchanged, each read right."""
    job_id = api.submit(small_pdf(3))
    before = await consumers(api)

    def poll() -> list[dict]:
        with httpx.Client(base_url=api.api, timeout=10) as client:
            return [client.get(f"/v1/jobs/{job_id}").json() for _ in range(STATUS_READS)]

    bodies = await asyncio.to_thread(poll)
    assert all(b["page_count"] == 3 and b["pages"]["queued"] == 3 for b in bodies), bodies[-1]
    assert await consumers(api) == before


def test_a_key_with_a_line_break_is_no_job_and_breaks_nothing(api):
    """A job id or project ending in a line break (which nats-py's own key check lets by)
    is no id: a job so named is not found, a project so named is refused as malformed, and
    NATS, whose subject it would have ended, serves the next read."""
    job_id = api.submit(small_pdf(1))
    for path, status, error in (
        (f"/v1/jobs/{job_id}%0A", 404, None),
        ("/v1/projects/tower%0A/sheets", 422, "bad_project"),
    ):
        r = httpx.get(f"{api.api}{path}", timeout=10)
        assert r.status_code == status, r.text
        assert error is None or r.json()["error"] == error
        assert api.status(job_id)["page_count"] == 1


def test_links_are_relative_without_a_public_url_whatever_the_host(api):
    """A client's Host header never becomes a link: without SHEETFLOW_PUBLIC_URL they are relative."""
    r = api.upload(small_pdf(1), headers={"Host": "attacker.example"})
    assert r.status_code == 202, r.text
    body = r.json()
    assert body["status_url"] == f"/v1/jobs/{body['job_id']}"
    assert body["report_url"] == f"/v1/jobs/{body['job_id']}/report"


def raw_request(stack: Stack, head: bytes, body: bytes = b"") -> tuple[int, dict, dict]:
    """Send ``head`` and ``body`` as they are; the status, headers and JSON body answered."""
    with socket.create_connection(("127.0.0.1", stack.settings.api_port), timeout=10) as sock:
        sock.sendall(head + body)
        answer = b""
        while chunk := sock.recv(65536):  # every refusal closes the connection
            answer += chunk
    head_part, _, payload = answer.partition(b"\r\n\r\n")
    status_line, *lines = head_part.decode().split("\r\n")
    headers = {k.lower(): v.strip() for k, v in (line.split(":", 1) for line in lines)}
    return int(status_line.split()[1]), headers, json.loads(payload)


@pytest.mark.parametrize(
    "framing",
    [
        b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n",
        b"Transfer-Encoding: chunked\r\nContent-Length: 5\r\n",
        b"Content-Length: five\r\n",
        b"Content-Length: 5\r\nContent-Length: 6\r\n",
        b"Transfer-Encoding: gzip\r\n",
    ],
    ids=["cl-then-te", "te-then-cl", "cl-not-a-number", "cl-twice", "te-not-chunked"],
)
def test_ambiguous_or_malformed_framing_is_a_json_400(api, framing):
    """Both Content-Length and Transfer-Encoding, or a malformed one: a JSON 400, connection closed."""
    head = b"POST /v1/jobs HTTP/1.1\r\nHost: x\r\n" + framing + b"\r\n"
    status, headers, body = raw_request(api, head, b"0\r\n\r\n")
    assert status == 400
    assert headers["content-type"] == "application/json"
    assert headers["connection"] == "close"
    assert body["error"] == "malformed_request" and len(body["detail"]) > 20
