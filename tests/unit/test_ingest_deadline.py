"""The API's request deadline: a request still waiting past it is answered 503 with
Retry-After; an upload is left to its own limits."""

import asyncio

import httpx
from starlette.responses import JSONResponse
from starlette.types import Receive, Scope, Send

from services.ingest.app import refusal_response
from services.ingest.deadline import RequestDeadline
from services.ingest.refusals import unavailable


async def stalled(scope: Scope, receive: Receive, send: Send) -> None:
    """An app whose every answer waits on a server that stalled for 0.3 s."""
    await asyncio.sleep(0.3)
    await JSONResponse({"ok": True})(scope, receive, send)


def client() -> httpx.AsyncClient:
    app = RequestDeadline(
        stalled, timeout_s=0.1, late=lambda: refusal_response(unavailable("too slow"))
    )
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://api")


async def test_a_stalled_request_is_a_503_with_retry_after_at_its_deadline():
    """A read that waits past the deadline answers 503 `unavailable` with Retry-After."""
    async with client() as c:
        r = await c.get("/v1/jobs/j_1")
    assert r.status_code == 503
    assert r.json()["error"] == "unavailable"
    assert int(r.headers["Retry-After"]) > 0


async def test_an_upload_is_not_cut_off_by_the_request_deadline():
    """An upload (receiving its body takes the client's time) is not held to the deadline."""
    async with client() as c:
        r = await c.post("/v1/projects/p/jobs", content=b"x")
    assert r.status_code == 200


async def slow_stream(scope: Scope, receive: Receive, send: Send) -> None:
    """An answer that begins at once and streams for longer than the deadline."""
    await send({"type": "http.response.start", "status": 200, "headers": []})
    for _ in range(3):
        await asyncio.sleep(0.1)
        await send({"type": "http.response.body", "body": b"x", "more_body": True})
    await send({"type": "http.response.body", "body": b"", "more_body": False})


async def test_an_answer_begun_in_time_is_not_cut_off():
    """A stream whose answer began before the deadline runs past it to its end."""
    app = RequestDeadline(
        slow_stream, timeout_s=0.1, late=lambda: refusal_response(unavailable("x"))
    )
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://api") as c:
        r = await c.get("/v1/jobs/j_1/events")
    assert r.status_code == 200 and r.content == b"xxx"
