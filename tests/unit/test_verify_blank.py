"""Blank pages are skipped only when the text layer, objects, drawings and image all agree;
the witnesses that contradict a page declared empty are named."""

import pymupdf
import pytest
from pydantic import ValidationError

from services.verify.blank import ink_share, page_emptiness
from services.verify.tolerances import VerifyTolerances
from shared.contracts.models import PageObject
from shared.pagetext import TextLayer, Word, laid_out


def _png(text: str | None = None, alpha: bool = False) -> bytes:
    doc = pymupdf.open()
    page = doc.new_page(width=300, height=200)
    if text:
        page.insert_text((20, 100), text, fontsize=24)
    return page.get_pixmap(alpha=alpha).tobytes("png")


def _layer(has_text: bool = False, drawings: bool = False) -> TextLayer:
    words = [Word(text="NOTES", bbox=(10, 10, 60, 20))] if has_text else []
    return laid_out(
        page_number=1,
        width=300,
        height=200,
        words=words,
        has_text_layer=has_text,
        has_drawings=drawings,
    )


def test_ink_is_measured_on_the_image():
    """An empty page has no ink (transparent counts as paper); printed text does."""
    assert ink_share(_png()) == 0.0
    assert ink_share(_png(alpha=True)) == 0.0
    assert ink_share(_png("SCANNED NOTES")) > 0.01


def test_truly_blank_page_is_blank():
    """No text layer, no objects, no drawings, empty image: blank, nothing contradicts it."""
    emptiness = page_emptiness(_layer(), [], _png())
    assert emptiness.blank and emptiness.contradiction is None


def test_any_witness_of_content_makes_the_page_not_blank():
    """A text layer, drawings, an object or ink on the image each contradict blankness."""
    assert not page_emptiness(_layer(has_text=True), [], _png()).blank
    assert not page_emptiness(_layer(drawings=True), [], _png()).blank
    assert not page_emptiness(_layer(), [PageObject(object_id="a")], _png()).blank
    assert not page_emptiness(_layer(), [], _png("SCANNED NOTES")).blank
    assert not page_emptiness(_layer(), [], None).blank


def test_contradiction_names_every_witness():
    """A page declared empty is contradicted by each witness, all named in one sentence; a
    page with objects or no image to look at is not contradicted."""
    both = page_emptiness(_layer(has_text=True, drawings=True), [], _png("NOTES"))
    assert (both.contradiction or "").startswith("No objects were extracted, but the page has")
    for witness in ("a text layer (5 characters)", "vector drawings", "ink on"):
        assert witness in (both.contradiction or "")
    assert not both.ink_only
    assert page_emptiness(_layer(), [PageObject(object_id="a")], _png("X")).contradiction is None
    assert page_emptiness(_layer(), [], None).contradiction is None


def test_ink_alone_is_an_ink_only_page():
    """A raster with marks and no text layer or drawing: contradicted by its ink alone."""
    ink = page_emptiness(_layer(), [], _png("SCANNED NOTES"))
    assert ink.ink_only and "ink on" in (ink.contradiction or "") and not ink.blank


def test_the_blank_tolerances_are_passed_per_call():
    """Today's values by default; a caller's own (frozen) tolerances weigh the same image
    otherwise: a lighter mark counted as ink, a page of a little ink counted as empty."""
    assert VerifyTolerances() == VerifyTolerances(near_white=230, max_blank_ink=0.001)
    marked = _png("SCANNED NOTES")
    assert page_emptiness(_layer(), [], marked).ink_only
    tolerant = VerifyTolerances(max_blank_ink=0.5)
    assert page_emptiness(_layer(), [], marked, tolerant).blank
    assert ink_share(marked, near_white=1) < ink_share(marked) < ink_share(marked, near_white=256)
    with pytest.raises(ValidationError):
        tolerant.max_blank_ink = 0.0  # type: ignore[misc]
