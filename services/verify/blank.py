"""Blank pages: skipped only when every witness agrees the page is empty; a page declared
empty that a witness contradicts is judged."""

from dataclasses import dataclass
from functools import cache

import pymupdf

from services.verify.tolerances import VerifyTolerances
from shared.contracts.models import PageObject
from shared.pagetext import TextLayer
from shared.pdf.sources import PDF_LOCK

TOLERANCES = VerifyTolerances()


@cache
def _ink_table(near_white: int) -> bytes:
    return bytes(1 if level < near_white else 0 for level in range(256))


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


def ink_share(png: bytes, near_white: int = TOLERANCES.near_white) -> float:
    """Share of the image's pixels darker than ``near_white`` (transparency counts as white;
    scanner noise stays light)."""
    with PDF_LOCK:
        samples = _gray_on_white(png).samples
    if not samples:
        return 0.0
    # translate maps each gray byte to 0/1 in C: fast on a 2048-px page image.
    return samples.translate(_ink_table(near_white)).count(1) / len(samples)


@dataclass(frozen=True)
class Emptiness:
    """What the witnesses say about a page the extraction found nothing on.

    ``blank``: every witness agrees it is empty (skipped, never judged). ``witnesses``:
    what says it is not — a text layer, vector drawings, ink on the image — so the page
    declared empty by its extraction is contradicted. Neither, on a page with objects or
    (without its image) with no way to tell.
    """

    blank: bool = False
    witnesses: tuple[str, ...] = ()
    ink_only: bool = False  # the image's ink is the only witness (a raster, no text)

    @property
    def contradiction(self) -> str | None:
        """A sentence stating the contradiction, or None when there is none."""
        if not self.witnesses:
            return None
        return f"No objects were extracted, but the page has {' and '.join(self.witnesses)}."


def page_emptiness(
    text_layer: TextLayer,
    objects: list[PageObject],
    png: bytes | None,
    tolerances: VerifyTolerances = TOLERANCES,
) -> Emptiness:
    """Weigh a page's emptiness. A page with objects is not empty; one without is blank
    only when it has no text layer, no vector drawing and an image with no ink. Without an
    image and no other witness, it is neither blank nor contradicted."""
    if objects:
        return Emptiness()
    witnesses = []
    if text_layer.has_text_layer:
        witnesses.append(f"a text layer ({len(text_layer.text.strip())} characters)")
    if text_layer.has_drawings:
        witnesses.append("vector drawings")
    ink = ink_share(png, tolerances.near_white) if png is not None else None
    inked = ink is not None and ink > tolerances.max_blank_ink
    if inked:
        witnesses.append(f"ink on {ink:.1%} of its image")
    if witnesses:
        return Emptiness(witnesses=tuple(witnesses), ink_only=inked and len(witnesses) == 1)
    return Emptiness(blank=ink is not None)
