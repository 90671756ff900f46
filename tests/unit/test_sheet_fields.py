"""The title block's other fields (revision, issue date, project number and name, scale)
read from real text layers written with PyMuPDF: labels in several languages, values beside
or under their label, the revision table's latest row, and nothing for an empty field."""

import pymupdf
import pytest

from services.extract.reading.textlayer import ocr_text_layer, read_text_layer
from shared.pagetext import Box, TextLayer, Word
from shared.sheet.fields import read_fields, title_block_fields
from shared.sheet.normal import iso_date
from shared.sheet.reading import read_sheet

W, H = 2592, 1728
X = 2300  # the right-hand title strip

Text = tuple[float, float, str, float]


def layer(texts: list[Text]) -> TextLayer:
    doc = pymupdf.open()
    page = doc.new_page(width=W, height=H)
    page.insert_text((200, 300), "GENERAL NOTES", fontsize=10)
    page.insert_text((200, 320), "1. VERIFY ALL DIMENSIONS IN THE FIELD.", fontsize=10)
    for x, y, text, size in texts:
        page.insert_text((x, y), text, fontsize=size)
    return read_text_layer(page, 1, min_chars=1)


def values(texts: list[Text]) -> dict[str, str]:
    return {name: v.text for name, v in read_fields(layer(texts)).items()}


def test_english_labels_with_values_under_and_beside_them():
    """Each labelled field's value, under its label or after its colon, as printed."""
    found = values(
        [
            (X, 1400, "PROJECT NAME", 8),
            (X, 1420, "RIVERSIDE LIBRARY", 14),
            (X, 1460, "PROJECT NO.", 8),
            (X, 1480, "2023-117", 12),
            (X, 1520, "ISSUE DATE: 05/14/2024", 9),
            (X, 1560, 'SCALE: 1/4" = 1\'-0"', 9),
            (X, 1600, "REVISION", 8),
            (X, 1620, "C", 14),
            (X, 1680, "A-101", 40),
        ]
    )
    assert found == {
        "project_name": "RIVERSIDE LIBRARY",
        "project_number": "2023-117",
        "issue_date": "05/14/2024",
        "scale": '1/4" = 1\'-0"',
        "revision": "C",
    }


def test_german_french_spanish_and_dutch_labels():
    """Projekt-Nr., Datum, Maßstab, Index; Indice, Échelle; Revisión, Fecha; Schaal."""
    german = values(
        [
            (X, 1400, "Projekt-Nr.", 8),
            (X, 1420, "P-4711", 12),
            (X, 1460, "Datum", 8),
            (X, 1480, "13.10.2023", 12),
            (X, 1520, "Maßstab", 8),
            (X, 1540, "1:100", 12),
            (X, 1580, "Index", 8),
            (X, 1600, "B", 12),
        ]
    )
    assert german == {
        "project_number": "P-4711",
        "issue_date": "13.10.2023",
        "scale": "1:100",
        "revision": "B",
    }
    french = values([(X, 1500, "Indice : D", 10), (X, 1540, "Échelle : 1/50", 10)])
    assert french == {"revision": "D", "scale": "1/50"}  # a ratio as French sheets print it
    spanish = values([(X, 1500, "Revisión: 2", 10), (X, 1540, "Fecha: 3 MAYO 2024", 10)])
    assert spanish == {"revision": "2", "issue_date": "3 MAYO 2024"}
    dutch = values([(X, 1500, "Revisie", 8), (X, 1520, "A1", 12), (X, 1560, "Schaal 1:50", 10)])
    assert dutch == {"revision": "A1", "scale": "1:50"}


def test_empty_fields_and_placeholders_give_nothing():
    """A label over nothing, a dash or a neighbour's label: no value."""
    found = values(
        [
            (X, 1400, "SCALE @ A2:", 8),
            (X, 1420, "-", 12),
            (X, 1460, "DATE", 8),
            (X, 1520, "REV:", 8),
            (X, 1560, "DRAWN BY:", 8),
            (200, 900, "SCALE 1:100", 10),  # a view's scale, out in the drawing
        ]
    )
    assert found == {}


