"""Rung 1, the vision pass: the prompt (page image + authoritative text layer) and a robust
parser for the model's reply, shared with rung 2 (``structuring``)."""

import contextlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from shared.contracts.models import PageObject
from shared.infra.llm import image_part
from shared.pagetext import TextLayer
from shared.pagetext.units import PageUnits
from shared.sheet.fields import read_units
from shared.sheet.header import SheetHeader

REPLY_SCHEMA = """{
  "sheet": {"sheet_number": str|null, "sheet_title": str|null, "discipline": str|null,
            "drawing_type": str|null, "level": str|null, "scale": str|null},
  "objects": [{"object_id": str, "object_type": str, "category": str|null, "tag": str|null,
               "name": str|null, "description": str|null, "attributes": {str: any},
               "location_key": str|null, "source_text": str|null, "ids": [str],
               "graphical_basis": str|null, "review_uses": [str],
               "confidence": "high"|"medium"|"low"}],
  "unresolved_items": [str]
}"""

_TEXT = {"type": ["string", "null"]}
# REPLY_SCHEMA as a JSON schema, for servers that hold replies to one (structured output).
# Loose where models differ (attributes, extra fields): the parser is tolerant anyway.
REPLY_JSON_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "sheet": {
            "type": "object",
            "properties": dict.fromkeys(
                ("sheet_number", "sheet_title", "discipline", "drawing_type", "level", "scale"),
                _TEXT,
            ),
        },
        "objects": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "object_id": {"type": "string"},
                    "object_type": {"type": "string"},
                    **dict.fromkeys(
                        (
                            "category",
                            "tag",
                            "name",
                            "description",
                            "location_key",
                            "source_text",
                            "graphical_basis",
                        ),
                        _TEXT,
                    ),
                    "ids": {"type": "array", "items": {"type": "string"}},
                    "attributes": {"type": "object"},
                    "review_uses": {"type": "array", "items": {"type": "string"}},
                    "confidence": {"type": "string", "enum": ["high", "medium", "low"]},
                },
                "required": ["object_type", "source_text", "ids"],
            },
        },
        "unresolved_items": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["sheet", "objects"],
}

SYSTEM_PROMPT = f"""You extract structured data from one sheet of a construction drawing set.

You get the sheet as an image and, when the PDF has one, its TEXT LAYER.
- The TEXT LAYER is the sheet's own text: it wins for every alphanumeric value it carries
  (every count, dimension, tag, number and note). Where the image seems to read otherwise,
  the text layer is right: copy its characters, never the image's reading.
- The IMAGE is the source for geometry, symbols, line work, where things are on the sheet,
  and anything the text layer lacks.
- Notes-dense and table-dense sheets: return ONE object PER NOTE and ONE object PER
  SCHEDULE/TABLE ROW, never one object summarising them.
- Also return title-block fields, room/door/window tags, callouts, legend entries and
  dimensions as their own objects.
- "source_text" is the exact text on the sheet that the object comes from, copied
  verbatim from the text layer when there is one; null only for purely graphical objects,
  which then say what they are based on in "graphical_basis".
- Each TEXT LAYER line starts with its id (L17): a title-block field as "LABEL: value", a
  table row with its cells separated by " | " (the header row first), a note whole. "ids"
  lists the ids of the lines an object's text comes from (usually one); [] when none.
- object_type is one of: general_note, schedule_row, title_block_field, tag, dimension,
  callout, legend_entry, symbol, text.

Reply with one JSON object and nothing else, in this shape:
{REPLY_SCHEMA}"""

TEXT_LAYER_HEADING = (
    "TEXT LAYER (authoritative for alphanumeric content — trust it over the image for "
    "numbers, tags, and note text):"
)

COMPACT_RETRY = (
    "Your previous reply could not be parsed as JSON. Reply again with ONLY the JSON object "
    "described in the instructions: no prose, no code fences, compact (no indentation), "
    "short descriptions, null fields omitted."
)


class ReplyUnparseable(ValueError):
    """The model's reply holds no usable JSON."""


@dataclass
class ParsedReply:
    sheet: SheetHeader
    objects: list[PageObject]
    unresolved_items: list[Any] = field(default_factory=list)
    truncated: bool = False
    # object_id -> the unit ids ("L17") the reply cites for it, as given
    cited: dict[str, list[str]] = field(default_factory=dict)


