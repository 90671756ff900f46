"""Title blocks as real sets lay them out: strips, boxes, frames inside larger pages, label
forms, whole tokens, distractors, rotation and annotation-only text. Each sheet is a real
PDF page read through the extract service's text-layer reader (sizes, ruled lines,
rotation), then through the one title-block reader."""

import pymupdf
import pytest

from services.extract.reading.textlayer import read_text_layer
from shared.sheet import Reading, read_title_block, sheet_key

W, H = 2592, 1728  # 36 x 24 in


def new_sheet(width: float = W, height: float = H) -> tuple[pymupdf.Document, pymupdf.Page]:
    doc = pymupdf.open()
    page = doc.new_page(width=width, height=height)
    page.draw_rect(pymupdf.Rect(36, 36, width - 36, height - 36), width=2)
    return doc, page


def text(page: pymupdf.Page, x: float, y: float, value: str, size: float) -> None:
    if value.isascii():
        page.insert_text((x, y), value, fontsize=size)
    else:  # Unicode dashes and Cyrillic need a font that has them (PyMuPDF's own)
        page.insert_font(fontname="uni", fontbuffer=pymupdf.Font("cjk").buffer)
        page.insert_text((x, y), value, fontsize=size, fontname="uni")


def body(page: pymupdf.Page) -> None:
    """A drawing body full of things shaped like sheet numbers."""
    text(page, 100, 120, "GENERAL NOTES", 14)
    text(page, 100, 150, "1. SEE 2/S301 FOR TYPICAL FOOTING DETAIL.", 9)
    text(page, 100, 165, "2. REFER TO SHEET S-501 FOR CONNECTIONS.", 9)
    text(page, 100, 180, "3. FIXTURES E3-3 AND E2-11 ON CIRCUIT 4.", 9)
    text(page, 900, 700, "A-501", 12)


def read(page: pymupdf.Page) -> Reading:
    return read_title_block(read_text_layer(page, 1, min_chars=1))


def right_strip(page: pymupdf.Page, number: str, title: list[str], *, label: bool) -> None:
    """A ruled right-hand strip: firm, project, a DRAWING TITLE band over its value cell
    (an issue line, then the title large), and the number at the bottom."""
    x0, x1 = W - 300, W - 36
    page.draw_line((x0, 36), (x0, H - 36), width=2)
    for y in (300, 700, 730, 900, 1500):
        page.draw_line((x0, y), (x1, y), width=1)
    text(page, x0 + 20, 100, "NORTHWIND ARCHITECTS", 16)
    text(page, x0 + 20, 400, "RIVERSIDE COMMUNITY", 20)
    text(page, x0 + 20, 425, "CENTER", 20)
    text(page, x0 + 20, 722, "DRAWING TITLE", 12)
    text(page, x0 + 20, 760, "ISSUED FOR PERMIT APRIL 18, 2025", 10)
    for i, line in enumerate(title):
        text(page, x0 + 20, 810 + 30 * i, line, 27)
    text(page, x0 + 20, 1000, "JOB NO:", 9)
    text(page, x0 + 180, 1000, "2309", 9)
    text(page, x0 + 20, 1030, "DATE:", 9)
    text(page, x0 + 180, 1030, "04/18/2025", 9)
    if label:
        text(page, x0 + 20, 1530, "SHEET NUMBER", 8)
    text(page, x0 + 20, 1640, number, 66)


def test_right_strip_number_and_title_by_size_within_ruled_cells():
    """The huge number at the foot of a right strip, and the title: the largest text in the
    cell under the ruled-off DRAWING TITLE band (not the issue line sharing that cell)."""
    _, page = new_sheet()
    body(page)
    right_strip(page, "A11.4", ["Signage", "Schedule"], label=False)
    reading = read(page)
    assert (reading.number, reading.title) == ("A11.4", "Signage Schedule")


