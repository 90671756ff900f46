"""Title-block classes met on sets the corpus lacked, one general rule each: a number stacked
on two lines, "SHEET n OF m", a trade name in large type, labels of other languages (German,
French, Spanish, Dutch), a pair of numbers under one label, a revision letter after the
number, a large file number in the same block, a left-hand strip turned 90°, numbers with
dots, underscores and spaces. Each sheet is a real PDF page built with PyMuPDF and read as
extract reads it."""

from collections.abc import Sequence

import pymupdf
import pytest

from services.extract.reading.textlayer import read_text_layer
from shared.sheet import Reading, read_title_block

W, H = 2592, 1728  # 36 x 24 in


def new_sheet(width: float = W, height: float = H) -> tuple[pymupdf.Document, pymupdf.Page]:
    doc = pymupdf.open()
    page = doc.new_page(width=width, height=height)
    page.draw_rect(pymupdf.Rect(36, 36, width - 36, height - 36), width=2)
    page.insert_text((100, 120), "GENERAL NOTES", fontsize=14)
    page.insert_text((100, 150), "1. SEE 2/S301 FOR TYPICAL FOOTING DETAIL.", fontsize=9)
    page.insert_text((900, 700), "A-501", fontsize=12)
    return doc, page


def text(page: pymupdf.Page, x: float, y: float, value: str, size: float, rotate: int = 0):
    if value.isascii():
        page.insert_text((x, y), value, fontsize=size, rotate=rotate)
    else:  # accents need a font that has them (PyMuPDF's own)
        page.insert_font(fontname="uni", fontbuffer=pymupdf.Font("cjk").buffer)
        page.insert_text((x, y), value, fontsize=size, fontname="uni", rotate=rotate)


def box(page: pymupdf.Page, x0: float, y0: float, x1: float, y1: float) -> None:
    page.draw_rect(pymupdf.Rect(x0, y0, x1, y1), width=1)


def read(page: pymupdf.Page) -> Reading:
    return read_title_block(read_text_layer(page, 1, min_chars=1))


def bottom_block(page: pymupdf.Page, cells: list[tuple[str, str, float]]) -> None:
    """A ruled title block along the bottom right: one cell per (label, value, value size),
    left to right."""
    x = W - 36 - 260 * len(cells)
    for label, value, size in cells:
        box(page, x, H - 200, x + 260, H - 36)
        text(page, x + 10, H - 180, label, 9)
        if value:
            text(page, x + 10, H - 80, value, size)
        x += 260


def test_a_number_stacked_on_two_lines_is_one_number():
    """ "SC20" over "-TN01" in the PLAN REF NO box is SC20-TN01, not SC20."""
    _doc, page = new_sheet()
    bottom_block(page, [("PROJECT TITLE", "SR 167 STAGE 1", 14)])
    box(page, W - 140, H - 200, W - 36, H - 36)
    text(page, W - 130, H - 180, "PLAN REF NO", 6)
    text(page, W - 130, H - 150, "SC20", 18)
    text(page, W - 132, H - 128, "-TN01", 18)
    assert read(page).number == "SC20-TN01"


@pytest.mark.parametrize(
    ("printed", "number"),
    [
        (["Sheet: 3 OF 23"], "3"),
        (["SHEET 3 OF 10 SHEETS"], "3"),
        (["SHEET", "3", "OF", "10"], "3"),  # each in a box of its own, the total largest
    ],
)
def test_the_count_of_sheet_n_of_m_is_never_the_number(printed, number):
    """The total after "OF" is never the sheet number, however it is laid out."""
    _doc, page = new_sheet()
    bottom_block(page, [("PROJECT", "FINAL MAP OF RIVER BEND", 16)])
    if len(printed) == 1:
        text(page, W - 500, H - 100, printed[0], 14)
    else:
        for k, part in enumerate(printed):
            text(page, W - 500 + 90 * k, H - 100, part, 30 if part == "10" else 14)
    assert read(page).number == number


