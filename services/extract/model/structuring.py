"""Rung 2, text-only structuring: the page's text layer, no image (so nothing can be
misread), segmented into one object per note, row, tag and field. Replies are parsed by
``vision.parse_reply`` (same schema)."""

import asyncio
import time

from services.extract.model.calls import ModelAsk, model_result
from services.extract.model.vision import REPLY_SCHEMA
from shared.contracts.interfaces import ModelClient
from shared.contracts.models import ExtractionResult
from shared.infra.settings import Settings
from shared.pagetext import TextLayer
from shared.pagetext.units import PageUnits
from shared.sheet.fields import read_units
from shared.sheet.header import SheetHeader

TEXT_HEADING = "TEXT LAYER (segment ALL of it):"
SHEET_HINT_HEADING = "SHEET HINT (what is already known of this sheet):"

STRUCTURING_PROMPT = f"""You turn the text layer of one sheet of a construction drawing set into
structured objects. There is no image: the text below is everything you have.

Cover the ENTIRE input: every line of the text belongs to an object or, when it cannot be
segmented, to "unresolved_items". Omitting a note, a row or a field is a failure.

Each line of the text starts with its id (L17) and is one unit of the sheet as read: a
title-block field as "LABEL: value", a table row with its cells separated by " | " (the
header row first), a numbered note whole, or a label or block. Segment EVERY note, schedule
row, callout, tag, legend entry and title-block field into its own object: one object per
numbered note, one per schedule/table row, one per title-block field. Never summarise
several into one. "ids" lists the ids of the lines an object comes from (usually one): the
object's text is then taken from those lines.

Never invent, complete or correct text. "source_text" is copied VERBATIM from the text
layer — the exact characters, typos and abbreviations included, never paraphrased,
corrected or reordered. Numbers, tags and dimensions in your values must come from the
text; a value the text does not carry is left out, never guessed.

When unsure what a piece of text is, make it a general_note with "confidence": "low"
rather than leave it out.

When a SHEET HINT is given, it is what is already known of the sheet (number, title,
discipline): use it for "sheet" unless the text plainly says otherwise.

object_type is one of: general_note, schedule_row, title_block_field, tag, dimension,
callout, legend_entry, text.

Reply with one JSON object and nothing else, in this shape:
{REPLY_SCHEMA}"""


def _sheet_hint(sheet: SheetHeader | None) -> str | None:
    if sheet is None:
        return None
    known = sheet.model_dump(exclude={"sheet_number_source"}, exclude_none=True)
    return "; ".join(f"{name}: {value}" for name, value in known.items()) or None


def build_structuring_messages(
    text_layer: TextLayer,
    max_chars: int,
    sheet: SheetHeader | None = None,
    units: PageUnits | None = None,
) -> list[dict]:
    """System prompt plus one user message holding the ``SHEET HINT`` when something is
    known of the sheet (``sheet``), then the page's units (``units``, default read from
    ``text_layer``), one ``L17 text`` line each, capped at ``max_chars`` by whole units,
    after the line ``TEXT LAYER (segment ALL of it):``."""
    text = (units if units is not None else read_units(text_layer)).render(max_chars)
    prompt = f"Sheet {text_layer.page_number} of the drawing set.\n\n"
    if hint := _sheet_hint(sheet):
        prompt += f"{SHEET_HINT_HEADING}\n{hint}\n\n"
    prompt += f"{TEXT_HEADING}\n{text}"
    return [
        {"role": "system", "content": STRUCTURING_PROMPT},
        {"role": "user", "content": prompt},
    ]


async def structure_text(
    text_layer: TextLayer,
    settings: Settings,
    llm: ModelClient | None,
    *,
    job_id: str,
    worker_id: str | None = None,
    sheet: SheetHeader | None = None,
) -> ExtractionResult:
    """Rung 2: the page's text layer (no image) segmented by ``settings.structure_model``
    into one object per note, row, tag and field, with what is known of the ``sheet`` as a
    hint; guard applied. ``degraded`` when the reply was cut off, ``failed`` with the reason
    when no model is configured, the call fails or the reply is unparseable twice."""
    started = time.perf_counter()
    model = settings.structure_model
    if llm is None or not model or not settings.llm_base_url:
        return ExtractionResult(
            job_id=job_id,
            page_number=text_layer.page_number,
            rung="text_structuring",
            status="failed",
            reason="no model is configured for text structuring",
            has_text_layer=text_layer.has_text_layer,
            worker_id=worker_id,
        )
    units = await asyncio.to_thread(read_units, text_layer)
    messages = build_structuring_messages(text_layer, settings.text_layer_max_chars, sheet, units)
    ask = ModelAsk(
        model, [messages], units, "text_structuring", "structure", f"p{text_layer.page_number}-s"
    )
    return await model_result(
        text_layer, settings, llm, ask, job_id=job_id, worker_id=worker_id, started=started
    )
