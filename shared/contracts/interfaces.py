"""The small interfaces every service's use cases do their I/O through.

S3, the job KV bucket, NATS, a model server, the OCR engine and the bounded page readers sit
behind them (``shared.infra.storage.ObjectStore``, ``shared.infra.jobs.KvStateStore``,
``shared.infra.broker.NatsPublisher``, ``shared.infra.llm.LLMClient``,
``shared.ocr.engine.OcrEngine``, ``services.extract.reading.isolation.PageReaders``);
unit tests of the use cases hand them in-memory fakes (``tests/support/fakes.py``) instead,
flow tests the real ones.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from pydantic import BaseModel

from shared.contracts.models import Usage
from shared.contracts.subjects import Subject
from shared.pagetext import Word

if TYPE_CHECKING:  # the services that never read pixels do not load numpy
    import numpy

M = TypeVar("M", bound=BaseModel)
E = TypeVar("E", bound=BaseModel)
T = TypeVar("T")

# What a document in the state store is written from: a model, or plain JSON data.
Document = BaseModel | Mapping[str, Any]


class ObjectMissing(KeyError):
    """The key is not in the bucket."""


class Bucket(Protocol):
    """The one bucket every stage keeps its artifacts in. A read of a key that is not there
    raises ``ObjectMissing``."""

    async def get_bytes(self, key: str) -> bytes: ...

    async def get_model(self, key: str, model: type[M]) -> M: ...

    async def put_bytes(
        self, key: str, data: bytes, content_type: str = "application/octet-stream"
    ) -> None: ...

    async def put_json(self, key: str, value: BaseModel | dict[str, Any] | list[Any]) -> None: ...

    async def put_file(
        self, key: str, path: str, content_type: str = "application/pdf"
    ) -> None: ...

    async def exists(self, key: str) -> bool: ...

    async def list_keys(self, prefix: str) -> list[str]:
        """Every key under ``prefix``, in key order."""
        ...

    async def delete_prefix(self, prefix: str) -> None: ...


class StateStore(Protocol):
    """JSON documents under dotted keys, each read with its revision so a writer can
    compare-and-set: the job and page state every stage shares."""

    async def get(self, key: str) -> tuple[Any, int] | None:
        """The document and its revision, or None when the key holds none."""
        ...

    async def put(self, key: str, value: Document) -> None: ...

    async def put_if(self, key: str, value: Document, *, revision: int | None) -> bool:
        """Write only if the key is still at ``revision`` (None: only if it holds nothing);
        False when another writer got there first."""
        ...

    async def scan(self, prefix: str) -> dict[str, Any]:
        """Every document whose key starts with ``prefix`` (which ends in a dot), by key."""
        ...

    async def delete(self, key: str) -> None:
        """Remove the key's document (nothing happens when it holds none)."""
        ...


class Publisher(Protocol):
    """Publishes events and commands on the stream, under the deployment's namespace."""

    async def publish(self, subject: Subject[E], event: E, *, dedup_id: str) -> None:
        """Publish ``event`` on ``subject`` (which carries only events of its model); a
        second publication with the same ``dedup_id`` is dropped (at-least-once handlers may
        publish twice)."""
        ...


class ChatResult(BaseModel):
    content: str
    finish_reason: str | None
    usage: Usage


class LLMError(Exception):
    """The call failed for good (retries exhausted, or refused); the message says why."""


class ModelClient(Protocol):
    """An OpenAI-compatible chat model server, the one extract's vision and structuring rungs
    and verify's judge call."""

    async def chat(
        self,
        *,
        model: str,
        messages: list[dict],
        max_tokens: int | None = None,
        json_mode: bool = True,
        schema: dict[str, Any] | None = None,
        reasoning: dict[str, Any] | None = None,
    ) -> ChatResult:
        """One chat completion; raises :class:`LLMError` when it cannot be had. With a
        ``schema``, the reply is asked in that JSON schema where the server supports it;
        ``reasoning`` (effort, max_tokens) is sent where the server takes it."""
        ...


@dataclass(frozen=True)
class Raster:
    """Gray pixels of a region of the displayed page: pixel (column, row) shows the page
    point ``(x0 + column / zoom, y0 + row / zoom)``."""

    pixels: "numpy.ndarray"
    zoom: float  # pixels per PDF point
    x0: float
    y0: float


class Ocr(Protocol):
    """Optical character recognition of page images: extract reads a page without a text
    layer with it, verify the lines of its OCR check. Lines are quadrilaterals (top-left,
    top-right, bottom-right, bottom-left) in page points; words come back in the displayed
    page's frame, marked ``origin="ocr"``. Blocking and CPU-bound: called from a worker
    thread."""

    def find_lines(self, png: bytes, zoom: float) -> "list[numpy.ndarray]":
        """The text lines on a page image of ``zoom`` pixels per point."""
        ...

    def page_turn(self, raster: Raster, lines: "list[numpy.ndarray]") -> int:
        """How the page's text is turned: degrees clockwise, 0, 90, 180 or 270."""
        ...

    def read_lines(self, raster: Raster, lines: "list[numpy.ndarray]", turn: int = 0) -> list[Word]:
        """Each line's words, read from ``raster`` in the frame of content turned ``turn``."""
        ...

    def ocr_raster(
        self,
        raster: Raster,
        turn: int = 0,
        *,
        detection_zoom: float | None = None,
        skip: "Callable[[numpy.ndarray], bool] | None" = None,
    ) -> list[Word]:
        """The words of a rendered region: its lines found (on the region reduced to
        ``detection_zoom`` pixels per point) and read, but those ``skip`` says were read
        already."""
        ...

    def read_crops(self, crops: "list[numpy.ndarray]") -> list[tuple[str, float]]:
        """Each crop (gray pixels of one line reading left to right) read: its text and
        confidence, "" for a line too unsure to count."""
        ...


class PageReader(Protocol):
    """Where MuPDF's work on a page runs, held to the page's time and memory limits (a child
    process a runaway page cannot stall the worker from)."""

    async def read(
        self, read: Callable[..., T], pdf: bytes, *args: Any, timeout_s: float, max_mb: int
    ) -> T:
        """``read(pdf, *args)``; raises what ``read`` raises, or
        ``shared.infra.bounded.OverLimit`` past the limits (``ChildDied`` when the child
        running it died)."""
        ...
