"""Page images sized by pixels, not DPI: a 36x24 in sheet and a letter page both come out
with the same long side."""

import math
import zlib
from typing import cast

import imagecodecs
import numpy
import pymupdf

from shared.pdf.damage import content_streams

POINTS_PER_INCH = 72.0


# What a page is rendered from: the page itself, or its display list (made once, when the
# page's words are read from it too).
Drawable = pymupdf.Page | pymupdf.DisplayList


def render_zoom(page: Drawable, max_px: int, max_pixels: int) -> float:
    """Zoom (pixels per PDF point) that makes the long side ``max_px``, shrunk further
    when the image would exceed ``max_pixels`` in total."""
    width, height = page.rect.width, page.rect.height
    zoom = max_px / max(width, height)
    if (width * zoom + 1) * (height * zoom + 1) > max_pixels:
        # Largest zoom with (w*z + 1)(h*z + 1) <= max_pixels: the +1 is the pixel MuPDF
        # may add on each side when it rounds the image size up.
        a, b, c = width * height, width + height, 1 - max_pixels
        zoom = (-b + math.sqrt(b * b - 4 * a * c)) / (2 * a)
    return zoom


def render_page(page: Drawable, max_px: int, max_pixels: int) -> pymupdf.Pixmap:
    """Render the page opaque, its long side ``max_px`` (within the pixel cap)."""
    zoom = render_zoom(page, max_px, max_pixels)
    return page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), alpha=False)


def encode_png(pixmap: pymupdf.Pixmap) -> bytes:
    """PNG of a pixmap at zlib's fastest level with no row filter: a third of the CPU of
    MuPDF's own encoder (the biggest cost of a page) for a file about a quarter larger.
    The encoder releases the GIL, so one page encodes while the next renders."""
    pixels = numpy.frombuffer(pixmap.samples_mv, numpy.uint8).reshape(
        pixmap.height, pixmap.width, pixmap.n
    )
    png = imagecodecs.png_encode(
        pixels, level=imagecodecs.PNG.COMPRESSION.SPEED, filter=imagecodecs.PNG.FILTER.NONE
    )
    return cast(bytes, png)  # a bytearray only when given one to fill (``out``)


def render_thumbnail_jpeg(page: Drawable, max_px: int = 360) -> bytes:
    """A small JPEG of the page for the report, rendered from the page's drawing (a drawing
    shrunk from the full-size image loses its hairlines to area averaging)."""
    zoom = max_px / max(page.rect.width, page.rect.height)
    pixmap = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), alpha=False)
    return pixmap.tobytes("jpeg", jpg_quality=80)


def check_page_size(page: pymupdf.Page, max_side_in: float) -> str | None:
    """A sentence refusing an absurd page (no area, or a side longer than ``max_side_in``
    inches), or None when the page is fine."""
    width_in = page.rect.width / POINTS_PER_INCH
    height_in = page.rect.height / POINTS_PER_INCH
    if width_in <= 0 or height_in <= 0:
        return "the page has no area (its width or height is zero)"
    if max(width_in, height_in) > max_side_in:
        return (
            f"the page is {width_in:.0f} x {height_in:.0f} inches, larger than the "
            f"{max_side_in:.0f}-inch limit for a drawing sheet"
        )
    return None


IMAGE_TOO_LARGE = "image_too_large"


def check_page_images(page: pymupdf.Page, max_pixels: int) -> str | None:
    """A sentence refusing a page that holds an image of more than ``max_pixels`` pixels
    (decoding it would take more memory than a page's reading has), or None. Read from the
    images' dictionaries, so nothing is decoded to find out."""
    for image in page.get_images(full=True):
        width, height = image[2], image[3]
        if width * height > max_pixels:
            return (
                f"{IMAGE_TOO_LARGE}: the page holds an image of {width} x {height} pixels, "
                f"more than the {max_pixels:,} a page's image may have "
                "(SHEETFLOW_MAX_IMAGE_PIXELS)"
            )
    return None


def check_page_content(page: pymupdf.Page, max_bytes: int) -> str | None:
    """A sentence refusing a page whose drawing instructions inflate past ``max_bytes``
    (a decompression bomb or an endless content stream), or None. Inflation stops at the
    limit, so checking costs at most ``max_bytes`` of memory."""
    doc = page.parent
    total = 0
    for xref in content_streams(doc, page.number)[0]:  # a missing part is no bomb
        raw = doc.xref_stream_raw(xref) or b""
        if "FlateDecode" in doc.xref_get_key(xref, "Filter")[1]:
            inflater = zlib.decompressobj()
            try:
                total += len(inflater.decompress(raw, max(max_bytes - total, 0) + 1))
            except zlib.error:
                total += len(raw)  # broken streams are MuPDF's to repair or refuse
        else:
            total += len(raw)
        if total > max_bytes:
            return (
                f"the page's drawing instructions exceed {max_bytes // (1024 * 1024)} MB; "
                "it looks like a decompression bomb or an endless content stream"
            )
    return None
