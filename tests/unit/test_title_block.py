"""Sheet identity from the text layer: shapes, title-block position, discipline."""

import pymupdf
import pytest

from shared.pagetext import TextLayer, Word, laid_out
from shared.sheet import discipline_for, is_sheet_id, read_title_block, sheet_key
from shared.sheet.header import SheetHeader, sheet_header
from shared.sheet.reading import read_sheet
from shared.sheet.tokens import is_labelled_value, is_route_name

# A 36 x 24 in sheet, its title block in the right strip.
WIDTH, HEIGHT = 2592, 1728
TB_X = 2380

Text = tuple[float, float, str, float]  # x, y (baseline), text, font size


def title_block_sheet_number(layer: TextLayer) -> str | None:
    return read_title_block(layer).number


def title_block_sheet_title(layer: TextLayer) -> str | None:
    return read_title_block(layer).title


def text_layer(texts: list[Text], width: float = WIDTH, height: float = HEIGHT) -> TextLayer:
    """A real text layer: each text written at its place and size on a PyMuPDF page."""
    doc = pymupdf.open()
    page = doc.new_page(width=width, height=height)
    for x, y, text, size in texts:
        page.insert_text((x, y), text, fontsize=size)
    return laid_out(
        page_number=1,
        width=width,
        height=height,
        text=page.get_text(),
        words=[Word(text=w[4], bbox=tuple(w[:4])) for w in page.get_text("words")],
        has_text_layer=True,
    )


BODY: list[Text] = [
    (100, 120, "GENERAL NOTES", 14),
    (100, 150, "1. SEE 2/S301 FOR TYPICAL FOOTING DETAIL.", 9),
    (100, 165, "2. STEEL BEAMS W12X26 UNLESS NOTED, ASTM A992.", 9),
    (100, 180, "3. HSS6X6X1/4 POSTS AND L4X4 LINTELS.", 9),
    (100, 195, "4. REFER TO SHEET S-501 FOR CONNECTIONS.", 9),
    (900, 1500, "2", 12),
    (900, 1520, "S301", 12),
    (1200, 1600, 'FLOOR PLAN   SCALE: 1/4"=1\'-0"', 14),
]


def title_block(number: str = "A-101", number_label: str = "SHEET NUMBER") -> list[Text]:
    return [
        (TB_X, 1480, "PROJECT NO.", 6),
        (TB_X, 1495, "25177", 10),
        (TB_X, 1515, "DATE", 6),
        (TB_X, 1530, "05.29.26", 10),
        (TB_X, 1560, "SHEET TITLE", 6),
        (TB_X, 1580, "FIRST FLOOR", 14),
        (TB_X, 1598, "PLAN", 14),
        (TB_X, 1630, number_label, 6),
        (TB_X, 1680, number, 36),
    ]


def test_title_block_label_wins_over_body_references():
    """The number under SHEET NUMBER is found, not S301 / S-501 named in the body."""
    layer = text_layer(BODY + title_block())
    assert title_block_sheet_number(layer) == "A-101"


def test_recovered_identity_has_number_title_and_source():
    """The header a reading gives has the title block's number and title, source
    text_layer, and no discipline: that is for the set to say."""
    header = sheet_header(read_sheet(text_layer(BODY + title_block("S-201"))))
    fields = {"sheet_number", "sheet_title", "discipline", "sheet_number_source"}
    assert header.model_dump(include=fields) == {
        "sheet_number": "S-201",
        "sheet_title": "FIRST FLOOR PLAN",
        "discipline": None,
        "sheet_number_source": "text_layer",
    }


def test_a_number_read_from_ocr_words_is_sourced_ocr():
    """On a page whose words OCR read (no usable text layer), the same title block gives the
    same number, sourced ``ocr``, not the text layer."""
    layer = text_layer(BODY + title_block("S-201"))
    scanned = layer.model_copy(update={"source": "ocr", "has_text_layer": False})
    header = sheet_header(read_sheet(scanned))
    assert (header.sheet_number, header.sheet_number_source) == ("S-201", "ocr")


