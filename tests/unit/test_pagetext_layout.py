"""The one model of a page's text: the reader (rotation, size, direction, annotations) and the
one rule for lines and blocks."""

import pymupdf
import pytest
from pydantic import ValidationError

from services.extract.reading.textlayer import read_text_layer
from shared.pagetext import TextLayer, Word, laid_out


def _read(page: pymupdf.Page) -> TextLayer:
    return read_text_layer(page, 1, min_chars=1)


def test_rotated_page_words_are_in_the_displayed_frame():
    """On a /Rotate 90 page, words come out where a person sees them: the text written along
    the unrotated page's top reads left to right near the displayed page's right edge."""
    doc = pymupdf.open()
    page = doc.new_page(width=792, height=612)
    page.insert_text((72, 72), "SHEET A-101", fontsize=20)
    page.set_rotation(90)
    layer = _read(page)
    assert (layer.width, layer.height, layer.rotation) == (612, 792, 90)
    sheet = next(w for w in layer.words if w.text == "SHEET")
    assert sheet.bbox[0] > 0.8 * layer.width  # near the displayed right edge
    assert sheet.dir == (0.0, 1.0)  # reads downward on the displayed page
    assert layer.line_texts == ["SHEET A-101"]
    # A crop cut from the displayed page at that box shows ink (rotation handled once).
    pix = page.get_pixmap(clip=pymupdf.Rect(sheet.bbox), alpha=False)
    assert min(pix.samples) < 128


def test_vertical_text_forms_lines_of_its_own_direction():
    """Text set vertically beside horizontal text forms its own lines, never joined with the
    horizontal words it happens to sit beside."""
    doc = pymupdf.open()
    page = doc.new_page(width=792, height=612)
    page.insert_text((100, 300), "PROJECT NAME HERE", fontsize=12, rotate=90)
    page.insert_text((120, 300), "FIRST FLOOR PLAN", fontsize=12)
    layer = _read(page)
    assert sorted(layer.line_texts) == ["FIRST FLOOR PLAN", "PROJECT NAME HERE"]


def test_size_comes_from_the_font():
    """Each word carries its span's font size."""
    doc = pymupdf.open()
    page = doc.new_page(width=792, height=612)
    page.insert_text((600, 560), "A-101", fontsize=28)
    page.insert_text((600, 580), "SHEET NUMBER", fontsize=7)
    sizes = {w.text: w.size for w in _read(page).words}
    assert sizes["A-101"] == pytest.approx(28) and sizes["NUMBER"] == pytest.approx(7)


def test_a_wide_gap_and_a_size_jump_split_a_line():
    """Two labels on one baseline far apart, or a small label beside a big number, are
    separate lines."""
    doc = pymupdf.open()
    page = doc.new_page(width=792, height=612)
    page.insert_text((50, 100), "OFFICE", fontsize=10)
    page.insert_text((200, 100), "STORAGE", fontsize=10)
    page.insert_text((50, 200), "SHEET", fontsize=8)
    page.insert_text((85, 200), "S101", fontsize=24)
    assert sorted(_read(page).line_texts) == ["OFFICE", "S101", "SHEET", "STORAGE"]


def test_note_number_joins_its_body_and_opens_a_block():
    """ "1." set apart from its text joins it; a wrapped note is one block; the next note
    starts a new one."""
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    page.insert_text((40, 100), "1.", fontsize=10)
    page.insert_text((60, 100), "VERIFY ALL DIMENSIONS IN THE", fontsize=10)
    page.insert_text((60, 112), "FIELD BEFORE STARTING.", fontsize=10)
    page.insert_text((40, 124), "A.2.", fontsize=10)
    page.insert_text((60, 124), "DO NOT SCALE.", fontsize=10)
    layer = _read(page)
    blocks = [[layer.line_texts[i] for i in block] for block in layer.blocks]
    assert blocks == [
        ["1. VERIFY ALL DIMENSIONS IN THE", "FIELD BEFORE STARTING."],
        ["A.2. DO NOT SCALE."],
    ]
    assert layer.text == "\n".join(line for block in blocks for line in block)


