"""Sheet identity decided across the set, from the pages' ``SheetReading`` alone (pure).

A page read alone can be ambiguous; the set is not. In order:

- **the title block is a template**: the sheets of a set print their number in the same
  field at the same place. A page whose own reading is ambiguous (no number, a number no
  label vouches for, text every sheet prints alike, or only its position "SHEET 2") takes
  the candidate standing where the confident pages print theirs. Text printed alike on
  every sheet (a project number, a firm) is no sheet's number; where every sheet carries
  one drawing number beside "SHEET n OF m", a sheet is that drawing number with its
  position. Sets that mix title blocks (consultants' sheets) form one template per place.
- **the numbering scheme**: a weakly vouched number that breaks the shape the rest of the
  set shares loses to a candidate of the page that fits it; an OCR'd number whose first
  letter is the cell's wall ("IS1.04" where every other sheet's starts "S1.0") loses it.
- **the file's hints** (bookmarks, page labels) break ties between candidates the page
  prints; they never override what the sheet prints, nor name a number it does not print.
- **the drawing index**: a page whose number the index does not list, or that has none,
  takes an unclaimed indexed number it prints large and alone in its title block.

Each decision names its source, and the page keeps its candidates, so a reviewer sees why.
"""

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Literal

from shared.pagetext import Box, normalize
from shared.sheet.index import expand_index
from shared.sheet.reader import OCR_SURE, WALL_LETTERS, Evidence, reads_as_title
from shared.sheet.reading import Candidate, CellReading, PlacedGuess, SheetReading
from shared.sheet.tokens import sheet_key

Source = Literal["title_block", "set_template", "scheme", "bookmark", "drawing_index"]

# Candidates of different pages stand at one place when their centres are this close (PDF
# points), or this share of the sheet's width, whichever is larger.
PLACE_TOLERANCE = 36.0
PLACE_SHARE = 0.02
# A place is the set's template when at least this many confident pages print there.
TEMPLATE_PAGES = 2
# A scheme is a shape at least this share of the numbered pages share (and two pages).
SCHEME_SHARE = 0.6
# Text printed alike on at least this many pages, and on every page that prints it, is the
# set's, not a sheet's.
CONSTANT_PAGES = 3
# OCR's titles by size alone stand for a set's title slot where at least this many sheets
# print theirs at one place, and not all alike (one text everywhere is a banner's).
GUESS_PAGES = 3


@dataclass(frozen=True)
class Decision:
    """A page's identity as the set decides it, and why."""

    number: str | None
    title: str | None
    source: Source | None
    why: str
    number_words: tuple[int, ...] = ()
    title_words: tuple[int, ...] = ()
    titled_by_place: bool = False  # the title OCR gave by size, vouched for by the set


def decide_set(readings: Mapping[int, SheetReading]) -> dict[int, Decision]:
    """Page number → the page's decided sheet number and title, with the source."""
    decided = {n: _own(r) for n, r in readings.items()}
    constant = printed_alike(readings)
    width = max((c.box.x1 for r in readings.values() for c in r.candidates if c.box), default=0)
    tolerance = max(PLACE_TOLERANCE, PLACE_SHARE * width)
    places = _template(readings, constant, tolerance)
    for n, reading in readings.items():
        if (d := _by_template(reading, decided[n], places, constant, tolerance)) is not None:
            decided[n] = d
    scheme = _scheme([d.number for d in decided.values() if d.number])
    for n, reading in readings.items():
        if (d := _by_scheme(reading, decided[n], scheme, constant)) is not None:
            decided[n] = d
    _off_cell_walls(readings, decided)
    _ocr_capitals(readings, decided)
    for n, reading in readings.items():
        if (d := _by_hints(reading, decided[n])) is not None:
            decided[n] = d
    _by_index(readings, decided)
    title_cells = _title_cells(readings, decided)
    _guessed_titles(readings, decided, title_cells, tolerance)
    _titles_in_unlabelled_cells(readings, decided, title_cells)
    return decided


