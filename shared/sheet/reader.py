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
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from functools import lru_cache

from shared.pagetext import Box, TextLayer, Word
from shared.sheet.cells import WALL_SLACK, Cell, cell_label, read_cells
from shared.sheet.fields import is_scale
from shared.sheet.labels import (
    BARE_NUMBER_LABELS,
    NUMBER_LABELS,
    PAIR_LABELS,
    STAGE_LABELS,
    Field,
    is_count_line,
    is_firm_name,
    is_label,
    is_stage_or_status,
    label_fields,
    label_key,
    match_label,
    may_start_label,
    names_drawing_kind,
    sheet_count,
)
from shared.sheet.normal import without_cad_codes
from shared.sheet.tokens import (
    cut_glued_title,
    is_labelled_value,
    is_route_name,
    is_sheet_id,
    printed_token,
    sheet_key,
)
from shared.sheet.view import OCR_SIZE_RATIO, Run, View, is_wide, read_by_ocr, views

# The largest-text rule wants a number this many times the sheet's ordinary text size.
BIG_RATIO = 1.5
# A value sits at most this many label heights right of its label (or 144 pt) ...
REACH_RIGHT = 20
# ... or starts at most this many label heights below it (or 72 pt), unless a cell holds it.
REACH_BELOW = 8
# Without a label, the largest number must be this much larger than any other candidate.
RIVAL_RATIO = 1.15
# Stacked lines of one title: sizes within this ratio, gaps under this many line heights.
STACK_SIZE_RATIO = 1.25
STACK_GAP = 1.0
# The lines of a heading are centred on its largest line within this share of its width.
HEADING_CENTRED = 0.1
# A main heading is larger than any other line of its part of the sheet by this much.
HEADING_ALONE = 1.1
# OCR's confidence in a word below which it is no evidence of its own: a number by size
# alone, a title (extract withholds it).
OCR_SURE = 0.95
# A pair of brackets with nothing between them, as OCR gives one whose content it lost.
_EMPTIED = re.compile(r"[(\[（【「][)\]）】」]")
# Title lines are at least this share of the size of the field's largest line.
TITLE_SHARE = 0.8
# A line opening with another field's word ("PROJECT TYPICAL DETAILS") printed this many
# times larger than the sheet's ordinary text is a heading, not a label.
HEADING_RATIO = 2.5
# A title runs to at most this many words; more is a paragraph.
MAX_TITLE_WORDS = 24
# A field holding this many numbers stacked in a column is a sheet index's column, in a
# ruled cell too (a cover's index listed in one cell under "SHEET INDEX:"): no title-block
# cell holds three sheet numbers.
INDEX_ROWS = 3

# Separators between a number and a title printed on one line ("A101 – FLOOR PLAN").
_SEPARATOR = re.compile(r"^[-\u2010-\u2015\u2212:|/]+$")


NO_TITLE = (
    "no title field read: no labelled title cell, no title label's value, nothing printed "
    "with the number, and no heading clear of other fields' values"
)
NOT_A_TITLE = "the text in the title's place is a field label or a stage banner, never a title"
LARGEST_BESIDE = "the largest text beside the number"
MAIN_HEADING = "the sheet's main heading, outside its title block"
UNDER_HEADING = "the heading the sheet's count is printed under"
TITLE_CELL = "the value of the title cell"
TITLE_LABEL = "the value of the title label"  # and the label's key
# Titles chosen by size alone, with no field to hold them: on a text layer nearly always
# right (23 of 24 corpus pages), on words OCR read from the image a coin toss (37 of 68 in
# the corpus as raster and outlines, RESULTS §33), since OCR's sizes are its boxes' heights
# and its lines are cut and joined otherwise than printed. From OCR's words they abstain.
SIZE_GUESSES = frozenset({LARGEST_BESIDE, MAIN_HEADING})
# The largest text stacked on the number in its column, naming a kind of drawing
# ("LIGHTING PLAN" under "E3.0"): its place and its words vouch for it, OCR'd or not.
KIND_ON_NUMBER = "the largest text stacked on the number, naming a kind of drawing"
# Stacked on the number: at most this many number heights above or below it, and over
# this share of the narrower of the two across.
KIND_REACH = 2.0
STACKED_COLUMN = 0.9
GUESS_ON_OCR = (
    "no title field read; the largest text near the number or the main heading, read by "
    "OCR, is not taken for the title: by size alone it is as often wrong as right"
)
GUESS_IN_UNNAMED_CELL = (
    "no title field read; the largest value of a title-block cell whose label OCR did not "
    "read is not taken for the title unless the set shows the title is printed there"
)


class Evidence:
    """How strongly a number is vouched for (higher wins)."""

    LABEL_IN_TITLE_BLOCK = 4
    TITLE_FIELD = 3
    LABEL = 2
    LARGEST = 1


@dataclass(frozen=True)
class Considered:
    """A text considered for the sheet number: where it is (page frame), what vouches for
    it, the title that goes with it, and why it won or lost."""

    text: str
    word_ids: tuple[int, ...]
    box: Box
    size: float
    field: str | None
    label: str | None
    evidence: int
    score: float
    chosen: bool
    why: str
    title: str | None = None
    title_words: tuple[int, ...] = ()


@dataclass(frozen=True)
class Reading:
    """What the title block says: number and title as printed, the words they came from,
    how the number was found, every number considered, and the title block's region."""

    number: str | None = None
    title: str | None = None
    number_words: tuple[int, ...] = ()
    title_words: tuple[int, ...] = ()
    evidence: int = 0
    candidates: tuple[Considered, ...] = ()
    region: Box | None = None
    title_how: str = ""  # where the title was read, or why the page has none
    cells: tuple[Cell, ...] = ()
    # A title OCR's words gave by size alone, not taken (``GUESS_ON_OCR``): the set's
    # other sheets may vouch for its place.
    title_guess: str | None = None
    title_guess_words: tuple[int, ...] = ()