@pytest.mark.parametrize(
    "label",
    ["SHEET NO.", "SHEET #", "DWG. NO.", "DRAWING NUMBER", "DRAWING NO", "PLAN REF NO", "SHT. NO:"],
)
def test_labels_firms_use(label):
    """Each common sheet-number label leads to the value below it."""
    layer = text_layer(BODY + title_block("M2.3", number_label=label))
    assert title_block_sheet_number(layer) == "M2.3"


def test_value_right_of_label_on_same_line():
    """A value written right of its label on the same line is read."""
    texts = [*BODY, (TB_X - 200, 1690, "DWG NO.", 8), (TB_X - 150, 1690, "E0.1", 12)]
    layer = text_layer(texts)
    assert title_block_sheet_number(layer) == "E0.1"


def test_label_value_in_small_body_page():
    """A letter-size page with a label and a small value is read by the label."""
    layer = text_layer([(400, 740, "SHEET NO.", 6), (450, 740, "FP-101", 8)], 612, 792)
    assert title_block_sheet_number(layer) == "FP-101"


def test_cover_sheet_index_loses_to_the_title_block():
    """A sheet index's "SHEET NO." column is not mistaken for this sheet's number."""
    index: list[Text] = [(200, 300, "SHEET NO.", 8), (420, 300, "SHEET TITLE", 8)]
    for i, (num, title) in enumerate([("A-101", "FLOOR PLAN"), ("A-201", "ELEVATIONS")]):
        index += [(200, 320 + 15 * i, num, 9), (420, 320 + 15 * i, title, 9)]
    layer = text_layer(index + title_block("G-001"))
    assert title_block_sheet_number(layer) == "G-001"
    assert title_block_sheet_title(layer) == "FIRST FLOOR PLAN"


def test_numeric_sheet_number_only_next_to_a_label():
    """An agency's bare sheet count is read beside SHEET NO., never on its own."""
    labelled = text_layer([(TB_X, 1650, "SHEET NO.", 8), (TB_X + 60, 1650, "12", 14)])
    assert title_block_sheet_number(labelled) == "12"
    assert title_block_sheet_number(text_layer([(TB_X, 1680, "12", 36)])) is None


def test_bare_sheet_label_only_in_the_title_block():
    """A lone SHEET label works in the title block; "SEE SHEET S-501" in prose does not count."""
    assert title_block_sheet_number(text_layer(BODY + title_block("C-2", "SHEET"))) == "C-2"
    prose = text_layer([(100, 1700, "SEE SHEET S-501 FOR CONNECTIONS", 9)])
    assert title_block_sheet_number(prose) is None


def test_bare_title_label_in_the_title_block():
    """A lone TITLE label in the title block leads to the stacked title lines below it."""
    texts: list[Text] = [
        (TB_X, 1500, "TITLE:", 6),
        (TB_X, 1520, "ROOF", 14),
        (TB_X, 1538, "FRAMING PLAN", 14),
    ]
    texts += [(TB_X, 1560, "SCALE:", 6), (TB_X, 1575, "AS NOTED", 10)]
    assert title_block_sheet_title(text_layer(BODY + texts)) == "ROOF FRAMING PLAN"


def test_largest_edge_token_without_a_label():
    """With no label, the largest sheet-id text near the right/bottom edge is the number."""
    texts = [
        *BODY,
        (TB_X, 1600, "A-501", 9),  # a small reference in the title-block strip
        (TB_X, 1690, "A-101A", 40),
        (300, 800, "B-101", 40),  # large, but in the drawing body
    ]
    assert title_block_sheet_number(text_layer(texts)) == "A-101A"


def test_body_references_alone_give_nothing():
    """A page whose sheet-id text is all small body references has no recovered number."""
    layer = text_layer(BODY)
    assert title_block_sheet_number(layer) is None
    assert sheet_header(read_sheet(layer)) == SheetHeader()


@pytest.mark.parametrize(
    "text",
    ["05.29.26", "5/29/2026", "25177", "W12X26", "HSS6X6X1/4", "L4X4", '1/4"=1\'-0"', "2/S301"],
)
def test_dates_project_numbers_member_marks_and_scales_never_recovered(text):
    """Large edge text that is a date, project number, member mark or scale is not a sheet id."""
    assert title_block_sheet_number(text_layer([*BODY, (TB_X, 1690, text, 40)])) is None