def build_vision_messages(
    png: bytes,
    text_layer: TextLayer,
    max_chars: int,
    units: PageUnits | None = None,
    *,
    overview: bytes | None = None,
    tile: str | None = None,
) -> list[dict]:
    """System prompt plus one user message: the page image as a data URL and, when the page
    has a text layer, the TEXT LAYER block: the page's units (``units``, default all of
    them) one ``L17 text`` line each, capped at ``max_chars`` by whole units. A tile of a
    large sheet (``tile`` saying which part) comes with its own units and the whole page
    small (``overview``) for its layout."""
    prompt = f"Extract sheet {text_layer.page_number} of the drawing set."
    if tile:
        prompt += (
            f" The first image is {tile} of the sheet, at a legible resolution; the second is "
            "the whole sheet, small, for where that part sits. Extract what the first image "
            "and its TEXT LAYER lines show."
        )
    if text_layer.has_text_layer:
        reading = units if units is not None else read_units(text_layer)
        prompt += f"\n\n{TEXT_LAYER_HEADING}\n{reading.render(max_chars)}"
    content: list[dict] = [{"type": "text", "text": prompt}, image_part(png)]
    if overview is not None:
        content.append(image_part(overview))
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": content}]


def build_compact_retry_messages(messages: list[dict]) -> list[dict]:
    """The same request once more, with an instruction to answer with compact JSON only
    (the unparseable reply itself is not sent back: it would only cost tokens)."""
    return [*messages, {"role": "user", "content": COMPACT_RETRY}]


