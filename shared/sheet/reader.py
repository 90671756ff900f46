"""Reading a sheet's number and title from its title block.

Evidence, strongest first: the value of a sheet-number label in the title block ("DWG NO.",
"SHEET", "Лист" …); a number printed inside the title field ("STORE PLAN: ST04"); a
sheet-number label elsewhere on the sheet; the largest sheet-number-shaped text of the
title block, clearly larger than the sheet's ordinary text. Within a field the largest text
wins (font size), and a value is one whole token, cut where its title begins. Values of
other fields (project number, revision, date, scale …) never count, and nothing shaped like
a road name, date, reference or file name is taken without a label. A page that prints no
number gets none.

The title is the largest stack of lines in the title field; without a title label, the
largest text next to the number, in its own ruled cell or the one above it.
"""

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass

from shared.pagetext import Box, TextLayer
from shared.sheet.labels import (
    BARE_NUMBER_LABELS,
    STAGE_LABELS,
    Field,
    label_key,
    match_label,
    may_start_label,
)
from shared.sheet.tokens import (
    cut_glued_title,
    is_labelled_value,
    is_route_name,
    is_sheet_id,
    printed_token,
    sheet_key,
)
from shared.sheet.view import Run, View, views

# The largest-text rule wants a number this many times the sheet's ordinary text size.
BIG_RATIO = 1.5
# A value sits at most this many label heights right of its label (or 144 pt) ...
REACH_RIGHT = 20
# ... or starts at most this many label heights below it (or 72 pt), unless a cell holds it.
REACH_BELOW = 8
# Without a label, the largest number must be this much larger than any other candidate.
RIVAL_RATIO = 1.15
# The lines of a heading are centred on its largest line within this share of its width.
HEADING_CENTRED = 0.1
# A title longer than this many words is a paragraph, not a heading (the longest titles of
# real sets run to a dozen: "FLOOR PLAN - LEVEL 01 - AREA A - POWER & SIGNAL").
TITLE_MAX_WORDS = 16
# Stacked lines of one title: sizes within this ratio, gaps under this many line heights.
STACK_SIZE_RATIO = 1.25
STACK_GAP = 1.0
# Title lines are at least this share of the size of the field's largest line.
TITLE_SHARE = 0.8
# A field holding this many numbers stacked in a column is a sheet index's column.
INDEX_ROWS = 3

# Separators between a number and a title printed on one line ("A101 – FLOOR PLAN").
_SEPARATOR = re.compile(r"^[-\u2010-\u2015\u2212:|/]+$")


class Evidence:
    """How strongly a number is vouched for (higher wins)."""

    LABEL_IN_TITLE_BLOCK = 4
    TITLE_FIELD = 3
    LABEL = 2
    LARGEST = 1


@dataclass(frozen=True)
class Reading:
    """What the title block says: number and title as printed, the words they came from,
    and how the number was found."""

    number: str | None = None
    title: str | None = None
    number_words: tuple[int, ...] = ()
    title_words: tuple[int, ...] = ()
    evidence: int = 0


@dataclass(frozen=True)
class _Label:
    field: Field
    box: Box
    run: Run
    rest: tuple[int, ...]  # word ids after the label on its line: an inline value
    key: str


@dataclass(frozen=True)
class _Number:
    token: str  # as printed
    ids: tuple[int, ...]
    box: Box
    size: float
    run: Run
    evidence: int
    score: tuple
    label: _Label | None = None


def read_title_block(layer: TextLayer) -> Reading:
    """The sheet number and title the page's title block prints (either may be None)."""
    best = Reading()
    for view in views(layer):
        reading = _read(view)
        if _rank(reading) > _rank(best):
            best = reading
        if best.evidence == Evidence.LABEL_IN_TITLE_BLOCK and best.title:
            break  # no other direction can read it better
    return best


def printed_alone(layer: TextLayer, keys: set[str]) -> Reading | None:
    """The one number among ``keys`` (``sheet_key`` forms) that the page prints large and
    alone in its title block, with the title beside it; None when it prints none of them,
    or more than one. A drawing index names what to look for: "SITE" or "COV-S" is a
    sheet number only because the index says so, never by its shape."""
    found: dict[str, Reading] = {}
    for view in views(layer):
        labels = list(_labels(view))
        floor = BIG_RATIO * view.typical_size
        for run in view.runs:
            if run.size < floor or not view.in_zone(run.box) or _is_label_run(run, labels):
                continue
            first = _first_token(view, run.ids)
            if not first or len(first[1]) != len(run.ids) or sheet_key(first[0]) not in keys:
                continue
            token, ids = first
            number = _Number(token, ids, view.box_of(ids), run.size, run, 0, ())
            title, title_ids = _heading_only(*_title(view, labels, number, set()))
            found.setdefault(sheet_key(token), Reading(token, title, ids, title_ids))
    return next(iter(found.values())) if len(found) == 1 else None


