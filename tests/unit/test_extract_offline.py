"""The deterministic extractor on tiny PDFs: notes, schedule rows, title block, tags."""

import pymupdf

from services.extract.offline import extract_offline
from services.extract.textlayer import read_text_layer
from tests.support.pdfs import NOTES, SCHEDULE_ROWS, notes_pdf, plan_pdf, schedule_pdf


def _extract(pdf: bytes):
    layer = read_text_layer(pymupdf.open(stream=pdf)[0], 1, 20)
    return layer, *extract_offline(layer)


def test_numbered_notes_rejoined_with_their_wrapped_bodies():
    """Each "1." is joined with its body and wrapped lines into one general_note."""
    layer, _, objects = _extract(notes_pdf())
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
        "MARK": "D1", "WIDTH": "3'-0\"", "HEIGHT": "7'-0\"", "TYPE": "HM", "REMARKS": "EXTERIOR"
    }
    assert rows[1].source_text == "D2 2'-10\" 7'-0\" WD OFFICE"


def test_title_block_fields_fill_the_sheet_header():
    """Labels with values below them become fields; SHEET NUMBER fills the header."""
    _, sheet, objects = _extract(plan_pdf("A101"))
    assert sheet.sheet_number == "A101" and sheet.sheet_number_source == "extraction"
    assert sheet.sheet_title == "FIRST FLOOR PLAN"
    fields = {o.attributes["label"]: o.attributes["value"] for o in objects
              if o.object_type == "title_block_field"}
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