_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)(?:```|$)", re.DOTALL)
_DECODER = json.JSONDecoder()


def _envelope_like(value: Any) -> bool:
    if isinstance(value, list):
        return all(isinstance(item, dict) for item in value)
    return isinstance(value, dict) and bool(
        {"objects", "sheet", "object_type", "source_text"} & value.keys()
    )


def _decode_first(text: str) -> Any:
    """The first JSON value in ``text`` shaped like a reply (prose around it ignored)."""
    for match in re.finditer(r"[\[{]", text):
        try:
            value, _ = _DECODER.raw_decode(text, match.start())
        except ValueError:
            continue
        if _envelope_like(value):
            return value
    raise ReplyUnparseable("no JSON object or array in the reply")


def _salvage(text: str) -> tuple[dict, int]:
    """From a reply cut off mid-way: the sheet header if it closed, and every object of the
    ``objects`` array (or of a bare array) that closed before the cut."""
    result: dict[str, Any] = {"objects": []}
    sheet = re.search(r'"sheet"\s*:\s*\{', text)
    if sheet:
        with contextlib.suppress(ValueError):
            result["sheet"], _ = _DECODER.raw_decode(text, sheet.end() - 1)
    objects = re.search(r'"objects"\s*:\s*\[', text)
    start = objects.end() if objects else text.find("[") + 1
    if start <= 0:
        return result, 0
    pos = start
    while True:
        next_object = text.find("{", pos)
        if next_object < 0:
            break
        try:
            value, pos = _DECODER.raw_decode(text, next_object)
        except ValueError:
            break
        result["objects"].append(value)
    return result, len(result["objects"])


def _text_or_none(value: Any) -> str | None:
    if value is None or isinstance(value, (dict, list)):
        return None
    text = str(value).strip()
    return text or None


def _clean_object(raw: dict, object_id: str) -> PageObject:
    """A PageObject from whatever the model put in one object: known fields coerced to
    their types, fields that are ours to set (grounding, rung, bbox...) discarded."""
    attributes = raw.get("attributes")
    if not isinstance(attributes, dict):
        attributes = {} if attributes in (None, "", []) else {"value": attributes}
    review_uses = raw.get("review_uses")
    if not isinstance(review_uses, list):
        review_uses = [review_uses] if review_uses else []
    confidence = raw.get("confidence")
    if not isinstance(confidence, (int, float, str)) or isinstance(confidence, bool):
        confidence = None
    ours = {"grounding", "rung", "bbox", "page_number", "verification", "object_id", "ids"}
    ours |= {"evidence", "evidence_bbox"}
    known = {
        "object_type",
        "category",
        "tag",
        "name",
        "description",
        "attributes",
        "location_key",
        "source_text",
        "graphical_basis",
        "review_uses",
        "confidence",
    }
    extra = {k: v for k, v in raw.items() if k not in ours | known and isinstance(k, str)}
    return PageObject(
        object_id=object_id,
        object_type=_text_or_none(raw.get("object_type")) or "object",
        category=_text_or_none(raw.get("category")),
        tag=_text_or_none(raw.get("tag")),
        name=_text_or_none(raw.get("name")),
        description=_text_or_none(raw.get("description")),
        attributes=attributes,
        location_key=_text_or_none(raw.get("location_key")),
        source_text=_text_or_none(raw.get("source_text")),
        graphical_basis=_text_or_none(raw.get("graphical_basis")),
        review_uses=[str(u) for u in review_uses if u is not None],
        confidence=confidence,
        **extra,
    )


def _sheet(raw: Any) -> SheetHeader:
    if not isinstance(raw, dict):
        return SheetHeader()
    fields = ("sheet_number", "sheet_title", "discipline", "drawing_type", "level", "scale")
    values = {name: _text_or_none(raw.get(name)) for name in fields}
    if values["sheet_number"]:
        values["sheet_number_source"] = "extraction"
    return SheetHeader(**values)


def parse_reply(content: str, finish_reason: str | None, id_prefix: str = "v") -> ParsedReply:
    """Parse a model reply: JSON fenced or after prose, a bare list of objects (wrapped),
    or a reply cut off by the token limit (``finish_reason == "length"``: the objects that
    closed are kept and ``truncated`` is set). Objects without a unique ``object_id`` get
    ``{id_prefix}{n}``. Raises :class:`ReplyUnparseable` when nothing usable is there."""
    text = (content or "").strip()
    fence = _FENCE.search(text)
    if fence:
        text = fence.group(1).strip()
    truncated = finish_reason == "length"
    if truncated:
        # Decoding the whole would fail, and the first inner value that does decode
        # would hide the rest: walk the objects array instead.
        data, salvaged = _salvage(text)
        if not salvaged:
            raise ReplyUnparseable("the reply was cut off before any object closed")
    else:
        data = _decode_first(text)
    if isinstance(data, list):
        data = {"objects": data}
    raw_objects = data.get("objects")
    if raw_objects is None and ("source_text" in data or "object_type" in data):
        raw_objects = [data]  # a single object instead of the envelope
    if not isinstance(raw_objects, list):
        if "sheet" not in data:
            raise ReplyUnparseable("the reply's JSON has neither 'objects' nor 'sheet'")
        raw_objects = []
    objects, cited = _objects(raw_objects, id_prefix)
    unresolved = data.get("unresolved_items")
    return ParsedReply(
        sheet=_sheet(data.get("sheet")),
        objects=objects,
        unresolved_items=unresolved if isinstance(unresolved, list) else [],
        truncated=truncated,
        cited=cited,
    )


def _objects(raw_objects: list, id_prefix: str) -> tuple[list[PageObject], dict[str, list[str]]]:
    """The reply's objects, each with a unique id, and the unit ids each cites."""
    objects: list[PageObject] = []
    cited: dict[str, list[str]] = {}
    seen: set[str] = set()
    for raw in raw_objects:
        if not isinstance(raw, dict):
            continue
        object_id = _text_or_none(raw.get("object_id"))
        if not object_id or object_id in seen:
            object_id = f"{id_prefix}{len(objects) + 1}"
            while object_id in seen:
                object_id += "x"
        seen.add(object_id)
        objects.append(_clean_object(raw, object_id))
        if ids := _cited_ids(raw.get("ids")):
            cited[object_id] = ids
    return objects, cited


def _cited_ids(value: Any) -> list[str]:
    """The unit ids an object cites: a list (or one id, or a comma-separated string)."""
    if isinstance(value, str):
        value = value.replace(",", " ").split()
    elif not isinstance(value, list):
        value = [value] if isinstance(value, int) else []
    return [str(v).strip() for v in value if isinstance(v, (str, int)) and str(v).strip()]