def test_a_trade_name_in_large_type_loses_to_a_labelled_number():
    """ "CIVIL" printed large in the main block's SHEET field loses to the number the
    consultant's block labels, with digits."""
    _doc, page = new_sheet()
    bottom_block(page, [("SHEET", "CIVIL", 60), ("DWG NO.", "C-201", 24)])
    assert read(page).number == "C-201"


@pytest.mark.parametrize(
    ("number_label", "number", "title_label", "title"),
    [
        ("Plan-Nr.", "A-12", "Planinhalt", "Grundriss Erdgeschoss"),
        ("Plannummer", "5.1.00", "Planinhalt:", "Lageplan"),
        ("Zeichnungsnummer", "ST-201", "Titel", "Bewehrung Decke"),
        ("Blatt-Nr.", "12", "Planinhalt", "Schnitt A-A"),
        ("N° de plan", "ARC-104", "Titre", "Plan du rez-de-chaussée"),
        ("Planche", "B12", "Titre:", "Coupe longitudinale"),
        ("Plano N°", "E-03", "Título", "Planta de cubiertas"),
        ("Lámina", "A-07", "Título:", "Alzados"),
        ("Tekeningnummer", "BK-010", "Omschrijving", "Plattegrond begane grond"),
        ("Blad", "7", "Omschrijving:", "Doorsneden"),
    ],
)
def test_labels_of_other_languages(number_label, number, title_label, title):
    """German, French, Spanish and Dutch labels name the number and title fields; a large
    order number in the same block does not win."""
    _doc, page = new_sheet()
    bottom_block(
        page,
        [
            ("Auftrags-Nr.", "20231187", 40),
            (title_label, title, 16),
            (number_label, number, 30),
        ],
    )
    reading = read(page)
    assert (reading.number, reading.title) == (number, title)


def test_a_pair_label_gives_both_numbers_as_one_sheet():
    """ "Unterlage / Blatt-Nr." over "7 / 1": the sheet is 7 / 1."""
    _doc, page = new_sheet()
    bottom_block(page, [("Maßstab", "1:500", 14), ("Unterlage / Blatt-Nr.", "7 / 1", 28)])
    assert read(page).number == "7 / 1"


def test_a_revision_letter_after_the_number_is_not_part_of_it():
    """ "A-12 c" in the number field: the revision index is printed apart from the number."""
    _doc, page = new_sheet()
    bottom_block(page, [("Index", "c", 14), ("Plan-Nr.", "A-12  c", 30)])
    assert read(page).number == "A-12"


def test_a_left_hand_strip_with_text_turned_90_degrees():
    """A portrait sheet whose title block runs up its left edge, text turned 90°."""
    width, height = 1224, 1584
    _doc, page = new_sheet(width, height)
    page.draw_line((260, 36), (260, height - 36), width=2)
    box(page, 36, height - 300, 260, height - 36)
    # Turned 90° (reading upwards): the label, then the number beside it, larger.
    text(page, 70, height - 60, "DRAWING NO.", 9, rotate=90)
    text(page, 140, height - 60, "M-301", 48, rotate=90)
    text(page, 70, height - 400, "DRAWING TITLE", 9, rotate=90)
    text(page, 120, height - 400, "MECHANICAL ROOF PLAN", 24, rotate=90)
    text(page, 200, 500, "NORTHWIND ENGINEERS", 14, rotate=90)
    reading = read(page)
    assert (reading.number, reading.title) == ("M-301", "MECHANICAL ROOF PLAN")


@pytest.mark.parametrize(
    "number",
    ["5.1.00", "ABC-XYZ-ZZ-00-DR-A-1001", "PRJ_B1_00_DR_S_2001", "A101.01"],
)
def test_numbers_with_dots_underscores_and_hyphens(number):
    """Section-style dotted numbers and ISO 19650 codes (hyphens or underscores) are read
    whole."""
    _doc, page = new_sheet()
    bottom_block(page, [("SCALE", "1:100", 12), ("DRAWING NUMBER", number, 20)])
    assert read(page).number == number