@dataclass(frozen=True)
class _Label:
    field: Field
    box: Box
    run: Run
    rest: tuple[int, ...]  # word ids after the label on its line: an inline value
    key: str
    cell_value: tuple[int, ...] = ()  # a ruled cell's label: the words of the cell's value


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
    """The sheet number and title the page's title block prints (either may be None), with
    every number considered."""
    best, best_candidates = Reading(), []
    considered: dict[tuple[int, ...], Considered] = {}
    readings: list[Reading] = []
    for view in views(layer):
        reading, candidates = _read(view)
        readings.append(reading)
        for c in candidates:
            if c.word_ids not in considered or considered[c.word_ids].score < c.score:
                considered[c.word_ids] = c
        if _rank(reading) > _rank(best):
            best, best_candidates = reading, candidates
        if best.evidence == Evidence.LABEL_IN_TITLE_BLOCK and best.title:
            break  # no other direction can read it better
    if best.number is not None and best.title is None:
        best = _title_across(best, readings)
    chosen = {c.word_ids for c in best_candidates if c.chosen}
    ordered = sorted(considered.values(), key=lambda c: -c.score)
    kept = tuple(
        c
        if c.chosen == (c.word_ids in chosen)
        else replace(c, chosen=False, why="lost: the page reads better in another text direction")
        for c in ordered
    )
    return _label_free(replace(best, candidates=kept))


def _title_across(best: Reading, readings: list[Reading]) -> Reading:
    """A number read in one direction (a label turned 90° up a strip's edge) and no title
    there: the title a title field holds read in another direction (the strip's upright
    "Titre du plan" cell), if exactly one such title is read."""
    titles = {
        r.title: r
        for r in readings
        if r.title and (r.title_how == TITLE_CELL or r.title_how.startswith(TITLE_LABEL))
    }
    if len(titles) != 1:
        return best
    (other,) = titles.values()
    return replace(
        best, title=other.title, title_words=other.title_words, title_how=other.title_how
    )


def _label_free(reading: Reading) -> Reading:
    """A label is never a value: a number or title that is a field's label in any language
    ("図面番号", "Tegningsnummer"), or a title that is a stage or status banner, is dropped
    as the reading leaves the reader, and so is any candidate's, and the title guess."""
    if reading.number is not None and is_label(reading.number):
        reading = replace(reading, number=None, number_words=(), evidence=0)
    if reading.title is not None and _not_a_title(reading.title):
        reading = replace(reading, title=None, title_words=(), title_how=NOT_A_TITLE)
    if reading.title_guess is not None and _not_a_title(reading.title_guess):
        reading = replace(reading, title_guess=None, title_guess_words=())
    kept = tuple(
        replace(c, title=None, title_words=()) if c.title and _not_a_title(c.title) else c
        for c in reading.candidates
        if not is_label(c.text)
    )
    return replace(reading, candidates=kept)


def _not_a_title(text: str) -> bool:
    return is_label(text) or is_stage_or_status(text)


def reads_as_title(text: str) -> bool:
    """Whether a cell's value could be a title: words, and no label (nor a label's colon),
    banner, number, scale, firm or sheet count."""
    return _words_like(text) and not _not_a_title(text) and ":" not in text


def _rank(reading: Reading) -> tuple:
    return (reading.evidence, reading.number is not None, reading.title is not None)


def _strength(number: "_Number") -> tuple:
    """How a number ranks on its page: a labelled value first, and among labelled values
    one with digits before a word ("CIVIL" in a trade banner's field loses to "C-101" in a
    consultant's block); then the evidence, then the score within it."""
    labelled = number.evidence >= Evidence.LABEL
    return (
        labelled,
        not _is_position(number),
        not labelled or _has_digit(number.token),
        number.evidence,
        number.score,
    )


def _is_position(number: "_Number") -> bool:
    """Whether a number is a sheet's position in a count ("Blad 1 van 4"), read inline after
    its label: a labelled sheet number elsewhere in the block beats it."""
    if number.label is None or not number.label.rest:
        return False
    texts = [number.run.words[i].text for i in number.label.rest]
    return sheet_count(texts) is not None


def _has_digit(token: str) -> bool:
    return any(ch.isdigit() for ch in token)


def _read(view: View) -> tuple[Reading, list[Considered]]:
    cells = read_cells(view)
    # A labelled cell's value is never a label ("Drawing" as a document type's value).
    values = {i for cell in cells if cell.label for i in cell.value_ids}
    labels = [label for label in _labels(view) if label.run.ids[0] not in values]
    labels = _with_cell_values(labels, cells)
    labels += _cell_labels(view, cells, labels)
    excluded = {
        i for label in labels if label.field is Field.OTHER for i in _field_ids(view, label, labels)
    }
    # A cell's label, of a field known or not, is never a number or a title.
    excluded |= {i for cell in cells for i in cell.label_ids}
    numbers = _distinct(list(_numbers(view, labels, excluded)))
    ranked = sorted(numbers, key=_strength, reverse=True)
    number = ranked[0] if ranked else None
    rivalled = (
        number is not None and number.evidence == Evidence.LARGEST and _rivalled(number, numbers)
    )
    if rivalled:
        number = None
    # Another field's cell holds that field's value: never the title, whatever its size.
    not_title = excluded | {
        i
        for cell in cells
        if (cell.label and cell.field is not Field.TITLE) or _is_contact_panel(cell.value)
        for i in (*cell.label_ids, *cell.value_ids)
    }
    title, title_ids, how = _title(view, cells, labels, number, not_title)
    if number is not None and title is None:
        title, title_ids = _main_heading(view, labels, not_title)
        how = MAIN_HEADING if title else how
    if title is None:
        how = NO_TITLE
    guess: str | None = None
    guess_ids: tuple[int, ...] = ()
    if how == LARGEST_BESIDE and _kind_on_number(view, title, title_ids, number):
        how = KIND_ON_NUMBER
    if how in SIZE_GUESSES and any(view.words[i].origin == "ocr" for i in title_ids):
        guess, guess_ids = title, title_ids
        title, title_ids, how = None, (), GUESS_ON_OCR
    elif title is None and (unnamed := _unnamed_cell_value(view, cells, number, excluded))[0]:
        guess, guess_ids = unnamed
        how = GUESS_IN_UNNAMED_CELL
    candidates = _considered(view, cells, labels, not_title, ranked, number, rivalled)
    candidates += _large_tokens(view, cells, labels, {c.word_ids for c in candidates})
    region = _region(view, labels, number)
    # Kept with the reading: the labelled cells, and the title block's others (a drawing's
    # own tables are no part of it): those where title blocks sit, and those stacked in the
    # number's column of cells (a strip down the sheet's left edge).
    column = next((c.box for c in cells if number and c.box.contains(number.box.centre)), None)
    kept = [
        c
        for c in cells
        if c.label or view.in_zone(c.box) or (column is not None and _in_column(c.box, column))
    ]
    found = kept + _unruled_cells(view, labels)
    framed = tuple(replace(c, box=c.box.from_frame(view.frame)) for c in found)
    if number is None:
        return Reading(
            title=title,
            title_words=title_ids,
            candidates=tuple(candidates),
            region=region,
            title_how=how,
            cells=framed,
            title_guess=guess,
            title_guess_words=guess_ids,
        ), candidates
    return Reading(
        number=number.token,
        title=title,
        number_words=number.ids,
        title_words=title_ids,
        evidence=number.evidence,
        candidates=tuple(candidates),
        region=region,
        title_how=how,
        cells=framed,
        title_guess=guess,
        title_guess_words=guess_ids,
    ), candidates