@pytest.mark.parametrize(
    "template",
    ["Month Day, Year", "MM/DD/YYYY", "TT.MM.JJJJ", "JJ/MM/AAAA", "DD-MM-YY", "YYYY-MM-DD"],
)
def test_a_date_field_that_prints_its_format_is_read_as_printed_with_no_iso_date(template):
    """An unfilled template's date field prints the format it wants ("Month Day, Year"): the
    sheet's date as printed, which says it is undated, with no ISO form; initials after a
    date label ("J.M.D.") are no format."""
    found = values([(X, 1460, "DATE", 8), (X, 1480, template, 12)])
    assert found == {"issue_date": template}
    assert iso_date(found["issue_date"], "day_first") is None
    assert values([(X, 1460, "DATE", 8), (X, 1480, "J.M.D.", 12)]) == {}


def test_the_revision_tables_latest_row_is_the_current_revision():
    """Without a revision field, the filled row farthest from the table's header row; the
    table's date column is a revision's date, not the sheet's."""
    rows = [(X, 1500 - 20 * i, mark, 9) for i, mark in enumerate(["1", "2", "3"])]
    descriptions = [(X + 40, 1500 - 20 * i, "ISSUED FOR REVIEW", 9) for i in range(3)]
    dates = [(X + 200, 1500 - 20 * i, f"0{i + 1}/02/2024", 9) for i in range(3)]
    header = [(X, 1520, "REV", 8), (X + 40, 1520, "DESCRIPTION", 8), (X + 200, 1520, "DATE", 8)]
    found = values([*rows, *descriptions, *dates, *header, (X, 1680, "A-101", 40)])
    assert found == {"revision": "3"}


def test_a_row_of_sign_off_cells_with_a_date_is_no_revision_tables_header():
    """ "DRN | CHECKED BY | APPROVED | DATE | SCALE" over their values: a title block's row
    of cells, its date the sheet's; with a revision mark's column on the row ("REV | DATE |
    APPROVED") it heads a revision table, whose latest row gives the revision."""
    labels = ["DRN", "CHECKED BY", "APPROVED", "DATE", "SCALE"]
    filled = ["MK", "AB", "RS", "18 OCT 2024", "1:200"]
    row: list[Text] = [(X - 300 + 70 * k, 1500, text, 6) for k, text in enumerate(labels)]
    row += [(X - 300 + 70 * k, 1512, text, 8) for k, text in enumerate(filled)]
    assert values(row) == {"issue_date": "18 OCT 2024", "scale": "1:200"}
    header = [(X, 1520, "REV", 8), (X + 40, 1520, "DATE", 8), (X + 200, 1520, "APPROVED", 8)]
    rows = [(X, 1500 - 20 * i, mark, 9) for i, mark in enumerate(["A", "B"])]
    rows += [(X + 40, 1500 - 20 * i, f"0{i + 1}/02/2024", 9) for i in range(2)]
    assert values([*header, *rows, (X, 1680, "A-101", 40)]) == {"revision": "B"}


def test_the_reading_carries_the_fields_with_their_words():
    """read_sheet puts each field in the reading with the ids of the words it came from."""
    page = layer([(X, 1600, "REVISION", 8), (X, 1620, "T0", 14), (X, 1680, "A-101", 40)])
    reading = read_sheet(page)
    revision = reading.fields["revision"]
    assert revision.text == "T0"
    assert [page.words[i].text for i in revision.word_ids] == ["T0"]


