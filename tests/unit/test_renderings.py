"""The renderings a set is read again in (``tests.support.renderings``) and the scoring of
identity against what sheets print (``tests.support.identity``)."""

import pymupdf
import pytest

from tests.support.identity import Tally, same_number, same_title
from tests.support.renderings import VARIANTS, render


def _sheet() -> bytes:
    """A landscape page, stored turned (/Rotate 90), printing a number bottom right."""
    doc = pymupdf.open()
    page = doc.new_page(width=600, height=400)
    page.insert_text((480, 380), "A-101", fontsize=14)
    page.draw_rect(pymupdf.Rect(20, 20, 580, 380), width=1)
    page.set_rotation(90)
    return doc.tobytes()


@pytest.mark.parametrize("variant", VARIANTS)
def test_each_rendering_keeps_the_page_as_displayed(variant):
    """Raster and outlines give the displayed page with no text layer (the raster as one
    image); a turned page has its sides swapped, /Rotate 0, its words turned with it."""
    with pymupdf.open(stream=_sheet()) as src:
        shown = src[0].rect
    with pymupdf.open(stream=render(variant, _sheet())) as doc:
        page = doc[0]
        assert page.rotation == 0
        if variant in ("raster", "outlines"):
            assert (page.rect.width, page.rect.height) == (shown.width, shown.height)
            assert page.get_text().strip() == ""
            assert bool(page.get_images()) == (variant == "raster")
        else:
            assert (page.rect.width, page.rect.height) == (shown.height, shown.width)
            words = page.get_text("words")
            assert [w[4] for w in words] == ["A-101"]


def test_turning_moves_the_corner_the_way_a_scanner_does():
    """Turned 90° clockwise, the displayed page's bottom-right corner goes bottom-left;
    turned 270°, top-right."""
    with pymupdf.open(stream=_sheet()) as src:
        page = src[0]
        # Words come in the unrotated page's frame; the displayed page is turned from it.
        ((*box, _, _, _, _),) = page.get_text("words")
        word = pymupdf.Rect(box) * page.rotation_matrix
        shown = page.rect
    cx, cy = (word.x0 + word.x1) / 2 / shown.width, (word.y0 + word.y1) / 2 / shown.height
    for variant, expect in (("turned90", (1 - cy, cx)), ("turned270", (cy, 1 - cx))):
        with pymupdf.open(stream=render(variant, _sheet())) as doc:
            ((a0, b0, a1, b1, *_),) = doc[0].get_text("words")
            r = doc[0].rect
            got = ((a0 + a1) / 2 / r.width, (b0 + b1) / 2 / r.height)
            assert got == pytest.approx(expect, abs=0.05), variant


def test_right_and_wrong_are_told_as_the_corpus_scoring_does():
    """Numbers: dashes and spaces folded, case kept; titles: case, dashes, whitespace
    folded. A title on a page that prints none is wrong; a number there is invented."""
    assert same_number("A\u2010101", "A-101") and same_number("A 101", "A101")
    assert not same_number("a-101", "A-101") and not same_number(None, "A-101")
    assert same_title("floor  plan", "FLOOR PLAN") and not same_title("NOTES", "FLOOR PLAN")
    tally = Tally()
    tally.count("p1", ("A-101", "FLOOR PLAN"), ("A-101", "Floor plan"))
    tally.count("p2", ("A-102", None), ("A-103", "ROOF PLAN"))
    tally.count("p3", ("X9", "GENERAL NOTES"), (None, None))
    tally.count("p4", (None, "ROOF"), ("A-104", "ROOF PLAN"))
    assert (tally.numbers_right, tally.numbers_labelled) == (1, 3)
    assert (tally.numbers_wrong, tally.numbers_invented) == (1, 1)
    assert (tally.titles_right, tally.titles_labelled, tally.titles_wrong) == (1, 3, 2)
    assert tally.pages == 4 and len(tally.misses) == 6