# A cell is in another's column where its walls stand within this many points of it.
COLUMN_SLACK = 3.0


def _in_column(box: Box, column: Box) -> bool:
    """Whether a cell lies within another's column: between its two walls."""
    return box.x0 >= column.x0 - COLUMN_SLACK and box.x1 <= column.x1 + COLUMN_SLACK


def _distinct(numbers: list["_Number"]) -> list["_Number"]:
    """Each token once: where two labels claim the same words, the stronger one."""
    best: dict[tuple[int, ...], _Number] = {}
    for n in numbers:
        if n.ids not in best or _strength(n) > _strength(best[n.ids]):
            best[n.ids] = n
    return list(best.values())


# Candidates past this rank on a page are kept without the title that would go with them.
TITLED_CANDIDATES = 8
# Words printed large and alone that are kept for a drawing index to name: the largest few.
LARGE_TOKENS = 6

_HOW = {
    Evidence.LABEL_IN_TITLE_BLOCK: "the value of the label {label!r} in the title block",
    Evidence.TITLE_FIELD: "printed in the title field after a colon",
    Evidence.LABEL: "the value of the label {label!r} outside the title block",
    Evidence.LARGEST: "the largest number-shaped text standing alone in the title block",
}


def _considered(
    view: View,
    cells: list[Cell],
    labels: list[_Label],
    excluded: set[int],
    ranked: list["_Number"],
    number: "_Number | None",
    rivalled: bool,
) -> list[Considered]:
    found = []
    for rank, n in enumerate(ranked):
        how = _HOW[n.evidence].format(label=n.label.key if n.label else None)
        if n is number:
            why = f"chosen: {how}"
        elif rivalled and n.evidence == Evidence.LARGEST:
            why = f"rivalled: {how}, but other text is about as large (grid bubbles, tags)"
        else:
            winner = number or ranked[0]
            why = f"lost to {winner.token}: {how}; {_why_lost(n, winner)}"
        title: tuple[str | None, tuple[int, ...]] = (None, ())
        if rank < TITLED_CANDIDATES:
            title = _title(view, cells, labels, n, excluded)[:2]
        found.append(_as_considered(view, n, n is number, why, title))
    return found


def _why_lost(loser: "_Number", winner: "_Number") -> str:
    if _strength(loser)[:2] < _strength(winner)[:2]:
        if loser.evidence < Evidence.LABEL:
            return "no label vouches for it"
        return "a word, where a labelled value with digits exists"
    if loser.evidence < winner.evidence:
        return "weaker evidence"
    if loser.label is not None and loser.label is winner.label:
        return "smaller or farther from the label in the same field"
    return "smaller, or nearer the middle of the sheet"


def _as_considered(
    view: View,
    n: "_Number",
    chosen: bool,
    why: str,
    title: tuple[str | None, tuple[int, ...]],
) -> Considered:
    return Considered(
        text=n.token,
        word_ids=n.ids,
        box=n.box.from_frame(view.frame),
        size=round(n.size, 2),
        field=n.label.field.value if n.label else None,
        label=n.label.key if n.label else None,
        evidence=n.evidence,
        score=n.evidence + min(n.size, 99.0) / 100,
        chosen=chosen,
        why=why,
        title=title[0],
        title_words=title[1],
    )


def _large_tokens(
    view: View, cells: list[Cell], labels: list[_Label], seen: set[tuple[int, ...]]
) -> list[Considered]:
    """Words printed large and alone in the title block that only a drawing index can make a
    sheet number ("SITE", "COV-S"): kept as candidates of no evidence of their own."""
    floor = BIG_RATIO * view.typical_size
    found: list[Considered] = []
    large = sorted((r for r in view.runs if r.size >= floor), key=lambda r: -r.size)
    for run in large:
        if len(found) >= LARGE_TOKENS:
            break
        if not view.in_zone(run.box) or _is_label_run(run, labels):
            continue
        first = _first_token(view, run.ids)
        if not first or len(first[1]) != len(run.ids) or first[1] in seen:
            continue
        token, ids = first
        if len(token) < 2 or not is_labelled_value(token):
            continue  # a grid letter
        seen.add(ids)
        n = _Number(token, ids, view.box_of(ids), run.size, run, 0, ())
        why = "large and alone in the title block: a number only where a drawing index lists it"
        title = _title(view, cells, labels, n, set())[:2]
        found.append(_as_considered(view, n, False, why, title))
    return found


