"""In-memory stand-ins for the project's own small interfaces (``shared.contracts.interfaces``),
for unit tests of use cases: what the real ones do, minus the servers, child processes and
OCR models. Flow tests use the real ones (S3, the JetStream KV, NATS, the bounded page
readers, the OCR engine)."""

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy
from pydantic import BaseModel

from shared.contracts.interfaces import Document, ObjectMissing, Raster
from shared.contracts.subjects import Subject
from shared.infra.bounded import OverLimit
from shared.pagetext import Word

M = TypeVar("M", bound=BaseModel)
E = TypeVar("E", bound=BaseModel)
T = TypeVar("T")


class MemoryBucket:
    """A bucket in a dict; values are stored as the bytes the real one would hold."""

    def __init__(self) -> None:
        self.objects: dict[str, bytes] = {}

    async def get_bytes(self, key: str) -> bytes:
        try:
            return self.objects[key]
        except KeyError:
            raise ObjectMissing(key) from None

    async def get_model(self, key: str, model: type[M]) -> M:
        return model.model_validate_json(await self.get_bytes(key))

    async def put_bytes(
        self, key: str, data: bytes, content_type: str = "application/octet-stream"
    ) -> None:
        self.objects[key] = bytes(data)

    async def put_json(self, key: str, value: BaseModel | dict[str, Any] | list[Any]) -> None:
        if isinstance(value, BaseModel):
            self.objects[key] = value.model_dump_json().encode()
        else:
            self.objects[key] = json.dumps(value, default=str).encode()

    async def put_file(self, key: str, path: str, content_type: str = "application/pdf") -> None:
        with open(path, "rb") as source:
            self.objects[key] = source.read()

    async def exists(self, key: str) -> bool:
        return key in self.objects

    async def list_keys(self, prefix: str) -> list[str]:
        return sorted(k for k in self.objects if k.startswith(prefix))

    async def delete_prefix(self, prefix: str) -> None:
        for key in [k for k in self.objects if k.startswith(prefix)]:
            del self.objects[key]


class MemoryStateStore:
    """A state store in a dict, revisions counted per store as JetStream counts them per
    bucket; documents are kept as JSON text, so what does not survive JSON fails here too."""

    def __init__(self) -> None:
        self.documents: dict[str, tuple[str, int]] = {}
        self._revision = 0

    async def get(self, key: str) -> tuple[Any, int] | None:
        if key not in self.documents:
            return None
        text, revision = self.documents[key]
        return json.loads(text), revision

    async def put(self, key: str, value: Document) -> None:
        self._revision += 1
        text = value.model_dump_json() if isinstance(value, BaseModel) else json.dumps(value)
        self.documents[key] = (text, self._revision)

    async def put_if(self, key: str, value: Document, *, revision: int | None) -> bool:
        current = self.documents.get(key)
        if (current[1] if current else None) != revision:
            return False
        await self.put(key, value)
        return True

    async def scan(self, prefix: str) -> dict[str, Any]:
        return {
            key: json.loads(text)
            for key, (text, _) in sorted(self.documents.items())
            if key.startswith(prefix)
        }

    async def delete(self, key: str) -> None:
        self.documents.pop(key, None)


@dataclass(frozen=True)
class Published:
    name: Subject
    event: BaseModel
    dedup_id: str


@dataclass
class RecordingPublisher:
    """Keeps what was published, in order, de-duplicated by ``dedup_id`` as JetStream's
    duplicate window does (``attempts`` keeps every call)."""

    published: list[Published] = field(default_factory=list)
    attempts: list[Published] = field(default_factory=list)

    async def publish(self, subject: Subject[E], event: E, *, dedup_id: str) -> None:
        message = Published(subject, event, dedup_id)
        self.attempts.append(message)
        if all((p.name, p.dedup_id) != (subject, dedup_id) for p in self.published):
            self.published.append(message)

    def on(self, subject: Subject[E]) -> list[E]:
        """The events published on ``subject``, in order."""
        return [
            p.event
            for p in self.published
            if p.name == subject and isinstance(p.event, subject.event)
        ]


@dataclass
class InlinePageReader:
    """Runs each page-reading function in this process (a worker thread), where the real
    readers run it in a child bounded in time and memory; a function named in
    ``over_limit`` goes past the page's limits instead, as a page too complex to render
    does. ``calls`` names the functions run, in order."""

    over_limit: set[str] = field(default_factory=set)
    calls: list[str] = field(default_factory=list)

    async def read(
        self, read: Callable[..., T], pdf: bytes, *args: Any, timeout_s: float, max_mb: int
    ) -> T:
        self.calls.append(read.__name__)
        if read.__name__ in self.over_limit:
            raise OverLimit("time", f"{timeout_s:g} s")
        return await asyncio.to_thread(read, pdf, *args)


@dataclass
class ScriptedOcr:
    """An OCR engine that reads what it is told: on a page image, one line for each of
    ``words`` (its box), read as ``words`` in the frame turned ``turn``; a closer look at a
    region finds nothing more; each line crop of the OCR check reads ``crop_text`` with
    ``crop_score``. ``crops_read`` counts the crops it was given."""

    words: list[Word] = field(default_factory=list)
    turn: int = 0
    crop_text: str = ""
    crop_score: float = 0.99
    crops_read: int = 0

    def find_lines(self, png: bytes, zoom: float) -> list[numpy.ndarray]:
        return [
            numpy.array([[w.x0, w.y0], [w.x1, w.y0], [w.x1, w.y1], [w.x0, w.y1]], float)
            for w in (word.bbox for word in self.words)
        ]

    def page_turn(self, raster: Raster, lines: list[numpy.ndarray]) -> int:
        return self.turn

    def read_lines(self, raster: Raster, lines: list[numpy.ndarray], turn: int = 0) -> list[Word]:
        return list(self.words)

    def ocr_raster(
        self,
        raster: Raster,
        turn: int = 0,
        *,
        detection_zoom: float | None = None,
        skip: Callable[[numpy.ndarray], bool] | None = None,
    ) -> list[Word]:
        return []

    def read_crops(self, crops: list[numpy.ndarray]) -> list[tuple[str, float]]:
        self.crops_read += len(crops)
        return [(self.crop_text, self.crop_score)] * len(crops)
