"""The title block read as ruled cells (``shared.sheet.cells``): a label at a cell's edge
(on top, turned 90° at its side, or in a cell of its own), its value all the rest of the
cell and nothing past its walls; and the reading that keeps the cells and says where its
title came from, or why there is none."""

from collections.abc import Callable

import pymupdf
import pytest

from services.extract.reading.textlayer import ocr_text_layer, read_text_layer
from shared.pagetext import Box, TextLayer, Word
from shared.sheet.cells import Cell, read_cells
from shared.sheet.fields import is_scale
from shared.sheet.labels import Field
from shared.sheet.reading import read_sheet
from shared.sheet.view import views

W, H = 1684, 1191  # A1 landscape


def _sheet() -> pymupdf.Page:
    page = pymupdf.open().new_page(width=W, height=H)
    page.draw_rect(pymupdf.Rect(20, 20, W - 20, H - 20), width=1.5)
    page.insert_text((100, 100), "GENERAL NOTES", fontsize=10)
    page.insert_text((100, 115), "1. ALL DIMENSIONS IN MILLIMETRES.", fontsize=8)
    return page


def _text(page: pymupdf.Page, x: float, y: float, value: str, size: float, turn: int = 0):
    if value.isascii():
        page.insert_text((x, y), value, fontsize=size, rotate=turn)
    else:
        page.insert_font(fontname="cjk", fontbuffer=pymupdf.Font("cjk").buffer)
        page.insert_text((x, y), value, fontsize=size, fontname="cjk", rotate=turn)


def _cells(page: pymupdf.Page) -> list[Cell]:
    layer = read_text_layer(page, 1, min_chars=1)
    return read_cells(next(iter(views(layer))))


def _as_scanned(layer: TextLayer, box: Callable[[Word], Box]) -> TextLayer:
    """The page's words as OCR would give them: no font size, each in the box ``box`` gives
    it (OCR's boxes are looser than a text layer's), the drawing's walls kept."""
    words = [
        w.model_copy(update={"origin": "ocr", "size": 0.0, "bbox": box(w)}) for w in layer.words
    ]
    return ocr_text_layer(words, 1, W, H, has_drawings=True, rules=layer.rules)


def _side_by_side(
    page: pymupdf.Page, x0: float, wall: float, y0: float, y1: float
) -> tuple[pymupdf.Rect, pymupdf.Rect]:
    """Two ruled cells from ``x0`` to the sheet's right border, parted by ``wall``."""
    left, right = pymupdf.Rect(x0, y0, wall, y1), pymupdf.Rect(wall, y0, W - 20, y1)
    for r in (left, right):
        page.draw_rect(r, width=0.5)
    return left, right


def _by_label(cells: list[Cell], label: str) -> Cell:
    return next(c for c in cells if c.label == label)


def test_a_label_turned_90_degrees_labels_its_cell_and_a_three_line_value_is_one():
    """A right strip's cell with its label turned up its left edge: the label is the cell's,
    the value all three lines of it, read whole."""
    page = _sheet()
    cell = pymupdf.Rect(W - 200, 700, W - 20, 800)
    page.draw_rect(cell, width=0.5)
    _text(page, cell.x0 + 10, cell.y1 - 4, "SHEET TITLE", 6, turn=90)
    for k, line in enumerate(("GROUND FLOOR", "PLAN", "BUILDING B")):
        _text(page, cell.x0 + 25, cell.y0 + 30 + 20 * k, line, 12)
    [titled] = [c for c in _cells(page) if c.field is Field.TITLE]
    assert (titled.label, titled.value) == ("SHEET TITLE", "GROUND FLOOR PLAN BUILDING B")


def test_a_value_never_crosses_a_cell_wall():
    """Two cells side by side, their lines on one baseline: the title is its own cell's
    text, never glued to the firm's e-mail in the cell beside it."""
    page = _sheet()
    left, right = _side_by_side(page, W - 500, W - 260, 900, 960)
    _text(page, left.x0 + 3, left.y0 + 9, "DRAWING TITLE", 6)
    _text(page, left.x0 + 3, left.y0 + 35, "ROOF PLAN", 14)
    _text(page, right.x0 + 3, right.y0 + 35, "info@firm.example", 14)
    cells = _cells(page)
    assert _by_label(cells, "DRAWING TITLE").value == "ROOF PLAN"