def test_a_filled_field_wins_over_an_empty_one_but_a_views_scale_fills_nothing():
    """Of two DATE fields (a stamp's empty one, a plot's filled one) the filled one is read;
    a scale printed bare after its label in the title block ("SCALE 1:20", a detail's
    title) never fills the block's empty SCALE field; a row of field labels ("Project No",
    "First Issue Date") is no revision table."""
    found = values(
        [
            (X, 1400, "DATE", 8),
            (X + 60, 1400, "12/31/2024", 8),
            (X + 150, 1440, "DATE", 6),
            (X, 1500, "SCALE @ A2:", 8),
            (X, 1520, "-", 12),
            (1700, 1560, "SCALE 1:20", 10),
        ]
    )
    assert found == {"issue_date": "12/31/2024"}
    row = values(
        [
            (X - 200, 1620, "Project No", 8),
            (X - 100, 1620, "First Issue Date", 8),
            (X - 100, 1640, "13/10/2023", 12),
        ]
    )
    assert row == {"issue_date": "13/10/2023"}


def test_the_page_reading_has_every_labelled_field_with_its_words():
    """title_block_fields gives the header's fields and the sheet's number, title and who drew
    and checked it, each with the words of its label and value; a label whose neighbour is
    the next label ("DRAWN BY" over "CHECKED BY:") or a placeholder is no field."""
    page = layer(
        [
            (X, 1360, "SHEET TITLE", 8),
            (X, 1380, "FIRST FLOOR PLAN", 14),
            (X, 1420, "DRAWN BY", 8),
            (X, 1440, "CHECKED BY:", 8),
            (X + 60, 1440, "KL", 8),
            (X, 1480, "ISSUE DATE: 05/14/2024", 9),
            (X, 1520, "DATE", 8),
            (X, 1540, "-", 12),
            (X, 1590, "SHEET NO.", 8),
            (X, 1630, "A-101", 30),
        ]
    )
    fields = {f.label: f for f in title_block_fields(page)}
    assert {label: f.value for label, f in fields.items()} == {
        "SHEET TITLE": "FIRST FLOOR PLAN",
        "CHECKED BY": "KL",
        "ISSUE DATE": "05/14/2024",
        "SHEET NO.": "A-101",
    }
    words = [page.words[i].text for i in fields["SHEET TITLE"].word_ids]
    assert words == ["SHEET", "TITLE", "FIRST", "FLOOR", "PLAN"]
    assert values([(X, 1480, "ISSUE DATE: 05/14/2024", 9)]) == {"issue_date": "05/14/2024"}


def test_a_title_block_without_a_scale_field_takes_the_one_scale_its_views_print():
    """A block with no scale field: the scale printed under every view's title, when the
    views print one; views at two scales, or only "AS SHOWN", give none; a block's empty
    SCALE field stays empty whatever the views print."""
    views: list[Text] = [(400, 900, "FIRST FLOOR PLAN", 18), (400, 920, '1/8" = 1\'-0"', 10)]
    views += [(1300, 900, "SECOND FLOOR PLAN", 18), (1300, 920, '1/8" = 1\'-0"', 10)]
    block: list[Text] = [(X, 1600, "SHEET", 8), (X, 1680, "A-101", 40)]
    assert values(views + block) == {"scale": '1/8" = 1\'-0"'}
    labelled: list[Text] = [(400, 900, "DETAIL 3", 18), (400, 920, "SCALE: 1:20", 10)]
    assert values(labelled + block) == {"scale": "1:20"}
    two = [*views[:3], (1300, 920, '1/4" = 1\'-0"', 10)]
    assert values(two + block) == {}
    assert values([(400, 920, "AS SHOWN", 10), *block]) == {}
    empty_field: list[Text] = [(X, 1500, "SCALE:", 8), (X, 1520, "-", 12)]
    assert values(views + empty_field + block) == {}