def _region(view: View, labels: list[_Label], number: "_Number | None") -> Box | None:
    """The title block, on the page: the ruled strip or band the number sits in, else the
    box around the title block's labels and the number."""
    boxes = [lb.box for lb in labels if view.in_zone(lb.box)]
    if number is not None:
        boxes.append(number.box)
    if not boxes:
        return None
    x0, y0, x1, y1 = view.extent
    strip_x, strip_y = view.strips
    if number is not None and strip_x is not None and number.box.centre.x >= strip_x:
        box = Box(strip_x, y0, x1, y1)
    elif number is not None and strip_y is not None and number.box.centre.y >= strip_y:
        box = Box(x0, strip_y, x1, y1)
    else:
        box = Box.union(boxes)
    return box.from_frame(view.frame)


# --- labels -------------------------------------------------------------------------------


def _labels(view: View) -> Iterator[_Label]:
    """Labels at the start of lines, and every label of a header row made only of labels,
    one of them another field's ("Стадия Лист Листов", "SHEET DATE"); a heading in large
    type is no label."""
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
        heading = run.size >= HEADING_RATIO * view.typical_size
        if len(texts) == 1 and (tail := _tail_below(view, run)) is not None:
            key = label_key([texts[0], view.words[tail.ids[0]].text])
            if key in NUMBER_LABELS:  # "DRAWING" over "NO.": one label on two lines
                yield _Label(Field.NUMBER, Box.union((run.box, tail.box)), run, (), key)
                continue
        if found and not (found[0] is Field.OTHER and heading):
            field, n = found
            ids = run.ids[:n]
            yield _Label(field, view.box_of(ids), run, run.ids[n:], label_key(texts[:n]))


def _unruled_cells(view: View, labels: list[_Label]) -> list[Cell]:
    """The fields of the title block that no rule boxes in, as cells: each label with the
    value its alignment gives it (beside it on its line, or under it up to the next label
    in its column), so that no later stage reads the labels again."""
    found = []
    for label in labels:
        if label.cell_value or view.cell(label.box.centre) or not view.in_zone(label.box):
            continue
        # The label's own words as the vocabulary reads them ("DESIGN BY:", "SCALE @ A2:").
        words = [view.words[i].text for i in label.run.ids]
        read = cell_label(words) if label.run.ids[0] not in label.rest else None
        n = read[1] if read else len(label.run.ids) - len(label.rest)
        label_ids, inline = label.run.ids[:n], label.run.ids[n:]
        if inline:
            runs, ids = [label.run], inline
        else:
            runs = [r for r, _ in _field(view, label, labels) if not _is_label_run(r, labels)]
            runs.sort(key=lambda r: (r.box.y0, r.box.x0))
            ids = tuple(i for r in runs for i in r.ids)
        if not ids:
            continue
        found.append(
            Cell(
                box=Box.union([label.box, *(r.box for r in runs)]),
                label=" ".join(view.words[i].text for i in label_ids),
                label_ids=label_ids,
                field=label.field,
                value=" ".join(view.words[i].text for i in ids),
                value_ids=ids,
                value_size=max((r.size for r in runs), default=0.0),
            )
        )
    return found


def _with_cell_values(labels: list[_Label], cells: list[Cell]) -> list[_Label]:
    """Number and title labels a line opens with that are a ruled cell's label: their field
    is that cell's value (in the cell beside, where the label is boxed on its own), not
    whatever line a scan's loose box reaches past its wall."""
    values = {
        cell.label_ids: cell.value_ids
        for cell in cells
        if cell.field in (Field.NUMBER, Field.TITLE) and cell.value_ids
    }
    return [
        replace(label, cell_value=values[label.run.ids])
        if not label.rest and not label.cell_value and label.run.ids in values
        else label
        for label in labels
    ]


def _cell_labels(view: View, cells: list[Cell], labels: list[_Label]) -> list[_Label]:
    """The number and title labels of ruled cells that no line of the view starts with: a
    label turned 90° at its cell's side, or in a language or form only the vocabulary
    knows."""
    seen = {i for label in labels for i in label.run.ids if i not in label.rest}
    found = []
    for cell in cells:
        if cell.field not in (Field.NUMBER, Field.TITLE) or not cell.label:
            continue
        if seen.intersection(cell.label_ids):
            continue
        run = view.run_of(cell.label_ids)
        rest = tuple(i for i in run.ids if i in cell.value_ids) if run.line_id >= 0 else ()
        key = label_key(cell.label.split())
        box = view.box_of(cell.label_ids)
        found.append(_Label(cell.field, box, run, rest, key, cell.value_ids))
    return found


_NUMBER_TAILS = frozenset({"NO", "NUMBER", "NUM", "NBR", "NR", "#", "ID"})


def _tail_below(view: View, run: Run) -> Run | None:
    """The line right under a run when it is a number label's tail alone ("NO.")."""
    h = run.box.height
    return next(
        (
            below
            for below in view.runs_between(run.box.y1 - 0.3 * h, run.box.y1 + 1.5 * h)
            if below is not run
            and len(below.ids) == 1
            and below.box.overlap_x(run.box) > 0
            and label_key([view.words[below.ids[0]].text]) in _NUMBER_TAILS
        ),
        None,
    )


def _overlap(a0: float, a1: float, b0: float, b1: float) -> float:
    return min(a1, b1) - max(a0, b0)


