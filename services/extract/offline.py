"""The deterministic extractor used when no model is configured: objects straight from the
page-text model (PDF text layer or OCR words).

Every object is made of whole units of the model, never of two neighbouring ones: a
title-block field (its label line and the value line beside or under it), a table row, or a
block (a note with its wrapped lines, a label, a tag). It cites the ids of its words as
``evidence`` and its ``source_text`` is exactly those words, so the verifier reads the same
words the extractor did. The sheet header is the page's ``SheetReading``'s, read once by
the pipeline.
"""

import re
from dataclasses import dataclass
from typing import Any

from shared.models import PageObject
from shared.pagetext import (
    NOTE_NUMBER,
    Box,
    Cell,
    Table,
    TextLayer,
    cells_of,
    find_tables,
    is_header,
    join_words,
)

# Title-block labels, longest first; the header field a label fills (None: kept as a field only).
TITLE_LABELS: list[str] = [
    r"SHEET\s+NUMBER",
    r"SHEET\s+NO\.?",
    r"DRAWING\s+NUMBER",
    r"DRAWING\s+NO\.?",
    r"DWG\.?\s+NO\.?",
    r"SHEET\s+TITLE",
    r"DRAWING\s+TITLE",
    r"SCALE",
    r"PROJECT\s+(?:NO\.?|NUMBER)",
    r"PROJECT\s+NAME",
    r"JOB\s+NO\.?",
    r"(?:ISSUE\s+)?DATE",
    r"(?:DRAWN|CHECKED|DESIGNED|APPROVED)\s+BY",
    r"REVISION",
]
# "LABEL" alone, or "LABEL: value" (a colon is required for an inline value, so a note
# that merely starts with "DATE" or "SCALE" is not mistaken for a field).
_LABEL = re.compile(
    r"^(?P<label>" + "|".join(TITLE_LABELS) + r")\s*(?::\s*(?P<value>.+))?$", re.IGNORECASE
)
DIMENSION = re.compile(r"^\d+'\s*(?:-\s*\d+(?:\s+\d+/\d+)?\")?$|^\d+(?:\s+\d+/\d+)?\"$")
ROOM_TAG = re.compile(r"^(?P<name>[A-Z][A-Z&'/. -]*[A-Z.])\s+(?P<number>\d{2,4}[A-Z]?)$")
DOOR_WINDOW_TAG = re.compile(r"^(?P<kind>D|DR|W|WIN)-?\d{1,3}[A-Z]?$")
DETAIL_REF = re.compile(r"\b\d{1,3}/[A-Z]{1,3}-?\d[\w.]*")
CALLOUT_START = re.compile(r"^(?:SEE|REFER\s+TO|TYP\.?|SIM\.?)\b", re.IGNORECASE)
# A value sits at most this many label heights right of its label, or below it.
VALUE_REACH_RIGHT = 15
VALUE_REACH_BELOW = 3


@dataclass
class _Found:
    """An object before ids are assigned: its words, and the fields it fills."""

    evidence: list[int]
    fields: dict


def _value_for(label: Cell, row: list[Cell], below: list[Cell], used: set[int]) -> Cell | None:
    """The value of a label without an inline value: the next cell to its right on its row,
    else the cell just below it (title blocks put values under small labels)."""
    right = [c for c in row if c.box.x0 > label.box.x1 and c.line_id not in used]
    if right:
        first = min(right, key=lambda c: c.box.x0)
        near = first.box.x0 - label.box.x1 <= VALUE_REACH_RIGHT * label.height
        if near and not _LABEL.match(first.text):
            return first
    for cell in sorted(below, key=lambda c: c.box.y0):
        if cell.line_id in used or _LABEL.match(cell.text):
            continue
        under = cell.box.y0 >= label.box.y0 + 0.5 * label.height
        near = cell.box.y0 - label.box.y1 <= VALUE_REACH_BELOW * label.height
        overlaps = cell.box.overlap_x(label.box) > 0
        if under and near and overlaps:
            return cell
    return None