def _rank(reading: Reading) -> tuple:
    return (reading.evidence, reading.number is not None, reading.title is not None)


def _read(view: View) -> Reading:
    labels = list(_labels(view))
    excluded = {
        i for label in labels if label.field is Field.OTHER for i in _field_ids(view, label, labels)
    }
    numbers = list(_numbers(view, labels, excluded))
    number = max(numbers, key=lambda n: (n.evidence, n.score), default=None)
    if number is not None and number.evidence == Evidence.LARGEST and _rivalled(number, numbers):
        number = None
    title, title_ids = _heading_only(*_title(view, labels, number, excluded))
    if number is None:
        return Reading(title=title, title_words=title_ids)
    return Reading(
        number=number.token,
        title=title,
        number_words=number.ids,
        title_words=title_ids,
        evidence=number.evidence,
    )


# --- labels -------------------------------------------------------------------------------


def _labels(view: View) -> Iterator[_Label]:
    """Labels at the start of lines, and every label of a header row made only of labels,
    one of them another field's ("Стадия Лист Листов", "SHEET DATE")."""
    for run in view.aligned:
        if not may_start_label(view.words[run.ids[0]].text):
            continue
        texts = [view.words[i].text for i in run.ids]
        singles = [single for t in texts if (single := match_label([t]))]
        whole_row = len(texts) > 1 and len(singles) == len(texts)
        if whole_row and any(f is Field.OTHER for f, _ in singles):
            for i, text, (field, _) in zip(run.ids, texts, singles, strict=True):
                yield _Label(field, view.box_of((i,)), run, (), label_key([text]))
            continue
        found = match_label(texts)
        if found:
            field, n = found
            ids = run.ids[:n]
            yield _Label(field, view.box_of(ids), run, run.ids[n:], label_key(texts[:n]))


def _overlap(a0: float, a1: float, b0: float, b1: float) -> float:
    return min(a1, b1) - max(a0, b0)


def _field(view: View, label: _Label, labels: list[_Label]) -> list[tuple[Run, float]]:
    """The runs in a label's field with their distance from it: right of it on its line,
    and below it, within its ruled cell (or, unruled, up to the next label)."""
    x0, y0, x1, y1 = label.box
    h = max(y1 - y0, 1.0)
    others = [o.box for o in labels if o.box != label.box]
    cell = view.cell(label.box.centre)
    same_row = [b for b in others if b.overlap_y(label.box) > 0.5 * h]
    # Labels beside this one on its row bound its column, ruled or not.
    right_limit = min(
        (b.x0 for b in same_row if b.x0 >= x1), default=x1 + max(REACH_RIGHT * h, 144.0)
    )
    col0 = max(b.x1 for b in same_row if b.x1 <= x0) if any(b.x1 <= x0 for b in same_row) else None
    col1 = min((b.x0 for b in same_row if b.x0 >= x1), default=None)
    if cell:
        right_limit = min(right_limit, cell.x1)
        col0, col1, bottom = max(col0 or cell.x0, cell.x0), min(col1 or cell.x1, cell.x1), cell.y1
    else:
        # Unruled, a value starts under its label or to the right of its start.
        col0 = max(col0 or x0 - 0.5 * (x1 - x0), x0 - 0.5 * (x1 - x0))
        col1 = min(col1 or math.inf, x1 + max(REACH_BELOW * h, x1 - x0))
        below = [b.y0 for b in others if b.y0 > y1 and _overlap(b.x0, b.x1, col0, col1) > 0]
        bottom = min([*below, y1 + max(REACH_BELOW * h, 72.0)])
    found: list[tuple[Run, float]] = []
    for run in view.runs:
        if run is label.run:
            continue
        rx0, ry0, rx1, ry1 = run.box
        if _overlap(ry0, ry1, y0, y1) >= 0.5 * min(h, ry1 - ry0) and x1 - 1 <= rx0 < right_limit:
            found.append((run, rx0 - x1))
        elif ry0 >= (y0 + y1) / 2 and ry0 < bottom and _overlap(rx0, rx1, col0, col1) > 0:
            found.append((run, max(ry0 - y1, 0.0)))
    if cell and not found and (under := view.cell_below(cell)):
        # A label ruled off in a band of its own: its value fills the cell below.
        found = [(r, r.box.y0 - y1) for r in view.runs if under.contains(r.box.centre)]
    return found


