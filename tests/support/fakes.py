"""In-memory stand-ins for the project's own small interfaces (``shared.contracts.interfaces``), for
unit tests of use cases: what the real ones do, minus the servers. Flow tests use the real
ones (S3, the JetStream KV, NATS)."""

import json
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel

from shared.contracts.interfaces import Document, ObjectMissing
from shared.contracts.subjects import Subject

M = TypeVar("M", bound=BaseModel)
E = TypeVar("E", bound=BaseModel)


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