def test_bottom_strip_labelled_row_never_takes_the_project_number():
    """A bottom strip whose labels sit in a row over their values: DRAWING No: wins, the
    larger project number and the revision beside it never do; letters-only numbers such
    as COV-S are read under a label."""
    _, page = new_sheet()
    body(page)
    y = H - 180
    page.draw_line((36, y), (W - 36, y), width=2)
    for x, label, value, size in [
        (1400, "DRAWING TITLE:", "STRUCTURAL COVER SHEET", 14),
        (1900, "PROJECT No:", "231093", 18),
        (2100, "DRAWING No:", "COV-S", 14),
        (2300, "REVISION:", "C", 14),
    ]:
        text(page, x, y + 40, label, 10)
        text(page, x, y + 62, value, size)
    reading = read(page)
    assert (reading.number, reading.title) == ("COV-S", "STRUCTURAL COVER SHEET")


def test_boxed_lower_right_block_with_labels_above_values():
    """Stacked labelled cells in a lower-right box (Project No., Drawing Title, Drawing No.,
    Revision): the drawing number and its three-line title."""
    _, page = new_sheet()
    body(page)
    x, y = W - 320, H - 360
    page.draw_rect(pymupdf.Rect(x - 10, y - 20, W - 36, H - 36), width=1)
    text(page, x, y, "Drawing Title", 8)
    for i, line in enumerate(["CLUBHOUSE", "GROUND FLOOR", "SLAB & FOOTING PLAN"]):
        text(page, x, y + 18 + 17 * i, line, 13)
    text(page, x, y + 100, "Project No.", 8)
    text(page, x, y + 116, "AU240202", 13)
    text(page, x, y + 140, "Drawing No.", 8)
    text(page, x + 200, y + 140, "Revision", 8)
    text(page, x, y + 156, "S1000", 13)
    text(page, x + 200, y + 156, "T01", 13)
    reading = read(page)
    assert (reading.number, reading.title) == (
        "S1000",
        "CLUBHOUSE GROUND FLOOR SLAB & FOOTING PLAN",
    )


def test_frame_inside_a_larger_page_has_its_title_block_at_its_own_corner():
    """A drawing frame filling only the lower left of the paper: its title block is found
    at the frame's lower right, not the paper's."""
    doc = pymupdf.open()
    page = doc.new_page(width=W, height=H)
    frame = pymupdf.Rect(36, 700, 1600, H - 36)
    page.draw_rect(frame, width=2)
    text(page, 100, 800, "PLAN NOTES", 12)
    text(page, 100, 820, "1. SEE 4/A-501.", 9)
    cell = pymupdf.Rect(frame.x1 - 260, frame.y1 - 140, frame.x1, frame.y1)
    page.draw_rect(cell, width=1)
    text(page, cell.x0 + 10, cell.y0 + 40, "FIRST FLOOR PLAN", 16)
    text(page, cell.x0 + 10, cell.y1 - 20, "A-101", 40)
    reading = read(page)
    assert (reading.number, reading.title) == ("A-101", "FIRST FLOOR PLAN")


@pytest.mark.parametrize(
    "number",
    ["AB12-CD01", "AB12-02C", "A101.01", "ST01.B", "A2.R", "P01-B02-ARC-00-XX-DR-A-10050"],
)
def test_whole_tokens_are_kept(number):
    """Numbers are read whole: two-part codes, dotted sequences, letters after the dot and
    long ISO 19650-style codes are never cut short."""
    _, page = new_sheet()
    body(page)
    text(page, W - 280, H - 150, "SHEET NO.", 8)
    text(page, W - 280, H - 100, number, 30 if len(number) < 12 else 14)
    assert read(page).number == number


def test_a_number_stops_where_its_title_begins():
    """'A101.01 – FLOOR PLAN' printed on one line is the number A101.01 and the title."""
    _, page = new_sheet()
    body(page)
    text(page, W - 500, H - 100, "A101.01 \u2013 FLOOR PLAN", 36)
    reading = read(page)
    assert (reading.number, reading.title) == ("A101.01", "FLOOR PLAN")


def test_unicode_dashes_are_reported_as_printed_and_compared_folded():
    """A number printed with a Unicode hyphen is found and reported as printed; it compares
    equal to its ASCII form (and E-2 to E-02)."""
    _, page = new_sheet()
    body(page)
    text(page, W - 280, H - 150, "SHEET NUMBER", 8)
    text(page, W - 280, H - 100, "A\u2010101", 36)
    number = read(page).number
    assert number == "A\u2010101"
    assert sheet_key(number) == sheet_key("A-101") == sheet_key("a101")
    assert sheet_key("E-2") == sheet_key("E-02") != sheet_key("E-12")


