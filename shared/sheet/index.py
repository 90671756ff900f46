"""Reading a drawing index (sheet list) from a cover or index sheet.

An index is a heading ("SHEET INDEX", "DRAWING LIST", "INDEX OF DRAWINGS", "DRAWINGS:",
"PLANVERZEICHNIS" …) over rows of a sheet number and its title: on one line ("S101 - FOOTING
PLAN") or in two columns, ruled or not. A row's title may wrap onto lines of its own,
aligned with the title above; a row may name a range ("UC-3A THRU UC-3C", "21-23"); rows may
be grouped under group titles ("ARCHITECTURAL"), run on in further columns beside the
first, or be listed upwards from a heading printed under them. The rows end where the
rhythm of the list breaks (a wide gap, a line that is no row).
"""

import re
import statistics
from dataclasses import dataclass, field

from shared.pagetext import (
    FramedLine,
    TextLayer,
    direction_key,
    fold_dashes,
    frame_of,
    framed_line,
    join_words,
    rows,
)
from shared.pagetext.geometry import ANGLE_STEP
from shared.sheet.normal import without_cad_codes
from shared.sheet.tokens import is_labelled_value, is_sheet_id, printed_token, sheet_key

_HEADING = re.compile(
    r"^(?:(?:SHEET|DRAWING|DWG)S?\s+(?:INDEX|LIST|SCHEDULE)|(?:INDEX|LIST|SCHEDULE)\s+OF\s+"
    r"(?:DRAWINGS|SHEETS)|DRAWINGS|SHEETS|PLANVERZEICHNIS|ZEICHNUNGSVERZEICHNIS|PLANLISTE"
    r"|LISTE\s+DES\s+(?:PLANS|DESSINS)|BORDEREAU\s+DES\s+PLANS|INDICE\s+DE\s+PLANOS"
    r"|LISTA\s+DE\s+PLANOS|TEKENINGENLIJST|TEKENINGLIJST)\s*:?$",
    re.IGNORECASE,
)
_SEPARATOR = re.compile(r"^[-:|]+$")
# Direction keys a quarter turn apart: an index is read along the page's axes only.
_QUARTER = round(90 / ANGLE_STEP)
# Words that join the two ends of a range printed in a row.
_THROUGH = frozenset({"THRU", "THROUGH", "TO", "BIS", "À", "A", "AL", "T/M", "TOT", "-", "–"})
# Rows further apart than this many times the list's usual pitch end it.
MAX_PITCH_RATIO = 2.5
# A title column starts at most this many text heights right of its number column.
MAX_COLUMN_GAP = 10
# An index has at least this many rows whose number has a sheet-number shape.
MIN_SHAPED_ROWS = 2
# Lines that are no row (column headers, group titles) tolerated in a row before the list
# ends; a group title is short.
MAX_SKIPPED = 2
GROUP_TITLE_WORDS = 5


def read_drawing_index(layer: TextLayer) -> list[tuple[str, str | None]]:
    """The (sheet number, title) rows of every drawing index printed on the page, numbers and
    titles as printed (ranges as printed), in the index's order. An index is read in the
    frame its lines run in (a sheet fed sideways, or an index printed turned on it)."""
    words = layer.words
    by_frame: dict[int, list[tuple[int, list[int]]]] = {}
    for line_id, ids in enumerate(layer.lines):
        if ids:  # each way a page's text runs, within a slight skew
            by_frame.setdefault(direction_key(words[ids[0]].dir), []).append((line_id, ids))
    found: list[tuple[str, str | None]] = []
    for key, in_frame in sorted(by_frame.items()):
        if key % _QUARTER:
            continue
        headed = [_is_heading(join_words(words, ids)) for _, ids in in_frame]
        if not any(headed):
            continue
        frame = frame_of(key)
        lines = [framed_line(words, ids, frame, line_id) for line_id, ids in in_frame]
        for heading, is_heading in zip(lines, headed, strict=True):
            if is_heading:
                found += _rows_near(heading, lines, layer, downwards=True) or _rows_near(
                    heading, lines, layer, downwards=False
                )
    return found


def _is_heading(text: str) -> bool:
    return bool(_HEADING.match(fold_dashes(text).strip()))


@dataclass
class _Column:
    """One column of index rows: where its numbers start, and its entries."""

    x: float
    entries: list[list] = field(default_factory=list)  # [number, title parts, title x]