def test_label_with_no_sheet_id_near_it_gives_nothing():
    """A SHEET NUMBER label whose neighbour is a date or project number yields None."""
    texts = [(TB_X, 1630, "SHEET NUMBER", 6), (TB_X, 1660, "25177", 20)]
    layer = text_layer([*texts, (TB_X + 80, 1660, "05.29.26", 20)])
    assert title_block_sheet_number(layer) is None


def test_empty_page_gives_nothing():
    """No words at all: no identity."""
    assert sheet_header(read_sheet(text_layer([]))) == SheetHeader()


@pytest.mark.parametrize(
    "token",
    [
        *("A101", "S-201", "A1.01", "M2.3", "FP-101", "E0.1", "G-001", "A-101A", "ID-201"),
        *("AD101", "PR-12-3", "C-1", "A2.1.3", "ARCH-101", "(A-101)", "S–201"),
    ],
)
def test_sheet_id_shapes(token):
    """Sheet numbers of many firms' and agencies' formats have a sheet-id shape."""
    assert is_sheet_id(token)


@pytest.mark.parametrize(
    "token",
    [
        *("05.29.26", "5/29/2026", "25177", "W12X26", "HSS6X6X1/4", "L4X4", "2X6"),
        *('1/4"=1\'-0"', "2/S301", "12'-0\"", "NOTES", "#4@12", "A", "101"),
    ],
)
def test_not_sheet_ids(token):
    """Dates, project numbers, member marks, scales, references and words are not sheet ids."""
    assert not is_sheet_id(token)


@pytest.mark.parametrize(
    ("sheet_number", "discipline"),
    [
        ("A101", "architectural"),
        ("AD-101", "architectural"),
        ("S-201", "structural"),
        ("M2.3", "mechanical"),
        ("E0.1", "electrical"),
        ("EP-101", "electrical"),
        ("P-101", "plumbing"),
        ("C-1", "civil"),
        ("L1.0", "landscape"),
        ("G-001", "general"),
        ("F-101", "fire protection"),
        ("FP-101", "fire protection"),
        ("FA-101", "fire alarm"),
        ("ID-201", "interiors"),
        ("T-101", "telecommunications"),
        ("V-101", "survey"),
        ("Q-101", "equipment"),
        ("a-101", "architectural"),
        ("PR-12-3", None),
        ("XYZQ-1", None),
        ("12", None),
        (None, None),
    ],
)
def test_discipline_for(sheet_number, discipline):
    """The designator maps to its National CAD Standard discipline in words."""
    assert discipline_for(sheet_number) == discipline


@pytest.mark.parametrize(
    "token",
    ["AB12-CD01", "AB12-02C", "A101.01", "ST01.B", "A2.R", "P01-B02-ARC-00-XX-DR-A-10050"],
)
def test_whole_token_shapes(token):
    """Two-part, dotted, letter-after-dot and ISO 19650-style numbers have a sheet-id shape."""
    assert is_sheet_id(token)


@pytest.mark.parametrize(
    ("token", "route"),
    [("I-90", True), ("SR520", True), ("NB520", True), ("A-101", False), ("S201", False)],
)
def test_route_names(token, route):
    """Road and route names are told from sheet numbers that share their shape."""
    assert is_route_name(token) is route


@pytest.mark.parametrize(
    ("token", "vouched"),
    [
        *(("COV-S", True), ("SITE", True), ("3", True), ("A-101", True), ("E0.1", True)),
        *(("TBD", False), ("N/A", False), ("231093", False), ("05.29.26", False)),
        *(("12+50", False), ("Checker", False), ("2/S301", False)),
    ],
)
def test_what_a_label_can_vouch_for(token, vouched):
    """A sheet-number label vouches for a bare count or a short code in capitals, never for
    a placeholder, a project number, a date, a station, a word or a reference."""
    assert is_labelled_value(token) is vouched


def test_sheet_numbers_compare_without_dashes_case_or_leading_zeros():
    """E-2 is E-02, A‐101 (Unicode hyphen) is a101; E-12 and A1.01/A101 stay apart."""
    assert sheet_key("E-2") == sheet_key("E-02") == sheet_key("e2")
    assert sheet_key("A\u2010101") == sheet_key("a101")
    assert sheet_key("E-12") != sheet_key("E-2")
    assert sheet_key("A1.01") != sheet_key("A101")
