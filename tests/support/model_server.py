"""A scripted OpenAI-compatible chat server on loopback, for every test that needs a model.

    with ScriptedModelServer(lambda req: ModelReply(content='{"objects": []}')) as server:
        settings = Settings(llm_base_url=server.base_url, llm_extract_model="m", ...)
        ...
        assert request_has_image(server.requests[0])

Each request is answered on its own thread, so a reply held with ``delay_s`` never
blocks the others. The responder can be swapped at any time (``server.responder = ...``).

``response_format`` says how the server treats a request's ``response_format``, as common
OpenAI-compatible servers do: ``ignore`` it (the responder's content goes out as it is),
``reject`` it (HTTP 400 naming it), or ``honour`` it (a reply asked in a JSON schema is the
responder's JSON alone, whatever prose or fences the responder put around it, as constrained
decoding makes it).
"""

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

ResponseFormat = Literal["ignore", "reject", "honour"]
REJECTED_RESPONSE_FORMAT = "Unsupported parameter: 'response_format' is not supported by this model"

EMPTY_REPLY = json.dumps({"sheet": {}, "objects": [], "unresolved_items": []})


@dataclass
class ModelReply:
    """What the server answers: a chat completion carrying ``content`` (status 200), an
    error (other statuses), or ``body`` verbatim (a dict, or a str for non-JSON garbage)."""

    content: str | None = None
    finish_reason: str = "stop"
    status: int = 200
    delay_s: float = 0.0
    body: dict | str | None = None
    headers: dict[str, str] | None = None


def request_messages(request: dict) -> list[dict]:
    """The chat messages of a request."""
    return request.get("messages") or []


def _parts(request: dict) -> list[dict]:
    parts: list[dict] = []
    for message in request_messages(request):
        content = message.get("content")
        if isinstance(content, str):
            parts.append({"type": "text", "text": content})
        elif isinstance(content, list):
            parts.extend(p for p in content if isinstance(p, dict))
    return parts


def request_text(request: dict) -> str:
    """Every text part of every message, joined by newlines (system prompt included)."""
    return "\n".join(p["text"] for p in _parts(request) if p.get("type") == "text")


def request_images(request: dict) -> list[str]:
    """The image URLs (data URLs) the request carries."""
    return [p["image_url"]["url"] for p in _parts(request) if p.get("type") == "image_url"]


def request_has_image(request: dict) -> bool:
    """True when the request carries at least one image."""
    return bool(request_images(request))


def completion_body(request: dict, reply: ModelReply) -> dict[str, Any]:
    """The JSON body of a successful chat completion for ``reply`` (with usage numbers)."""
    content = reply.content if reply.content is not None else EMPTY_REPLY
    prompt_tokens = max(1, len(request_text(request)) // 4) + 765 * len(request_images(request))
    completion_tokens = max(1, len(content) // 4)
    return {
        "id": f"chatcmpl-{int(time.time() * 1000)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.get("model", "scripted"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": reply.finish_reason,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def _json_alone(content: str) -> str:
    """The first JSON object in ``content``, alone (the content as it is without one)."""
    decoder = json.JSONDecoder()
    start = content.find("{")
    while start >= 0:
        try:
            value, _ = decoder.raw_decode(content, start)
        except ValueError:
            start = content.find("{", start + 1)
            continue
        return json.dumps(value)
    return content


class ScriptedModelServer:
    """An OpenAI-compatible ``POST /v1/chat/completions`` answered by ``responder``."""

    def __init__(
        self,
        responder: Callable[[dict], ModelReply] | None = None,
        models: list[str] | None = None,
        response_format: ResponseFormat = "ignore",
    ):
        self.responder: Callable[[dict], ModelReply] = responder or (lambda _req: ModelReply())
        self.response_format: ResponseFormat = response_format
        # ``GET /v1/models`` lists these; None: the server has no model list (404), as some
        # OpenAI-compatible proxies do not.
        self.models = models
        self.requests: list[dict] = []
        self.base_url = ""
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> "ScriptedModelServer":
        """Listen on a free loopback port; ``base_url`` is set once this returns."""
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        port = self._server.server_address[1]
        self.base_url = f"http://127.0.0.1:{port}/v1"
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="scripted-model-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop listening (replies still held by ``delay_s`` are abandoned)."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> "ScriptedModelServer":
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _answer(self, request: dict) -> tuple[int, bytes, dict[str, str]]:
        asked = request.get("response_format")
        try:
            if asked is not None and self.response_format == "reject":
                reply = ModelReply(status=400, content=REJECTED_RESPONSE_FORMAT)
            else:
                reply = self.responder(request)
        except Exception as exc:  # a broken responder shows up in the test, not as a hang
            error = {"error": {"message": f"responder failed: {exc!r}"}}
            reply = ModelReply(status=500, body=error)
        schema_asked = isinstance(asked, dict) and asked.get("type") == "json_schema"
        if schema_asked and self.response_format == "honour" and reply.content:
            reply = replace(reply, content=_json_alone(reply.content))
        if reply.delay_s:
            time.sleep(reply.delay_s)
        if reply.body is not None:
            body = reply.body
        elif reply.status == 200:
            body = completion_body(request, reply)
        else:
            message = reply.content or f"scripted error {reply.status}"
            body = {"error": {"message": message, "type": "scripted", "code": reply.status}}
        raw = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        return reply.status, raw, reply.headers or {}

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                if not self.path.rstrip("/").endswith("/models") or server.models is None:
                    self._send(404, b'{"error": {"message": "not found"}}', {})
                    return
                listing = {"object": "list", "data": [{"id": m} for m in server.models]}
                self._send(200, json.dumps(listing).encode(), {})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, b'{"error": {"message": "not found"}}', {})
                    return
                try:
                    request = json.loads(raw)
                except ValueError:
                    self._send(400, b'{"error": {"message": "body is not JSON"}}', {})
                    return
                request["_headers"] = {k.lower(): v for k, v in self.headers.items()}
                server.requests.append(request)
                self._send(*server._answer(request))

            def _send(self, status: int, raw: bytes, headers: dict[str, str]) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(raw)))
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(raw)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout): nothing to tell it

            def log_message(self, *args: object) -> None:
                pass  # keep test output clean

        return Handler