def test_details_not_to_scale_name_the_sheets_scale_in_any_language_or_abbreviation():
    """A block with no scale field whose details all say they have no scale ("NOT TO SCALE"
    under one, "N.T.S." under another: the same thing) has that scale; one detail at 1:20
    beside them means the sheet has no one scale, and a note that says a detail is not to
    scale does not give it one."""
    block: list[Text] = [(X, 1600, "SHEET", 8), (X, 1680, "C-501", 40)]
    details: list[Text] = [(400, 900, "DETAIL A", 18), (400, 920, "NOT TO SCALE", 10)]
    details += [(1300, 900, "DETAIL B", 18), (1300, 920, "N.T.S.", 10)]
    assert values(details + block) == {"scale": "NOT TO SCALE"}
    assert values([(400, 900, "DETAIL A", 18), (400, 920, "SANS ÉCHELLE", 10), *block]) == {
        "scale": "SANS ÉCHELLE"
    }
    one_at_scale = [*details, (1900, 900, "DETAIL C", 18), (1900, 920, "1:20", 10)]
    assert values(one_at_scale + block) == {}
    note: list[Text] = [(400, 940, "2. DETAIL C IS NOT TO SCALE.", 10)]
    assert values(one_at_scale + note + block) == {}


def test_a_scale_in_brackets_with_its_label_and_feet_in_decimals():
    """ "(SCALE: 1\" = 20.0' PREFERRED)" under a view's title: the value is what the
    brackets hold after the label, a decimal number of feet included, without the bracket
    that closes them; a bracket the value opens is its own."""
    view: list[Text] = [(400, 900, "SITE PLAN", 18)]
    found = values([*view, (400, 920, "(SCALE: 1\" = 20.0' PREFERRED)", 10)])
    assert found == {"scale": "1\" = 20.0' PREFERRED"}
    assert values([(X, 1500, "SCALE: 1:50 (A1)", 9)]) == {"scale": "1:50 (A1)"}


def test_dins_scale_sign_labels_a_scale_and_a_lone_m_is_a_mark():
    """DIN's "M." over its scale and "M" before it on its line label the scale; a lone "M"
    in the block (a grid line's or a detail's mark) is no empty scale field, so the one
    scale the views print is still the sheet's."""
    assert values([(X, 1500, "M.", 8), (X, 1520, "wie angegeben", 12)]) == {
        "scale": "wie angegeben"
    }
    assert values([(X, 1500, "M 1:50", 9)]) == {"scale": "1:50"}
    assert values([(X, 1500, "M:", 8), (X, 1520, "siehe Plan", 12)]) == {"scale": "siehe Plan"}
    view: list[Text] = [(400, 900, "GRUNDRISS EG", 18), (400, 920, "1:100", 10)]
    assert values([*view, (X, 1500, "M", 8)]) == {"scale": "1:100"}


def test_gosts_cyrillic_m_before_its_scale_labels_the_scale():
    """ "М 1:100" (Cyrillic М) in the title block labels its scale as a Latin "M" does: the
    sheet's scale, though a view prints another."""
    page = pymupdf.open().new_page(width=W, height=H)
    page.insert_font(fontname="cjk", fontbuffer=pymupdf.Font("cjk").buffer)
    page.insert_text((X, 1500), "\u041c 1:100", fontsize=9, fontname="cjk")
    page.insert_text((400, 900), "PLAN 1:50", fontsize=10)
    page.insert_text((200, 300), "GENERAL NOTES", fontsize=10)
    found = read_fields(read_text_layer(page, 1, min_chars=1))
    assert {name: v.text for name, v in found.items()} == {"scale": "1:100"}


def test_a_scale_printed_feet_first_is_a_scale():
    """ "1'=1/8"" (a foot to an eighth of an inch, the usual scale written the other way
    round) is the title block's scale."""
    found = values([(X, 1600, "SCALE", 8), (X, 1620, "1'=1/8\"", 12), (X, 1680, "A-101", 40)])
    assert found == {"scale": "1'=1/8\""}