def test_lines_the_text_layer_does_not_read_in_turn_are_not_one_block():
    """Two stacked cells of a table column (the layer reads each row across first) stay
    apart: a block is what the page itself reads as one run."""
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    for row, (code, meaning) in enumerate([("HM", "HOLLOW METAL"), ("WD", "WOOD")]):
        page.insert_text((40, 100 + 12 * row), code, fontsize=10)
        page.insert_text((140, 100 + 12 * row), meaning, fontsize=10)
    layer = _read(page)
    assert all(len(block) == 1 for block in layer.blocks)


def _annotated_page(flatten: bool) -> pymupdf.Page:
    doc = pymupdf.open()
    page = doc.new_page(width=792, height=612)
    page.insert_text((50, 50), "GENERAL NOTES", fontsize=10)
    # A CAD export: text drawn as outlines, recorded in an annotation that draws nothing.
    shx = page.add_rect_annot(pymupdf.Rect(300, 300, 420, 312))
    shx.set_info(content="PUMP ROOM 104", title="AutoCAD SHX Text")
    shx.set_border(width=0)
    shx.update()
    doc.xref_set_key(shx.xref, "AP", "null")
    doc.xref_set_key(shx.xref, "C", "[]")
    # A reviewer's comment on a drawn cloud: not the sheet's text.
    cloud = page.add_rect_annot(pymupdf.Rect(100, 400, 200, 450))
    cloud.set_info(content="please check this")
    cloud.set_colors(stroke=(1, 0, 0))
    cloud.update()
    note = page.add_freetext_annot(pymupdf.Rect(500, 100, 700, 130), "FIELD VERIFY", fontsize=10)
    note.update()
    if flatten:
        page.insert_text((505, 115), "FIELD VERIFY", fontsize=10)
    return page


def test_annotation_text_joins_the_model_marked_with_its_origin():
    """Text found only in an annotation that draws nothing (CAD SHX text) joins the words as
    origin "annotation"; a comment on a drawn mark does not; a free-text box's words come
    once, from its appearance, which the text layer reads."""
    layer = _read(_annotated_page(flatten=False))
    origins = {w.text: w.origin for w in layer.words}
    assert origins["GENERAL"] == "pdf"
    assert origins["PUMP"] == origins["104"] == "annotation"
    assert "please" not in origins
    assert "PUMP ROOM 104" in layer.line_texts
    assert [w.origin for w in layer.words if w.text == "FIELD"] == ["pdf"]


def test_annotation_text_the_page_already_prints_is_not_doubled():
    """A free-text box whose words the text layer prints where it sits adds nothing more."""
    layer = _read(_annotated_page(flatten=True))
    assert {w.origin for w in layer.words if w.text == "FIELD"} == {"pdf"}


def test_ids_are_the_layers_order_and_layout_is_computed_once():
    """Word ids are their index; a layer built from words gets its lines and blocks, and a
    stored layer keeps the ones it was saved with."""
    words = [Word(text="HELLO", bbox=(0, 0, 30, 10)), Word(text="WORLD", bbox=(34, 0, 64, 10))]
    layer = laid_out(page_number=1, width=100, height=100, words=words, has_text_layer=True)
    assert [w.id for w in layer.words] == [0, 1] and layer.lines == [[0, 1]]
    again = TextLayer.model_validate_json(layer.model_dump_json())
    assert again.lines == layer.lines and again.blocks == layer.blocks
    assert again.text == "HELLO WORLD"
    assert [w.id for w in words] == [-1, -1], "the caller's words are left as they were"


def test_a_stored_layer_is_loaded_as_stored_never_laid_out_again():
    """Loading ``text.json`` keeps its lines even where the layout would group differently;
    words without lines were never laid out and are refused."""
    words = [Word(text="HELLO", bbox=(0, 0, 30, 10)), Word(text="WORLD", bbox=(34, 0, 64, 10))]
    stored = laid_out(page_number=1, width=100, height=100, words=words, has_text_layer=True)
    data = stored.model_dump() | {"lines": [[0], [1]], "blocks": [[0], [1]]}
    assert TextLayer.model_validate(data).lines == [[0], [1]]
    with pytest.raises(ValidationError, match="laid_out"):
        TextLayer.model_validate(stored.model_dump() | {"lines": [], "blocks": []})
