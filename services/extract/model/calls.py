"""A model rung's calls: one per page (or per tile of a tiled page), a compact retry when a
reply is unparseable, the replies merged and held to the grounding guard, as one
``ExtractionResult``."""

import asyncio
from dataclasses import dataclass
from typing import Any

from services.extract.clock import elapsed_ms
from services.extract.guard import apply_grounding_guard
from services.extract.model.tiles import merge_tile_objects
from services.extract.model.vision import (
    REPLY_JSON_SCHEMA,
    ParsedReply,
    ReplyUnparseable,
    build_compact_retry_messages,
    parse_reply,
)
from shared.contracts.interfaces import ChatResult, LLMError, ModelClient
from shared.contracts.models import ExtractionResult, PageObject, Rung, Usage
from shared.infra.settings import Settings
from shared.pagetext import TextLayer
from shared.pagetext.units import PageUnits
from shared.sheet.header import SheetHeader


async def _ask_model(
    llm: ModelClient, model: str, messages: list[dict], settings: Settings, id_prefix: str
) -> tuple[ParsedReply | None, str | None, Usage]:
    """One call, and one compact retry when the reply is unparseable. Returns the parsed
    reply, or None with the reason it failed; usage covers every answered call."""
    usage = Usage()
    # A reasoning model's thinking counts against the completion's tokens: its budget is
    # given on top of the reply's, so thinking cannot cut the objects off.
    thinking = settings.extract_reasoning_max_tokens
    effort = settings.extract_reasoning_effort
    reasoning = {"effort": effort, "max_tokens": thinking} if effort or thinking else None

    async def ask(messages: list[dict]) -> ChatResult:
        return await llm.chat(
            model=model,
            messages=messages,
            max_tokens=settings.llm_max_tokens + (thinking or 0),
            schema=REPLY_JSON_SCHEMA,
            reasoning=reasoning,
        )

    try:
        reply = await ask(messages)
        usage = usage.add(reply.usage)
        try:
            return parse_reply(reply.content, reply.finish_reason, id_prefix), None, usage
        except ReplyUnparseable:
            retry = build_compact_retry_messages(messages)
            reply = await ask(retry)
            usage = usage.add(reply.usage)
            return parse_reply(reply.content, reply.finish_reason, id_prefix), None, usage
    except ReplyUnparseable as exc:
        reason = f"the model's reply could not be parsed, even after a compact retry ({exc})"
        return None, reason, usage
    except LLMError as exc:
        return None, f"the model call failed: {exc}", usage


def _stamp(objects: list[PageObject], page_number: int, rung: Rung) -> list[PageObject]:
    return [o.model_copy(update={"page_number": page_number, "rung": rung}) for o in objects]


@dataclass(frozen=True)
class ModelAsk:
    """What a model result is asked with: one message list per call (one call per tile of a
    tiled page), and the page's units its replies cite."""

    model: str
    calls: list[list[dict]]
    units: PageUnits
    rung: Rung
    stage: str
    id_prefix: str
    tiles: int = 0


async def model_result(
    text_layer: TextLayer,
    settings: Settings,
    llm: ModelClient,
    ask: ModelAsk,
    *,
    job_id: str,
    worker_id: str | None,
    started: float,
) -> ExtractionResult:
    prefixes = (
        [ask.id_prefix]
        if len(ask.calls) == 1
        else [f"{ask.id_prefix}{n}-" for n in range(1, len(ask.calls) + 1)]
    )
    answers = await asyncio.gather(
        *(
            _ask_model(llm, ask.model, messages, settings, prefix)
            for messages, prefix in zip(ask.calls, prefixes, strict=True)
        )
    )
    usage = Usage(tiles=ask.tiles)
    for _, _, call_usage in answers:
        usage = usage.add(call_usage)
    replies = [
        (prefix, parsed)
        for (parsed, _, _), prefix in zip(answers, prefixes, strict=True)
        if parsed is not None
    ]
    failures = [reason for parsed, reason, _ in answers if parsed is None]
    reason = failures[0] if failures else None
    result = ExtractionResult(
        job_id=job_id,
        page_number=text_layer.page_number,
        rung=ask.rung,
        status="failed",
        reason=reason,
        model_failure=reason,
        has_text_layer=text_layer.has_text_layer,
        usage={ask.stage: usage} if usage.calls else {},
        worker_id=worker_id,
    )
    if replies:
        parsed = _merge_replies(replies)
        objects = _stamp(parsed.objects, text_layer.page_number, ask.rung)
        kept, counts = await asyncio.to_thread(
            apply_grounding_guard, objects, text_layer, parsed.cited, ask.units
        )
        problems = []
        if parsed.truncated:
            problems.append("the model's reply was cut off at the token limit")
        if failures:
            problems.append(f"{len(failures)} of {len(ask.calls)} tiles failed: {failures[0]}")
        result.status = "degraded" if problems else "ok"
        result.reason = "; ".join(problems) or None
        result.model_failure = None
        result.sheet = parsed.sheet
        result.objects = merge_tile_objects(kept) if len(replies) > 1 else kept
        result.unresolved_items = parsed.unresolved_items
        result.guard = counts
    result.elapsed_ms = elapsed_ms(started)
    return result


def _merge_replies(replies: list[tuple[str, ParsedReply]]) -> ParsedReply:
    """Replies of one page's tiles (each with its tile's id prefix) as one: the first value
    of each header field, every object (its id made unique by its tile's prefix, as its
    citations), every unresolved item."""
    if len(replies) == 1:
        return replies[0][1]
    header: dict[str, Any] = {}
    objects: list[PageObject] = []
    cited: dict[str, list[str]] = {}
    for prefix, reply in replies:
        for name, value in reply.sheet.model_dump(exclude_none=True).items():
            header.setdefault(name, value)
        for obj in reply.objects:
            own = obj.object_id
            unique = own if own.startswith(prefix) else f"{prefix}{own}"
            objects.append(obj.model_copy(update={"object_id": unique}))
            if own in reply.cited:
                cited[unique] = reply.cited[own]
    return ParsedReply(
        sheet=SheetHeader(**header),
        objects=objects,
        unresolved_items=[i for _, r in replies for i in r.unresolved_items],
        truncated=any(r.truncated for _, r in replies),
        cited=cited,
    )
