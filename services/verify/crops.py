"""Evidence crops: what the judge looks at.

A crop rendered from the PDF at high DPI around a located evidence bbox shows
the judge the very digits in question, sharper than any page-wide image; the
full page image stands in whenever some object in scope could not be located.
"""

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import pymupdf

from shared.contracts.models import PageObject
from shared.infra.storage import Keys
from shared.pagetext import Box

log = logging.getLogger("sheetflow.verify")

JPEG_QUALITY = 85
# Evidence crops for people: small, sharp enough to read a note, the box outlined in the
# report's problem red.
EVIDENCE_MAX_PX = 480
EVIDENCE_MAX_ZOOM = 4.0  # a tiny box is not blown up past about 288 dpi
EVIDENCE_OUTLINE = (220, 38, 38)
EVIDENCE_OUTLINE_PX = 2


@dataclass(frozen=True)
class JudgeImage:
    label: str  # what the image shows, told to the judge before the image
    data: bytes
    mime: str


@dataclass
class ImageChoice:
    """The images for one judge call, and the crops to store."""

    images: list[JudgeImage] = field(default_factory=list)
    crops: dict[str, bytes] = field(default_factory=dict)  # key under jobs/{id}/ -> JPEG
    full_page: bool = False  # the full page image was included (some object not located)
    skipped: bool = False  # no image at all: the scope is not sent to the judge


def render_crop_jpeg(
    page: pymupdf.Page,
    bbox: Box,
    dpi: int,
    margin_pts: float,
    max_pixels: int | None = None,
) -> bytes:
    """JPEG of ``bbox`` grown by ``margin_pts`` on every side, clipped to the page, at ``dpi``.

    ``max_pixels`` lowers the DPI for a huge evidence area rather than rendering
    a poster-sized image.
    """
    grow = (-margin_pts, -margin_pts, margin_pts, margin_pts)
    clip = pymupdf.Rect(bbox) + grow
    clip &= page.rect
    if clip.is_empty:
        raise ValueError(f"evidence bbox {bbox} lies outside the page {tuple(page.rect)}")
    if max_pixels:
        area_px = clip.width * clip.height * (dpi / 72) ** 2
        if area_px > max_pixels:
            dpi = max(1, int(dpi * (max_pixels / area_px) ** 0.5))
    pix = page.get_pixmap(dpi=dpi, clip=clip, alpha=False)
    return pix.tobytes("jpeg", jpg_quality=JPEG_QUALITY)


def choose_images(
    scope: Sequence[PageObject],
    evidence: dict[str, Box],
    *,
    page_number: int,
    page_png: bytes | None,
    render: Callable[[Box], bytes] | None,
    hi_dpi: bool,
    max_images: int,
) -> ImageChoice:
    """Pick the judge's images for the objects in scope.

    With hi-DPI crops on and a renderer, each object whose evidence bbox is
    located gets a crop instead of the full page, up to ``max_images``; when any
    object in scope is not located (or crops are off, or over budget), the full
    page image goes too, as it does in place of a crop that fails to render. Never zero
    images: with none, the choice is ``skipped``.
    """
    located = [o for o in scope if o.object_id in evidence]
    use_crops = hi_dpi and render is not None and max_images > 0
    needs_full = not use_crops or len(located) < len(scope) or len(located) > max_images
    budget = max(0, max_images - (1 if needs_full and page_png else 0)) if use_crops else 0

    choice = ImageChoice()
    for obj in located[:budget]:
        if render is None:  # no budget without a renderer
            break
        try:
            jpeg = render(evidence[obj.object_id])
        except Exception as exc:  # MuPDF raises many kinds on broken content
            # The judge still sees the object, on the full page (the slot this crop frees).
            log.warning("page %d: crop for %s failed (%s)", page_number, obj.object_id, exc)
            needs_full = True
            continue
        choice.crops[Keys.crop(page_number, obj.object_id)] = jpeg
        choice.images.append(
            JudgeImage(label=f"crop around object {obj.object_id}", data=jpeg, mime="image/jpeg")
        )
    if needs_full and page_png is not None:
        choice.images.append(JudgeImage(label="the full page", data=page_png, mime="image/png"))
        choice.full_page = True
    choice.skipped = not choice.images
    return choice


def render_evidence_jpeg(page: pymupdf.Page, bbox: Box, margin_pts: float) -> bytes:
    """A small JPEG of the sheet around ``bbox`` (grown by ``margin_pts``, clipped to the
    page), with ``bbox`` itself outlined: what the report shows beside a problem."""
    x0, y0, x1, y1 = bbox
    box = pymupdf.Rect(bbox) & page.rect
    m = margin_pts
    clip = pymupdf.Rect(x0 - m, y0 - m, x1 + m, y1 + m) & page.rect
    if clip.is_empty or box.is_empty:
        raise ValueError(f"evidence bbox {bbox} lies outside the page {tuple(page.rect)}")
    zoom = min(EVIDENCE_MAX_PX / max(clip.width, clip.height), EVIDENCE_MAX_ZOOM)
    matrix = pymupdf.Matrix(zoom, zoom)
    pix = page.get_pixmap(matrix=matrix, clip=clip, alpha=False)
    w = EVIDENCE_OUTLINE_PX
    inner = (box * matrix).irect
    pad = w + 1  # the outline goes around the text, not on it
    r = pymupdf.IRect(inner.x0 - pad, inner.y0 - pad, inner.x1 + pad, inner.y1 + pad)
    for edge in (
        pymupdf.IRect(r.x0, r.y0, r.x1, r.y0 + w),
        pymupdf.IRect(r.x0, r.y1 - w, r.x1, r.y1),
        pymupdf.IRect(r.x0, r.y0, r.x0 + w, r.y1),
        pymupdf.IRect(r.x1 - w, r.y0, r.x1, r.y1),
    ):
        pix.set_rect(edge & pix.irect, EVIDENCE_OUTLINE)
    return pix.tobytes("jpeg", jpg_quality=JPEG_QUALITY)