def _own(reading: SheetReading) -> Decision:
    if reading.number is None:
        title = reading.title
        return Decision(
            None,
            title.text if title else None,
            None,
            "the page prints no sheet number",
            title_words=tuple(title.word_ids) if title else (),
        )
    chosen = reading.chosen_number
    return Decision(
        reading.number.text,
        reading.sheet_title,
        "title_block",
        chosen.why if chosen else "read from the page's title block",
        tuple(reading.number.word_ids),
        tuple(reading.title.word_ids) if reading.title else (),
    )


def _take(candidate: Candidate, source: Source, why: str, reading: SheetReading) -> Decision:
    title = candidate.title or reading.title
    return Decision(
        candidate.text,
        title.text if title else None,
        source,
        why,
        tuple(candidate.word_ids),
        tuple(title.word_ids) if title else (),
    )


# --- titles OCR gave by size alone -------------------------------------------------------


def _guessed_titles(
    readings: Mapping[int, SheetReading],
    decided: dict[int, Decision],
    title_cells: dict[int, "_TitleCell"],
    tolerance: float,
) -> None:
    """A sheet without a title takes the one OCR gave it by size alone where the set shows
    that place is its title's: at least ``GUESS_PAGES`` sheets print their guesses there
    (their corners within ``tolerance`` and their boxes overlapping: the line over a title
    is another place), in more than one wording (a wording whose words
    another holds is that one with words OCR lost). A guess that is part of a wording more
    sheets print there was cut short (OCR lost a line) and is not taken."""
    guesses = {
        n: g for n, r in readings.items() if (g := r.title_guess) and decided[n].title is None
    }
    for n, guess in guesses.items():
        corner = (guess.box.x0, guess.box.y0)
        there = [
            normalize(g.text)
            for g in guesses.values()
            if _near((g.box.x0, g.box.y0), corner, tolerance)
            and g.box.overlap_x(guess.box) > 0
            and g.box.overlap_y(guess.box) > 0
        ]
        own = normalize(guess.text)
        cut = any(own in other and there.count(other) > there.count(own) for other in there)
        if len(there) >= GUESS_PAGES and _wordings(there) > 1 and not cut:
            why = f"the title where {len(there)} sheets of the set print theirs"
        elif titled := _titled_there(readings[n], guess, title_cells, tolerance):
            why = (
                f"the value of the cell where {titled} other sheets of the set print their "
                "title under its label (this sheet's label not read)"
            )
        else:
            continue
        decided[n] = replace(
            decided[n],
            title=guess.text,
            title_words=tuple(guess.word_ids),
            why=why,
            titled_by_place=True,
        )


def _titles_in_unlabelled_cells(
    readings: Mapping[int, SheetReading],
    decided: dict[int, Decision],
    title_cells: dict[int, "_TitleCell"],
) -> None:
    """A sheet still without a title takes the value of its cell where the set prints its
    titles under their label (``_unlabelled_title_cell``)."""
    for n, reading in readings.items():
        if decided[n].title is None and (found := _unlabelled_title_cell(reading, title_cells)):
            cell, titled = found
            decided[n] = replace(
                decided[n],
                title=cell.value,
                title_words=tuple(cell.value_ids),
                why=f"the value of the cell where {titled} other sheets of the set print their "
                "title, all the cell holds, under its label (this sheet's label not read)",
                titled_by_place=True,
            )


@dataclass(frozen=True)
class _TitleCell:
    box: Box
    whole: bool  # the title is all the cell holds


def _title_cells(
    readings: Mapping[int, SheetReading], decided: dict[int, Decision]
) -> dict[int, _TitleCell]:
    """Page → the labelled title cell its own title was read from."""
    cells = {}
    for n, reading in readings.items():
        title = reading.title
        if title is None or decided[n].title != title.text:
            continue
        ids = set(title.word_ids)
        cell = next(
            (c for c in reading.cells if c.field == "title" and ids <= set(c.value_ids)), None
        )
        if cell is not None:
            cells[n] = _TitleCell(cell.box, ids == set(cell.value_ids))
    return cells


