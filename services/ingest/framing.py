"""A request's body framing, refused with a JSON 400 when it is ambiguous or malformed.

A request carrying both ``Content-Length`` and ``Transfer-Encoding`` is how requests are
smuggled past a proxy that reads one header while the API reads the other (RFC 9112 §6.1
lets a server reject it): the API refuses it and closes the connection. A framing the HTTP
parser itself cannot read (a ``Content-Length`` that is not a number, two that differ, a
transfer coding other than chunked) is refused by uvicorn before the app sees it; its answer
is made JSON here too, as every refusal of the API is."""

import json

from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

AMBIGUOUS = "Content-Length and Transfer-Encoding were both sent; send one of them."


def refusal_bytes(detail: str) -> bytes:
    return json.dumps({"error": "malformed_request", "detail": detail}).encode()


class FramingGuard:
    """ASGI middleware refusing a request that frames its body twice."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            names = {name.lower() for name, _ in scope["headers"]}
            if b"content-length" in names and b"transfer-encoding" in names:
                body = refusal_bytes(AMBIGUOUS)
                headers = [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"connection", b"close"),  # the rest of the stream cannot be trusted
                ]
                await send({"type": "http.response.start", "status": 400, "headers": headers})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


class JsonRefusingH11Protocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol, answering a request it cannot parse with a JSON 400."""

    def send_400_response(self, msg: str) -> None:
        body = refusal_bytes(
            "The request could not be read as HTTP/1.1 (a malformed Content-Length or "
            "Transfer-Encoding, or a malformed request line or header)."
        )
        head = (
            b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\n"
            b"content-length: " + str(len(body)).encode() + b"\r\nconnection: close\r\n\r\n"
        )
        self.transport.write(head + body)
        self.transport.close()
