"""The renderings a drawing set can arrive in besides its own PDF, made at run time with
PyMuPDF from the set's bytes (nothing stored): for measuring how the reading generalises.

- ``raster``: every page rendered at 150 dpi in grey, JPEG-compressed and placed as the only
  content of an image-only page (a scan: no text layer).
- ``outlines``: every page as SVG with its text drawn as paths, turned back into PDF (the
  page looks the same; no text layer is left, its images stay).
- ``turned90`` / ``turned270``: every page's content turned a quarter clockwise / counter-
  clockwise on a page of swapped sides with ``/Rotate 0``, as a scanner delivers a sheet fed
  sideways (the text layer, where there is one, turns with it).

Each works on the page as displayed (its ``/Rotate`` applied) and gives a page of the same
displayed size (turned: sides swapped).
"""

from collections.abc import Callable

import pymupdf

RASTER_DPI = 150
JPEG_QUALITY = 75
VARIANTS = ("raster", "outlines", "turned90", "turned270")


def raster(pdf: bytes) -> bytes:
    """Image-only PDF: each page a 150 dpi grey JPEG of itself."""
    out = pymupdf.open()
    with pymupdf.open(stream=pdf) as doc:
        for page in doc:
            pix = page.get_pixmap(dpi=RASTER_DPI, colorspace=pymupdf.csGRAY)
            target = out.new_page(width=page.rect.width, height=page.rect.height)
            target.insert_image(target.rect, stream=pix.tobytes("jpeg", jpg_quality=JPEG_QUALITY))
    return out.tobytes(garbage=3, deflate=True)


def outlines(pdf: bytes) -> bytes:
    """Each page drawn again from its SVG with text as paths: no text layer."""
    out = pymupdf.open()
    with pymupdf.open(stream=pdf) as doc:
        for page in doc:
            svg = page.get_svg_image(text_as_path=True)
            with pymupdf.open("svg", stream=svg.encode()) as drawn:
                converted = drawn.convert_to_pdf()
            with pymupdf.open("pdf", converted) as one:
                out.insert_pdf(one)
    return out.tobytes(garbage=3, deflate=True)


def turned(pdf: bytes, degrees: int) -> bytes:
    """Each page's content turned ``degrees`` (90 or 270) clockwise on a /Rotate 0 page."""
    out = pymupdf.open()
    with pymupdf.open(stream=pdf) as doc:
        for number in range(doc.page_count):
            # The page alone with its /Rotate taken off: show_pdf_page places a page's
            # unrotated content (and loses it from a rotated one), turned counter-clockwise
            # by ``rotate``; the page's /Rotate and the turn are both clockwise.
            with pymupdf.open() as one:
                one.insert_pdf(doc, from_page=number, to_page=number)
                page = one[0]
                total = (page.rotation + degrees) % 360
                page.set_rotation(0)
                width, height = page.rect.width, page.rect.height
                if total % 180:
                    width, height = height, width
                target = out.new_page(width=width, height=height)
                target.show_pdf_page(target.rect, one, 0, rotate=-total)
    return out.tobytes(garbage=3, deflate=True)


RENDER: dict[str, Callable[[bytes], bytes]] = {
    "raster": raster,
    "outlines": outlines,
    "turned90": lambda pdf: turned(pdf, 90),
    "turned270": lambda pdf: turned(pdf, 270),
}


def render(variant: str, pdf: bytes) -> bytes:
    """``pdf`` in the named rendering (one of ``VARIANTS``)."""
    return RENDER[variant](pdf)
