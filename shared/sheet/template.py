"""Where the set's title block prints the sheet number, for reading a page again there (pure).

The sheets of a set print their number in one cell of one title block. Once the confident
pages (a label vouches for their number, or it has the shape the set's numbers share; and
it differs from sheet to sheet) agree on where that cell is, a page whose own reading came
back without a number is read again in that cell, closer
(``services.extract.reading.reread``): the ruled cell the confident pages' number stands
in, whole, where they found one (its label, printed small and turned up the cell's side,
reaches past the value), and the value's reach around it. Where a single sheet read the
label its number stands under (the others' small print lost to OCR), that sheet names the
cell, and a number read there counts only where the page's own label vouches for it. The
template only says where to look: whatever is found there is still the page's own printed
text, read by the page's own reader, with its word ids.
"""

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from shared.pagetext import Box
from shared.sheet.decide import (
    PLACE_SHARE,
    PLACE_TOLERANCE,
    TEMPLATE_PAGES,
    confident_number,
    printed_alike,
    shape,
)
from shared.sheet.reader import OCR_SURE, Evidence
from shared.sheet.reading import Candidate, SheetReading
from shared.sheet.tokens import sheet_key

# The cell read again: the confident pages' number boxes at the place, grown across by this
# many of their heights (the label stacked over or under the value, the cell's walls) and
# along by this many of their widths (a label before the value on its line).
GROW_ACROSS = 2.0
GROW_ALONG = 2.0
# A cell is at most this long on either side (PDF points, 6 in): one cell is read closer,
# never a stretch of the sheet.
MAX_CELL_SIDE = 432.0


@dataclass(frozen=True)
class NumberCell:
    """Where the set's confident pages print their sheet number: the cell to read again, in
    the displayed page's frame (PDF points), the label they print it under, and how many
    pages agree."""

    box: Box
    label: str | None
    pages: int


def number_cells(readings: Mapping[int, SheetReading]) -> list[NumberCell]:
    """The cells where at least ``TEMPLATE_PAGES`` confident pages of the set print their
    number (one per title block the set uses), most pages first; where the set has one
    confident page only, and a label in its title block vouches for its number, that
    page's cell (``pages`` 1: a number read there must be vouched by the page's own label).
    A page is confident where a label vouches for its number (as the set's decision has
    it), or where its number, chosen for its print alone, has the shape the set's numbers
    share (``S1.02``, ``S1.03``: a scheme the page agrees with); a number every sheet prints
    alike is none."""
    constant = printed_alike(readings)
    scheme = _scheme(readings, constant)
    confident = [
        (reading, chosen)
        for reading in readings.values()
        if (chosen := _confident(reading, constant, scheme)) is not None and chosen.box
    ]
    if any(chosen.of is None for _, chosen in confident):
        # Where some pages read a number field, the others' positions in a count ("SHEET 1
        # OF 4", their number cell's label lost) say nothing of where the number is.
        confident = [(reading, chosen) for reading, chosen in confident if chosen.of is None]
    boxes = [(chosen.box, chosen.label, reading) for reading, chosen in confident if chosen.box]
    width = max((box.x1 for box, _, _ in boxes), default=0.0)
    tolerance = max(PLACE_TOLERANCE, PLACE_SHARE * width)
    places: list[_Place] = []
    for box, label, reading in boxes:
        # A number the set's scheme vouches for, its label lost, stands in the field of a
        # labelled one printed at its place.
        place = next(
            (
                p
                for p in places
                if (p.label == label or None in (p.label, label))
                and _near(p.boxes[0], box, tolerance)
            ),
            None,
        )
        if place is None:
            place = _Place(label)
            places.append(place)
        place.label = place.label or label
        place.boxes.append(box)
        place.ruled.extend(_ruled_cell(reading, box))
    cells = [
        NumberCell(Box.union([_grown(Box.union(p.boxes)), *p.ruled]), p.label, len(p.boxes))
        for p in places
        if len(p.boxes) >= TEMPLATE_PAGES
    ]
    if not cells and len(confident) == 1 and labelled(confident[0][1]):
        # One sheet whose title block labels its number, the other sheets' labels lost
        # (small print OCR did not read): that sheet says where to look; what a page reads
        # there counts only where its own label vouches for it (``labelled``).
        [(box, label, reading)] = boxes
        cells = [NumberCell(Box.union([_grown(box), *_ruled_cell(reading, box)]), label, 1)]
    return sorted(cells, key=lambda c: -c.pages)


@dataclass
class _Place:
    """Where confident pages print their number: the label, their number boxes and the
    ruled cells those stand in."""

    label: str | None
    boxes: list[Box] = field(default_factory=list)
    ruled: list[Box] = field(default_factory=list)