def test_a_value_printed_past_its_wall_stays_in_its_cell():
    """A GOST stamp's date printed wider than its narrow column, its last glyph past the
    wall and on the line of the title beside it: the date stays in its column, the title
    is the title cell's text alone."""
    page = _sheet()
    dates, titled = _side_by_side(page, W - 560, W - 520, 900, 960)
    _text(page, dates.x0 + 10, dates.y0 + 37, "mars 2022", 7)  # 33 pt wide: 3 pt past
    _text(page, titled.x0 + 1, titled.y0 + 9, "DRAWING TITLE", 6)
    _text(page, titled.x0 + 4, titled.y0 + 38, "Coupe longitudinale", 10)
    cells = _cells(page)
    assert _by_label(cells, "DRAWING TITLE").value == "Coupe longitudinale"
    assert any(c.value == "mars 2022" for c in cells)


def test_a_stroke_through_a_words_last_letter_parts_nothing():
    """A short stroke through the end of a word (a date struck out and written over), not
    ruled across the whole line, is no wall: the line reads on past it as one."""
    page = _sheet()
    _text(page, 1200, 1000, "FEBRUARY 2024", 14)
    end = 1200 + pymupdf.get_text_length("FEBRUARY", fontsize=14)
    page.draw_line((end - 3, 965), (end - 3, 999), width=0.5)
    layer = read_text_layer(page, 1, min_chars=1)
    runs = next(iter(views(layer))).runs
    assert [r.text for r in runs if r.text.startswith("FEB")] == ["FEBRUARY 2024"]


def test_a_label_in_a_cell_of_its_own_gives_its_value_to_the_cell_beside_it():
    """A Japanese 表題欄: each label ruled off in a cell left of its value."""
    page = _sheet()
    label, value = _side_by_side(page, W - 400, W - 340, 1000, 1040)
    _text(page, label.x0 + 4, label.y0 + 24, "図面名称", 9)
    _text(page, value.x0 + 6, value.y0 + 26, "1階平面図", 14)
    paired = _by_label(_cells(page), "図面名称")
    assert (paired.field, paired.value) == (Field.TITLE, "1階平面図")


@pytest.mark.parametrize(
    "lines",
    [
        ("WALL SECTIONS AND DETAILS", "WEST WING", "PHASE 1"),
        ("Grundriss Untergeschoss", "Bestand und Abbruch"),
    ],
)
def test_a_value_line_opening_with_another_fields_word_is_still_the_value(lines):
    """A title in the cell beside its label's, one of whose lines opens with a word that
    labels some other field ("PHASE", "Bestand"), printed as large as the rest with no
    colon: the cell is the label's value, all its lines, not a box of fields."""
    page = _sheet()
    label = pymupdf.Rect(W - 400, 1000, W - 340, 1050)
    value = pymupdf.Rect(W - 340, 1000, W - 20, 1050)
    for r in (label, value):
        page.draw_rect(r, width=0.5)
    _text(page, label.x0 + 4, label.y0 + 27, "SHEET TITLE", 6)
    for k, line in enumerate(lines):
        _text(page, value.x0 + 6, value.y0 + 12 + 12 * k, line, 9)
    paired = _by_label(_cells(page), "SHEET TITLE")
    assert (paired.field, paired.value) == (Field.TITLE, " ".join(lines))


def test_a_field_whose_label_turns_up_its_cells_side_but_no_revision_rows_date():
    """A strip's cell labelled by a word turned up its side ("DATUM" beside "27-02-2023") is
    the sheet's date; a revision table whose header row stands under its rows ("REV |
    DATE", the table growing upwards) gives its rows' dates to no sheet."""
    page = _sheet()
    dated = pymupdf.Rect(W - 260, 900, W - 140, 940)
    rev, when = pymupdf.Rect(W - 260, 800, W - 220, 840), pymupdf.Rect(W - 220, 800, W - 20, 840)
    page.draw_rect(dated, width=0.5)
    _text(page, dated.x0 + 8, dated.y1 - 4, "DATUM", 5, turn=90)
    _text(page, dated.x0 + 14, dated.y0 + 14, "27-02-2023", 8)
    _text(page, W - 250, 1100, "A-101", 30)
    turned = read_sheet(read_text_layer(page, 1, min_chars=1))
    assert turned.fields["issue_date"].text == "27-02-2023"
    page = _sheet()
    for r in (rev, when):
        page.draw_rect(r, width=0.5)
    _text(page, rev.x0 + 4, rev.y0 + 14, "B", 8)
    _text(page, rev.x0 + 4, rev.y1 - 4, "REV", 5)
    _text(page, when.x0 + 4, when.y0 + 14, "14/03/2024", 8)
    _text(page, when.x0 + 4, when.y1 - 4, "DATE", 5)
    _text(page, W - 250, 1100, "A-101", 30)
    table = read_sheet(read_text_layer(page, 1, min_chars=1))
    assert "issue_date" not in table.fields


