"""Reading a drawing index (sheet list) from a cover or index sheet.

An index is a heading ("SHEET INDEX", "DRAWING LIST", "INDEX OF DRAWINGS", "DRAWINGS:" …)
over rows of a sheet number and its title: on one line ("S101 - FOOTING PLAN") or in two
columns. A row's title may wrap onto lines of its own, aligned with the title above. The
rows end where the rhythm of the list breaks (a wide gap, a line that is no row).
"""

import re
import statistics

from shared.pagetext import FramedLine, TextLayer, fold_dashes, frame_of, framed_line, rows
from shared.sheet.tokens import is_labelled_value, is_sheet_id, printed_token, sheet_key

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


def read_drawing_index(layer: TextLayer) -> list[tuple[str, str | None]]:
    """The (sheet number, title) rows of every drawing index printed on the page, numbers and
    titles as printed, in the index's order."""
    words, upright = layer.words, frame_of(0)
    lines = [
        framed_line(words, ids, upright, line_id)
        for line_id, ids in enumerate(layer.lines)
        if ids and words[ids[0]].dir == (1.0, 0.0)
    ]
    found: list[tuple[str, str | None]] = []
    for heading in lines:
        if _HEADING.match(fold_dashes(heading.text).strip()):
            found += _rows_under(heading, lines, layer)
    return found


def _rows_under(
    heading: FramedLine, lines: list[FramedLine], layer: TextLayer
) -> list[tuple[str, str | None]]:
    """The index rows below a heading: lines overlapping its column, grouped by baseline
    (in order of their tops, each within half its row's first line's height of it)."""
    head = heading.box
    height = head.height
    below = [ln for ln in lines if ln.box.y0 >= head.y1 - 0.25 * height and ln is not heading]
    entries: list[list] = []  # [number, title parts, title x]
    previous_top = head.y1
    pitches: list[float] = []
    for whole_row in rows(below, lambda ln: ln.box, reach=_within_half_the_first, by_top=True):
        row = _in_column(whole_row, head.x0 - 2 * height, head.x1 + 2 * height)
        if not row:
            continue  # another column of the sheet, beside the index
        first = row[0]
        top = first.box.y0
        if top - previous_top > _limit(pitches, height):
            break
        parsed = _parse(row, layer)
        if parsed:
            number, title, title_x = parsed
            entries.append([number, [title] if title else [], title_x])
        elif (
            entries and entries[-1][2] is not None and abs(first.box.x0 - entries[-1][2]) <= height
        ):
            entries[-1][1].append(" ".join(ln.text for ln in row))  # a wrapped title
        else:
            break
        pitches.append(top - previous_top)
        previous_top = top
    if sum(is_sheet_id(number) for number, _, _ in entries) < MIN_SHAPED_ROWS:
        return []
    return [(number, " ".join(" ".join(parts).split()) or None) for number, parts, _ in entries]


def _within_half_the_first(row_height: float, _item_height: float) -> float:
    """A list entry's reach: half the height of its row's first line."""
    return 0.5 * row_height


def _in_column(row: list[FramedLine], left: float, right: float) -> list[FramedLine]:
    """The lines of a row (left to right) that belong to the index: the first starting in
    the heading's column, and those following it without a wide gap."""
    start = next((k for k, ln in enumerate(row) if left <= ln.box.x0 <= right), None)
    if start is None:
        return []
    chain = [row[start]]
    for line in row[start + 1 :]:
        if line.box.x0 - chain[-1].box.x1 > MAX_COLUMN_GAP * line.box.height:
            break
        chain.append(line)
    return chain


def _parse(row: list[FramedLine], layer: TextLayer) -> tuple[str, str | None, float | None] | None:
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
    starts = [w.bbox.x0 for w in rest] + [ln.box.x0 for ln in row[1:]]
    title = " ".join(title_words).strip() or None
    return number, title, starts[0] if starts else None


def _limit(pitches: list[float], height: float) -> float:
    """How far below the last row the next may start: the list's pitch, with some slack."""
    usual = statistics.median(pitches) if pitches else 2 * height
    return MAX_PITCH_RATIO * max(usual, height)


# "UC-3A THRU UC-3C", "21-23", "A101 TO A105": one index row for a run of sheets.
_RANGE = re.compile(
    r"^(?P<a>[^\s]+?)\s*(?:\s(?:THRU|THROUGH|TO|BIS|À|A|AL|T/M|TOT)\s|[-\u2010-\u2013~])\s*"
    r"(?P<b>[^\s]+)$",
    re.IGNORECASE,
)
_TAIL = re.compile(r"^(?P<head>.*?)(?P<tail>\d+|[A-Za-z])$")
# A range names at most this many sheets.
MAX_RANGE = 200


def expand_index(
    rows: list[tuple[str, str | None]], numbers: list[str]
) -> list[tuple[str, str | None]]:
    """The index's rows with each range expanded into the sheets it names, as the set
    numbers them: a row that is one of the set's numbers ("21-23" as a sheet) stays one."""
    keys = {sheet_key(n) for n in numbers}
    found: list[tuple[str, str | None]] = []
    for number, title in rows:
        sheets = None if sheet_key(number) in keys else _expand(number)
        found += [(sheet, title) for sheet in sheets] if sheets else [(number, title)]
    return found


def _expand(number: str) -> list[str] | None:
    match = _RANGE.match(fold_dashes(number).strip())
    if not match:
        return None
    a, b = _TAIL.match(match["a"]), _TAIL.match(match["b"])
    if not a or not b:
        return None
    head_a, tail_a, head_b, tail_b = a["head"], a["tail"], b["head"], b["tail"]
    if head_b and head_b != head_a:
        return None
    if tail_a.isdigit() and tail_b.isdigit():
        first, last, width = int(tail_a), int(tail_b), len(tail_a)
        if not 0 < last - first < MAX_RANGE:
            return None
        return [f"{head_a}{k:0{width}d}" for k in range(first, last + 1)]
    if tail_a.isalpha() and tail_b.isalpha() and tail_a.isupper() == tail_b.isupper():
        if not tail_a < tail_b:
            return None
        return [head_a + chr(k) for k in range(ord(tail_a), ord(tail_b) + 1)]
    return None