# A cell is the one other sheets print their title in where the two share this much of
# the larger one's area.
SAME_CELL = 0.8


def _unlabelled_title_cell(
    reading: SheetReading, title_cells: dict[int, _TitleCell]
) -> tuple[CellReading, int] | None:
    """On a page OCR read, the cell whose label OCR did not read (or misread: it names no
    field) where another sheet prints its title under its label, all the cell holds (a cell
    of a title and its scale would give both), and how many do: where OCR was sure of every
    word, and the value reads as a title (no label, banner, number or count). One sheet is
    enough: the cell is one of the set's title block, and what the page's cell holds is its
    own printed text."""
    for cell in reading.cells:
        sure = cell.value_confidence is not None and cell.value_confidence >= OCR_SURE
        if cell.field is not None or not sure or not reads_as_title(cell.value):
            continue
        titled = sum(1 for t in title_cells.values() if t.whole and _same_cell(t.box, cell.box))
        if titled:
            return cell, titled
    return None


def _same_cell(a: Box, b: Box) -> bool:
    shared = max(0.0, a.overlap_x(b)) * max(0.0, a.overlap_y(b))
    return shared >= SAME_CELL * max(a.width * a.height, b.width * b.height)


def _titled_there(
    reading: SheetReading, guess: PlacedGuess, title_cells: dict[int, _TitleCell], tolerance: float
) -> int:
    """How many other sheets print their title under its label in the cell holding this
    sheet's guess (0 where fewer than ``TEMPLATE_PAGES`` do, where OCR was unsure of a word
    of the guess: the place vouches for where a title is, not for how it was read; or where
    the guess is only part of what the cell holds: a title's last line)."""
    if guess.confidence is not None and guess.confidence < OCR_SURE:
        return 0
    cell = next((c for c in reading.cells if c.box.contains(guess.box.centre)), None)
    if cell is None or not set(cell.value_ids) <= set(guess.word_ids):
        return 0
    here = (cell.box.centre.x, cell.box.centre.y)
    titled = sum(
        1 for t in title_cells.values() if _near((t.box.centre.x, t.box.centre.y), here, tolerance)
    )
    return titled if titled >= TEMPLATE_PAGES else 0


def _wordings(texts: list[str]) -> int:
    """How many wordings the texts are, a text whose words another's hold counting as that
    one (the same line with words OCR lost, not another title)."""
    words = {frozenset(text.split()) for text in texts}
    return sum(1 for w in words if not any(w < other for other in words))


# --- text the whole set prints alike --------------------------------------------------------


def printed_alike(readings: Mapping[int, SheetReading]) -> set[str]:
    """The keys of candidate texts printed on every page of the set (of three or more)."""
    if len(readings) < CONSTANT_PAGES:
        return set()
    counts = Counter(
        key for r in readings.values() for key in {sheet_key(c.text) for c in r.candidates}
    )
    return {key for key, n in counts.items() if n == len(readings)}


# --- the template -------------------------------------------------------------------------


@dataclass
class _Place:
    centre: tuple[float, float]
    label: str | None
    pages: int


def _centre(box: Box | None) -> tuple[float, float] | None:
    return (box.centre.x, box.centre.y) if box else None


def _near(a: tuple[float, float], b: tuple[float, float], tolerance: float) -> bool:
    return abs(a[0] - b[0]) <= tolerance and abs(a[1] - b[1]) <= tolerance


def confident_number(reading: SheetReading, constant: set[str]) -> Candidate | None:
    """The page's chosen number when a label vouches for it and the set does not print it
    on every sheet."""
    chosen = reading.chosen_number
    if chosen is None or chosen.evidence < Evidence.LABEL or sheet_key(chosen.text) in constant:
        return None
    return chosen


