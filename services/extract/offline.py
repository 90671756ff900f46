"""The deterministic extractor used when no model is configured: objects straight from the
page's words (PDF text layer or OCR), each with verbatim ``source_text`` and a bbox."""

import re
from dataclasses import dataclass

from services.extract.segment import (
    Block,
    Chunk,
    ReadingOrder,
    TableRow,
    build_blocks,
    find_tables,
    is_noise,
    rows_of_chunks,
    union_bbox,
)
from shared.models import BBox, PageObject, SheetHeader, TextLayer

# Title-block labels, longest first; the header field a label fills (None: kept as a field only).
TITLE_LABELS: list[tuple[str, str | None]] = [
    (r"SHEET\s+NUMBER", "sheet_number"),
    (r"SHEET\s+NO\.?", "sheet_number"),
    (r"DRAWING\s+NUMBER", "sheet_number"),
    (r"DRAWING\s+NO\.?", "sheet_number"),
    (r"DWG\.?\s+NO\.?", "sheet_number"),
    (r"SHEET\s+TITLE", "sheet_title"),
    (r"DRAWING\s+TITLE", "sheet_title"),
    (r"SCALE", "scale"),
    (r"PROJECT\s+(?:NO\.?|NUMBER)", None),
    (r"PROJECT\s+NAME", None),
    (r"JOB\s+NO\.?", None),
    (r"(?:ISSUE\s+)?DATE", None),
    (r"(?:DRAWN|CHECKED|DESIGNED|APPROVED)\s+BY", None),
    (r"REVISION", None),
]
# "LABEL" alone, or "LABEL: value" (a colon is required for an inline value, so a note
# that merely starts with "DATE" or "SCALE" is not mistaken for a field).
_LABEL = re.compile(
    r"^(?P<label>" + "|".join(p for p, _ in TITLE_LABELS) + r")\s*(?::\s*(?P<value>.+))?$",
    re.IGNORECASE,
)
DIMENSION = re.compile(r"^\d+'\s*(?:-\s*\d+(?:\s+\d+/\d+)?\")?$|^\d+(?:\s+\d+/\d+)?\"$")
ROOM_TAG = re.compile(r"^(?P<name>[A-Z][A-Z&'/. -]*[A-Z.])\s+(?P<number>\d{2,4}[A-Z]?)$")
DOOR_WINDOW_TAG = re.compile(r"^(?P<kind>D|DR|W|WIN)-?\d{1,3}[A-Z]?$")
DETAIL_REF = re.compile(r"\b\d{1,3}/[A-Z]{1,3}-?\d[\w.]*")
CALLOUT_START = re.compile(r"^(?:SEE|REFER\s+TO|TYP\.?|SIM\.?)\b", re.IGNORECASE)


@dataclass
class _Found:
    """An object before ids are assigned: kept with its position for reading order."""

    bbox: BBox
    fields: dict


def _label_field(label: str) -> str | None:
    for pattern, field_name in TITLE_LABELS:
        if re.fullmatch(pattern, label, re.IGNORECASE):
            return field_name
    return None


def _value_for(
    label: Chunk, rows: list[list[Chunk]], row_index: int, used: set[int]
) -> Chunk | None:
    """The value of a label without an inline value: the next chunk to its right on the
    same row, else the chunk just below it (title blocks put values under small labels)."""
    row = rows[row_index]
    right = [c for c in row if c.bbox[0] > label.bbox[2] and id(c) not in used]
    near = right and right[0].bbox[0] - label.bbox[2] <= 15 * label.height
    if near and not _LABEL.match(right[0].text):
        return right[0]
    for lower in rows[row_index + 1 : row_index + 4]:
        for chunk in lower:
            if id(chunk) in used or _LABEL.match(chunk.text):
                continue
            below = chunk.bbox[1] >= label.bbox[1] + 0.5 * label.height
            near = chunk.bbox[1] - label.bbox[3] <= 3 * label.height
            overlaps = min(chunk.bbox[2], label.bbox[2]) - max(chunk.bbox[0], label.bbox[0]) > 0
            if below and near and overlaps:
                return chunk
    return None


def _title_block(rows: list[list[Chunk]], used: set[int], order: ReadingOrder) -> list[_Found]:
    found: list[_Found] = []
    for i, row in enumerate(rows):
        for chunk in row:
            match = _LABEL.match(chunk.text)
            if id(chunk) in used or not match:
                continue
            label = match.group("label")
            if match.group("value"):
                value, parts = match.group("value"), [chunk]
            else:
                value_chunk = _value_for(chunk, rows, i, used | {id(chunk)})
                if value_chunk is None:
                    continue
                value, parts = value_chunk.text, [chunk, value_chunk]
            used.update(id(p) for p in parts)
            # The evidence is what the page reads as one run: a value under one label of
            # a row of labels is not read right after its label, so it stands alone.
            said = parts if order.follows(parts[0], parts[-1]) else parts[-1:]
            attributes = {"label": label, "value": value}
            if header_field := _label_field(label):
                attributes["field"] = header_field
            found.append(
                _Found(
                    union_bbox([p.bbox for p in parts]),
                    {
                        "object_type": "title_block_field",
                        "category": "title_block",
                        "name": label,
                        "attributes": attributes,
                        "source_text": " ".join(p.text for p in said),
                        "confidence": "high",
                    },
                )
            )
    return found