def _field_ids(view: View, label: _Label, labels: list[_Label]) -> set[int]:
    """The word ids of a label's value: inline, else the nearest run beside it on its row,
    else the nearest below it."""
    if label.rest:
        return set(label.rest)
    field = _field(view, label, labels)
    beside = [(run, d) for run, d in field if run.box.overlap_y(label.box) > 0]
    if not field:
        return set()
    run, _ = min(beside or field, key=lambda rd: rd[1])
    return set(run.ids)


def _is_label_run(run: Run, labels: list[_Label]) -> bool:
    return any(label.run is run for label in labels)


# --- the number ---------------------------------------------------------------------------


def _numbers(view: View, labels: list[_Label], excluded: set[int]) -> Iterator[_Number]:
    for label in labels:
        if label.field is Field.NUMBER:
            yield from _labelled(view, label, labels)
        elif label.field is Field.TITLE:
            yield from _in_title_field(view, label, labels)
    yield from _largest(view, labels, excluded)


def _first_token(view: View, ids: tuple[int, ...]) -> tuple[str, tuple[int, ...]] | None:
    """The first token of a run of words as printed (a number split across two words
    rejoined; a title glued on by a dash cut off), with the words it uses."""
    words = [view.words[i] for i in ids if printed_token(view.words[i].text)]
    if not words:
        return None
    first = words[0]
    token = cut_glued_title(printed_token(first.text))
    if len(words) > 1 and first.text.rstrip().endswith(tuple("-\u2010\u2011\u2012\u2013")):
        joined = printed_token(first.text + words[1].text)
        if is_sheet_id(joined):
            return joined, (first.id, words[1].id)
    return token, (first.id,)


def _labelled(view: View, label: _Label, labels: list[_Label]) -> Iterator[_Number]:
    """The value of a sheet-number label: inline after it, else the largest whole token in
    its field (a sheet-number shape before a bare count, then the nearer)."""
    in_zone = view.in_zone(label.box)
    evidence = Evidence.LABEL_IN_TITLE_BLOCK if in_zone else Evidence.LABEL
    if label.rest:
        first = _first_token(view, label.rest)
        if first and is_labelled_value(first[0]):
            token, ids = first
            box = view.box_of(ids)
            yield _Number(
                token, ids, box, label.run.size, label.run, evidence, (1, 0.0, 0.0), label
            )
            return
    field = [(run, d) for run, d in _field(view, label, labels) if not _is_label_run(run, labels)]
    shaped_rows = [
        run for run, _ in field if (f := _first_token(view, run.ids)) and is_sheet_id(f[0])
    ]
    if len(shaped_rows) >= INDEX_ROWS and not view.cell(label.box.centre):
        return  # the column header of a sheet index, not a title-block field
    for run, distance in field:
        first = _first_token(view, run.ids)
        if not first or not is_labelled_value(first[0]):
            continue
        token, ids = first
        score = (is_sheet_id(token), round(run.size, 1), -distance)
        yield _Number(token, ids, view.box_of(ids), run.size, run, evidence, score, label)


def _in_title_field(view: View, label: _Label, labels: list[_Label]) -> Iterator[_Number]:
    """A number printed in the title field after a colon ("STORE PLAN: ST04 - …")."""
    if not view.in_zone(label.box):
        return
    runs = [view.run_of(label.rest)] if label.rest else [r for r, _ in _field(view, label, labels)]
    for run in runs:
        ids = [i for i in run.ids if not label.rest or i in label.rest]
        for k, i in enumerate(ids[:-1]):
            if not view.words[i].text.endswith(":"):
                continue
            first = _first_token(view, tuple(ids[k + 1 :]))
            if first and is_sheet_id(first[0]):
                token, token_ids = first
                score = (round(run.size, 1), 0.0)
                box = view.box_of(token_ids)
                yield _Number(
                    token, token_ids, box, run.size, run, Evidence.TITLE_FIELD, score, label
                )


def _largest(view: View, labels: list[_Label], excluded: set[int]) -> Iterator[_Number]:
    """Sheet-number-shaped text standing alone (or before its title) in the title block,
    clearly larger than the sheet's ordinary text."""
    floor = BIG_RATIO * view.typical_size
    for run in view.runs:
        if run.size < floor or not view.in_zone(run.box) or _is_label_run(run, labels):
            continue
        if excluded.intersection(run.ids):
            continue
        first = _first_token(view, run.ids)
        if not first or not _stands_alone(view, run, first[1]):
            continue
        token, ids = first
        if is_sheet_id(token) and not is_route_name(token):
            score = (round(run.size, 1), view.edge_score(run.box))
            yield _Number(token, ids, view.box_of(ids), run.size, run, Evidence.LARGEST, score)