def test_candidates_say_why_each_won_or_lost():
    """The reading keeps every number it considered: the winner marked chosen, the others
    with why they lost."""
    _doc, page = new_sheet()
    bottom_block(page, [("SHEET", "CIVIL", 60), ("DWG NO.", "C-201", 24)])
    reading = read(page)
    [chosen] = [c for c in reading.candidates if c.chosen]
    assert chosen.text == "C-201" and chosen.label == "DWGNO"
    civil = next(c for c in reading.candidates if c.text == "CIVIL")
    assert civil.why.startswith("lost to C-201")
    assert reading.region is not None and reading.region.contains(chosen.box.centre)


def test_an_iso_19650_code_needs_no_label():
    """A code of five or more fields, printed large and alone in the title block, is the
    number even where no label names it."""
    _doc, page = new_sheet()
    bottom_block(page, [("SCALE", "1:100", 12), ("STATUS", "S2", 12)])
    text(page, W - 700, H - 240, "PRJ_B1_00_DR_S_2001", 40)
    assert read(page).number == "PRJ_B1_00_DR_S_2001"


def test_an_issue_status_beside_the_number_is_no_title():
    """Unruled: the title in large type up the number's column, not "CONSTRUCTION
    DOCUMENTS" or the copyright line printed beside the number."""
    _doc, page = new_sheet()
    for k, line in enumerate(["FLOOR PLAN -", "LEVEL 01 - AREA A"]):
        text(page, W - 330, H - 330 + 30 * k, line, 25)
    text(page, W - 330, H - 230, "DATE: APRIL 23, 2021", 12)
    text(page, W - 330, H - 195, "CONSTRUCTION", 12)
    text(page, W - 330, H - 180, "DOCUMENTS", 12)
    text(page, W - 330, H - 120, "E201A", 50)
    text(page, W - 330, H - 100, "© COPYRIGHT NORTHWIND ENGINEERS, INC.", 9)
    reading = read(page)
    assert (reading.number, reading.title) == ("E201A", "FLOOR PLAN - LEVEL 01 - AREA A")


def test_the_sheet_title_under_the_project_title_left_of_a_narrow_number_box():
    """Unruled, left of a narrow PLAN REF NO column: the project's title over the sheet's;
    the lower stack is the sheet's title."""
    _doc, page = new_sheet()
    x = W - 420
    for k, line in enumerate(["SR 167", "I-5 TO SR 161", "NEW EXPRESSWAY"]):
        text(page, x, H - 150 + 14 * k, line, 10)
    text(page, x, H - 90, "COMMUNICATION ONE-LINE DIAGRAM", 9)
    text(page, W - 120, H - 160, "PLAN REF NO", 4)
    text(page, W - 120, H - 148, "TSDE01", 10)
    reading = read(page)
    assert (reading.number, reading.title) == ("TSDE01", "COMMUNICATION ONE-LINE DIAGRAM")


def test_a_title_printed_with_the_number_beats_a_title_field_holding_the_project():
    """ "A001.01 – SITE PLAN" in the number box: the sheet's own title, where the "Title:"
    field prints the project."""
    _doc, page = new_sheet()
    bottom_block(page, [("Title:", "SFD RENOVATION AND ADDITION", 12)])
    text(page, W - 300, H - 60, "Drawing Number", 10)
    text(page, W - 300, H - 40, "A001.01 \u2013 SITE PLAN", 12)
    reading = read(page)
    assert (reading.number, reading.title) == ("A001.01", "SITE PLAN")


def test_a_sheet_without_a_title_field_takes_its_main_heading():
    """A title block with a number and no title: the drawing's heading, not the banner the
    title block prints on every sheet."""
    _doc, page = new_sheet()
    text(page, 900, 150, "PROJECT TYPICAL DETAILS", 36)
    bottom_block(page, [("DESIGNED BY", "ABN", 10), ("SHEET NO.", "UC-3A", 24)])
    text(page, W - 500, H - 230, "UTILITY CONSTRUCTION", 20)
    reading = read(page)
    assert (reading.number, reading.title) == ("UC-3A", "PROJECT TYPICAL DETAILS")