def test_two_labelled_cells_whose_parting_wall_was_lost_stay_two():
    """Two labelled cells one over the other whose parting wall is lost (an outlined sheet's
    OCR), their left wall drawn twice 3.5 pt apart beside one of them: their walls nearly
    alike, they are still two cells, each label with its own value."""
    page = _sheet()
    top, bottom, left, right = 1000.0, 1080.0, W - 320, W - 20
    page.draw_line((left, top), (right, top), width=0.5)
    page.draw_line((left, bottom), (right, bottom), width=0.5)
    page.draw_line((left, top), (left, bottom), width=0.5)
    page.draw_line((left + 3.5, top + 40), (left + 3.5, bottom), width=0.5)
    page.draw_line((right, top), (right, bottom), width=0.5)
    _text(page, left + 6, top + 8, "DRAWING NO.", 6)
    _text(page, left + 6, top + 32, "S1000", 16)
    _text(page, left + 6, top + 50, "REVISION", 6)
    _text(page, left + 6, top + 70, "T01", 10)
    cells = _cells(page)
    assert _by_label(cells, "DRAWING NO.").value == "S1000"
    assert _by_label(cells, "REVISION").value == "T01"


def test_a_box_of_fields_one_under_another_ends_each_value_at_the_next_label():
    """One ruled box holding a title and, under it, the project number's label and value:
    the title's value stops at the next label."""
    page = _sheet()
    box = pymupdf.Rect(W - 320, 860, W - 20, 1000)
    page.draw_rect(box, width=0.5)
    _text(page, box.x0 + 5, box.y0 + 12, "Drawing Title", 7)
    _text(page, box.x0 + 5, box.y0 + 32, "SITE PLAN", 14)
    _text(page, box.x0 + 5, box.y0 + 60, "Project No.", 7)
    _text(page, box.x0 + 5, box.y0 + 80, "AU240202", 13)
    assert _by_label(_cells(page), "Drawing Title").value == "SITE PLAN"


def test_the_reading_keeps_the_cells_and_a_title_only_from_a_title_field():
    """The page's reading stores its cells (label, value and their words) and says where
    its title came from; a page whose block labels no title reports none, with its reason,
    rather than the firm's name or the stage banner beside its number."""
    page = _sheet()
    number = pymupdf.Rect(W - 300, H - 80, W - 20, H - 20)
    firm = pymupdf.Rect(W - 300, H - 160, W - 20, H - 80)
    banner = pymupdf.Rect(W - 300, H - 200, W - 20, H - 160)
    for r in (number, firm, banner):
        page.draw_rect(r, width=0.5)
    _text(page, number.x0 + 3, number.y0 + 9, "SHEET NUMBER", 6)
    _text(page, number.x0 + 20, number.y0 + 45, "A-101", 24)
    _text(page, firm.x0 + 5, firm.y0 + 25, "MERIDIAN ARCHITECTS", 14)
    _text(page, firm.x0 + 5, firm.y0 + 45, "info@meridian.example", 7)
    _text(page, banner.x0 + 5, banner.y0 + 28, "ISSUED FOR CONSTRUCTION", 18)
    reading = read_sheet(read_text_layer(page, 1, min_chars=1))
    assert reading.sheet_number == "A-101"
    assert reading.sheet_title is None
    assert reading.title_reason
    numbered = next(c for c in reading.cells if c.label == "SHEET NUMBER")
    assert (numbered.field, numbered.value) == ("number", "A-101")
    assert numbered.label_ids and numbered.value_ids


def test_ocr_word_boxes_of_one_print_make_one_title_however_their_heights_vary():
    """A scan's title in two lines of one print, OCR's boxes 20 and 15 pt high (its only
    measure of size), the second line opening with a status label's word ("PHASE"): both
    lines are the title, as they are from the text layer."""
    page = _sheet()
    cell = pymupdf.Rect(W - 400, 900, W - 20, 980)
    page.draw_rect(cell, width=0.5)
    _text(page, cell.x0 + 4, cell.y0 + 10, "SHEET TITLE", 6)
    _text(page, cell.x0 + 8, cell.y0 + 34, "WALL SECTIONS AND DETAILS", 14)
    _text(page, cell.x0 + 8, cell.y0 + 54, "PHASE 1 PART 2", 14)
    layer = read_text_layer(page, 1, min_chars=1)

    def box(word: Word) -> Box:
        x0, _, x1, y1 = word.bbox
        height = 20.0 if y1 < cell.y0 + 40 else 15.0
        return Box(x0, y1 - height, x1, y1) if word.size >= 14 else word.bbox

    scanned = _as_scanned(layer, box)
    assert read_sheet(layer).sheet_title == "WALL SECTIONS AND DETAILS PHASE 1 PART 2"
    assert read_sheet(scanned).sheet_title == "WALL SECTIONS AND DETAILS PHASE 1 PART 2"


