"""``overlay_png`` on revision pairs made from a real corpus sheet with PyMuPDF, from page
images rendered as extract stores them: the edited units boxed and in colour, the rest grey,
and a drawing moved on its sheet (or drawn on a larger sheet) laid over its previous version
by the sheet's frame."""

from functools import cache

import imagecodecs
import numpy
import pymupdf
from numpy.typing import NDArray

from services.extract.reading.render import encode_png, render_page
from shared.infra.settings import Settings
from shared.pagetext import Box
from shared.revisions import PageImage, SheetDelta, overlay_png, sheet_delta
from shared.revisions.overlay import BLUE, BOX, BOX_PAD_PX, GREY, PALETTE, RED
from tests.support.corpus import needs_corpus
from tests.unit.test_revision_delta import original, placed, read_layer, rewritten, units

pytestmark = needs_corpus

SETTINGS = Settings(_env_file=None)


def page_image(pdf: bytes) -> PageImage:
    """Page 1's image as extract stores it (``pages/{n}/image.png``), with its page size."""
    with pymupdf.open(stream=pdf, filetype="pdf") as doc:
        page = doc[0]
        pixmap = render_page(page, SETTINGS.page_image_max_px, SETTINGS.page_image_max_pixels)
        return PageImage(encode_png(pixmap), page.rect.width, page.rect.height)


def codes_of(png: bytes) -> NDArray[numpy.int_]:
    """The overlay's pixels as palette codes (-1: a colour outside the palette)."""
    pixels = imagecodecs.png_decode(png)[..., :3]
    codes = numpy.full(pixels.shape[:2], -1)
    for code, colour in enumerate(PALETTE):
        codes[numpy.all(pixels == colour, axis=2)] = code
    return codes


@cache
def original_image() -> PageImage:
    return page_image(original()[0])


@cache
def edited_row() -> tuple[bytes, SheetDelta]:
    """The sheet with one legend row edited, and its delta."""
    pdf, layer = original()
    row = next(u for u in units() if u.kind == "row" and len(u.word_ids) >= 3)
    edited = rewritten(pdf, [([layer.words[row.word_ids[-1]]], "PLANK")])
    return edited, sheet_delta(layer, read_layer(edited))


def test_the_same_sheet_twice_is_all_grey():
    """No change: every mark grey, nothing red, blue or boxed; the new image's size."""
    image = original_image()
    codes = codes_of(overlay_png(image, image, sheet_delta(original()[1], original()[1])))
    assert codes.shape == imagecodecs.png_decode(image.png).shape[:2]
    assert (codes == -1).sum() == 0
    assert (codes == GREY).sum() > 10_000
    assert not numpy.isin(codes, [RED, BLUE, BOX]).any()


def test_an_edited_row_is_boxed_and_coloured_only_there():
    """The edited row is boxed (its outline in the box colour on all four sides), the old
    word shows in red and the new in blue inside the box, and no mark outside it is
    coloured."""
    edited, delta = edited_row()
    (change,) = delta.changes
    new = page_image(edited)
    codes = codes_of(overlay_png(original_image(), new, delta))
    zoom = codes.shape[1] / new.width
    assert change.after_bbox is not None and change.before_bbox is not None
    unit = Box.union([change.after_bbox, change.before_bbox])
    x0, y0 = int(unit.x0 * zoom) - BOX_PAD_PX, int(unit.y0 * zoom) - BOX_PAD_PX
    x1, y1 = int(unit.x1 * zoom + 1) + BOX_PAD_PX, int(unit.y1 * zoom + 1) + BOX_PAD_PX
    middle_x, middle_y = (x0 + x1) // 2, (y0 + y1) // 2
    assert codes[y0, middle_x] == BOX and codes[y1 - 1, middle_x] == BOX
    assert codes[middle_y, x0] == BOX and codes[middle_y, x1 - 1] == BOX
    inside = codes[y0:y1, x0:x1]
    assert (inside == RED).sum() > 0 and (inside == BLUE).sum() > 0
    outside = codes.copy()
    outside[y0:y1, x0:x1] = GREY
    assert not numpy.isin(outside, [RED, BLUE, BOX]).any()
    assert (outside == GREY).sum() > 10_000