def test_labels_dates_and_scales_of_other_languages():
    """The vocabulary's labels in any language and case, a misspelled label standing alone,
    dates with month names, a scale's words ("Se ritning") and a ratio printed "1/100", a
    mark in lower case."""
    italian = values(
        [
            (X, 1400, "Revisione", 8),
            (X, 1420, "b", 14),
            (X, 1460, "Data di emissione", 8),
            (X, 1480, "12 marzo 2024", 12),
            (X, 1520, "Scala", 8),
            (X, 1540, "1/100", 12),
            (X, 1580, "N. commessa", 8),
            (X, 1600, "P22.519", 12),
        ]
    )
    assert italian == {
        "revision": "b",
        "issue_date": "12 marzo 2024",
        "scale": "1/100",
        "project_number": "P22.519",
    }
    swedish = values([(X, 1400, "SKALA", 8), (X, 1420, "Se ritning", 12)])
    assert swedish == {"scale": "Se ritning"}
    misspelled = values([(X, 1400, "Masstab", 8), (X, 1420, "1:50", 12)])
    assert misspelled == {"scale": "1:50"}
    portuguese = values([(X, 1400, "Data:", 8), (X, 1420, "FEVEREIRO2024", 12)])
    assert portuguese == {"issue_date": "FEVEREIRO2024"}  # OCR's glued month and year
    # Norwegian's "Oppdrag nr.", misspelt by a template as "Oppdarg nr.".
    norwegian = values([(X, 1400, "Oppdarg nr.", 8), (X, 1420, "0048", 12)])
    assert norwegian == {"project_number": "0048"}


def test_two_cells_labels_on_one_line_and_a_title_blocks_rev_and_date_cells():
    """Labels of neighbouring cells read as one line each label the value under them, and a
    revision and a date label side by side over one row of values are a title block's
    cells, not a revision table's header."""
    one_line = values(
        [
            (X - 200, 1400, "PROJECT NUMBER:        ISSUE DATE:", 8),
            (X - 200, 1420, "P21.78", 12),
            (X - 106, 1420, "2023-04-17", 12),  # under ISSUE DATE
        ]
    )
    assert one_line == {"project_number": "P21.78", "issue_date": "2023-04-17"}
    iso_row = values(
        [
            (X - 200, 1500, "Rev.", 8),
            (X - 140, 1500, "Date d'édition", 8),
            (X - 40, 1500, "Langue", 8),
            (X - 200, 1520, "P03", 12),
            (X - 140, 1520, "14.02.2021", 12),
            (X - 40, 1520, "fr", 12),
        ]
    )
    assert iso_row == {"revision": "P03", "issue_date": "14.02.2021"}


def test_a_gost_change_tables_last_row_is_the_current_change():
    """GOST 2.104's change table grows up from its header ("Изм. | Кол.уч. | Лист | № док. |
    Подп. | Дата"): the mark of its top filled row is the current revision; the signature
    rows under the header ("Разраб.", a name, a month) are no change."""
    doc = pymupdf.open()
    page = doc.new_page(width=W, height=H)
    page.insert_font(fontname="cjk", fontbuffer=pymupdf.Font("cjk").buffer)
    page.insert_text((200, 300), "ОБЩИЕ УКАЗАНИЯ", fontsize=10, fontname="cjk")
    heads = ["Изм.", "Кол.уч.", "Лист", "№ док.", "Подп.", "Дата"]
    rows = [["2", "-", "", "17", "", "03.25"], ["1", "-", "", "12", "", "01.25"], heads]
    rows += [["Разраб.", "", "Иванов", "", "", "05.21"]]
    for k, row in enumerate(rows):
        for x, text in zip(range(X - 300, X + 300, 50), row, strict=False):
            if text:
                page.insert_text((x, 1500 + 14 * k), text, fontsize=6, fontname="cjk")
    page.insert_text((X, 1680), "0624-ЭОМ", fontsize=20, fontname="cjk")
    assert read_fields(read_text_layer(page, 1, min_chars=1))["revision"].text == "2"


