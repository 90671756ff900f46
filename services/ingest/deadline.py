"""Every API request but an upload answers within ``SHEETFLOW_REQUEST_TIMEOUT_S``: a request
still waiting on NATS or S3 then is answered 503 with ``Retry-After``, so a stalled server
never holds a client (or a dashboard's poll) for the minute of a client library's timeout.
Uploads are bounded by their own limits (``SHEETFLOW_INTAKE_TIMEOUT_S``, and each S3 call by
the request timeout): receiving a large body takes as long as the client's network does."""

import asyncio
from collections.abc import Callable

from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send


def is_upload(scope: Scope) -> bool:
    return scope["method"] == "POST" and scope["path"].rstrip("/").endswith("/jobs")


class RequestDeadline:
    """ASGI middleware answering ``late()`` for a request not answered within ``timeout_s``
    (one whose answer has begun is left to finish)."""

    def __init__(self, app: ASGIApp, timeout_s: float, late: Callable[[], Response]) -> None:
        self.app = app
        self.timeout_s = timeout_s
        self.late = late

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or is_upload(scope):
            await self.app(scope, receive, send)
            return
        answered = False

        async def sending(message: Message) -> None:
            nonlocal answered
            answered = answered or message["type"] == "http.response.start"
            await send(message)

        try:
            async with asyncio.timeout(self.timeout_s) as deadline:
                await self.app(scope, receive, sending)
        except TimeoutError:
            if answered or not deadline.expired():
                raise
            await self.late()(scope, receive, send)
