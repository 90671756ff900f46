"""The deterministic extractor on tiny PDFs: notes, schedule rows, title block, tags."""

import pymupdf

from services.extract.offline.extractor import extract_offline
from services.extract.reading.textlayer import read_text_layer
from services.verify.oracle import check_object
from shared.pagetext.units import page_units
from shared.sheet.fields import title_block_fields
from shared.sheet.header import sheet_header
from shared.sheet.reading import read_sheet
from tests.support.pdfs import NOTES, SCHEDULE_ROWS, notes_pdf, plan_pdf, schedule_pdf


def _extract(pdf: bytes):
    layer = read_text_layer(pymupdf.open(stream=pdf)[0], 1, 20)
    return layer, sheet_header(read_sheet(layer)), extract_offline(layer)


def test_numbered_notes_rejoined_with_their_wrapped_bodies():
    """Each "1." is joined with its body and wrapped lines into one general_note."""
    _, _, objects = _extract(notes_pdf())
    notes = [o for o in objects if o.object_type == "general_note"]
    assert [o.source_text for o in notes] == [f"{i}. {n}" for i, n in enumerate(NOTES, 1)]
    assert notes[1].attributes == {"number": "2", "text": NOTES[1]}
    assert all(o.grounding == "source_text" and o.rung == "offline" for o in notes)
    assert len({o.object_id for o in objects}) == len(objects)


def test_note_bbox_is_the_union_of_its_words():
    """A wrapped note's bbox runs from its number to the end of its last line."""
    layer, _, objects = _extract(notes_pdf())
    note = next(o for o in objects if o.source_text.startswith("2."))
    number = next(w for w in layer.words if w.text == "2.")
    last = next(w for w in layer.words if w.text == "JURISDICTION.")
    assert note.bbox[0] == number.bbox[0] and note.bbox[1] == number.bbox[1]
    assert note.bbox[3] == last.bbox[3]


def test_schedule_rows_keyed_by_header():
    """Every schedule row is one object with cells keyed by the header column."""
    _, _, objects = _extract(schedule_pdf())
    rows = [o for o in objects if o.object_type == "schedule_row"]
    assert [o.tag for o in rows] == [r[0] for r in SCHEDULE_ROWS]
    assert rows[0].attributes == {
        "MARK": "D1",
        "WIDTH": "3'-0\"",
        "HEIGHT": "7'-0\"",
        "TYPE": "HM",
        "REMARKS": "EXTERIOR",
    }
    assert rows[1].source_text == "D2 2'-10\" 7'-0\" WD OFFICE"


def test_title_block_fields_fill_the_sheet_header():
    """Labels with values below them become fields; the title-block reader every stage
    shares fills the header."""
    _, sheet, objects = _extract(plan_pdf("A101"))
    assert sheet.sheet_number == "A101" and sheet.sheet_number_source == "text_layer"
    assert sheet.sheet_title == "FIRST FLOOR PLAN"
    fields = {
        o.attributes["label"]: o.attributes["value"]
        for o in objects
        if o.object_type == "title_block_field"
    }
    assert fields["PROJECT NO"] == "25177" and fields["DATE"] == "05.29.26"
    assert fields["DRAWN BY"] == "JD"


def test_tags_dimensions_and_callouts():
    """Room tags, a door tag, dimensions and a detail callout are recognised."""
    _, _, objects = _extract(plan_pdf())
    by_text = {o.source_text: o for o in objects}
    office = by_text["OFFICE 101"]
    assert (office.object_type, office.name, office.tag) == ("tag", "OFFICE", "101")
    assert by_text["D1"].category == "door"
    assert by_text["12'-6 1/2\""].object_type == "dimension"
    assert by_text["8'-0\""].attributes == {"value": "8'-0\""}
    assert by_text["SEE DETAIL 3/A501"].attributes == {"reference": "3/A501"}


def test_blank_page_yields_nothing():
    """A page without words yields no objects and an empty header."""
    doc = pymupdf.open()
    doc.new_page()
    _, sheet, objects = _extract(doc.tobytes())
    assert objects == [] and sheet.sheet_number is None


ABBREVIATIONS = [
    ("A.F.F.", "ABOVE FINISHED FLOOR"),
    ("GYP. BD.", "GYPSUM BOARD"),
    ("HM", "HOLLOW METAL"),
    ("N.I.C.", "NOT IN CONTRACT"),
]