def _rivalled(number: _Number, numbers: list[_Number]) -> bool:
    """Whether another token is about as large as the largest one (grid bubbles, a row of
    tags): the largest-text rule then names no sheet."""
    key = sheet_key(number.token)
    return any(
        other.evidence == Evidence.LARGEST
        and sheet_key(other.token) != key
        and other.size * RIVAL_RATIO >= number.size
        for other in numbers
    )


def _stands_alone(view: View, run: Run, token_ids: tuple[int, ...]) -> bool:
    """Whether a token is its line's only content, or is followed by a separator (its
    title): a token inside a phrase ("ROUTE I-90 WIDENING") names something else."""
    rest = [view.words[i].text for i in run.ids if i not in token_ids]
    return not rest or bool(_SEPARATOR.match(rest[0]))


# --- the title ----------------------------------------------------------------------------


def _heading_only(title: str | None, ids: tuple[int, ...]) -> tuple[str | None, tuple[int, ...]]:
    """A title is a heading of a few words, never a paragraph of notes (a statement under a
    map's title, read as its stack of lines): past ``TITLE_MAX_WORDS``, no title rather
    than a wrong one."""
    if title and len(title.split()) > TITLE_MAX_WORDS:
        return None, ()
    return title, ids


def _title(
    view: View, labels: list[_Label], number: _Number | None, excluded: set[int]
) -> tuple[str | None, tuple[int, ...]]:
    for label in sorted(
        (lb for lb in labels if lb.field is Field.TITLE),
        key=lambda lb: (view.in_zone(lb.box), view.edge_score(lb.box)),
        reverse=True,
    ):
        found = _labelled_title(view, label, labels, number)
        if found[0]:
            return found
    if number is None:
        return None, ()
    if number.label is not None and (found := _stamp_title(view, labels, number))[0]:
        return found
    if number.label is not None and number.label.key in BARE_NUMBER_LABELS:
        return _heading_above(view, number)
    return _title_near(view, labels, number, excluded)


def _heading_above(view: View, number: _Number) -> tuple[str | None, tuple[int, ...]]:
    """The title of a sheet counted under its heading ("SHEET 3 OF 10" under a map's title,
    with no title block): the line in the largest print above the number in its column,
    with the lines stacked on it from above, centred on it (FINAL MAP / OF / ...); what
    lies near the number (a date, a county, the firm) is no title."""
    above = [
        r
        for r in view.runs
        if r.line_id >= 0
        and r.box.y1 <= number.run.box.y0
        and r.box.overlap_x(number.run.box) > 0
        and r.size > number.run.size
    ]
    worded = [r for r in above if _has_words(r)]
    if not worded:
        return None, ()
    head = max(worded, key=lambda r: r.size)
    stack, centre = [head], head.box.centre.x
    for run in sorted(above, key=lambda r: -r.box.y1):
        top = stack[-1]
        gap = top.box.y0 - run.box.y1
        centred = abs(run.box.centre.x - centre) <= HEADING_CENTRED * head.box.width
        # OCR's boxes of stacked lines may overlap a little.
        near = -run.box.height / 2 <= gap <= STACK_GAP * top.box.height
        if run is not head and near and centred:
            stack.append(run)
    stack.sort(key=lambda r: r.box.y0)
    return _clean_title(view, tuple(i for run in stack for i in run.ids), number)


def _labelled_title(
    view: View, label: _Label, labels: list[_Label], number: _Number | None
) -> tuple[str | None, tuple[int, ...]]:
    """The title in a title label's field: its inline value, else the largest stack of
    lines in the field."""
    if label.rest:
        return _clean_title(view, label.rest, number)

    def usable(run: Run) -> bool:
        return run.line_id >= 0 and not _is_label_run(run, labels) and _has_words(run)

    runs = [run for run, _ in _field(view, label, labels) if usable(run)]
    cell = view.cell(label.box.centre)
    # Unruled, a title's last lines may run past the reach of its label.
    pool = runs if cell else [r for r in view.aligned if r.box.y0 >= label.box.y0 and usable(r)]
    return _clean_title(view, _stack(runs, pool), number)