def _template(
    readings: Mapping[int, SheetReading], constant: set[str], tolerance: float
) -> list[_Place]:
    """The places where confident pages print their numbers, most pages first."""
    places: list[_Place] = []
    for reading in readings.values():
        chosen = confident_number(reading, constant)
        centre = _centre(chosen.box) if chosen else None
        if chosen is None or centre is None:
            continue
        place = next(
            (p for p in places if p.label == chosen.label and _near(p.centre, centre, tolerance)),
            None,
        )
        if place:
            place.pages += 1
        else:
            places.append(_Place(centre, chosen.label, 1))
    return sorted((p for p in places if p.pages >= TEMPLATE_PAGES), key=lambda p: -p.pages)


def _by_template(
    reading: SheetReading,
    current: Decision,
    places: list[_Place],
    constant: set[str],
    tolerance: float,
) -> Decision | None:
    confident = confident_number(reading, constant)
    # A sheet's bare position ("Blad 2") is its number only where the set prints none:
    # where other sheets print theirs in a number field, this sheet's stands there too, and
    # its label was lost (small print OCR did not read), not absent.
    position = confident is not None and _bare_position(confident)
    # A label whose field reads two values (OCR ran a revision's "P03" into the number's
    # row: "P03 Änd. Sachnummer E-OG1-101") leaves the page as ambiguous as none.
    tied = confident is not None and _tied(reading, confident)
    if confident is not None and not position and not tied:
        return None
    for place in places:
        if position and place.label in _POSITION_LABELS:
            continue
        at = [
            c
            for c in reading.candidates
            if (centre := _centre(c.box))
            and _near(centre, place.centre, tolerance)
            and sheet_key(c.text) not in constant
            and (c.label == place.label or c.evidence >= Evidence.LARGEST or position)
        ]
        if at:
            best = max(at, key=lambda c: (c.label == place.label, c.score))
            if current.number and sheet_key(best.text) == sheet_key(current.number):
                return None
            why = (
                f"the set's other sheets ({place.pages}) print their number here"
                + (f", in the field {place.label!r}" if place.label else "")
                + (
                    f"; this page's own number {current.number} is only its position"
                    if position
                    else f"; this page's label {confident.label!r} reads two values"
                    if tied and confident is not None
                    else f"; this page's own reading was ambiguous ({current.why})"
                )
            )
            return _take(best, "set_template", why, reading)
    if current.number and sheet_key(current.number) in constant:
        return _position(reading, current) or _not_constant(reading, current, constant)
    return None


def _tied(reading: SheetReading, chosen: Candidate) -> bool:
    """Whether another value of the chosen number's label is vouched for as strongly."""
    return any(
        c.label == chosen.label
        and c.evidence == chosen.evidence
        and sheet_key(c.text) != sheet_key(chosen.text)
        for c in reading.candidates
    )


def _not_constant(reading: SheetReading, current: Decision, constant: set[str]) -> Decision | None:
    """A number every sheet prints alike is the set's (a project or contract number): the
    page's best labelled candidate that differs from sheet to sheet is its own."""
    varying = [
        c
        for c in reading.candidates
        if c.evidence >= Evidence.LABEL and sheet_key(c.text) not in constant
    ]
    if not varying:
        return None
    best = max(varying, key=lambda c: c.score)
    why = (
        f"every sheet of the set prints {current.number}: the set's, not a sheet's; "
        f"{best.text} is this sheet's ({best.why.split(': ', 1)[-1]})"
    )
    return _take(best, "set_template", why, reading)


# Bare labels of a sheet's position in a drawing ("SHEET 3 OF 9", "Blatt 3", "Лист 3").
_POSITION_LABELS = frozenset(
    {"SHEET", "SHT", "BLATT", "BLAD", "PLANCHE", "FEUILLE", "HOJA", "LAMINA", "ЛИСТ"}
)


def _bare_position(candidate: Candidate) -> bool:
    """Whether a number is only the sheet's position, its digits under a position label."""
    return candidate.label in _POSITION_LABELS and candidate.text.isdigit()