def _list_page(rows: list[tuple[str, str]], *, row_major: bool = True) -> bytes:
    """A two-column list; ``row_major=False`` writes the page's text column by column."""
    doc = pymupdf.open()
    page = doc.new_page(width=792, height=612)
    page.insert_text((40, 70), "ABBREVIATIONS", fontsize=14)
    cells = [(col, i, cell) for i, row in enumerate(rows) for col, cell in enumerate(row)]
    for col, i, cell in cells if row_major else sorted(cells):
        page.insert_text((40 + 100 * col, 100 + 18 * i), cell, fontsize=10)
    return doc.tobytes()


def _confirmed(layer, objects) -> list[str]:
    """The oracle's verdict on each object with a source_text (verify's text oracle)."""
    return [check_object(o, layer.words).verdict for o in objects if o.source_text]


def test_two_column_list_is_one_row_object_per_row():
    """An abbreviation list yields one schedule_row per entry with its cells in attributes,
    not one object per column, and the oracle confirms every object."""
    layer, _, objects = _extract(_list_page(ABBREVIATIONS))
    rows = [o for o in objects if o.object_type == "schedule_row"]
    assert [o.source_text for o in rows] == [f"{a} {b}" for a, b in ABBREVIATIONS]
    assert rows[1].attributes == {"col1": "GYP. BD.", "col2": "GYPSUM BOARD"}
    assert rows[1].tag == "GYP. BD."
    assert set(_confirmed(layer, objects)) == {"confirmed"}


def test_index_header_names_the_columns_and_wrapped_cells_stay_in_their_row():
    """A header row without digits over rows with digits keys the cells; a title wrapped
    onto a second line joins its row."""
    doc = pymupdf.open()
    page = doc.new_page(width=792, height=612)
    lines = [
        (100, "SHEET", "TITLE"),
        (118, "G001", "COVER SHEET"),
        (136, "A101", "FLOOR PLAN"),
        (154, "A102", "ROOF PLAN AND"),
        (167, None, "ROOF DETAILS"),
        (185, "A601", "DOORS"),
    ]
    for y, number, title in lines:
        if number:
            page.insert_text((40, y), number, fontsize=10)
        page.insert_text((120, y), title, fontsize=10)
    layer, _, objects = _extract(doc.tobytes())
    rows = {o.tag: o for o in objects if o.object_type == "schedule_row"}
    assert list(rows) == ["G001", "A101", "A102", "A601"]
    assert rows["A102"].attributes == {"SHEET": "A102", "TITLE": "ROOF PLAN AND ROOF DETAILS"}
    assert rows["A102"].source_text == "A102 ROOF PLAN AND ROOF DETAILS"
    assert set(_confirmed(layer, objects)) == {"confirmed"}


def test_room_names_over_numbers_are_tags_not_a_table():
    """Two aligned rows (room names over their numbers) are not taken for a table."""
    doc = pymupdf.open()
    page = doc.new_page(width=1224, height=792)
    for x, (name, number) in zip(
        (200, 500, 800), [("OFFICE", "101"), ("STORAGE", "102"), ("RESTROOM", "103")], strict=True
    ):
        page.insert_text((x, 300), f"{name} {number}", fontsize=12)
        page.insert_text((x, 400), name, fontsize=12)
        page.insert_text((x, 414), number, fontsize=12)
    _, _, objects = _extract(doc.tobytes())
    assert not [o for o in objects if o.object_type == "schedule_row"]
    assert {o.source_text for o in objects if o.object_type == "tag"} >= {"OFFICE 101"}


def test_list_written_column_by_column_is_still_read_by_rows():
    """A list whose text the PDF stores column by column still yields one object per row."""
    layer, _, objects = _extract(_list_page(ABBREVIATIONS, row_major=False))
    rows = [o.source_text for o in objects if o.object_type == "schedule_row"]
    assert rows == [f"{a} {b}" for a, b in ABBREVIATIONS]
    assert set(_confirmed(layer, objects)) == {"confirmed"}


def test_a_column_read_across_rows_is_never_one_object():
    """Two short rows (too few for a table) written row by row: no object strings the left
    column together, since the page never reads it that way."""
    layer, _, objects = _extract(_list_page(ABBREVIATIONS[:2]))
    texts = [o.source_text for o in objects]
    assert "A.F.F. GYP. BD." not in texts
    assert set(_confirmed(layer, objects)) == {"confirmed"}