def _stamp_title(
    view: View, labels: list[_Label], number: _Number
) -> tuple[str | None, tuple[int, ...]]:
    """The title of a GOST main inscription: with stage, sheet and sheet-count labelled in
    one row, the sheet's title is the cell below that row's values, just left of the stage
    column."""
    if number.label is None:
        return None, ()
    stage = next(
        (lb for lb in labels if lb.key in STAGE_LABELS and lb.run is number.label.run),
        None,
    )
    if stage is None:
        return None, ()
    value = number.box
    reach = 3 * value.height
    below = [
        run
        for run in view.aligned
        if value.y1 <= run.box.y0 <= value.y1 + reach
        and run.box.x1 <= stage.box.x0 + value.height
        and _has_words(run)
    ]
    if not below:
        return None, ()
    nearest = max(below, key=lambda run: run.box.x1)
    return _clean_title(view, nearest.ids, number)


def _title_near(
    view: View, labels: list[_Label], number: _Number, excluded: set[int]
) -> tuple[str | None, tuple[int, ...]]:
    """Without a title label: the largest stack of lines next to the number, in the
    number's ruled cell or the cell above it; unruled, above or below it within the
    number's height."""

    def usable(run: Run) -> bool:
        return (
            run.line_id >= 0
            and run is not number.run
            and not _is_label_run(run, labels)
            and not excluded.intersection(run.ids)
            and _has_words(run)
        )

    after = number.run.ids[number.run.ids.index(number.ids[-1]) + 1 :]
    if (
        after
        and _SEPARATOR.match(view.words[after[0]].text)
        and (found := _clean_title(view, after[1:], number))[0]
    ):
        return found  # "A101.01 – FLOOR PLAN": the title follows the number on its line
    x0, y0, x1, y1 = number.run.box
    cell = view.cell(number.box.centre)
    if cell:
        for box in (cell, view.cell_above(cell)):
            inside = [r for r in view.runs if box and box.contains(r.box.centre) and usable(r)]
            if inside:
                return _clean_title(view, _stack(inside, inside), number)
        return None, ()
    h, w = y1 - y0, x1 - x0
    rows = [r for r in view.runs if _overlap(r.box.y0, r.box.y1, y0 - h, y1 + h) > 0 and usable(r)]
    # Above or below the number in its column; failing that, just left of it.
    near = [r for r in rows if _overlap(r.box.x0, r.box.x1, x0, x1) > 0] or [
        r for r in rows if x0 - w <= r.box.x1 <= x0 and r.box.y0 < y1
    ]
    return _clean_title(view, _stack(near, [r for r in view.runs if usable(r)]), number)


def _has_words(run: Run) -> bool:
    """A run with at least three letters that is not a date or a lone number."""
    return sum(ch.isalpha() for ch in run.text) >= 3 and not is_sheet_id(run.text)


def _stack(seeds: list[Run], pool: list[Run]) -> tuple[int, ...]:
    """The word ids of the largest seed and the lines of ``pool`` stacked with it: similar
    size, close above or below, overlapping it across; top to bottom."""
    if not seeds:
        return ()
    top = max(seeds, key=lambda r: r.size)
    stack = [top]
    rest = [r for r in pool if r is not top and r.size >= TITLE_SHARE * top.size]
    grown = True
    while grown:
        grown = False
        for run in list(rest):
            if any(_stacked(run, member) for member in stack):
                stack.append(run)
                rest.remove(run)
                grown = True
    stack.sort(key=lambda r: (r.box.y0, r.box.x0))
    return tuple(i for run in stack for i in run.ids)


def _stacked(a: Run, b: Run) -> bool:
    low, high = sorted((max(a.size, 1e-6), max(b.size, 1e-6)))
    if high / low > STACK_SIZE_RATIO:
        return False
    gap = max(a.box.y0 - b.box.y1, b.box.y0 - a.box.y1)
    return gap <= STACK_GAP * max(a.box.height, b.box.height) and a.box.overlap_x(b.box) > 0


def _clean_title(
    view: View, ids: tuple[int, ...], number: _Number | None
) -> tuple[str | None, tuple[int, ...]]:
    """A title's words as one line: the number and the colon before it taken out ("STORE
    PLAN: ST04" → "STORE PLAN"), separators left dangling stripped."""
    if number is not None:
        ids = tuple(i for i in ids if i not in number.ids)
    texts = [view.words[i].text for i in ids]
    text = " ".join(" ".join(texts).split())
    if number is not None:
        text = re.sub(r"\s*:\s*(?=[-\u2010-\u2015\u2212]|$)", " ", text)
    text = text.strip(" :-\u2010\u2011\u2012\u2013\u2014|")
    text = " ".join(text.split())
    if sum(ch.isalpha() for ch in text) < 2:
        return None, ()
    return text, ids