@pytest.mark.parametrize(
    "scale", ["AS INDICATED", "Som angivet", "Dle výkresu", "Siehe Zeichnung", "1 : 100", "见图"]
)
def test_a_scale_is_never_a_title(scale):
    """A title block whose labels went unread (a scan's small print): the scale's value in
    the cell beside the number, larger than the drawing's notes, is not the sheet's title,
    in any language."""
    page = _sheet()
    number, beside = (
        pymupdf.Rect(W - 300, H - 80, W - 20, H - 20),
        pymupdf.Rect(W - 300, H - 140, W - 20, H - 80),
    )
    for r in (number, beside):
        page.draw_rect(r, width=0.5)
    _text(page, number.x0 + 20, number.y0 + 45, "A-101", 24)
    _text(page, beside.x0 + 10, beside.y0 + 35, scale, 14)
    reading = read_sheet(read_text_layer(page, 1, min_chars=1))
    assert reading.sheet_number == "A-101"
    assert reading.sheet_title is None
    assert is_scale(scale)
    assert not is_scale("FLOOR PLAN SCALE 1:100")


def test_a_label_boxed_on_its_own_reads_the_value_in_the_cell_beside_it():
    """Japanese practice on a scan: 図面番号 in a cell of its own, the number in the cell to
    its right, the firm's name in the row below, OCR's box of that name reaching a little
    above its cell's top wall: the number is the value of the cell beside the label, not the
    line reaching into the label's cell."""
    page = _sheet()
    for k in range(8):  # the drawing's notes, in print as large as the number's
        _text(page, 100, 300 + 20 * k, f"{k + 1}. 寸法は現場にて確認すること", 16)
    x0, y0 = W - 450, H - 120
    label, value = (
        pymupdf.Rect(x0, y0, x0 + 60, y0 + 28),
        pymupdf.Rect(x0 + 60, y0, W - 20, y0 + 28),
    )
    firm = pymupdf.Rect(x0, y0 + 28, W - 20, H - 20)
    for r in (label, value, firm):
        page.draw_rect(r, width=0.5)
    _text(page, label.x0 + 4, label.y0 + 17, "図面番号", 7)
    _text(page, value.x0 + 8, value.y0 + 20, "S-01", 16)
    _text(page, firm.x0 + 4, firm.y0 + 18, "株式会社山田建築設計事務所", 16)

    def box(word: Word) -> Box:
        x0, top, x1, bottom = word.bbox
        if top > firm.y0 - 8:  # the firm's line: its box reaches over the wall
            top = firm.y0 - 1.0
        return Box(x0, top, x1, bottom)

    scanned = _as_scanned(read_text_layer(page, 1, min_chars=1), box)
    assert read_sheet(scanned).sheet_number == "S-01"


def _numbered_and_titled(number: str, title: str) -> pymupdf.Page:
    """A sheet whose ruled title block prints its number and title, each in a labelled
    cell at the bottom right."""
    page = _sheet()
    numbered = pymupdf.Rect(W - 300, H - 80, W - 20, H - 20)
    titled = pymupdf.Rect(W - 300, H - 160, W - 20, H - 80)
    for r in (numbered, titled):
        page.draw_rect(r, width=0.5)
    _text(page, numbered.x0 + 3, numbered.y0 + 9, "SHEET NO.", 6)
    _text(page, numbered.x0 + 20, numbered.y0 + 45, number, 24)
    _text(page, titled.x0 + 3, titled.y0 + 9, "SHEET TITLE", 6)
    _text(page, titled.x0 + 20, titled.y0 + 40, title, 14)
    return page


def _sealed_sheet(seal_lines: list[str], *, dated: bool = False) -> pymupdf.Page:
    """A sheet numbered UC-3 that prints an engineer's seal in a cell of its own over its
    title: ``seal_lines``, one line each; ``dated`` adds a labelled DATE field."""
    page = _numbered_and_titled("UC-3", "WATER MAIN PLAN")
    seal = pymupdf.Rect(W - 300, H - 300, W - 20, H - 160)
    page.draw_rect(seal, width=0.5)
    for k, line in enumerate(seal_lines):
        _text(page, seal.x0 + 80, seal.y0 + 30 + 22 * k, line, 9)
    if dated:
        _text(page, seal.x0 + 3, H - 306, "DATE: 05/02/2023", 7)
    return page