def _field(view: View, label: _Label, labels: list[_Label]) -> list[tuple[Run, float]]:
    """The runs in a label's field with their distance from it: right of it on its line,
    and below it, within its ruled cell (or, unruled, up to the next label)."""
    if label.cell_value:
        # A ruled cell's label: its field is the cell's value, and nothing past its walls.
        runs = {id(r): r for i in label.cell_value if (r := view.run_of_word.get(i))}
        return [(r, abs(r.box.y0 - label.box.y0)) for r in runs.values()]
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
    token = _off_wall(view, first, cut_glued_title(printed_token(first.text)))
    if len(words) > 1 and first.text.rstrip().endswith(tuple("-\u2010\u2011\u2012\u2013")):
        joined = printed_token(first.text + words[1].text)
        if is_sheet_id(joined):
            return joined, (first.id, words[1].id)
    return token, (first.id,)


# What OCR reads a cell's wall as, where the wall touches the word after it ("|S1.04" read
# "IS1.04").
WALL_LETTERS = frozenset("Il|[")


def _off_wall(view: View, word: Word, token: str) -> str:
    """An OCR'd token without its first letter where that letter is the cell's wall: OCR's
    box of the word starts before a wall ruled across it, inside its first letter ("IS-101"
    for "S-101" printed against the wall). Printed text starts inside its cell, after the
    wall."""
    if word.origin != "ocr" or len(token) < 3 or token[0] not in WALL_LETTERS:
        return token
    box = word.bbox.in_frame(view.frame)
    glyph = box.width / max(len(word.text), 1)
    walled = any(
        box.x0 + 0.5 < rule.at <= box.x0 + glyph and rule.start <= box.y0 and box.y1 <= rule.end
        for rule in view.vertical
    )
    rest = token[1:]
    return rest if walled and is_labelled_value(rest) else token


def _continued(
    view: View, run: Run, token: str, ids: tuple[int, ...]
) -> tuple[str, tuple[int, ...]]:
    """A number printed on two lines of its box ("SC20" over "-TN01"): a token alone on its
    line, and right under it, about as large and overlapping it, a line of one token that
    opens with a dash, are one number."""
    if len(ids) != len(run.ids):
        return token, ids
    h = run.box.height
    # OCR's box heights are its only sizes, and a short line's box is the shorter; a box
    # around a few large letters may take in a mark beside them (twice the height of the
    # line under it): the dash that opens that line is what joins them.
    spread = OCR_SIZE_RATIO**2
    low, high = (1 / spread, spread) if read_by_ocr(run) else (0.8, 1.25)
    for below in view.runs_between(run.box.y1 - 0.3 * h, run.box.y1 + 0.8 * h):
        if below is run or len(below.ids) != 1:
            continue
        gap = below.box.y0 - run.box.y1
        text = view.words[below.ids[0]].text.strip()
        if (
            -0.3 * h <= gap <= 0.8 * h
            and below.box.overlap_x(run.box) > 0
            and low <= below.size / max(run.size, 1e-6) <= high
            and text[:1] in "-\u2010\u2011\u2012\u2013\u2212"
            and is_labelled_value(joined := printed_token(token + text))
        ):
            return joined, (*ids, below.ids[0])
    return token, ids


def _after_label(view: View, run: Run) -> bool:
    """Whether a run follows another field's label on its row ("CHECKED BY: ASV"): that
    field's value, never the title."""
    h = run.box.height
    for other in view.runs_between(run.box.y0 - 2 * h, run.box.y1):
        if other is run or other.box.overlap_y(run.box) < 0.5 * min(h, other.box.height):
            continue
        if not -1 <= run.box.x0 - other.box.x1 <= 4 * h:
            continue
        words = [view.words[i].text for i in other.ids]
        if not words[-1].endswith(":"):
            continue
        for k in range(1, min(len(words), 4) + 1):
            fields = label_fields(" ".join(words[-k:]))
            if fields and "title" not in fields:
                return True
    return False


def _after_of(view: View, run: Run) -> bool:
    """Whether a run follows "OF" on its row: the count of "SHEET 3 OF 10", never the
    number. A word turned across the row ("de" of a label up its cell's edge) is on no
    row."""
    h = run.box.height
    for other in view.aligned:
        if other is run or other.box.overlap_y(run.box) < 0.5 * min(h, other.box.height):
            continue
        gap = run.box.x0 - other.box.x1
        last = view.words[other.ids[-1]].text.strip(" .:").upper()
        if -1 <= gap <= 4 * h and last in ("OF", "VON", "DE", "SUR", "VAN"):
            return True
    return False


def _labelled(view: View, label: _Label, labels: list[_Label]) -> Iterator[_Number]:
    """The value of a sheet-number label: inline after it, else the largest whole token in
    its field (a sheet-number shape before a bare count, then the nearer)."""
    in_zone = view.in_zone(label.box)
    evidence = Evidence.LABEL_IN_TITLE_BLOCK if in_zone else Evidence.LABEL
    if label.key in PAIR_LABELS:
        yield from _pairs(view, label, labels, evidence)
        return
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
    if len(shaped_rows) >= INDEX_ROWS:
        return  # the column header of a sheet index, not a title-block field
    for run, distance in field:
        first = _first_token(view, run.ids)
        if not first or not is_labelled_value(first[0]) or _after_of(view, run):
            continue
        token, ids = _continued(view, run, *first)
        score = (is_sheet_id(token), round(run.size, 1), -distance)
        yield _Number(token, ids, view.box_of(ids), run.size, run, evidence, score, label)


_PAIR = re.compile(r"^([^\W_][\w.\-]*)\s*/\s*([^\W_][\w.\-]*)$")


def _pairs(view: View, label: _Label, labels: list[_Label], evidence: int) -> Iterator[_Number]:
    """The value of a pair label ("Unterlage / Blatt-Nr.: 7 / 1"): two numbers printed with
    a slash between them, one sheet."""
    runs = [view.run_of(label.rest)] if label.rest else [r for r, _ in _field(view, label, labels)]
    for run in runs:
        ids = [i for i in run.ids if not label.rest or i in label.rest]
        for k in range(1, min(len(ids), 3) + 1):
            text = " ".join(view.words[i].text for i in ids[:k]).strip()
            if _PAIR.match(text):
                token, used = text, tuple(ids[:k])
                score = (True, round(run.size, 1), 0.0)
                box = view.box_of(used)
                yield _Number(token, used, box, run.size, run, evidence, score, label)
                break


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
        token, ids = _continued(view, run, *first)
        if (
            is_sheet_id(token)
            and not is_route_name(token)
            and not unsure(view.words[i] for i in ids)
        ):
            score = (round(run.size, 1), view.edge_score(run.box))
            yield _Number(token, ids, view.box_of(ids), run.size, run, Evidence.LARGEST, score)