def _ruled_cell(reading: SheetReading, number: Box) -> list[Box]:
    """The ruled cell of the page's title block its number stands in (none, or one no
    longer than ``MAX_CELL_SIDE``): read again whole, its label with it, printed small at
    the cell's edge and turned up its side past the value's reach."""
    cells = (cell.box for cell in reading.cells if cell.box.contains(number.centre))
    return [box for box in cells if max(box.width, box.height) <= MAX_CELL_SIDE][:1]


def labelled(number: Candidate | None) -> bool:
    """Whether a number candidate is the value of a label in its page's title block."""
    return number is not None and number.evidence >= Evidence.LABEL_IN_TITLE_BLOCK


def cells_to_reread(readings: Mapping[int, SheetReading]) -> dict[int, NumberCell]:
    """Page number → the cell to read again, for each page whose reading has no sheet number
    where the set's template names one (of the cells no longer than ``MAX_CELL_SIDE`` on
    either side): the one in the page's own title block where its reading found one (a set
    mixing title blocks, as consultants' sheets do, has a cell in each), else the one most
    pages agree on. A cell one page names is read on scanned pages only (their labels are
    what OCR loses): a text page's labels are in its text layer. A scanned page whose
    number no label vouches for, or that is only its position in a count, read outside the
    cell (a callout's "T11", "SHEET 1 OF 4", where OCR lost the cell's label), has the cell
    read too, and so has one whose number in the cell OCR was unsure of."""
    cells = [c for c in number_cells(readings) if max(c.box.width, c.box.height) <= MAX_CELL_SIDE]
    if not cells:
        return {}
    out = {}
    for n, reading in readings.items():
        cell = _in_region(cells, reading.region) or cells[0]
        missed = reading.number is None and (reading.ocr or cells[0].pages >= TEMPLATE_PAGES)
        if (
            missed
            or (reading.ocr and _unvouched(reading, cell.box) and not at_cell(reading, cell.box))
            or (reading.ocr and _doubted(reading) and at_cell(reading, cell.box))
        ):
            out[n] = cell
    return out


def _doubted(reading: SheetReading) -> bool:
    """Whether OCR was unsure of the page's number ("S0" at 0.79 for "S01")."""
    confidence = reading.number.confidence if reading.number else None
    return confidence is not None and confidence < OCR_SURE


def _unvouched(reading: SheetReading, cell: Box) -> bool:
    """Whether a page's chosen number stands on its size alone, with no label, or is only
    its position in a count ("SHEET 1 OF 4", where OCR lost the number cell's label) while
    nothing the page read stands in the cell (the set takes what does)."""
    number = reading.chosen_number
    if number is None:
        return False
    if number.of is not None:
        return not any(_stands_in(c, cell) for c in reading.candidates)
    return number.evidence <= Evidence.LARGEST


def _in_region(cells: list[NumberCell], region: Box | None) -> NumberCell | None:
    if region is None:
        return None
    return next((c for c in cells if region.contains(c.box.centre)), None)


def at_cell(reading: SheetReading, cell: Box) -> bool:
    """Whether a page's chosen number stands in ``cell`` (a number read elsewhere on the
    page is no reading of the cell)."""
    number = reading.chosen_number
    return number is not None and _stands_in(number, cell)


def _stands_in(candidate: Candidate, cell: Box) -> bool:
    return candidate.box is not None and cell.contains(candidate.box.centre)


def _scheme(readings: Mapping[int, SheetReading], constant: set[str]) -> str | None:
    """The shape most of the set's chosen numbers share, when at least two pages do."""
    shapes = Counter(
        shape(c.text)
        for r in readings.values()
        if (c := r.chosen_number) is not None and sheet_key(c.text) not in constant
    )
    found = shapes.most_common(1)
    return found[0][0] if found and found[0][1] >= TEMPLATE_PAGES else None


def _confident(reading: SheetReading, constant: set[str], scheme: str | None) -> Candidate | None:
    if (vouched := confident_number(reading, constant)) is not None:
        return vouched
    chosen = reading.chosen_number
    if chosen is None or sheet_key(chosen.text) in constant or chosen.evidence < Evidence.LARGEST:
        return None
    return chosen if scheme is not None and shape(chosen.text) == scheme else None


def _near(a: Box, b: Box, tolerance: float) -> bool:
    (ax, ay), (bx, by) = a.centre, b.centre
    return abs(ax - bx) <= tolerance and abs(ay - by) <= tolerance


def _grown(box: Box) -> Box:
    """The value's box grown to its cell, along the way it runs (across or down the page)."""
    w, h = box.width, box.height
    dx, dy = (GROW_ALONG * w, GROW_ACROSS * h) if w >= h else (GROW_ACROSS * w, GROW_ALONG * h)
    return Box(box.x0 - dx, box.y0 - dy, box.x1 + dx, box.y1 + dy)
