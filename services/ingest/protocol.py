"""The HTTP protocol ingest's server speaks: uvicorn's h11 protocol, except that a request the
server refuses before the app sees it (a malformed request line or header, a Content-Length
of 10^23) gets a JSON body with its error kind, as every refusal of the API does."""

import json

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

BAD_REQUEST = "bad_request"


def refusal_body(detail: str) -> bytes:
    return json.dumps({"error": BAD_REQUEST, "detail": detail}).encode()


class JsonRefusalProtocol(H11Protocol):
    def send_400_response(self, msg: str) -> None:
        body = refusal_body(f"{msg.rstrip('.')}: the request is not valid HTTP/1.1.")
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
        ]
        for event in (
            h11.Response(status_code=400, headers=headers, reason=b"Bad Request"),
            h11.Data(data=body),
            h11.EndOfMessage(),
        ):
            self.transport.write(self.conn.send(event))
        self.transport.close()