def unsure(words: Iterable[Word]) -> list[Word]:
    """The OCR words among ``words`` read with less than ``OCR_SURE`` confidence, or read as
    brackets with nothing in them (OCR lost what they hold: "(一)", one stroke, read "()"):
    size alone does not make such a token a sheet number (a tag read "D20." at 0.51), nor
    such words a title."""
    return [
        w
        for w in words
        if w.confidence is not None and (w.confidence < OCR_SURE or _EMPTIED.fullmatch(w.text))
    ]


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


def _title(
    view: View,
    cells: list[Cell],
    labels: list[_Label],
    number: _Number | None,
    excluded: set[int],
) -> tuple[str | None, tuple[int, ...], str]:
    """The title, the words it came from, and where it was read (or why there is none)."""
    if (
        number is not None
        and number.evidence != Evidence.TITLE_FIELD
        and (found := _with_number(view, number))[0]
    ):
        return *found, "printed after the number on its line"
    if number is not None and (found := _stamp_cell_title(view, cells, number))[0]:
        return *found, "the title cell of a main inscription, left of its stage column"
    if (
        number is not None
        and number.label is not None
        and (found := _stamp_title(view, labels, number))[0]
    ):
        return *found, "the line left of a main inscription's stage column"
    if (found := _cell_title(view, cells, number))[0]:
        return *found, TITLE_CELL
    for label in sorted(
        (lb for lb in labels if lb.field is Field.TITLE),
        key=lambda lb: (view.in_zone(lb.box), view.edge_score(lb.box)),
        reverse=True,
    ):
        found = _labelled_title(view, label, labels, number)
        if found[0]:
            return *found, f"{TITLE_LABEL} {label.key!r}"
    if number is None:
        return None, (), "no title field and no sheet number on the page"
    if (
        number.label is not None
        and number.label.key in BARE_NUMBER_LABELS
        and not view.cell(number.box.centre)
    ):
        return *_heading_above(view, number), UNDER_HEADING
    return *_title_near(view, labels, number, excluded), LARGEST_BESIDE


def _kind_on_number(
    view: View, title: str | None, title_ids: tuple[int, ...], number: _Number | None
) -> bool:
    """Whether a title chosen by size sits stacked on the number, in its column and at most
    ``KIND_REACH`` number heights away, and names a kind of drawing."""
    if title is None or number is None or not title_ids:
        return False
    box, at = view.box_of(title_ids), number.box
    gap = max(box.y0 - at.y1, at.y0 - box.y1)
    in_column = box.overlap_x(at) >= STACKED_COLUMN * min(box.width, at.width)
    return in_column and gap <= KIND_REACH * at.height and names_drawing_kind(title)


def _in_title_block(view: View, box: Box, number: _Number | None) -> bool:
    """Whether a cell is the title block's: where title blocks sit, or in the column of
    the sheet number (a strip down a portrait sheet's left edge); a table on the drawing
    with a "name" column is not."""
    if view.in_zone(box):
        return True
    return number is not None and number.label is not None and box.overlap_x(number.box) > 0


def _stamp_cell_title(
    view: View, cells: list[Cell], number: _Number
) -> tuple[str | None, tuple[int, ...]]:
    """The title of a GOST main inscription, which labels no title: the unlabelled ruled cell
    whose right wall is the stage column's left wall, from the stage row's top down."""
    stages = [
        c
        for c in cells
        if c.label
        and label_key(c.label.split()) in STAGE_LABELS
        and c.box.overlap_y(number.box) > 0  # the stage, sheet and sheet-count row
    ]
    for stage in stages:
        for cell in cells:
            beside = abs(cell.box.x1 - stage.box.x0) <= WALL_SLACK
            level = abs(cell.box.y0 - stage.box.y0) <= WALL_SLACK
            if cell.label is None and cell.value_ids and beside and level:
                inside = _value_lines(view, cell)
                found = _clean_title(view, _stack(inside, inside), number)
                if found[0] and _words_like(found[0]):
                    return found
    return None, ()


def _cell_title(
    view: View, cells: list[Cell], number: _Number | None
) -> tuple[str | None, tuple[int, ...]]:
    """The value of a ruled cell labelled as the title field, all its lines: in the title
    block first, then nearest the sheet's edge."""
    titled = sorted(
        (
            c
            for c in cells
            if c.field is Field.TITLE and c.value_ids and _in_title_block(view, c.box, number)
        ),
        key=lambda c: (view.in_zone(c.box), view.edge_score(c.box)),
        reverse=True,
    )
    for cell in titled:
        found = _clean_title(view, _largest_value(cell, _value_lines(view, cell)), number)
        if found[0] and _words_like(found[0]):
            return found
    return None, ()


def _value_lines(view: View, cell: Cell) -> list[Run]:
    """The lines a cell's value is printed on, each once."""
    runs = {id(run): run for i in cell.value_ids if (run := view.run_of_word.get(i))}
    return list(runs.values())


def _largest_value(cell: Cell, lines: list[Run]) -> tuple[int, ...]:
    """A cell's value in its largest lines and those stacked with them: an issue line in
    smaller print beside the title is no part of it."""
    ids = set(cell.value_ids)
    return tuple(i for i in _stack(lines, lines) if i in ids)