def test_value_under_one_of_a_row_of_labels_is_its_field():
    """A title-block band (labels in a row, values in the row below) gives one field per
    label, citing the label and the value under it, never a neighbour's."""
    doc = pymupdf.open()
    page = doc.new_page(width=792, height=612)
    band = [("DATE", "05.29.26"), ("PROJECT NO.", "25177"), ("SCALE", "NTS")]
    for row, size in ((0, 6), (1, 9)):
        for i, pair in enumerate(band):
            page.insert_text((500 + 80 * i, 500 + 12 * row), pair[row], fontsize=size)
    layer, _, objects = _extract(doc.tobytes())
    fields = {o.attributes["label"]: o for o in objects if o.object_type == "title_block_field"}
    assert fields["DATE"].source_text == "DATE 05.29.26"
    assert fields["PROJECT NO."].attributes["value"] == "25177"
    assert fields["SCALE"].source_text == "SCALE NTS"
    assert set(_confirmed(layer, objects)) == {"confirmed"}


def test_revision_table_column_headers_are_not_a_label_and_its_value():
    """A revision table's header row ("REV", "DATE", "DESCRIPTION" side by side) is no field:
    neither "DATE: DESCRIPTION" nor "REV: DATE"; the sheet's own labelled date is one, and
    the page's units show the same fields."""
    doc = pymupdf.open()
    page = doc.new_page(width=792, height=612)
    page.insert_text((40, 100), "1. VERIFY ALL DIMENSIONS IN THE FIELD.", fontsize=9)
    table = [("REV", "DATE", "DESCRIPTION"), ("A", "05/14/2024", "ISSUED FOR PERMIT")]
    for row, cells in enumerate(table):
        for x, text in zip((600, 630, 690), cells, strict=True):
            page.insert_text((x, 480 + 12 * row), text, fontsize=6)
    page.insert_text((600, 540), "ISSUE DATE", fontsize=6)
    page.insert_text((600, 552), "06/01/2024", fontsize=9)
    layer, _, objects = _extract(doc.tobytes())
    fields = [
        (o.attributes["label"], o.attributes["value"])
        for o in objects
        if o.object_type == "title_block_field"
    ]
    assert fields == [("ISSUE DATE", "06/01/2024")]
    units = page_units(layer, title_block_fields(layer)).units
    assert [u.text for u in units if u.kind == "field"] == ["ISSUE DATE: 06/01/2024"]
    assert any("DESCRIPTION" in u.text and u.kind != "field" for u in units)


def test_every_object_is_one_unit_of_the_page_model():
    """An object's words are one block's lines, one table row, or one label and its value:
    never words of two neighbouring units (the chimera a reviewer cannot trust)."""
    layer, _, objects = _extract(plan_pdf())
    for obj in objects:
        blocks = {layer.block_of_line[layer.line_of_word[i]] for i in obj.evidence}
        assert len(blocks) <= 2, obj.source_text
        assert obj.source_text == " ".join(layer.words[i].text for i in obj.evidence)


def test_lists_side_by_side_are_read_entry_by_entry():
    """Two abbreviation lists set side by side (a wide gutter between them) give one object
    per entry, never a row joining an entry of each list."""
    doc = pymupdf.open()
    page = doc.new_page(width=792, height=612)
    right = [("LG", "LENGTH / LONG"), ("MAX.", "MAXIMUM"), ("MIN.", "MINIMUM"), ("N", "NORTH")]
    for i, ((a, b), (c, d)) in enumerate(zip(ABBREVIATIONS, right, strict=True)):
        y = 100 + 14 * i
        page.insert_text((40, y), a, fontsize=9)
        page.insert_text((100, y), b, fontsize=9)
        page.insert_text((360, y), c, fontsize=9)
        page.insert_text((420, y), d, fontsize=9)
    layer, _, objects = _extract(doc.tobytes())
    rows = [o.source_text for o in objects if o.object_type == "schedule_row"]
    assert rows[:2] == ["A.F.F. ABOVE FINISHED FLOOR", "LG LENGTH / LONG"]
    assert sorted(rows) == sorted(
        [f"{a} {b}" for a, b in ABBREVIATIONS] + [f"{c} {d}" for c, d in right]
    )
    assert set(_confirmed(layer, objects)) == {"confirmed"}