def test_a_profiles_horizontal_and_vertical_scales_are_one_scale_across_its_grid():
    """A profile prints its two scales on two lines, and its grid's lines cross them: the
    sheet's scale is the pair."""
    doc = pymupdf.open()
    page = doc.new_page(width=W, height=H)
    for y in (300, 900):
        page.insert_text((200, y), "SCALE: 1\" = 50' HORIZONTAL", fontsize=14)
        page.insert_text((255, y + 17), "1\" = 10' VERTICAL", fontsize=14)
    for x in range(150, 700, 24):  # the profile's grid, through the scale's words
        page.draw_line((x, 100), (x, 1200), width=0.5)
    page.insert_text((X, 1680), "C-501", fontsize=40)
    found = read_fields(read_text_layer(page, 1, min_chars=1))
    assert found["scale"].text == "1\" = 50' HORIZONTAL, 1\" = 10' VERTICAL"


def test_views_at_one_scale_read_with_curly_marks_or_primes_name_the_sheets_scale():
    """One view's scale read with curly inch and foot marks (as OCR reads them), another's
    with typeset primes: one scale, the sheet's, as the first view prints it."""

    def word(text: str, x: float, y: float) -> Word:
        box = Box(x, y, x + 9 * len(text), y + 14)
        return Word(text=text, bbox=box, size=14, dir=(1.0, 0.0), origin="ocr")

    def line(texts: list[str], x: float, y: float) -> list[Word]:
        out = []
        for text in texts:
            out.append(word(text, x, y))
            x = out[-1].bbox.x1 + 4
        return out

    words = [word(f"NOTE {n}", 200 + 300 * (n % 6), 100 + 40 * (n // 6)) for n in range(24)]
    for x, marks in ((200, ["1”", "=", "200’"]), (900, ["1″", "=", "200′"])):
        words += [*line(["PLAN"], x, 700), *line(marks, x, 730)]
    words.append(word("C-502", X, 1680))
    found = read_fields(ocr_text_layer(words, 1, W, H))
    assert found["scale"].text == "1” = 200’"


def test_a_note_that_the_drawing_is_not_to_scale_names_the_sheets_scale():
    """ "THE ONE-LINE DIAGRAM IS NOT TO SCALE." in a note, and no other scale on the sheet:
    the sheet is not to scale. "DO NOT SCALE DRAWINGS" says nothing of the scale, and a view
    printed at 1/8" = 1'-0" is the sheet's scale whatever a note says of something on it."""
    note = (200, 600, "THE ONE-LINE DIAGRAM IS NOT TO SCALE. ALL STATIONING IS APPROXIMATE.", 9)
    number = (X, 1680, "ITS-01", 40)
    assert values([note, number]) == {"scale": "NOT TO SCALE"}
    assert "scale" not in values([(200, 600, "DO NOT SCALE DRAWINGS.", 9), number])
    plan = [(900, 500, "FLOOR PLAN", 12), (900, 520, '1/8" = 1\'-0"', 10)]
    assert values([note, *plan, number]) == {"scale": '1/8" = 1\'-0"'}


def test_a_detail_marked_nts_with_its_stops_is_a_scale_line():
    """ "N.T.S." under a detail, its last stop printed: a scale as much as "NTS" is."""
    block: list[Text] = [(X, 1600, "SHEET", 8), (X, 1680, "C-502", 40)]
    assert values([(400, 900, "DETAIL A", 18), (400, 920, "N.T.S.", 10), *block]) == {
        "scale": "N.T.S."
    }


def test_not_to_scale_beside_a_graphic_scale_names_no_scale():
    """A cover's vicinity map marked "N.T.S." and its plans measured by graphic scales: the
    sheet has no one scale, in any language the vocabulary holds."""
    number = (X, 1680, "UC-1", 40)
    vicinity = [(400, 900, "VICINITY MAP", 18), (400, 920, "N.T.S.", 10)]
    assert values([*vicinity, number]) == {"scale": "N.T.S."}
    for heading in ("GRAPHIC SCALES", "SCALE IN FEET", "Maßstabsleiste", "échelle graphique"):
        bar = [(1200, 1300, heading, 12), (1200, 1320, "0 50 100", 8)]
        assert "scale" not in values([*vicinity, *bar, number]), heading
