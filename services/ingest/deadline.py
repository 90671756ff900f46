"""Every API request but an upload answers within ``SHEETFLOW_REQUEST_TIMEOUT_S``: a request
still waiting on NATS or S3 then is answered 503 with ``Retry-After``, so a stalled server
never holds a client (or a dashboard's poll) for the minute of a client library's timeout.
Uploads are bounded by their own limits (``SHEETFLOW_INTAKE_TIMEOUT_S``, and each S3 call by
the request timeout): receiving a large body takes as long as the client's network does."""

import asyncio
import contextlib
from collections.abc import Callable

from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send


def is_upload(scope: Scope) -> bool:
    return scope["method"] == "POST" and scope["path"].rstrip("/").endswith("/jobs")


class RequestDeadline:
    """ASGI middleware answering ``late()`` for a request whose answer has not begun within
    ``timeout_s``; one whose answer has begun (a stream, a large body) is left to finish."""

    def __init__(self, app: ASGIApp, timeout_s: float, late: Callable[[], Response]) -> None:
        self.app = app
        self.timeout_s = timeout_s
        self.late = late

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or is_upload(scope):
            await self.app(scope, receive, send)
            return
        answered = asyncio.Event()

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                answered.set()
            await send(message)

        handling = asyncio.ensure_future(self.app(scope, receive, sending))
        begun = asyncio.ensure_future(answered.wait())
        done, _ = await asyncio.wait(
            {handling, begun}, timeout=self.timeout_s, return_when=asyncio.FIRST_COMPLETED
        )
        begun.cancel()
        if not done:  # no answer begun in time: the request is given up
            handling.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await handling
            await self.late()(scope, receive, send)
            return
        await handling