def _title_block_fields(
    layer: TextLayer, cells_by_direction: dict[int, list[Cell]], used: set[int]
) -> list[_Found]:
    found: list[_Found] = []
    for cells in cells_by_direction.values():
        by_top = sorted(cells, key=lambda c: c.box.y0)
        for cell in by_top:
            match = _LABEL.match(cell.text)
            if cell.line_id in used or not match:
                continue
            if match.group("value"):
                value, parts = match.group("value"), [cell]
            else:
                row = [
                    c
                    for c in cells
                    if abs((c.box.y0 + c.box.y1) - (cell.box.y0 + cell.box.y1)) <= cell.height
                ]
                below = [
                    c
                    for c in by_top
                    if 0 <= c.box.y0 - cell.box.y0 <= (VALUE_REACH_BELOW + 1) * cell.height
                ]
                value_cell = _value_for(cell, row, below, used | {cell.line_id})
                if value_cell is None:
                    continue
                value, parts = value_cell.text, [cell, value_cell]
            used.update(p.line_id for p in parts)
            found.append(
                _Found(
                    [i for p in parts for i in p.ids],
                    {
                        "object_type": "title_block_field",
                        "category": "title_block",
                        "name": match.group("label"),
                        "attributes": {"label": match.group("label"), "value": value},
                        "confidence": "high",
                    },
                )
            )
    return found


def _schedule_rows(table: Table) -> list[_Found]:
    """One object per table row (schedules, sheet indexes, abbreviation lists, legends), its
    cells keyed by the header row when the table has one, else ``col1``, ``col2``..."""
    header = table.rows[0] if is_header(table.rows) else None
    names = (
        {j: " ".join(c.text for c in cells) for j, cells in header.by_column().items()}
        if header
        else {}
    )
    found: list[_Found] = []
    for row in table.rows:
        fields: dict[str, Any]
        if row is header:
            fields = {"object_type": "text", "category": "schedule_header", "confidence": "high"}
        else:
            cells = row.by_column()
            fields = {
                "object_type": "schedule_row",
                "tag": " ".join(c.text for c in cells[min(cells)]),
                "attributes": {
                    names.get(j, f"col{j + 1}"): " ".join(c.text for c in column)
                    for j, column in cells.items()
                },
                "confidence": "high",
            }
        found.append(_Found(row.word_ids, fields))
    return found


def _classify(text: str, numbered: bool) -> dict | None:
    """The object a free block of text is: a note, dimension, tag, callout or plain text."""
    if numbered:
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


def is_noise(text: str) -> bool:
    """Short or letter-free text (dimension ticks like 8'-0", grid numbers, stray marks)."""
    alnum = [ch for ch in text if ch.isalnum()]
    return len(alnum) < 4 or not any(ch.isalpha() for ch in alnum)


def _blocks(layer: TextLayer, used: set[int]) -> list[_Found]:
    """Objects of the blocks left over, each cut where a used line interrupts it."""
    found: list[_Found] = []
    for block in layer.blocks:
        run: list[int] = []
        for line_id in [*block, None]:
            if line_id is not None and line_id not in used:
                run.append(line_id)
                continue
            if run:
                evidence = [w for i in run for w in layer.lines[i]]
                text = join_words(layer.words, evidence)
                numbered = len(layer.lines[run[0]]) > 1 and _starts_note(layer, run[0])
                if fields := _classify(text, numbered):
                    found.append(_Found(evidence, fields))
                run = []
    return found


def _starts_note(layer: TextLayer, line_id: int) -> bool:
    return bool(NOTE_NUMBER.match(layer.words[layer.lines[line_id][0]].text))


def extract_offline(layer: TextLayer) -> list[PageObject]:
    """The page's objects from its words alone: title-block fields,
    table rows, numbered notes (with their wrapped lines), dimensions, room/door/window tags,
    callouts and remaining text, in reading order, each citing its words."""
    used: set[int] = set()
    cells = cells_of(layer)
    found = _title_block_fields(layer, cells, used)
    for table in find_tables(layer, cells, skip=used):
        found += _schedule_rows(table)
        used.update(c.line_id for row in table.rows for c in row.cells)
    found += _blocks(layer, used)

    def position(item: _Found) -> tuple[float, float]:
        box = _box(layer, item.evidence)
        return (round(box.y0), box.x0)

    found.sort(key=position)
    page = layer.page_number
    grounding = "ocr" if layer.source == "ocr" else "source_text"
    objects = []
    for i, item in enumerate(found, start=1):
        box = _box(layer, item.evidence)
        objects.append(
            PageObject(
                object_id=f"p{page}-o{i}",
                page_number=page,
                source_text=join_words(layer.words, item.evidence),
                bbox=box,
                evidence=item.evidence,
                evidence_bbox=box,
                grounding=grounding,
                rung="offline",
                **item.fields,
            )
        )
    return objects


def _box(layer: TextLayer, ids: list[int]) -> Box:
    return Box.union(layer.words[i].bbox for i in ids)