def test_a_title_block_that_labels_no_date_is_dated_by_the_one_date_on_a_line_of_its_own():
    """The seal's signing date, on a line of its own in a cell whose label names no field,
    is the sheet's date where no date field is labelled; never a date after other words (a
    licence's expiry), never one of two dates, never a numbered detail's "3.2.10", and
    never over a labelled DATE field."""

    def date(seal_lines: list[str], dated: bool = False) -> str | None:
        reading = read_sheet(
            read_text_layer(_sealed_sheet(seal_lines, dated=dated), 1, min_chars=1)
        )
        assert reading.sheet_number == "UC-3"
        found = reading.fields.get("issue_date")
        return found.text if found else None

    seal = ["NORTH CAROLINA", "SEAL", "025221"]
    assert date([*seal, "1/18/2024", "DOCUMENT ORIGINAL SIGNED"]) == "1/18/2024"
    assert date([*seal, "No. 8010", "Exp. 12/31/2024"]) is None
    assert date([*seal, "1/18/2024", "2/9/2024"]) is None
    assert date([*seal, "3.2.10"]) is None
    assert date([*seal, "1/18/2024"], dated=True) == "05/02/2023"
    # A plot stamp's date is labelled, and is not the sheet's.
    assert date(["PLOT DATE", "1/17/2024"]) is None


def test_a_cad_underline_code_left_in_the_text_is_no_part_of_the_title():
    """A title cell whose text layer keeps AutoCAD's underline code ("%%UFLOOR PLAN"): the
    title is what the sheet prints, "FLOOR PLAN", with the words it came from."""
    page = _numbered_and_titled("A-101", "%%UFLOOR PLAN")
    reading = read_sheet(read_text_layer(page, 1, min_chars=1))
    assert (reading.sheet_number, reading.sheet_title) == ("A-101", "FLOOR PLAN")
    assert reading.title is not None and len(reading.title.word_ids) == 2


def test_a_sheet_index_in_a_ruled_column_is_no_number_field():
    """A cover sheet's index listed under its heading "SHEET INDEX:" in a ruled column of
    the sheet: the heading reads as a number label, but a cell holding a column of sheet
    numbers is an index, ruled or not; the number is the title block's own."""
    page = _sheet()
    column = pymupdf.Rect(900, 280, 1200, 600)
    page.draw_rect(column, width=0.5)
    _text(page, 910, 300, "SHEET INDEX:", 9)
    for k in range(1, 7):
        _text(page, 910, 314 + 16 * k, f"A-10{k} - FLOOR PLAN LEVEL {k}", 9)
    numbered = pymupdf.Rect(W - 300, H - 80, W - 20, H - 20)
    page.draw_rect(numbered, width=0.5)
    _text(page, numbered.x0 + 20, numbered.y0 + 45, "G-001", 24)
    reading = read_sheet(read_text_layer(page, 1, min_chars=1))
    assert reading.sheet_number == "G-001"
    assert ("A-101", "FLOOR PLAN LEVEL 1") in reading.index_rows


def test_a_strip_down_the_left_edge_keeps_its_unlabelled_cells_with_the_reading():
    """A portrait sheet's title strip down its left edge: the cells stacked in the number's
    column are the title block's, kept with the reading whether or not their label was
    read (a scan's title cell whose small label OCR lost is where the set looks for its
    title); a drawing's own ruled table beside the strip is not."""
    page = pymupdf.open().new_page(width=842, height=1191)  # A3 portrait
    page.draw_rect(pymupdf.Rect(20, 20, 822, 1171), width=1.5)
    page.draw_rect(pymupdf.Rect(20, 700, 180, 1171), width=0.5)
    page.draw_line((20, 1050), (180, 1050), width=0.5)
    _text(page, 24, 760, "Ground floor plan", 12)  # its label lost
    _text(page, 24, 1062, "DWG NO.", 6)
    _text(page, 24, 1110, "A-101", 24)
    page.draw_rect(pymupdf.Rect(400, 300, 600, 400), width=0.5)  # a table in the drawing
    _text(page, 410, 350, "Door schedule", 10)
    reading = read_sheet(read_text_layer(page, 1, min_chars=1))
    assert reading.number is not None and reading.number.text == "A-101"
    values = [c.value for c in reading.cells]
    assert "Ground floor plan" in values and "Door schedule" not in values