def mismatch(codes: NDArray[numpy.int_]) -> float:
    """The share of the marks that only one version has."""
    coloured = numpy.isin(codes, [RED, BLUE]).sum()
    return float(coloured / max(coloured + (codes == GREY).sum(), 1))


def identity_mismatch(old: PageImage, new: PageImage) -> float:
    """The same share with the images laid corner on corner, unaligned (both the same size)."""
    old_ink = imagecodecs.png_decode(old.png).min(axis=2) < 160
    new_ink = imagecodecs.png_decode(new.png).min(axis=2) < 160
    return float((old_ink ^ new_ink).sum() / max((old_ink | new_ink).sum(), 1))


def test_a_drawing_shifted_on_its_sheet_lays_over_its_previous_version():
    """The whole drawing a little smaller and off-centre on its sheet: aligned, almost every
    mark is grey, where corner on corner most would be coloured."""
    pdf, layer = original()
    where = pymupdf.Rect(36, 24, layer.width - 12, layer.height - 8)
    shifted = placed(pdf, 1, where, (layer.width, layer.height))
    old, new = original_image(), page_image(shifted)
    delta = sheet_delta(layer, read_layer(shifted))
    assert delta.is_unchanged()
    assert mismatch(codes_of(overlay_png(old, new, delta))) < 0.05
    assert identity_mismatch(old, new) > 0.5


def test_a_drawing_on_a_larger_sheet_is_aligned_by_its_frame():
    """The sheet drawn at full size on a larger page, off its corner, with no placement
    from texts: the frames alone lay it over its previous version."""
    pdf, layer = original()
    size = (layer.width * 1.2, layer.height * 1.15)
    larger = placed(pdf, 1, pymupdf.Rect(100, 80, 100 + layer.width, 80 + layer.height), size)
    codes = codes_of(overlay_png(original_image(), page_image(larger), SheetDelta()))
    assert mismatch(codes) < 0.1
    assert not (codes == BOX).any()


def test_a_tag_erased_on_a_shifted_drawing_is_boxed_where_it_was():
    """One copy of a repeated tag erased and the drawing shifted on its sheet: the removal
    is boxed where the old tag lies once laid over the new sheet, and it shows in red there."""
    pdf, layer = original()
    texts = [u.text for u in units() if u.kind == "block"]
    tag = max(set(texts), key=texts.count)
    copies = [w for w in layer.words if w.text == tag]
    erased = copies[len(copies) // 2]
    where = pymupdf.Rect(36, 24, layer.width - 12, layer.height - 8)
    shifted = placed(rewritten(pdf, [([erased], "")]), 1, where, (layer.width, layer.height))
    delta = sheet_delta(layer, read_layer(shifted))
    (change,) = delta.changes
    assert change.kind == "removed" and delta.placement is not None
    new = page_image(shifted)
    codes = codes_of(overlay_png(original_image(), new, delta))
    zoom = codes.shape[1] / new.width
    old_place = delta.placement.box(erased.bbox)
    x0, y0 = int(old_place.x0 * zoom) - BOX_PAD_PX, int(old_place.y0 * zoom) - BOX_PAD_PX
    x1, y1 = int(old_place.x1 * zoom + 1) + BOX_PAD_PX, int(old_place.y1 * zoom + 1) + BOX_PAD_PX
    around = codes[y0 - 2 : y1 + 2, x0 - 2 : x1 + 2]
    assert (around == BOX).sum() >= 2 * (x1 - x0)  # the outline's top and bottom at least
    assert (codes[y0:y1, x0:x1] == RED).sum() > 0
