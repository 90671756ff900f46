"""Reading a drawing index (sheet list) from a cover or index sheet.

An index is a heading ("SHEET INDEX", "DRAWING LIST", "INDEX OF DRAWINGS", "DRAWINGS:" …)
over rows of a sheet number and its title: on one line ("S101 - FOOTING PLAN") or in two
columns. A row's title may wrap onto lines of its own, aligned with the title above. The
rows end where the rhythm of the list breaks (a wide gap, a line that is no row).
"""

import re
import statistics
from dataclasses import dataclass

from shared.models import TextLayer
from shared.pagetext import fold_dashes, union_bbox
from shared.title_block.tokens import is_labelled_value, is_sheet_id, printed_token

_HEADING = re.compile(
    r"^(?:(?:SHEET|DRAWING|DWG)S?\s+(?:INDEX|LIST|SCHEDULE)|(?:INDEX|LIST|SCHEDULE)\s+OF\s+"
    r"(?:DRAWINGS|SHEETS)|DRAWINGS|SHEETS)\s*:?$",
    re.IGNORECASE,
)
_SEPARATOR = re.compile(r"^[-:|]+$")
# Rows further apart than this many times the list's usual pitch end it.
MAX_PITCH_RATIO = 2.5
# A title column starts at most this many text heights right of its number column.
MAX_COLUMN_GAP = 10
# An index has at least this many rows whose number has a sheet-number shape.
MIN_SHAPED_ROWS = 2

Box = tuple[float, float, float, float]


@dataclass(frozen=True)
class _Line:
    ids: list[int]
    box: Box
    text: str


def read_drawing_index(layer: TextLayer) -> list[tuple[str, str | None]]:
    """The (sheet number, title) rows of every drawing index printed on the page, numbers and
    titles as printed, in the index's order."""
    words = layer.words
    lines = [
        _Line(ids, union_bbox(words[i].bbox for i in ids), text)
        for ids, text in zip(layer.lines, layer.line_texts, strict=True)
        if ids and words[ids[0]].dir == (1.0, 0.0)
    ]
    rows: list[tuple[str, str | None]] = []
    for heading in lines:
        if _HEADING.match(fold_dashes(heading.text).strip()):
            rows += _rows_under(heading, lines, layer)
    return rows


def _rows_under(
    heading: _Line, lines: list[_Line], layer: TextLayer
) -> list[tuple[str, str | None]]:
    """The index rows below a heading: lines overlapping its column, grouped by baseline."""
    hx0, hy0, hx1, hy1 = heading.box
    height = hy1 - hy0
    below = sorted(
        (ln for ln in lines if ln.box[1] >= hy1 - 0.25 * height and ln is not heading),
        key=lambda ln: (ln.box[1], ln.box[0]),
    )
    rows: list[list[_Line]] = []
    for line in below:
        if rows and abs(_mid(line) - _mid(rows[-1][0])) <= 0.5 * _height(rows[-1][0]):
            rows[-1].append(line)
        else:
            rows.append([line])
    entries: list[list] = []  # [number, title parts, title x]
    previous_top = hy1
    pitches: list[float] = []
    for whole_row in rows:
        row = _in_column(whole_row, hx0 - 2 * height, hx1 + 2 * height)
        if not row:
            continue  # another column of the sheet, beside the index
        first = row[0]
        top = first.box[1]
        if top - previous_top > _limit(pitches, height):
            break
        parsed = _parse(row, layer)
        if parsed:
            number, title, title_x = parsed
            entries.append([number, [title] if title else [], title_x])
        elif (
            entries and entries[-1][2] is not None and abs(first.box[0] - entries[-1][2]) <= height
        ):
            entries[-1][1].append(" ".join(ln.text for ln in row))  # a wrapped title
        else:
            break
        pitches.append(top - previous_top)
        previous_top = top
    if sum(is_sheet_id(number) for number, _, _ in entries) < MIN_SHAPED_ROWS:
        return []
    return [(number, " ".join(" ".join(parts).split()) or None) for number, parts, _ in entries]


def _in_column(row: list[_Line], left: float, right: float) -> list[_Line]:
    """The lines of a row that belong to the index: the first starting in the heading's
    column, and those following it left to right without a wide gap."""
    row = sorted(row, key=lambda ln: ln.box[0])
    start = next((k for k, ln in enumerate(row) if left <= ln.box[0] <= right), None)
    if start is None:
        return []
    chain = [row[start]]
    for line in row[start + 1 :]:
        if line.box[0] - chain[-1].box[2] > MAX_COLUMN_GAP * _height(line):
            break
        chain.append(line)
    return chain


def _parse(row: list[_Line], layer: TextLayer) -> tuple[str, str | None, float | None] | None:
    """(number, title, where the title starts) of a row that opens with a sheet number."""
    words = layer.words
    first_ids = row[0].ids
    number = printed_token(words[first_ids[0]].text)
    if not is_labelled_value(number):
        return None
    rest = [words[i] for i in first_ids[1:]]
    if rest and _SEPARATOR.match(fold_dashes(rest[0].text)):
        rest = rest[1:]
    title_words = [w.text for w in rest] + [ln.text for ln in row[1:]]
    starts = [w.bbox[0] for w in rest] + [ln.box[0] for ln in row[1:]]
    title = " ".join(title_words).strip() or None
    return number, title, starts[0] if starts else None


def _mid(line: _Line) -> float:
    return (line.box[1] + line.box[3]) / 2


def _height(line: _Line) -> float:
    return line.box[3] - line.box[1]


def _limit(pitches: list[float], height: float) -> float:
    """How far below the last row the next may start: the list's pitch, with some slack."""
    usual = statistics.median(pitches) if pitches else 2 * height
    return MAX_PITCH_RATIO * max(usual, height)