def _position(reading: SheetReading, current: Decision) -> Decision | None:
    """One drawing number on every sheet, and beside it the sheet's position ("SHEET 3 OF
    9"): the sheet is the drawing number with its position."""
    position = next(
        (c for c in reading.candidates if c.label in _POSITION_LABELS and c.text.isdigit()),
        None,
    )
    if position is None or current.number is None:
        return None
    # The count the sheet prints ("SHEET 3 OF 9"), never the pages this set happens to hold.
    of = f" of {position.of}" if position.of else ""
    return Decision(
        f"{current.number} ({position.text}{of})",
        current.title,
        "set_template",
        f"every sheet prints {current.number}: the set numbers its sheets as one drawing, "
        f"told apart by their position (sheet {position.text})",
        (*current.number_words, *position.word_ids),
        current.title_words,
    )


# --- the numbering scheme -----------------------------------------------------------------


def shape(number: str) -> str:
    """A number's shape: runs of letters as A, digits as 9, separators kept
    (``S-101`` → ``A-9``, ``A101.01`` → ``A9.9``)."""
    folded = re.sub(r"[A-Za-z]+", "A", number.upper())
    return re.sub(r"\d+", "9", folded).replace(" ", "")


def _scheme(numbers: list[str]) -> str | None:
    if len(numbers) < 2:
        return None
    found, n = Counter(shape(x) for x in numbers).most_common(1)[0]
    return found if n >= 2 and n >= SCHEME_SHARE * len(numbers) else None


def _by_scheme(
    reading: SheetReading, current: Decision, scheme: str | None, constant: set[str]
) -> Decision | None:
    if scheme is None or (current.number and shape(current.number) == scheme):
        return None
    chosen = reading.chosen_number
    weak = chosen is None or chosen.evidence < Evidence.LABEL_IN_TITLE_BLOCK
    if current.source not in ("title_block", None) or not weak:
        return None
    fits = [
        c
        for c in reading.candidates
        if shape(c.text) == scheme
        and c.evidence >= Evidence.LARGEST
        and sheet_key(c.text) not in constant
    ]
    if len({sheet_key(c.text) for c in fits}) != 1:
        return None
    best = max(fits, key=lambda c: c.score)
    why = f"the set's numbers share the shape {scheme!r}" + (
        f", which {current.number} breaks" if current.number else ""
    )
    return _take(best, "scheme", why, reading)


# The start every other sheet's number shares, at least this long, says where numbers begin.
_SHARED_START = 2


def _off_cell_walls(readings: Mapping[int, SheetReading], decided: dict[int, Decision]) -> None:
    """An OCR'd number whose first letter is a wall's stroke ("IS1.04" where every other
    sheet's number starts "S1.0"): without it, it starts as all the set's numbers do, and is
    no other sheet's number. The letter is the cell's wall the number's value touches."""
    numbers = {n: d.number for n, d in decided.items() if d.number}
    taken = {sheet_key(x) for x in numbers.values()}
    for n, number in numbers.items():
        others = [x for m, x in numbers.items() if m != n]
        if not readings[n].ocr or number[0] not in WALL_LETTERS or len(others) < TEMPLATE_PAGES:
            continue
        start = _shared_start(others)
        rest = number[1:]
        if len(start) >= _SHARED_START and rest.startswith(start) and sheet_key(rest) not in taken:
            why = (
                f"every other sheet's number starts {start!r}: OCR's {number} is {rest}, the "
                "cell's wall read as its first letter"
            )
            decided[n] = replace(decided[n], number=rest, source="scheme", why=why)
            taken.add(sheet_key(rest))


# Letters whose small form is their capital made smaller: OCR tells them apart by size
# alone, and reads a capital as small where a number stands alone ("v-101" for "V-101").
_LOOKALIKE_SMALL = frozenset("cosvwxz")