def plan_sheet() -> tuple[pymupdf.Document, pymupdf.Page]:
    """A plan sheet of small print only: no heading."""
    doc = pymupdf.open()
    page = doc.new_page(width=W, height=H)
    page.draw_rect(pymupdf.Rect(36, 36, W - 36, H - 36), width=2)
    for i, note in enumerate(['EXIST. 8" DIP', 'PROP. 6" GATE VALVE', "SEE DETAIL 3"] * 4):
        text(page, 200 + 150 * i, 600 + 40 * (i % 5), note, 9)
    return doc, page


def test_a_sheet_of_callouts_as_large_as_each_other_has_no_main_heading():
    """A plan sheet with no title field whose largest lines are the drawing's callouts, each
    as large as the next ("TIE-IN TO EXIST. 6\" WATER", "ABANDONED IN PLACE"), has no main
    heading: no title rather than one callout. One line clearly larger than them all is
    the sheet's heading."""
    _doc, page = plan_sheet()
    for x, y, callout in [
        (500, 400, 'TIE-IN TO EXIST. 6" WATER'),
        (1300, 800, "ABANDONED IN PLACE"),
        (700, 1100, "RELOCATED FIRE HYDRANT"),
    ]:
        text(page, x, y, callout, 20)
    bottom_block(page, [("DESIGNED BY", "ABN", 10), ("SHEET NO.", "UC-04", 24)])
    reading = read(page)
    assert (reading.number, reading.title) == ("UC-04", None)
    text(page, 900, 150, "UTILITIES PLAN SHEET SYMBOLS", 36)
    assert read(page).title == "UTILITIES PLAN SHEET SYMBOLS"


def test_a_title_column_left_of_the_number_ends_at_the_next_field():
    """A number in a small box at the top right, the project's reference in the box left of
    it: the callout printed left of that box, out on the drawing, is not the sheet's title
    (there is none: the drawing's callouts are all alike, so no main heading either); with
    no other field between, the column left of the number is."""

    def number_box(page: pymupdf.Page) -> None:
        box(page, W - 140, 36, W - 36, 110)
        text(page, W - 130, 50, "SHEET NO.", 7)
        text(page, W - 120, 75, "UC-04", 14)

    _doc, page = plan_sheet()
    number_box(page)
    box(page, W - 400, 36, W - 140, 110)
    text(page, W - 390, 50, "PROJECT REFERENCE NO.", 7)
    text(page, W - 360, 75, "Y-4807B", 14)
    text(page, W - 720, 62, "BEGIN CONSTRUCTION", 17)
    text(page, W - 720, 84, "-Y1- STA. 10+28.00", 17)
    for x, y, callout in [(900, 900, "END CONSTRUCTION"), (1300, 500, "ABANDONED IN PLACE")]:
        text(page, x, y, callout, 17)  # callouts alike: no main heading either
    reading = read(page)
    assert (reading.number, reading.title) == ("UC-04", None)
    _doc, page = plan_sheet()
    number_box(page)
    text(page, W - 420, 70, "UTILITY PLAN", 17)
    assert read(page).title == "UTILITY PLAN"


def test_drawing_over_no_is_a_number_label_not_a_title_label():
    """ "DRAWING" alone on its line labels the title ("DRAWING: SITE PLAN"), except where the
    line under it carries on as a number label ("DRAWING" over "NO.")."""
    _doc, page = new_sheet()
    bottom_block(page, [("DRAWING", "GROUND FLOOR PLAN", 16), ("SCALE", "1:100", 12)])
    box(page, W - 240, H - 200, W - 36, H - 36)
    text(page, W - 230, H - 182, "DRAWING", 9)
    text(page, W - 230, H - 170, "NO.", 9)
    text(page, W - 230, H - 80, "200-00", 30)
    reading = read(page)
    assert (reading.number, reading.title) == ("200-00", "GROUND FLOOR PLAN")


