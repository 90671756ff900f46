"""Receive a multipart upload as a stream onto disk, refusing it once it is too large.

Starlette's ``request.form()`` spools the whole body before we could look at
its size; parsing the stream ourselves lets an oversized upload be refused
(413) while it arrives, with only one chunk in memory at a time.
"""

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from python_multipart.multipart import MultipartParser, parse_options_header
from starlette.requests import Request

from services.ingest.refusals import Refusal, RefusalKind, disk_full
from shared.infra.full_disk import is_disk_full

if TYPE_CHECKING:
    from python_multipart.multipart import MultipartCallbacks

MAX_OPTIONS_BYTES = 64 * 1024
MAX_FIELDS = 16


@dataclass
class ReceivedUpload:
    path: Path
    file_name: str | None = None
    options: bytes | None = None
    received: bool = False
    # The form's other small fields (the screen's: its CSRF token, project, issue label).
    fields: dict[str, str] = field(default_factory=dict)


@dataclass
class _PartState:
    headers: dict[bytes, bytes] = field(default_factory=dict)
    header_field: bytes = b""
    header_value: bytes = b""
    name: str | None = None
    file_name: str | None = None
    buffer: bytearray = field(default_factory=bytearray)


def too_large(max_bytes: int) -> Refusal:
    return Refusal(
        RefusalKind.TOO_LARGE,
        "upload_too_large",
        f"The upload is larger than this deployment's limit of {max_bytes // (1024 * 1024)} MB.",
    )


def malformed(error: str, detail: str) -> Refusal:
    return Refusal(RefusalKind.MALFORMED, error, detail)


async def receive_upload(request: Request, dest: Path, *, max_bytes: int) -> ReceivedUpload:
    """Stream the ``file`` part to ``dest`` and keep the small ``options`` part."""
    boundary = _boundary(request, max_bytes)
    # A local temporary file, written chunk by chunk from the parser's callbacks.
    with open(dest, "wb") as out:  # noqa: ASYNC230
        parts = _Parts(ReceivedUpload(path=dest), out, max_bytes)
        await _parse(request, MultipartParser(boundary, callbacks=parts.callbacks()), parts)
    if not parts.result.received:
        raise malformed("missing_file", "The upload has no field named 'file'.")
    return parts.result


def _boundary(request: Request, max_bytes: int) -> bytes:
    """The multipart boundary, once the headers say the body is multipart and not declared
    larger than the limit."""
    content_type, params = parse_options_header(request.headers.get("content-type", ""))
    if content_type != b"multipart/form-data" or b"boundary" not in params:
        raise malformed(
            "bad_request", "Send the PDF as multipart/form-data with a field named 'file'."
        )
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > max_bytes + MAX_OPTIONS_BYTES:
        raise too_large(max_bytes)
    return params[b"boundary"]


async def _parse(request: Request, parser: MultipartParser, parts: "_Parts") -> None:
    """Feed the body to ``parser`` as it arrives; the first refusal its parts met stops it."""
    try:
        async for chunk in request.stream():
            parser.write(chunk)
            if parts.errors:
                raise parts.errors[0]
        parser.finalize()
    except Refusal:
        raise
    except Exception as exc:
        if is_disk_full(exc):
            raise disk_full("that receives uploads (the API's temporary directory)") from exc
        raise malformed("bad_request", f"The multipart body could not be parsed: {exc}.") from exc


class _Parts:
    """The parser's callbacks: the ``file`` part written to ``out`` up to ``max_bytes``, the
    ``options`` part kept, and what is wrong with the upload collected in ``errors``."""

    def __init__(self, result: ReceivedUpload, out: BinaryIO, max_bytes: int) -> None:
        self.result = result
        self.errors: list[Refusal] = []
        self._out = out
        self._max_bytes = max_bytes
        self._written = 0
        self._part = _PartState()

    def callbacks(self) -> "MultipartCallbacks":
        return {
            "on_part_begin": self.on_part_begin,
            "on_header_field": self.on_header_field,
            "on_header_value": self.on_header_value,
            "on_header_end": self.on_header_end,
            "on_headers_finished": self.on_headers_finished,
            "on_part_data": self.on_part_data,
            "on_part_end": self.on_part_end,
        }

    def on_part_begin(self) -> None:
        self._part = _PartState()

    def on_header_field(self, data: bytes, start: int, end: int) -> None:
        self._part.header_field += data[start:end]

    def on_header_value(self, data: bytes, start: int, end: int) -> None:
        self._part.header_value += data[start:end]

    def on_header_end(self) -> None:
        part = self._part
        part.headers[part.header_field.lower()] = part.header_value
        part.header_field, part.header_value = b"", b""

    def on_headers_finished(self) -> None:
        part = self._part
        _, disposition = parse_options_header(part.headers.get(b"content-disposition", b""))
        part.name = disposition.get(b"name", b"").decode(errors="replace")
        raw_name = disposition.get(b"filename")
        part.file_name = raw_name.decode(errors="replace") if raw_name is not None else None
        if part.name != "file":
            return
        if self.result.received:
            # Appending a second file to the first would make one PDF no one sent.
            self.errors.append(
                malformed(
                    "too_many_files",
                    "The upload has more than one 'file' part; send one PDF per request.",
                )
            )
        self.result.file_name = part.file_name
        self.result.received = True

    def on_part_data(self, data: bytes, start: int, end: int) -> None:
        if self.errors:
            return
        if self._part.name == "file":
            self._file_data(data[start:end])
        elif self._part.name:
            self._options_data(data[start:end])

    def _file_data(self, chunk: bytes) -> None:
        self._written += len(chunk)
        if self._written > self._max_bytes:
            self.errors.append(too_large(self._max_bytes))
            return
        self._out.write(chunk)

    def _options_data(self, chunk: bytes) -> None:
        self._part.buffer += chunk
        if len(self._part.buffer) > MAX_OPTIONS_BYTES:
            what = self._part.name
            self.errors.append(malformed("bad_options", f"The {what!r} field is too large."))

    def on_part_end(self) -> None:
        if self._part.name == "options":
            self.result.options = bytes(self._part.buffer)
        elif self._part.name and self._part.name != "file":
            if len(self.result.fields) >= MAX_FIELDS:
                self.errors.append(malformed("bad_request", "The upload has too many fields."))
            self.result.fields[self._part.name] = self._part.buffer.decode(errors="replace")