def _ocr_capitals(readings: Mapping[int, SheetReading], decided: dict[int, Decision]) -> None:
    """An OCR'd number whose only small letters look like their capitals ("v-101"), where
    every other sheet's number prints its letters as capitals: the capitals."""
    numbers = {n: d.number for n, d in decided.items() if d.number}
    for n, number in numbers.items():
        small = {ch for ch in number if ch.islower()}
        if not readings[n].ocr or not small or not small <= _LOOKALIKE_SMALL:
            continue
        others = [x for m, x in numbers.items() if m != n]  # a big set's pages: few get here
        if (
            len(others) < TEMPLATE_PAGES
            or any(x != x.upper() for x in others)
            or not all(any(ch.isalpha() for ch in x) for x in others)
        ):
            continue
        why = (
            f"every other sheet's number prints its letters as capitals: OCR's {number} is "
            f"{number.upper()}, its small letters the capitals' shapes"
        )
        decided[n] = replace(decided[n], number=number.upper(), source="scheme", why=why)


def _shared_start(texts: list[str]) -> str:
    """The characters every text starts with (the first and last in order share the rest's)."""
    first, last = min(texts), max(texts)
    n = 0
    while n < min(len(first), len(last)) and first[n] == last[n]:
        n += 1
    return first[:n]


# --- bookmarks and page labels -------------------------------------------------------------


def _hint_keys(reading: SheetReading) -> set[str]:
    texts = [*reading.bookmarks, *([reading.page_label] if reading.page_label else [])]
    keys = set()
    for text in texts:
        keys.add(sheet_key(text))
        keys.update(sheet_key(part) for part in re.split(r"[\s_/|,;]+", text) if part)
    return keys


def _by_hints(reading: SheetReading, current: Decision) -> Decision | None:
    """A tie the page leaves open (no number chosen, or the best two of equal evidence)
    broken by the candidate the file's bookmarks or page label name."""
    keys = _hint_keys(reading)
    if not keys or current.source not in ("title_block", None):
        return None
    named = [c for c in reading.candidates if sheet_key(c.text) in keys and c.evidence > 0]
    if not named:
        return None
    ranked = sorted(reading.candidates, key=lambda c: -c.score)
    top = ranked[0].evidence if ranked else 0
    tied = current.number is None or sum(c.evidence == top for c in ranked) > 1
    best = max(named, key=lambda c: c.score)
    if not tied or best.evidence < top:
        return None
    if current.number and sheet_key(best.text) == sheet_key(current.number):
        return None
    return _take(
        best,
        "bookmark",
        "the page prints more than one candidate of equal standing; the file's bookmark or "
        f"page label names {best.text}",
        reading,
    )


# --- the drawing index ----------------------------------------------------------------------


def _by_index(readings: Mapping[int, SheetReading], decided: dict[int, Decision]) -> None:
    """A page whose number the index does not list (or that has none) takes the one
    unclaimed indexed number it prints alone in its title block."""
    rows = [row for r in readings.values() for row in r.index_rows]
    if not rows:
        return
    numbers = [d.number for d in decided.values() if d.number]
    for r in readings.values():
        numbers += [c.text for c in r.candidates]
    indexed = {sheet_key(number) for number, _ in expand_index(rows, numbers)}
    claimed = {sheet_key(d.number) for d in decided.values() if d.number}
    for n, reading in sorted(readings.items()):
        current = decided[n]
        if current.number and sheet_key(current.number) in indexed:
            continue
        found: dict[str, Candidate] = {}
        for c in sorted(reading.candidates, key=lambda c: -c.score):
            if sheet_key(c.text) in indexed and sheet_key(c.text) not in claimed:
                found.setdefault(sheet_key(c.text), c)
        if len(found) != 1:
            continue
        [(key, candidate)] = found.items()
        claimed.add(key)
        decided[n] = _take(
            candidate,
            "drawing_index",
            f"the set's drawing index lists {candidate.text}, which the page prints in its "
            "title block",
            reading,
        )
