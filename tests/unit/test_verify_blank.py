"""Blank pages are skipped only when the text layer, objects, drawings and image all agree."""

import pymupdf

from services.verify.blank import ink_share, is_blank_page
from shared.models import PageObject, TextLayer


def _png(text: str | None = None, alpha: bool = False) -> bytes:
    doc = pymupdf.open()
    page = doc.new_page(width=300, height=200)
    if text:
        page.insert_text((20, 100), text, fontsize=24)
    return page.get_pixmap(alpha=alpha).tobytes("png")


def _layer(has_text: bool = False, drawings: bool = False) -> TextLayer:
    return TextLayer(
        page_number=1,
        width=300,
        height=200,
        text="NOTES" if has_text else "",
        has_text_layer=has_text,
        has_drawings=drawings,
    )


def test_ink_is_measured_on_the_image():
    """An empty page has no ink (transparent counts as paper); printed text does."""
    assert ink_share(_png()) == 0.0
    assert ink_share(_png(alpha=True)) == 0.0
    assert ink_share(_png("SCANNED NOTES")) > 0.01


def test_truly_blank_page_is_blank():
    """No text layer, no objects, no drawings, empty image: blank."""
    assert is_blank_page(_layer(), [], _png())


def test_any_witness_of_content_makes_the_page_not_blank():
    """A text layer, drawings, an object or ink on the image each contradict blankness."""
    assert not is_blank_page(_layer(has_text=True), [], _png())
    assert not is_blank_page(_layer(drawings=True), [], _png())
    assert not is_blank_page(_layer(), [PageObject(object_id="a")], _png())
    assert not is_blank_page(_layer(), [], _png("SCANNED NOTES"))
    assert not is_blank_page(_layer(), [], None)
