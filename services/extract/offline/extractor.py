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

from shared.contracts.models import PageObject
from shared.pagetext import (
    Box,
    Table,
    TextLayer,
    cells_of,
    find_tables,
    is_header,
    join_words,
)
from shared.pagetext.units import field_lines, field_rest, free_runs, starts_note
from shared.sheet.fields import title_block_fields

DIMENSION = re.compile(r"^\d+'\s*(?:-\s*\d+(?:\s+\d+/\d+)?\")?$|^\d+(?:\s+\d+/\d+)?\"$")
ROOM_TAG = re.compile(r"^(?P<name>[A-Z][A-Z&'/. -]*[A-Z.])\s+(?P<number>\d{2,4}[A-Z]?)$")
DOOR_WINDOW_TAG = re.compile(r"^(?P<kind>D|DR|W|WIN)-?\d{1,3}[A-Z]?$")
DETAIL_REF = re.compile(r"\b\d{1,3}/[A-Z]{1,3}-?\d[\w.]*")
CALLOUT_START = re.compile(r"^(?:SEE|REFER\s+TO|TYP\.?|SIM\.?)\b", re.IGNORECASE)


@dataclass
class _Found:
    """An object before ids are assigned: its words, and the fields it fills."""

    evidence: list[int]
    fields: dict


def _title_block_fields(layer: TextLayer, used: set[int]) -> list[_Found]:
    """The title block's fields and the rest of their lines (the page's units show the
    same); their lines are used."""
    fields = title_block_fields(layer)
    used.update(field_lines(layer, fields))
    rests = [
        _Found(list(rest), kind)
        for rest in field_rest(layer, fields)
        if (kind := _classify(join_words(layer.words, rest), numbered=False))
    ]
    return rests + [
        _Found(
            list(f.word_ids),
            {
                "object_type": "title_block_field",
                "category": "title_block",
                "name": f.label,
                "attributes": {"label": f.label, "value": f.value},
                "confidence": "high",
            },
        )
        for f in fields
    ]


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
    for run in free_runs(layer, used):
        evidence = [w for i in run for w in layer.lines[i]]
        if fields := _classify(join_words(layer.words, evidence), starts_note(layer, run[0])):
            found.append(_Found(evidence, fields))
    return found


def extract_offline(layer: TextLayer) -> list[PageObject]:
    """The page's objects from its words alone: title-block fields,
    table rows, numbered notes (with their wrapped lines), dimensions, room/door/window tags,
    callouts and remaining text, in reading order, each citing its words."""
    used: set[int] = set()
    cells = cells_of(layer)
    found = _title_block_fields(layer, used)
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