def test_a_number_split_across_two_spans_is_joined():
    """A designator and its sequence written as two spans side by side read as one number."""
    _, page = new_sheet()
    body(page)
    text(page, W - 280, H - 150, "DWG NO.", 8)
    text(page, W - 280, H - 100, "S-", 36)
    text(page, W - 280 + 34, H - 100, "201", 36)
    assert read(page).number == "S-201"


@pytest.mark.parametrize(
    ("label", "value", "number"),
    [
        ("SHEET NO.", "A-101 OF 12", "A-101"),
        ("SHEET", "3 OF 10", "3"),
        ("SHEET", "NO.", None),
        ("SHT. NO:", "M2.3", "M2.3"),
        ("DRAWING NUMBER", "E0.1", "E0.1"),
        ("Blatt", "12", "12"),
    ],
)
def test_label_forms(label, value, number):
    """The label forms firms print lead to the value beside or below them; "OF n" and a
    sheet count stay out of the number."""
    _, page = new_sheet()
    body(page)
    text(page, W - 300, H - 120, label, 8)
    text(page, W - 300, H - 80, value, 24)
    assert read(page).number == number


def test_sheet_n_of_count_on_one_line():
    """ "SHEET 3 OF 10" printed as one line in the title block is sheet 3; a label split
    over two lines ("SHEET" over "NO.") leads to the value under both."""
    _, page = new_sheet()
    body(page)
    text(page, W - 300, H - 80, "SHEET 3 OF 10", 14)
    assert read(page).number == "3"
    _, page = new_sheet()
    body(page)
    text(page, W - 300, H - 140, "SHEET", 8)
    text(page, W - 300, H - 128, "NO.", 8)
    text(page, W - 300, H - 90, "C-12", 24)
    assert read(page).number == "C-12"


def test_number_inside_the_title_field():
    """A title field that carries the number after a colon gives both, the title cleaned of
    the number: 'SITE PLAN: ST01.B - Swept Paths' → ST01.B / 'SITE PLAN - Swept Paths'."""
    _, page = new_sheet()
    body(page)
    page.draw_line((36, H - 140), (W - 36, H - 140), width=1)
    text(page, 1200, H - 110, "Sheet Name", 8)
    text(page, 1200, H - 90, "SITE PLAN:  ST01.B - Swept Paths", 12)
    text(page, 1200, H - 60, "Project Number", 8)
    text(page, 1200, H - 45, "280", 12)
    reading = read(page)
    assert (reading.number, reading.title) == ("ST01.B", "SITE PLAN - Swept Paths")


@pytest.mark.parametrize(
    "distractor",
    ["I-90", "SR-520", "NB520", "12+50", "05.29.26", "231093", "W12X26", "CC_A1.dwg"],
)
def test_distractors_never_become_the_number(distractor):
    """Large route names, stations, dates, project numbers, member sizes and model files in
    the title block are never a sheet number, with no label to vouch for them."""
    _, page = new_sheet()
    body(page)
    text(page, W - 400, H - 100, distractor, 48)
    assert read(page).number is None


def test_other_fields_values_never_win():
    """The value of a revision or project-number field is never the sheet number, however
    large, and a page whose title block prints no number gets none."""
    _, page = new_sheet(1152, 734)
    text(page, 780, 540, "Title:", 12)
    text(page, 840, 575, "New Valley Church Sanctuary", 16)
    for x, label, value in [
        (780, "Drawn by:", "S. T. West"),
        (900, "Rev:", "A2"),
        (1010, "Date:", "4/8/2018"),
    ]:
        text(page, x, 630, label, 12)
        text(page, x, 660, value, 16)
    text(page, 300, 300, "FOH-17", 3)
    text(page, 320, 320, "E3-3", 3)
    reading = read(page)
    assert (reading.number, reading.title) == (None, "New Valley Church Sanctuary")


def test_grid_bubbles_are_not_a_sheet_number():
    """A row of equally large grid labels (D1, E1, F1) names no sheet."""
    _, page = new_sheet()
    body(page)
    for i, grid in enumerate(["D1", "E1", "F1"]):
        text(page, 2100 + 120 * i, H - 60, grid, 18)
    assert read(page).number is None