def _unnamed_cell_value(
    view: View, cells: list[Cell], number: _Number | None, excluded: set[int]
) -> tuple[str | None, tuple[int, ...]]:
    """On a page OCR read: the value in the largest print of the title block's ruled cells
    that name no field (their labels, in small print, lost or misread: "Ttlse" for
    "Titel"), which only the set can make the title."""
    unnamed = [
        c
        for c in cells
        if c.field is None
        and c.value_ids
        and view.in_zone(c.box)
        and view.words[c.value_ids[0]].origin == "ocr"
        and not excluded.intersection(c.value_ids)
        and not _is_contact_panel(c.value)
        and not _count_like(c.value)
    ]
    for cell in sorted(unnamed, key=lambda c: -c.value_size):
        inside = _value_lines(view, cell)
        if any(is_label(run.text) for run in inside) or ":" in cell.value:
            continue  # a label OCR read into its value's line (misread, "Titel igte:")
        found = _clean_title(view, _largest_value(cell, inside), number)
        if found[0] and reads_as_title(found[0]):
            return found
    return None, ()


def _count_like(text: str) -> bool:
    """Whether a text reads as a sheet count in any language ("Blad 1 av 4", "第3张 共4张",
    "3/4"): two numbers or more, and no more words without digits than numbers."""
    numbers = len(re.findall(r"\d+", text))
    worded = sum(1 for word in text.split() if not any(ch.isdigit() for ch in word))
    return numbers >= 2 and worded <= numbers


def _with_number(view: View, number: _Number) -> tuple[str | None, tuple[int, ...]]:
    """ "A101.01 – FLOOR PLAN": a title following the number on its line after a dash."""
    last = [k for k, i in enumerate(number.run.ids) if i in number.ids]
    after = number.run.ids[last[-1] + 1 :] if last else ()
    if after and _SEPARATOR.match(view.words[after[0]].text):
        return _clean_title(view, after[1:], number)
    return None, ()


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
        and r.size * STACK_SIZE_RATIO >= number.run.size
    ]
    worded = [r for r in above if _has_words(r) and r.size > number.run.size]
    if not worded:
        return None, ()
    # The lowest line of the largest print: the stack is gathered upwards from it, its
    # lines (an "OF" between a map's name and its kind) no smaller than about the count.
    head = max(worded, key=lambda r: (round(r.size), r.box.y1))
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


def _main_heading(
    view: View, labels: list[_Label], excluded: set[int]
) -> tuple[str | None, tuple[int, ...]]:
    """A numbered sheet whose title block has no title: its main heading, the largest line
    of words it prints outside its title block (clearly larger than its ordinary text)."""
    floor = BIG_RATIO * view.typical_size
    headings = [
        r
        for r in view.aligned
        if r.size >= floor
        and len(r.text.split()) >= 2
        and _has_words(r)
        and not _is_label_run(r, labels)
        and not _is_view_title(r.text)
        and not excluded.intersection(r.ids)
    ]
    if not headings:
        return None, ()
    # The drawing's own heading before a banner its title block prints on every sheet.
    top = max(headings, key=lambda r: (not view.in_zone(r.box), round(r.size, 1), -r.box.y0))
    # A heading stands alone at its size: lines as large elsewhere on the drawing are its
    # callouts, and none of them heads the sheet.
    if any(
        r.size * HEADING_ALONE >= top.size and not _stacked(r, top) and r.text != top.text
        for r in headings
        if r is not top and view.in_zone(r.box) == view.in_zone(top.box)
    ):
        return None, ()
    return _clean_title(view, top.ids, None)


# An e-mail address, a web address or a telephone number: a firm's panel prints them.
_CONTACT = re.compile(
    r"[\w.+-]+@[\w-]+\.[\w.]+|\bwww\.|https?://|\b(?:tel|phone|fax)\b|\+\d[\d ()-]{6,}",
    re.IGNORECASE,
)


def _is_contact_panel(text: str) -> bool:
    """Whether a cell's text gives a way to reach someone: a firm's (or a person's) panel,
    whose name is never the sheet's title."""
    return bool(_CONTACT.search(text))


_RATIO = re.compile(r"(?<![\w.])1\s*[:/]\s*\d{1,4}(?![\w.])")


def _is_view_title(text: str) -> bool:
    """A drawing's view title, printed with its scale ("FOUNDATION PLAN SCALE 1:200",
    "План кровли М 1:100"): it names one view, not the sheet."""
    if _RATIO.search(text):
        return True
    return any("scale" in label_fields(w) for w in text.split() if len(w.strip(":")) >= 4)


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
            and not set(number.ids).intersection(run.ids)
            and not _is_label_run(run, labels)
            and not excluded.intersection(run.ids)
            and _has_words(run)
            and not _after_label(view, run)
        )

    x0, y0, x1, y1 = number.run.box
    cell = view.cell(number.box.centre)
    if cell:
        for box in (cell, view.cell_above(cell)):
            inside = [r for r in view.runs if box and box.contains(r.box.centre) and usable(r)]
            if inside:
                return _clean_title(view, _stack(inside, inside), number)
    h, w = y1 - y0, x1 - x0
    rows = [
        r
        for r in view.runs_between(y0 - h - view.tallest, y1 + h)
        if _overlap(r.box.y0, r.box.y1, y0 - h, y1 + h) > 0 and usable(r)
    ]
    # Above or below the number in its column; failing that, just left of it.
    near = [r for r in rows if _overlap(r.box.x0, r.box.x1, x0, x1) > 0] or [
        r for r in rows if x0 - w <= r.box.x1 <= x0 and r.box.y0 < y1
    ]
    if not near:
        # Nothing right beside it: the largest text a little further up its column.
        near = [
            r
            for r in view.runs
            if y0 - 3 * h <= r.box.y1 <= y0
            and _overlap(r.box.x0, r.box.x1, x0, x1) > 0
            and usable(r)
        ]
    if near:
        return _clean_title(view, _stack(near, [r for r in view.runs if usable(r)]), number)

    def other_field(run: Run) -> bool:
        return _is_label_run(run, labels) or bool(excluded.intersection(run.ids))

    return _clean_title(view, _left_block(view, number, usable, other_field), number)


