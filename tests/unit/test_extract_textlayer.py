"""The text layer and page rendering: thresholds, words in points, sizes by pixels."""

import pymupdf

from services.extract.reading.render import check_page_size, encode_png, render_page
from services.extract.reading.textlayer import read_text_layer
from tests.support.pdfs import ARCH_D, notes_pdf, same_named_fonts_pdf


def _page(text: str, width: float = 612, height: float = 792) -> pymupdf.Page:
    doc = pymupdf.open()
    page = doc.new_page(width=width, height=height)
    if text:
        page.insert_text((72, 100), text, fontsize=10)
    return page


def test_text_layer_threshold_counts_letters_and_digits_only():
    """has_text_layer needs min_chars letters/digits; punctuation and spaces do not count."""
    assert read_text_layer(_page("A" * 20), 1, 20).has_text_layer
    assert not read_text_layer(_page("A" * 19), 1, 20).has_text_layer
    assert not read_text_layer(_page("- . - . " * 10 + "AB"), 1, 20).has_text_layer
    assert not read_text_layer(_page(""), 1, 20).has_text_layer


def test_text_layer_words_carry_pdf_point_bboxes():
    """Words come with bboxes in PDF points where they were drawn, plus page size and text."""
    layer = read_text_layer(_page("GENERAL NOTES APPLY"), 3, 5)
    assert layer.page_number == 3 and (layer.width, layer.height) == (612, 792)
    assert [w.text for w in layer.words] == ["GENERAL", "NOTES", "APPLY"]
    x0, y0, _x1, y1 = layer.words[0].bbox
    assert abs(x0 - 72) < 1 and y0 < 100 < y1 + 3
    assert "GENERAL NOTES APPLY" in layer.text and layer.source == "pdf"


def test_has_drawings_sees_vector_linework_on_a_page_without_text():
    """A text-less page with a vector line has drawings, an empty one none; a text page's
    drawings only give its ruled lines (the walls of its title block's cells)."""
    page = _page("")
    assert not read_text_layer(page, 1, 5).has_drawings
    page.draw_line((10, 10), (200, 200))
    assert read_text_layer(page, 1, 5).has_drawings
    text_page = _page("TEXT ONLY PAGE")
    text_page.draw_line((10, 10), (200, 200))
    assert not read_text_layer(text_page, 1, 5).has_drawings


def test_notes_sheet_has_a_text_layer():
    """The notes test sheet reads as text-bearing with its note numbers as words."""
    page = pymupdf.open(stream=notes_pdf())[0]
    layer = read_text_layer(page, 1, 20)
    assert layer.has_text_layer and "1." in [w.text for w in layer.words]


def test_render_long_side_follows_max_px():
    """A 36x24 in sheet renders with its long side at max_px, aspect kept."""
    pix = pymupdf.Pixmap(encode_png(render_page(_page("X", *ARCH_D), 1024, 10**8)))
    assert pix.width == 1024 and abs(pix.height - 1024 * 24 / 36) <= 1


def test_render_pixel_cap_shrinks_further():
    """The pixel cap wins over max_px and keeps the aspect ratio."""
    pix = pymupdf.Pixmap(encode_png(render_page(_page("X", *ARCH_D), 2048, 200_000)))
    assert pix.width * pix.height <= 200_000
    assert pix.width < 2048 and abs(pix.width / pix.height - 1.5) < 0.02


def test_absurd_page_size_is_refused_with_a_reason():
    """A page longer than max_side_in inches is refused in words; a letter page is fine."""
    reason = check_page_size(_page("X", 300 * 72, 100 * 72), 200)
    assert reason and "300" in reason and "inch" in reason
    assert check_page_size(_page("X"), 200) is None


def test_two_font_objects_of_one_name_are_two_fonts():
    """Words set in two font objects that share a name (ArialMT) are told apart by object:
    each font of the layer names its xref, and the legend's words are the other font's."""
    doc = pymupdf.open(stream=same_named_fonts_pdf())
    layer = read_text_layer(doc[0], 1, min_chars=20)
    assert layer.fonts == ["ArialMT", "ArialMT"]
    xrefs = {xref: name for xref, _, _, _, name, *_ in doc[0].get_fonts(full=True)}
    assert sorted(x for x in layer.font_xrefs if x is not None) == sorted(xrefs)
    by_font = {
        xrefs[layer.font_xrefs[f]]: {w.text for w in layer.words if w.font == f} for f in (0, 1)
    }
    assert by_font["F1"] >= {"GENERAL", "NOTES", "PROVIDE"}
    assert len(by_font["F2"]) == 5 and "MFHFOE;" in by_font["F2"]  # the legend, shifted
