"""Helpers for flow tests that run the pipeline against a scripted model server: settings
that point at it, what kind of request it got (vision, structuring, judge) and for which
page, and replies built from the page's own text layer."""

import asyncio
import contextlib
import json
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nats.js.errors import NotFoundError
from pydantic import SecretStr

from services.extract.model.structuring import TEXT_HEADING as STRUCTURE_HEADING
from services.extract.model.vision import TEXT_LAYER_HEADING as VISION_HEADING
from shared.contracts.interfaces import ObjectMissing
from shared.infra.settings import Settings
from shared.infra.storage import Keys, ObjectStore
from sheetflow.runtime import ManagedProcess
from sheetflow.services import PIPELINE
from tests.support.model_server import (
    ModelReply,
    ScriptedModelServer,
    request_has_image,
    request_text,
)
from tests.support.pdfs import NOTES
from tests.support.stack import (
    TEST_TIMINGS,
    Stack,
    module_settings,
    nats_client,
    shared_stack,
)

EXTRACT_MODEL = "vision-x"
JUDGE_MODEL = "judge-x"
JUDGE_MARKER = "OBJECTS TO CHECK"
_PAGE = re.compile(r"(?:Extract sheet|Sheet) (\d+) of the drawing set")

Responder = Callable[[dict], ModelReply]


def model_settings(settings: Settings, server: ScriptedModelServer, **update: Any) -> Settings:
    """``settings`` with the scripted server as the model (extract model ``vision-x``, quick
    retries); pass ``llm_verify_model=JUDGE_MODEL`` where the judge is wanted."""
    return settings.model_copy(
        update={
            "llm_base_url": server.base_url,
            "llm_api_key": SecretStr("test-key"),
            "llm_extract_model": EXTRACT_MODEL,
            "llm_max_retries": 2,
            "retry_backoff_s": 0.1,
            "retry_backoff_max_s": 0.5,
            **update,
        }
    )


def is_judge(request: dict) -> bool:
    return JUDGE_MARKER in request_text(request)


def is_structuring(request: dict) -> bool:
    return STRUCTURE_HEADING in request_text(request) and not request_has_image(request)


def is_vision(request: dict) -> bool:
    return request_has_image(request) and not is_judge(request)


def page_of(request: dict) -> int | None:
    """The page number an extract or structuring request is about."""
    found = _PAGE.search(request_text(request))
    return int(found.group(1)) if found else None


def text_block(request: dict) -> str:
    """The text layer a vision or structuring request carries (after its heading)."""
    text = request_text(request)
    for heading in (STRUCTURE_HEADING, VISION_HEADING):
        if heading in text:
            return text.split(heading, 1)[1].strip("\n")
    return ""


def reply(objects: list[dict], sheet: dict | None = None, **kw: Any) -> ModelReply:
    """A successful extraction reply carrying ``objects`` and ``sheet``."""
    body = {"sheet": sheet or {}, "objects": objects, "unresolved_items": []}
    return ModelReply(content=json.dumps(body), **kw)


def line_objects(request: dict) -> list[dict]:
    """One object per line of the request's text layer, ``source_text`` verbatim and the
    line's id in ``ids``: what a faithful model returns."""
    objects: list[dict] = []
    for line in text_block(request).splitlines():
        unit, _, text = line.strip().partition(" ")
        if not re.fullmatch(r"L\d+", unit) or not text.strip():
            continue  # the cap's note of what it left out, or no line at all
        objects.append(
            {
                "object_id": f"o{len(objects) + 1}",
                "object_type": "text",
                "source_text": text.strip(),
                "ids": [unit],
                "confidence": "high",
            }
        )
    return objects


def summary_object() -> dict:
    """The generic one-object summary a lazy vision model gives for a notes sheet."""
    return {
        "object_id": "summary",
        "object_type": "general_note",
        "description": "General notes about construction requirements.",
        "source_text": "GENERAL NOTES",
        "confidence": "medium",
    }


MISREAD = "PROVIDE (2) 2X6 STUD PACK AT EACH BEAM BEARING UNLESS NOTED OTHERWISE."


def misread_notes() -> list[dict]:
    """One object per note of ``pdfs.NOTES``, with note 3's count read as (2) where the
    sheet says (5): the misread verification exists for."""
    notes = [MISREAD if "(5)" in note else note for note in NOTES]
    return [
        {"object_id": f"note-{i}", "object_type": "general_note", "source_text": note}
        for i, note in enumerate(notes, start=1)
    ]