def _schedules(rows: list[list[Chunk]], used: set[int], order: ReadingOrder) -> list[_Found]:
    """One object per table row (schedules, sheet indexes, abbreviation lists, legends),
    its cells keyed by the header row when the table has one, else ``col1``, ``col2``..."""
    found: list[_Found] = []
    for table in find_tables(rows, order):
        header = table.rows[0] if _is_header(table.rows) else None
        names = _column_names(header)
        for row in table.rows:
            used.update(id(c) for c in row.chunks)
            if row is header:
                found.append(
                    _Found(
                        row.bbox,
                        {
                            "object_type": "text",
                            "category": "schedule_header",
                            "source_text": row.text,
                            "confidence": "high",
                        },
                    )
                )
                continue
            cells = row.cells()
            found.append(
                _Found(
                    row.bbox,
                    {
                        "object_type": "schedule_row",
                        "tag": " ".join(c.text for c in cells[min(cells)]),
                        "attributes": {
                            names.get(j, f"col{j + 1}"): " ".join(c.text for c in chunks)
                            for j, chunks in cells.items()
                        },
                        "source_text": row.text,
                        "confidence": "high",
                    },
                )
            )
    return found


def _is_header(rows: list[TableRow]) -> bool:
    """The first row names the columns: it has no digits while rows below do (an
    abbreviation list has none anywhere, and its first row is an entry)."""

    def has_digits(row: TableRow) -> bool:
        return any(ch.isdigit() for ch in row.text)

    return not has_digits(rows[0]) and any(has_digits(row) for row in rows[1:])


def _column_names(header: TableRow | None) -> dict[int, str]:
    if header is None:
        return {}
    return {j: " ".join(c.text for c in chunks) for j, chunks in header.cells().items()}


def _classify(block: Block) -> dict | None:
    """The object a free block of text is: a note, dimension, tag, callout or plain text."""
    text = block.text
    if block.numbered:
        number, _, body = text.partition(" ")
        return {
            "object_type": "general_note",
            "attributes": {"number": number.rstrip(".)"), "text": body},
            "confidence": "high",
        }
    if DIMENSION.match(text):
        return {"object_type": "dimension", "attributes": {"value": text}, "confidence": "medium"}
    if match := ROOM_TAG.match(text):
        return {
            "object_type": "tag",
            "category": "room",
            "name": match.group("name"),
            "tag": match.group("number"),
            "confidence": "medium",
        }
    if match := DOOR_WINDOW_TAG.match(text):
        kind = "door" if match.group("kind").startswith("D") else "window"
        return {"object_type": "tag", "category": kind, "tag": text, "confidence": "medium"}
    if (ref := DETAIL_REF.search(text)) or CALLOUT_START.match(text):
        attributes = {"reference": ref.group(0)} if ref else {}
        return {"object_type": "callout", "attributes": attributes, "confidence": "medium"}
    if is_noise(text):
        return None
    return {"object_type": "text", "confidence": "low"}


def _header(found: list[_Found]) -> SheetHeader:
    values: dict[str, str] = {}
    for item in found:
        if item.fields["object_type"] == "title_block_field":
            attributes = item.fields["attributes"]
            if "field" in attributes:
                values.setdefault(attributes["field"], attributes["value"])
    if "sheet_number" in values:
        values["sheet_number_source"] = "extraction"
    return SheetHeader(**values)


def extract_offline(text_layer: TextLayer) -> tuple[SheetHeader, list[PageObject]]:
    """Build the sheet header and the page's objects from its words alone: title-block
    fields, schedule rows, numbered notes (with "1." rejoined and wrapped lines joined),
    dimensions, room/door/window tags, callouts and remaining text, in reading order."""
    rows = rows_of_chunks(text_layer.words)
    order = ReadingOrder.of(text_layer.words, rows)
    used: set[int] = set()
    found = _title_block(rows, used, order)
    rest = [[c for c in row if id(c) not in used] for row in rows]
    found += _schedules([row for row in rest if row], used, order)
    rest = [[c for c in row if id(c) not in used] for row in rows]
    for block in build_blocks([row for row in rest if row], order):
        fields = _classify(block)
        if fields is not None:
            found.append(_Found(block.bbox, {**fields, "source_text": block.text}))

    found.sort(key=lambda f: (round(f.bbox[1]), f.bbox[0]))
    page = text_layer.page_number
    grounding = "ocr" if text_layer.source == "ocr" else "source_text"
    objects = [
        PageObject(
            object_id=f"p{page}-o{i}",
            page_number=page,
            bbox=item.bbox,
            grounding=grounding,
            rung="offline",
            **item.fields,
        )
        for i, item in enumerate(found, start=1)
    ]
    return _header(found), objects
