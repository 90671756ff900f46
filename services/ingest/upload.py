"""Receive a multipart upload as a stream onto disk, refusing it once it is too large.

Starlette's ``request.form()`` spools the whole body before we could look at
its size; parsing the stream ourselves lets an oversized upload be refused
(413) while it arrives, with only one chunk in memory at a time.
"""

from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from python_multipart.multipart import MultipartParser, parse_options_header
from starlette.requests import Request

from services.ingest.validation import Rejection

MAX_OPTIONS_BYTES = 64 * 1024


@dataclass
class ReceivedUpload:
    path: Path
    file_name: str | None = None
    options: bytes | None = None
    received: bool = False


@dataclass
class _PartState:
    headers: dict[bytes, bytes] = field(default_factory=dict)
    header_field: bytes = b""
    header_value: bytes = b""
    name: str | None = None
    file_name: str | None = None
    buffer: bytearray = field(default_factory=bytearray)


def too_large(max_bytes: int) -> Rejection:
    return Rejection(
        413,
        "upload_too_large",
        f"The upload is larger than this deployment's limit of {max_bytes // (1024 * 1024)} MB.",
    )


async def receive_upload(request: Request, dest: Path, *, max_bytes: int) -> ReceivedUpload:
    """Stream the ``file`` part to ``dest`` and keep the small ``options`` part."""
    content_type, params = parse_options_header(request.headers.get("content-type", ""))
    if content_type != b"multipart/form-data" or b"boundary" not in params:
        raise Rejection(
            400, "bad_request", "Send the PDF as multipart/form-data with a field named 'file'."
        )
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > max_bytes + MAX_OPTIONS_BYTES:
        raise too_large(max_bytes)

    result = ReceivedUpload(path=dest)
    part = _PartState()
    # A local temporary file, written chunk by chunk from the parser's callbacks and closed in
    # the `finally` below.
    out: BinaryIO = open(dest, "wb")  # noqa: ASYNC230, SIM115
    written = 0
    errors: list[Rejection] = []

    def on_part_begin() -> None:
        nonlocal part
        part = _PartState()

    def on_header_field(data: bytes, start: int, end: int) -> None:
        part.header_field += data[start:end]

    def on_header_value(data: bytes, start: int, end: int) -> None:
        part.header_value += data[start:end]

    def on_header_end() -> None:
        part.headers[part.header_field.lower()] = part.header_value
        part.header_field, part.header_value = b"", b""

    def on_headers_finished() -> None:
        _, disposition = parse_options_header(part.headers.get(b"content-disposition", b""))
        part.name = disposition.get(b"name", b"").decode(errors="replace")
        raw_name = disposition.get(b"filename")
        part.file_name = raw_name.decode(errors="replace") if raw_name is not None else None
        if part.name == "file":
            if result.received:
                # Appending a second file to the first would make one PDF no one sent.
                errors.append(
                    Rejection(
                        400,
                        "too_many_files",
                        "The upload has more than one 'file' part; send one PDF per request.",
                    )
                )
            result.file_name = part.file_name
            result.received = True

    def on_part_data(data: bytes, start: int, end: int) -> None:
        nonlocal written
        if errors:
            return
        if part.name == "file":
            written += end - start
            if written > max_bytes:
                if not errors:
                    errors.append(too_large(max_bytes))
                return
            out.write(data[start:end])
        elif part.name == "options":
            part.buffer += data[start:end]
            if len(part.buffer) > MAX_OPTIONS_BYTES:
                errors.append(Rejection(400, "bad_options", "The 'options' field is too large."))

    def on_part_end() -> None:
        if part.name == "options":
            result.options = bytes(part.buffer)

    parser = MultipartParser(
        params[b"boundary"],
        callbacks={
            "on_part_begin": on_part_begin,
            "on_header_field": on_header_field,
            "on_header_value": on_header_value,
            "on_header_end": on_header_end,
            "on_headers_finished": on_headers_finished,
            "on_part_data": on_part_data,
            "on_part_end": on_part_end,
        },
    )
    try:
        async for chunk in request.stream():
            parser.write(chunk)
            if errors:
                raise errors[0]
        parser.finalize()
    except Rejection:
        raise
    except Exception as exc:
        raise Rejection(
            400, "bad_request", f"The multipart body could not be parsed: {exc}."
        ) from exc
    finally:
        out.close()
    if not result.received:
        raise Rejection(400, "missing_file", "The upload has no field named 'file'.")
    return result