def test_a_map_counted_under_its_heading_takes_the_heading_as_its_title():
    """No title block: "SHEET 3 OF 10 SHEETS" under a map's stacked, centred heading. The
    number is 3 and the title the heading; the date and the firm near the count are not."""
    doc = pymupdf.open()
    page = doc.new_page(width=1728, height=2592)
    for y, line, size in [
        (300, "FINAL MAP", 28),
        (340, "OF", 28),
        (380, "SAMPLE SUBDIVISION", 28),
        (430, "BEING A DIVISION OF PARCEL 2 OF MAP 61", 10),
        (460, "MARCH 2025", 12),
        (490, "SHEET 3 OF 10 SHEETS", 12),
        (520, "EXAMPLE SURVEYORS INC.", 12),
    ]:
        width = pymupdf.get_text_length(line, fontsize=size)
        text(page, 864 - width / 2, y, line, size)
    reading = read(page)
    assert (reading.number, reading.title) == ("3", "FINAL MAP OF SAMPLE SUBDIVISION")


def test_a_count_in_a_ruled_title_blocks_cell_has_no_heading_over_it():
    """A right strip's cells, its labels lost (as OCR loses small print), the count "SHEET 1
    OF 4" in a cell of its own: the project's name in the cell over it is no heading the
    sheet is counted under, and the page reads no title (the set's template may give it)."""
    _doc, page = new_sheet()
    x0, x1 = W - 240, W - 36
    for y0, y1, line, size in [
        (H - 400, H - 330, "NORTH CAMPUS LIBRARY", 16),
        (H - 330, H - 260, "P001", 24),
        (H - 260, H - 200, "SHEET 1 OF 4", 12),
        (H - 200, H - 36, "WALL SECTIONS AND DETAILS", 12),
    ]:
        box(page, x0, y0, x1, y1)
        text(page, x0 + 10, y0 + 0.6 * (y1 - y0), line, size)
    reading = read(page)
    assert reading.title is None


def _noted_sheet(lines: Sequence[tuple[float, float, str, float]], note: str = "NOTE") -> Reading:
    """The reading of an A3 sheet holding twelve notes and the given (x, y, text, size)
    lines."""
    page = pymupdf.open().new_page(width=1191, height=842)
    for n in range(12):
        page.insert_text((100 + 70 * (n % 6), 300 + 20 * (n // 6)), f"{note} {n}", fontsize=7)
    for x, y, text, size in lines:
        page.insert_text((x, y), text, fontsize=size)
    return read_title_block(read_text_layer(page, 1, min_chars=1))


def test_a_firms_name_printed_large_is_no_title():
    """A sheet numbered under its label, with no title field: the firm's name, the largest
    text on the sheet, is no title (its legal form says whose name it is)."""
    reading = _noted_sheet(
        [
            (60, 60, "Nordbau Ingenieure GmbH", 24),
            (1060, 790, "Zeichnungsnummer", 6),
            (1060, 810, "V200", 14),
        ]
    )
    assert (reading.number, reading.title) == ("V200", None)


@pytest.mark.parametrize("count", ["Foglio 1 di 4", "Blad 1 av 4", "Arkusz 1 z 4"])
def test_a_sheet_count_is_no_title_and_elaborato_labels_the_title(count: str):
    """A count beside the number ("Foglio 1 di 4", in any language) is never the title;
    "Elaborato:" labels the title's cell where "Elaborato n.:" labels the number's; with
    the title's label gone, the sheet has no title rather than its count."""
    number = [(1060, 760, count, 10), (1060, 790, "Elaborato n.:", 6), (1060, 810, "S-100", 14)]
    title = [(1060, 690, "Elaborato:", 6), (1060, 702, "Pianta coperture", 9)]
    reading = _noted_sheet([*title, *number], "NOTA")
    assert (reading.number, reading.title) == ("S-100", "Pianta coperture")
    assert _noted_sheet(number, "NOTA").title is None