def _rows_near(
    heading: FramedLine, lines: list[FramedLine], layer: TextLayer, *, downwards: bool
) -> list[tuple[str, str | None]]:
    """The index rows below a heading (or, listed upwards, above it): lines overlapping its
    span, grouped by baseline; further columns of rows beside the first join them."""
    head = heading.box
    height = head.height
    if downwards:
        near = [ln for ln in lines if ln.box.y0 >= head.y1 - 0.25 * height and ln is not heading]
    else:
        near = [ln for ln in lines if ln.box.y1 <= head.y0 + 0.25 * height and ln is not heading]
    grouped = rows(near, lambda ln: ln.box, reach=_within_half_the_first, by_top=True)
    if not downwards:
        grouped.reverse()
    # A list starts under its heading, or left of a heading centred over it.
    left, right = head.x0 - max(2 * height, 0.5 * head.width), head.x1 + 2 * height
    columns: list[_Column] = []
    previous = head.y1 if downwards else head.y0
    pitches: list[float] = []
    skipped = 0
    for whole_row in grouped:
        in_span = [k for k, ln in enumerate(whole_row) if left <= ln.box.x0 <= right]
        if not in_span:
            continue  # another part of the sheet, beside the index
        # The line at a column already found, else one opening with a sheet number.
        known = [k for k in in_span if _column_at(columns, whole_row[k].box.x0, height)]
        shaped = [k for k in in_span if _opens_with_sheet_id(whole_row[k], layer)]
        first = (known or shaped or in_span)[0]
        segments = _segments(whole_row[first:])
        top = segments[0][0].box.y0
        if abs(top - previous) > _limit(pitches, height):
            break
        if not _read_row(segments, columns, layer, height):
            skipped += 1
            if skipped > MAX_SKIPPED or not _may_skip(segments[0]):
                break
            continue
        skipped = 0
        pitches.append(abs(top - previous))
        previous = top
    entries = [
        e
        for column in sorted(columns, key=lambda c: c.x)
        if any(is_sheet_id(number.split()[0]) for number, _, _ in column.entries)
        for e in column.entries
    ]
    if sum(is_sheet_id(number.split()[0]) for number, _, _ in entries) < MIN_SHAPED_ROWS:
        return []
    return [
        (number, " ".join(without_cad_codes(" ".join(parts)).split()) or None)
        for number, parts, _ in entries
    ]


def _segments(row: list[FramedLine]) -> list[list[FramedLine]]:
    """A row's lines (left to right) in runs without a wide gap: one per column of rows."""
    found: list[list[FramedLine]] = []
    for line in row:
        if found and line.box.x0 - found[-1][-1].box.x1 <= MAX_COLUMN_GAP * line.box.height:
            found[-1].append(line)
        else:
            found.append([line])
    return found


def _read_row(
    segments: list[list[FramedLine]], columns: list[_Column], layer: TextLayer, height: float
) -> bool:
    """Whether the row's segments continue the index: each parsed as an entry of its column
    (a new column where a segment opens with a sheet number right of the others), or as the
    wrapped title of its column's last entry."""
    took = False
    for k, segment in enumerate(segments):
        x = segment[0].box.x0
        column = _column_at(columns, x, height)
        parsed = _parse(segment, layer)
        if parsed and (column is not None or k == 0 or is_sheet_id(parsed[0].split()[0])):
            if column is None:
                column = _Column(x)
                columns.append(column)
            number, title, title_x = parsed
            column.entries.append([number, [title] if title else [], title_x])
            took = True
            continue
        owner = next(
            (
                c
                for c in columns
                if c.entries
                and c.entries[-1][2] is not None
                and abs(x - c.entries[-1][2]) <= height
            ),
            None,
        )
        if owner is not None:
            owner.entries[-1][1].append(" ".join(ln.text for ln in segment))  # a wrapped title
            took = True
        elif k == 0:
            return False
    return took


def _column_at(columns: list[_Column], x: float, height: float) -> _Column | None:
    return next((c for c in columns if abs(c.x - x) <= 2 * height), None)


def _opens_with_sheet_id(line: FramedLine, layer: TextLayer) -> bool:
    return is_sheet_id(printed_token(layer.words[line.ids[0]].text))


def _may_skip(segment: list[FramedLine]) -> bool:
    """A line that may sit between index rows: a column header or a group title (a few
    words, no digits)."""
    text = " ".join(ln.text for ln in segment)
    return len(text.split()) <= GROUP_TITLE_WORDS and not any(ch.isdigit() for ch in text)


def _within_half_the_first(row_height: float, _item_height: float) -> float:
    """A list entry's reach: half the height of its row's first line."""
    return 0.5 * row_height


def _parse(row: list[FramedLine], layer: TextLayer) -> tuple[str, str | None, float | None] | None:
    """(number, title, where the title starts) of a row that opens with a sheet number (or
    a range of them)."""
    words = layer.words
    first_ids = row[0].ids
    number = printed_token(words[first_ids[0]].text)
    if not is_labelled_value(number):
        return None
    rest = [words[i] for i in first_ids[1:]]
    if (
        len(rest) >= 2
        and fold_dashes(rest[0].text).upper() in _THROUGH
        and is_labelled_value(end := printed_token(rest[1].text))
        and any(ch.isdigit() for ch in end)
        and end[0].isdigit() == number[0].isdigit()
    ):
        number, rest = f"{number} {rest[0].text} {end}", rest[2:]
    if rest and _SEPARATOR.match(fold_dashes(rest[0].text)):
        rest = rest[1:]
    title_words = [w.text for w in rest] + [ln.text for ln in row[1:]]
    frame = row[0].frame
    starts = [w.bbox.in_frame(frame).x0 for w in rest] + [ln.box.x0 for ln in row[1:]]
    title = " ".join(title_words).strip() or None
    return number, title, starts[0] if starts else None


def _limit(pitches: list[float], height: float) -> float:
    """How far from the last row the next may start: the list's pitch, with some slack."""
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
