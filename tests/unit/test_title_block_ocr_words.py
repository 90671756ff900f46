"""The title block read from OCR words, whose boxes are the detector's, not the font's: lines
stacked closer than the boxes are tall, handwriting across a printed line, a heading's short
line printed no larger than the sheet count under it."""

import pymupdf
import pytest

from services.extract.reading.textlayer import ocr_text_layer, read_text_layer
from shared.pagetext import Box, TextLayer, Word
from shared.pagetext.layout import laid_out
from shared.pagetext.model import WordOrigin
from shared.sheet import read_title_block
from shared.sheet.reader import (
    GUESS_IN_UNNAMED_CELL,
    GUESS_ON_OCR,
    KIND_ON_NUMBER,
    LARGEST_BESIDE,
)
from shared.sheet.reading import read_sheet

W, H = 1224.0, 792.0


def _word(text: str, x0: float, y0: float, x1: float, y1: float) -> Word:
    return Word(text=text, bbox=Box(x0, y0, x1, y1), size=y1 - y0, dir=(1.0, 0.0), origin="ocr")


def _notes() -> list[Word]:
    """Ordinary print across the sheet: what the title block's print is measured against."""
    return [
        _word(
            f"NOTE {n}",
            100 + 120 * (n % 5),
            100 + 20 * (n // 5),
            180 + 120 * (n % 5),
            110 + 20 * (n // 5),
        )
        for n in range(30)
    ]


def test_title_lines_stacked_closer_than_their_boxes_are_tall_read_in_order():
    """A four-line title whose OCR boxes (12 pt) overlap the next line's (6 pt pitch): the
    rows rule joins its second and third lines into one row; they are read as two lines,
    top to bottom, not word by word along the row."""
    words = [
        *_notes(),
        _word("SHEET", 1100, 640, 1125, 648),
        _word("TITLE:", 1127, 640, 1150, 648),
        _word("FOUNDATION", 1127, 659, 1178, 669),
        _word("AND", 1127.6, 665.8, 1145.5, 677.7),
        _word("LOWER", 1145.9, 665.8, 1173.9, 677.7),
        _word("FLOOR", 1127.2, 671.2, 1152.2, 683.6),
        _word("FRAMING", 1155.1, 671.7, 1188.1, 684.3),
        _word("PLAN", 1127, 680, 1148, 691),
        _word("SHEET", 1100, 720, 1125, 728),
        _word("NUMBER:", 1127, 720, 1160, 728),
        _word("A2", 1130, 735, 1170, 765),
    ]
    layer = ocr_text_layer(words, 1, W, H)
    reading = read_title_block(layer)
    assert (reading.number, reading.title) == ("A2", "FOUNDATION AND LOWER FLOOR FRAMING PLAN")


def test_handwriting_across_the_sheet_count_is_not_its_number():
    """A date written by hand across "SHEET 5 OF 10 SHEETS", its box overlapping the printed
    words and centred above them: the count is still sheet 5, the date no part of it."""
    words = [
        *_notes(),
        _word("FINAL", 550, 300, 610, 330),
        _word("MAP", 620, 300, 670, 330),
        _word("SAMPLE", 440, 340, 560, 400),
        _word("SUBDIVISION", 570, 340, 780, 400),
        _word("SHEET", 520, 470, 560, 482),
        _word("FEBRUARY", 540, 462, 640, 480),
        _word("5", 563, 470, 570, 482),
        _word("OF", 573, 470, 590, 482),
        _word("10", 593, 470, 607, 482),
        _word("SHEETS", 610, 470, 650, 482),
    ]
    layer = ocr_text_layer(words, 1, W, H)
    reading = read_title_block(layer)
    assert reading.number == "5"
    assert reading.title == "FINAL MAP SAMPLE SUBDIVISION"


def test_a_headings_short_line_no_larger_than_the_count_stays_in_the_title():
    """ "FINAL MAP / OF / SAMPLE SUBDIVISION" whose "OF" is printed the size of the "SHEET 3 OF
    10 SHEETS" line under the heading: the title keeps it."""
    doc = pymupdf.open()
    page = doc.new_page(width=1728, height=2592)
    for y, line, size in [
        (300, "FINAL MAP", 24),
        (326, "OF", 12),
        (370, "SAMPLE SUBDIVISION", 36),
        (420, "BEING A DIVISION OF PARCEL 2 OF MAP 61", 10),
        (450, "MARCH 2025", 12),
        (480, "SHEET 3 OF 10 SHEETS", 12),
        (510, "EXAMPLE SURVEYORS INC.", 12),
    ]:
        width = pymupdf.get_text_length(line, fontsize=size)
        page.insert_text((864 - width / 2, y), line, fontsize=size)
    reading = read_title_block(read_text_layer(page, 1, min_chars=1))
    assert (reading.number, reading.title) == ("3", "FINAL MAP OF SAMPLE SUBDIVISION")


def test_a_number_on_two_lines_of_its_box_is_one_number_in_ocr_sizes():
    """ "SC20" over "-02T" in a small box at the sheet's corner: OCR's box of the dashed line
    is a quarter shorter than the first's (13 pt against 18), as a shorter line's is; it is
    still one number."""
    rules = [Box(1167, 697, 1206, 697), Box(1167, 725, 1206, 725)]
    rules += [Box(1167, 688, 1167, 769), Box(1206, 23, 1206, 769)]
    words = [
        *_notes(),
        _word("SC20", 1174, 698, 1201, 716),
        _word("-02T", 1176, 713, 1198, 726),
    ]
    reading = read_title_block(ocr_text_layer(words, 1, W, H, rules=rules))
    assert reading.number == "SC20-02T"


@pytest.mark.parametrize("origin", ["pdf", "ocr"])
def test_a_title_guessed_by_size_is_taken_from_a_text_layer_never_from_ocr(origin: WordOrigin):
    """No title field, only the largest line beside the number: the page's own text layer
    names it the title; read by OCR, whose sizes are box heights, the page abstains and
    says why."""
    words = [
        *(w.model_copy(update={"origin": origin}) for w in _notes()),
        Word(text="GROUND FLOOR PLAN", bbox=Box(1000, 700, 1150, 716), size=16, origin=origin),
        Word(text="A-201", bbox=Box(1100, 730, 1180, 760), size=30, origin=origin),
    ]
    layer = laid_out(
        words=words, page_number=1, width=W, height=H, source=origin, has_text_layer=origin == "pdf"
    )
    reading = read_title_block(layer)
    assert reading.number == "A-201"
    if origin == "pdf":
        assert (reading.title, reading.title_how) == ("GROUND FLOOR PLAN", LARGEST_BESIDE)
        assert read_sheet(layer).title_guess is None
    else:
        assert (reading.title, reading.title_words, reading.title_how) == (None, (), GUESS_ON_OCR)
        # Kept aside with where it is printed, for the set to vouch for (or not).
        guess = read_sheet(layer).title_guess
        assert guess is not None and guess.text == "GROUND FLOOR PLAN"
        assert guess.box == Box(1000, 700, 1150, 716)


def test_a_large_tag_ocr_was_unsure_of_is_no_sheet_number():
    """Large number-shaped print alone in the title block, no label: a sheet number by size,
    unless OCR read it unsurely (a tag read "D20." at 0.51): then the page has none."""
    tag = _word("A-101", 1120, 720, 1200, 760)
    sure = ocr_text_layer([*_notes(), tag.model_copy(update={"confidence": 0.99})], 1, W, H)
    assert read_title_block(sure).number == "A-101"
    doubtful = tag.model_copy(update={"text": "D20.", "confidence": 0.51})
    assert read_title_block(ocr_text_layer([*_notes(), doubtful], 1, W, H)).number is None


def test_a_number_on_two_lines_joins_however_tall_ocr_drew_its_first_line():
    """ "SC20" over "-04T" in the number box, OCR's box around "SC20" taking in a mark
    beside it (23 pt high over the second line's 13): one number, SC20-04T."""
    words = [
        *_notes(),
        _word("PLAN", 1100, 670, 1125, 678),
        _word("REF", 1127, 670, 1145, 678),
        _word("NO", 1147, 670, 1160, 678),
        _word("SC20", 1176, 695, 1205, 718),
        _word("-04T", 1176, 713, 1199, 727),
    ]
    reading = read_title_block(ocr_text_layer(words, 1, W, H))
    assert reading.number == "SC20-04T"


def _ruled_block(title_label: str, title_words: list[str]) -> TextLayer:
    """A ruled title block at the bottom right: PROJECT and an unread title label over DATE
    and SCALE, DRAWING NO. across the bottom; the title cell's words ``title_words``, within
    its walls."""
    rules = [
        *(Box(800, y, 1200, y) for y in (600, 660, 720, 780)),
        *(Box(x, 600, x, 780) for x in (800, 1200)),
        Box(1000, 600, 1000, 720),
    ]
    x, title = 1006.0, []
    for text in title_words:
        title.append(_word(text, x, 626, x + 7 * len(text), 646))
        x += 7 * len(text) + 4
    words = [
        *_notes(),
        _word("PROJECT", 804, 603, 840, 609),
        _word("RIVERSIDE", 806, 630, 880, 644),
        _word("HOUSING", 884, 630, 950, 644),
        _word(title_label, 1004, 603, 1030, 609),
        *title,
        _word("DATE", 804, 663, 830, 669),
        _word("2024-03-01", 806, 688, 880, 702),
        _word("SCALE", 1004, 663, 1034, 669),
        _word("1:100", 1006, 688, 1050, 702),
        _word("DRAWING", 804, 723, 850, 729),
        _word("NO.", 852, 723, 870, 729),
        _word("A-101", 820, 740, 900, 772),
    ]
    return ocr_text_layer(words, 1, W, H, rules=rules)


def test_a_cell_whose_label_ocr_misread_offers_its_value_for_the_set_to_vouch_for():
    """OCR read the title cell's small label as "Ttlse": the page takes no title, and offers
    the cell's value as its guess, which the set takes where other sheets print their title
    (``shared.sheet.decide``); a sheet count in such a cell is no guess."""
    reading = read_sheet(_ruled_block("Ttlse", ["GROUND", "FLOOR", "PLAN"]))
    assert reading.sheet_number == "A-101" and reading.title is None
    assert reading.title_guess is not None and reading.title_guess.text == "GROUND FLOOR PLAN"
    assert reading.title_reason == GUESS_IN_UNNAMED_CELL
    counted = read_sheet(_ruled_block("Ttlse", ["Blad", "1", "av", "4"]))
    assert counted.title_guess is None
    # The label OCR read into the value's line, misread ("Titel, tilläggstitel:"): no guess.
    glued = read_sheet(_ruled_block("Ttlse", ["Tltel", "igte:", "GROUND", "FLOOR", "PLAN"]))
    assert glued.title_guess is None


def test_a_stage_banner_is_no_title_guess():
    """The largest line beside the number is a stage banner ("PROGETTO DEFINITIVO"): no title,
    and no guess for the set to vouch for either."""
    words = [
        *_notes(),
        _word("PROGETTO", 1000, 700, 1070, 716),
        _word("DEFINITIVO", 1074, 700, 1150, 716),
        _word("A-201", 1100, 730, 1180, 760),
    ]
    reading = read_sheet(ocr_text_layer(words, 1, W, H))
    assert reading.sheet_number == "A-201"
    assert (reading.title, reading.title_guess) == (None, None)


def test_a_cell_wall_read_as_a_bracket_is_no_part_of_the_title():
    """On outlines OCR read the title cell's wall as "[" glued to a word ("[Detaljer"): the
    title is the words without it; a bracket with its partner stays."""
    walled = read_sheet(_ruled_block("TITLE", ["Plan", "2.", "etasje", "[Detaljer"]))
    assert walled.title is not None and walled.title.text == "Plan 2. etasje Detaljer"
    paired = read_sheet(_ruled_block("TITLE", ["PLAN", "[PHASE", "2]"]))
    assert paired.title is not None and paired.title.text == "PLAN [PHASE 2]"


def _counted_map(lines: list[tuple[float, float, str, float]]) -> pymupdf.Page:
    """A recorded map's sheet with no title block: (x centre, baseline, text, size) lines,
    and notes to the sheet's corners."""
    page = pymupdf.open().new_page(width=1728, height=2592)
    corners = [(100, 60, "NOTE 1", 10), (1600, 2540, "NOTE 2", 10), (100, 2540, "NOTE 3", 10)]
    for x, y, line, size in [*lines, *corners]:
        width = pymupdf.get_text_length(line, fontsize=size)
        page.insert_text((x - width / 2, y), line, fontsize=size)
    return page


_MAP_HEADING = [
    (864, 300, "FINAL MAP", 24),
    (864, 326, "OF", 12),
    (864, 370, "SAMPLE SUBDIVISION", 36),
    (864, 400, "SUBDIVISION NO. P21-104", 14),
    (864, 420, "BEING A DIVISION OF PARCEL 2 OF MAP 61", 10),
    (864, 450, "MARCH 2025", 12),
    (864, 480, "SHEET 3 OF 10 SHEETS", 12),
    (864, 510, "EXAMPLE SURVEYORS INC.", 12),
]


def test_a_sheet_counted_under_its_heading_takes_its_fields_from_the_heading():
    """A recorded map prints no title block: its subdivision number and its date are printed
    in the heading it is counted under, and are the sheet's project number and date; a date
    in a statement elsewhere on the sheet is not."""
    page = _counted_map([*_MAP_HEADING, (400, 1800, "JUNE 1, 2018", 10)])
    reading = read_sheet(read_text_layer(page, 1, min_chars=1))
    assert (reading.sheet_number, reading.sheet_title) == ("3", "FINAL MAP OF SAMPLE SUBDIVISION")
    assert reading.fields["project_number"].text == "P21-104"
    assert reading.fields["issue_date"].text == "MARCH 2025"


def test_a_heading_that_prints_two_dates_dates_no_sheet():
    """Two dates in the heading (a struck date and its replacement both read): neither is
    the sheet's; a date outside the heading does not stand in."""
    heading = [*_MAP_HEADING[:5], (864, 440, "JANUARY 2025", 12), *_MAP_HEADING[5:]]
    page = _counted_map([*heading, (400, 1800, "JUNE 1, 2018", 10)])
    reading = read_sheet(read_text_layer(page, 1, min_chars=1))
    assert reading.sheet_number == "3"
    assert "issue_date" not in reading.fields
    assert reading.fields["project_number"].text == "P21-104"


def test_a_heading_date_ocr_joined_to_the_line_above_is_read_on_its_own_row():
    """OCR read a map heading's date row as one line with the row above it (its boxes taller
    than the rows' pitch: "STATE OF CALIFORNIA FEBRUARY 2024"): the date is read on the row
    it is printed on."""

    def row(y0: float, y1: float, *texts: tuple[str, float]) -> list[Word]:
        out, x = [], 700.0
        for text, width in texts:
            out.append(_word(text, x, y0, x + width, y1))
            x += width + 8
        return out

    words = [
        *row(250, 300, ("FINAL", 120), ("MAP", 100)),
        *row(310, 335, ("OF", 40)),
        *row(345, 400, ("SAMPLE", 200), ("SUBDIVISION", 330)),
        *row(410, 430, ("SUBDIVISION", 150), ("NO.", 40), ("P21-104", 100)),
        *row(440, 482, ("STATE", 80), ("OF", 30), ("CALIFORNIA", 150)),
        _word("FEBRUARY", 826, 465, 976, 514),
        _word("2024", 984, 465, 1070, 514),
        *row(500, 525, ("SHEET", 70), ("3", 15), ("OF", 30), ("10", 30), ("SHEETS", 90)),
        _word("NOTE 1", 100, 60, 180, 72),
        _word("NOTE 2", 1500, 2500, 1600, 2512),
    ]
    layer = ocr_text_layer(words, 1, 1728, 2592)
    ids = {w.text: w.id for w in layer.words}
    state = next(line for line in layer.lines if ids["CALIFORNIA"] in line)
    others = [line for line in layer.lines if line != state and ids["FEBRUARY"] not in line]
    joined = layer.model_copy(update={"lines": [*others, [*state, ids["FEBRUARY"], ids["2024"]]]})
    reading = read_sheet(joined)
    assert (reading.sheet_number, reading.sheet_title) == ("3", "SAMPLE SUBDIVISION")
    assert reading.fields["issue_date"].text == "FEBRUARY 2024"


@pytest.mark.parametrize(
    ("line", "box", "taken"),
    [
        # Under the number in its column, naming a kind of drawing: the title.
        ("LIGHTING PLAN", Box(1100, 765, 1178, 779), True),
        ("Erdgeschossgrundriss", Box(1100, 700, 1178, 714), True),
        # In the column, but an address: no kind of drawing named, so still a guess.
        ("101 EAST MAIN STREET", Box(1100, 700, 1178, 714), False),
        # Naming a kind, but beside the number, not in its column, or further up its column
        # than two of its heights.
        ("LIGHTING PLAN", Box(960, 735, 1090, 749), False),
        ("LIGHTING PLAN", Box(1100, 650, 1178, 664), False),
    ],
)
def test_an_ocr_title_stacked_on_the_number_that_names_a_kind_of_drawing_is_taken(
    line: str, box: Box, taken: bool
):
    """A scanned sheet with no title field: the largest line stacked on the number in its
    column, naming a kind of drawing ("LIGHTING PLAN" under "E3.0"), is vouched for by its
    place and its words; anything else OCR gave by size alone stays a guess."""
    words = [*_notes(), Word(text=line, bbox=box, size=box.height, origin="ocr")]
    words.append(Word(text="E3.0", bbox=Box(1100, 730, 1180, 760), size=30, origin="ocr"))
    layer = ocr_text_layer(words, 1, W, H)
    reading = read_title_block(layer)
    assert reading.number == "E3.0"
    if taken:
        assert (reading.title, reading.title_how) == (line, KIND_ON_NUMBER)
    else:
        assert (reading.title, reading.title_guess) == (None, line)


@pytest.mark.parametrize(("x0", "number"), [(797.0, "S-101"), (803.0, "IS-101")])
def test_a_wall_ocr_read_as_a_numbers_first_letter_is_no_part_of_it(x0: float, number: str):
    """OCR read the number cell's wall as an "I" before "S-101": its box of the word starts
    before the wall, which runs inside the first letter; printed text starts after its
    cell's wall, so a word whose box starts inside the cell keeps its "I"."""
    rules = [
        *(Box(800, y, 1200, y) for y in (600, 720, 780)),
        *(Box(x, 600, x, 780) for x in (800, 1200)),
    ]
    words = [
        *_notes(),
        _word("DRAWING", 804, 723, 850, 729),
        _word("NO.", 852, 723, 870, 729),
        _word("IS-101", x0, 740, x0 + 84, 772),
    ]
    reading = read_sheet(ocr_text_layer(words, 1, W, H, rules=rules))
    assert reading.sheet_number == number