def judge_objects(request: dict) -> list[str]:
    """The object ids a judge request asks about (one JSON object per line)."""
    listing = request_text(request).split(JUDGE_MARKER, 1)[1].split("\n\n", 1)[0]
    return [json.loads(line)["object_id"] for line in listing.splitlines()[1:] if line.strip()]


def lenient_judge(request: dict) -> ModelReply:
    """A judge that confirms every object it is asked about."""
    verdicts = [
        {"object_id": oid, "verdict": "confirmed", "kind": None, "actual_text": None}
        for oid in judge_objects(request)
    ]
    return ModelReply(content=json.dumps({"objects": verdicts}))


def route(
    vision: Responder | None = None,
    structure: Responder | None = None,
    judge: Responder = lenient_judge,
) -> Responder:
    """A responder dispatching by request kind; unscripted vision/structuring requests get the
    faithful one-object-per-line reply."""
    faithful: Responder = lambda req: reply(line_objects(req))  # noqa: E731

    def respond(request: dict) -> ModelReply:
        if is_judge(request):
            return judge(request)
        if is_structuring(request):
            return (structure or faithful)(request)
        return (vision or faithful)(request)

    return respond


def requests_of(server: ScriptedModelServer, kind: Callable[[dict], bool]) -> list[dict]:
    return [r for r in list(server.requests) if kind(r)]


@dataclass
class ModelStack:
    """Every service running against a scripted model, shared by a module's tests: each
    scripts the model afresh (``script``) and runs its own job."""

    stack: Stack
    server: ScriptedModelServer
    settings: Settings

    def script(self, responder: Responder) -> ScriptedModelServer:
        """Answer with ``responder`` from now on, with no request of an earlier test kept."""
        self.server.responder = responder
        self.server.requests.clear()
        return self.server


@contextlib.contextmanager
def model_stack(
    session: Settings,
    data_dir: Path,
    prefix: str,
    services: tuple[str, ...] = PIPELINE,
    **update: Any,
) -> Iterator[ModelStack]:
    """A ``ModelStack`` of ``services`` on the session's servers; ``update`` as in
    ``model_settings``."""
    with ScriptedModelServer(route()) as server:
        settings = model_settings(
            module_settings(session, data_dir, prefix, **TEST_TIMINGS), server, **update
        )
        with shared_stack(settings, *services) as s:
            yield ModelStack(s, server, settings)


STARTED_LINE = "started successfully"  # FastStream logs it once every subscriber runs


def _log(proc: ManagedProcess) -> str:
    if proc.log_path and proc.log_path.exists():
        return proc.log_path.read_text(errors="replace")
    return ""


async def wait_started(procs: list[ManagedProcess], timeout: float = 60) -> None:
    """Wait until every one of ``procs`` (service processes) has its subscribers running."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        dead = [p.name for p in procs if not p.alive()]
        if dead:
            raise AssertionError(f"{dead} exited at start")
        if all(STARTED_LINE in _log(p) for p in procs):
            return
        await asyncio.sleep(0.2)
    raise AssertionError(f"{[p.name for p in procs]} not started in {timeout}s")


async def wait_pulling(settings: Settings, durable: str, workers: int, timeout: float = 60) -> None:
    """Wait until ``workers`` pull requests wait on the durable consumer ``durable``: each
    idle pull loop keeps one, so with one loop per worker (``--concurrency 1``) that many
    workers are pulling."""
    async with nats_client(settings) as nc:
        js = nc.jetstream()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(NotFoundError):
                info = await js.consumer_info(settings.stream_name, durable)
                if (info.num_waiting or 0) >= workers:
                    return
            await asyncio.sleep(0.2)
    raise AssertionError(f"fewer than {workers} workers pulling from {durable} after {timeout}s")


async def wait_extracted(
    settings: Settings, job_id: str, pages: int, timeout: float = 60
) -> dict[int, dict]:
    """Every page's ``extracted.json`` of ``job_id`` once all ``pages`` exist."""
    store = ObjectStore(settings)
    found: dict[int, dict] = {}
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for n in range(1, pages + 1):
            if n not in found:
                with contextlib.suppress(ObjectMissing):
                    found[n] = await store.get_json(Keys.page(job_id, n, "extracted.json"))
        if len(found) == pages:
            return found
        await asyncio.sleep(0.3)
    raise AssertionError(f"only pages {sorted(found)} of {job_id} extracted in {timeout}s")


def page(report: dict, number: int) -> dict:
    return next(p for p in report["pages"] if p["page_number"] == number)


def texts(page_entry: dict) -> str:
    """Every object's source text on a report page, one per line."""
    return "\n".join(o["source_text"] or "" for o in page_entry["objects"])