def _left_block(
    view: View,
    number: _Number,
    usable: Callable[[Run], bool],
    other_field: Callable[[Run], bool],
) -> tuple[int, ...]:
    """An unruled title column left of a narrow number box: of the stacks of lines there
    (a project's title over the sheet's), the lowest is the sheet's title. Another field
    printed level with the number, left of it (a project's number in the box beside the
    sheet's), closes the column: what lies beyond it is the drawing's."""
    box = number.box
    h = max(box.height, number.size)
    reach = REACH_RIGHT * number.size
    fence = max(
        (
            r.box.x1
            for r in view.runs_between(box.y0 - h, box.y1)
            if r.box.x1 <= box.x0
            and _overlap(r.box.y0, r.box.y1, box.y0, box.y1) > 0
            and other_field(r)
        ),
        default=-math.inf,
    )
    pool = [
        r
        for r in view.runs_between(box.y0 - 3 * h, box.y1 + 5 * h)
        if fence <= r.box.x0
        and r.box.x1 <= box.x0
        and box.x0 - r.box.x1 <= reach
        and r.box.y1 <= box.y1 + 5 * h
        and r.size >= TITLE_SHARE * number.size
        and usable(r)
    ]
    stacks: list[list[Run]] = []
    for run in sorted(pool, key=lambda r: r.box.y0):
        home = next((st for st in stacks if any(_stacked(run, m) for m in st)), None)
        if home is None:
            stacks.append([run])
        else:
            home.append(run)
    if not stacks:
        return ()
    lowest = max(stacks, key=lambda st: (max(r.box.y1 for r in st), -min(r.box.x0 for r in st)))
    return tuple(i for run in sorted(lowest, key=lambda r: (r.box.y0, r.box.x0)) for i in run.ids)


def _has_words(run: Run) -> bool:
    """A run with at least three letters (a Chinese or Japanese character counting two:
    "東側" is a word) that is not a date, a lone number, an issue status ("CONSTRUCTION
    DOCUMENTS", "NOT FOR CONSTRUCTION"), a copyright line or a scale ("AS INDICATED")."""
    return _words_like(run.text)


@lru_cache(maxsize=4096)
def _words_like(text: str) -> bool:
    return (
        sum(_letter_weight(ch) for ch in text if ch.isalpha()) >= 3
        and not is_sheet_id(text)
        and not _is_status(text)
        and not is_scale(text)
        and not is_firm_name(text)
        and not is_count_line(text)
    )


def _letter_weight(ch: str) -> int:
    """A letter's weight in a word: a full-width character (a Chinese or Japanese one) is a
    syllable or a word, two."""
    return 2 if is_wide(ch) else 1


# The words of an issue status printed in a title block, and those that make one.
_STATUS_WORDS = frozenset(
    "CONSTRUCTION DOCUMENTS DOCUMENT ISSUED ISSUE FOR NOT PRELIMINARY PERMIT BID SET TENDER "
    "REVIEW APPROVAL RECORD DRAWINGS FINAL DRAFT PROGRESS CD DD SD PRICING PLANNING "
    "INFORMATION ONLY CONSTRUCTION".split()
)
_STATUS_CORE = frozenset(
    "CONSTRUCTION PERMIT TENDER BID REVIEW PRELIMINARY RECORD APPROVAL PRICING DOCUMENTS".split()
)


def _is_status(text: str) -> bool:
    """An issue status, or a copyright line: print every sheet carries, never its title."""
    if "©" in text or "COPYRIGHT" in text.upper():
        return True
    words = [w.strip(".,:;%()").upper() for w in text.split()]
    words = [w for w in words if w and not w.isdigit()]
    return bool(words) and set(words) <= _STATUS_WORDS and bool(_STATUS_CORE & set(words))


def _stack(seeds: list[Run], pool: list[Run]) -> tuple[int, ...]:
    """The word ids of the largest seed and the lines of ``pool`` stacked with it: similar
    size, close above or below, overlapping it across; top to bottom."""
    if not seeds:
        return ()
    top = max(seeds, key=lambda r: r.size)
    stack = [top]
    share = 1 / OCR_SIZE_RATIO if read_by_ocr(top) else TITLE_SHARE
    rest = [r for r in pool if r is not top and r.size >= share * top.size]
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
    if high / low > (OCR_SIZE_RATIO if read_by_ocr(a) or read_by_ocr(b) else STACK_SIZE_RATIO):
        return False
    gap = max(a.box.y0 - b.box.y1, b.box.y0 - a.box.y1)
    return gap <= STACK_GAP * max(a.box.height, b.box.height) and a.box.overlap_x(b.box) > 0


def _clean_title(
    view: View, ids: tuple[int, ...], number: _Number | None
) -> tuple[str | None, tuple[int, ...]]:
    """A title's words as one line: the number and the colon before it taken out ("STORE
    PLAN: ST04" → "STORE PLAN"), CAD text codes ("%%U") and separators left dangling
    stripped."""
    if number is not None:
        ids = tuple(i for i in ids if i not in number.ids)
    texts = [view.words[i].text for i in ids]
    text = " ".join(without_cad_codes(" ".join(texts)).split())
    if number is not None:
        text = re.sub(r"\s*:\s*(?=[-\u2010-\u2015\u2212]|$)", " ", text)
    text = text.strip(" :-\u2010\u2011\u2012\u2013\u2014|")
    if any(view.words[i].origin == "ocr" for i in ids) and text.count("[") != text.count("]"):
        # A cell's wall OCR read as a bracket glued to a word ("[Detaljer"): no partner.
        text = " ".join(word.strip("[]") for word in text.split())
    text = " ".join(text.split())
    if sum(ch.isalpha() for ch in text) < 2 or len(text.split()) > MAX_TITLE_WORDS:
        return None, ()  # no words, or a paragraph (a note, a certificate), not a title
    return text, ids
