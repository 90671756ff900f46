"""Blank pages: skipped only when every witness agrees the page is empty."""

import pymupdf

from shared.models import PageObject, TextLayer
from shared.sources import PDF_LOCK

# A gray level at or above this is paper, not ink (scanner noise stays light).
NEAR_WHITE = 230
# Share of ink pixels at or below which an image counts as essentially empty.
MAX_BLANK_INK = 0.001

_INK_TABLE = bytes(1 if level < NEAR_WHITE else 0 for level in range(256))


def _gray_on_white(png: bytes) -> pymupdf.Pixmap:
    pix = pymupdf.Pixmap(png)
    if pix.alpha:
        # Transparent means paper: let MuPDF composite the image onto a white page.
        doc = pymupdf.open()
        page = doc.new_page(width=pix.width, height=pix.height)
        page.insert_image(page.rect, stream=png)
        return page.get_pixmap(colorspace=pymupdf.csGRAY, alpha=False)
    if pix.colorspace is None or pix.colorspace.n != 1:
        pix = pymupdf.Pixmap(pymupdf.csGRAY, pix)
    return pix


def ink_share(png: bytes) -> float:
    """Share of the image's pixels darker than near-white (transparency counts as white)."""
    with PDF_LOCK:
        samples = _gray_on_white(png).samples
    if not samples:
        return 0.0
    # translate maps each gray byte to 0/1 in C: fast on a 2048-px page image.
    return samples.translate(_INK_TABLE).count(1) / len(samples)


def is_blank_page(text_layer: TextLayer, objects: list[PageObject], png: bytes | None) -> bool:
    """True only for a page with no text layer, no objects, no vector drawing and an empty image.

    Without an image to measure, the page is not declared blank.
    """
    if text_layer.has_text_layer or objects or text_layer.has_drawings or png is None:
        return False
    return ink_share(png) <= MAX_BLANK_INK