def _upright_on_rotated_paper(src: pymupdf.Document, rotation: int) -> pymupdf.Page:
    """The source sheet on portrait paper with /Rotate, displayed upright (a CAD plot)."""
    doc = pymupdf.open()
    width, height = src[0].rect.height, src[0].rect.width
    page = doc.new_page(width=width, height=height)
    page.show_pdf_page(page.rect, src, 0, rotate=rotation)
    page.set_rotation(rotation)
    return page


@pytest.mark.parametrize("rotation", [90, 270])
def test_rotated_paper_displayed_upright(rotation):
    """A sheet stored on portrait paper with /Rotate reads as it is displayed."""
    src, page = new_sheet()
    body(page)
    right_strip(page, "F1", ["CLUBHOUSE", "1ST FLR FA PLAN"], label=True)
    reading = read(_upright_on_rotated_paper(src, rotation))
    assert (reading.number, reading.title) == ("F1", "CLUBHOUSE 1ST FLR FA PLAN")


def test_sheet_displayed_sideways_is_read_along_its_text():
    """A sheet displayed sideways (its title block running up the right edge, its text
    vertical) is read in the frame of that text."""
    _, page = new_sheet()
    body(page)
    page.draw_line((36, H - 140), (W - 36, H - 140), width=1)
    text(page, 1200, H - 110, "Sheet Name", 8)
    text(page, 1200, H - 90, "STORE PLAN:  ST04", 12)
    page.set_rotation(90)
    reading = read(page)
    assert (reading.number, reading.title) == ("ST04", "STORE PLAN")


def _shx(page: pymupdf.Page, rect: pymupdf.Rect, contents: str) -> None:
    """Text a CAD export drew as outlines, recorded only in an annotation that draws nothing."""
    annot = page.add_rect_annot(rect)
    annot.set_info(content=contents, title="AutoCAD SHX Text")
    annot.set_border(width=0)
    annot.update()
    page.parent.xref_set_key(annot.xref, "AP", "null")
    page.parent.xref_set_key(annot.xref, "C", "[]")


def test_gost_stamp_from_annotation_text_only():
    """A GOST main inscription whose text exists only in annotations: the sheet is the value
    under 'Лист' (not the sheet count under 'Листов', not the album page number), the title
    the cell below the stage/sheet row, left of it."""
    doc = pymupdf.open()
    page = doc.new_page(width=W, height=H)
    page.draw_rect(pymupdf.Rect(60, 40, W - 40, H - 40), width=2)
    x0, y0 = W - 700, H - 200
    page.draw_rect(pymupdf.Rect(x0, y0, W - 40, H - 40), width=1)
    _shx(page, pymupdf.Rect(W - 100, 50, W - 60, 70), "60")
    _shx(page, pymupdf.Rect(x0 + 150, y0 + 10, x0 + 500, y0 + 30), "82/13-Р-ПИР-34714-КД")
    _shx(page, pymupdf.Rect(x0 + 400, y0 + 60, x0 + 660, y0 + 75), "Стадия Лист Листов")
    _shx(page, pymupdf.Rect(x0 + 150, y0 + 70, x0 + 390, y0 + 95), "Конкурсная документация")
    _shx(page, pymupdf.Rect(x0 + 420, y0 + 80, x0 + 436, y0 + 96), "П")
    _shx(page, pymupdf.Rect(x0 + 500, y0 + 80, x0 + 514, y0 + 96), "5")
    _shx(page, pymupdf.Rect(x0 + 600, y0 + 80, x0 + 620, y0 + 96), "12")
    _shx(page, pymupdf.Rect(x0 + 150, y0 + 110, x0 + 395, y0 + 130), "Конструкция цоколя БМЦ-2")
    reading = read(page)
    assert (reading.number, reading.title) == ("5", "Конструкция цоколя БМЦ-2")


def test_body_references_alone_give_nothing():
    """A sheet whose only sheet-number shapes are references and tags in its body has no
    number: nothing is invented."""
    _, page = new_sheet()
    body(page)
    assert read(page) == Reading()
