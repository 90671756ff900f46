"""Whether the page shows a word of its text layer: decided from the text's own properties
(render mode, opacity, size) and from the page's render (a word in the colour of its ground,
or under something opaque drawn after it, leaves no mark of its own on the image).

Text the page does not show is a way to steer a model or a reviewer with words nobody sees;
a scanner's OCR text laid invisibly over the scanned image is the legitimate case, and is
told apart here too (``over_image``).
"""

from collections.abc import Sequence

import numpy
import pymupdf

from services.extract.tolerances import VISIBILITY, VisibilityTolerances
from shared.pagetext import Box, HiddenKind

# MuPDF's per-character flags: a glyph that is neither filled nor stroked is drawn in
# render mode 3 (or 7, clip only): invisible.
_PAINTED = pymupdf.mupdf.FZ_STEXT_FILLED | pymupdf.mupdf.FZ_STEXT_STROKED


def property_hidden(span: dict, tolerances: VisibilityTolerances = VISIBILITY) -> HiddenKind | None:
    """What the text's own properties say: invisible (render mode 3, or fully
    transparent), tiny, or nothing (shown, as far as they tell)."""
    if span.get("alpha", 255) == 0:
        return "invisible"
    char_flags = span.get("char_flags")
    if char_flags is not None and not char_flags & _PAINTED:
        return "invisible"
    if 0 < span.get("size", tolerances.min_readable_pt) < tolerances.min_readable_pt:
        return "tiny"
    return None


def _rgb(color: int) -> numpy.ndarray:
    return numpy.array([(color >> 16) & 255, (color >> 8) & 255, color & 255], numpy.int16)


class PageRender:
    """The page's render as an array, to ask whether a word left a mark on it."""

    def __init__(
        self, pixmap: pymupdf.Pixmap, zoom: float, tolerances: VisibilityTolerances = VISIBILITY
    ):
        self.tolerances = tolerances
        self.pixmap = pixmap  # the array below is a view of its memory: keep it alive
        pixels = numpy.frombuffer(pixmap.samples_mv, numpy.uint8)
        self.pixels = pixels.reshape(pixmap.height, pixmap.width, pixmap.n)[:, :, :3]
        self.zoom = zoom
        self.origin = (pixmap.x, pixmap.y)

    def _window(self, box: Box, grow: int) -> tuple[int, int, int, int]:
        ox, oy = self.origin
        z = self.zoom
        height, width = self.pixels.shape[:2]
        x0 = max(0, int(box.x0 * z - ox) - grow)
        y0 = max(0, int(box.y0 * z - oy) - grow)
        x1 = min(width, int(numpy.ceil(box.x1 * z - ox)) + grow)
        y1 = min(height, int(numpy.ceil(box.y1 * z - oy)) + grow)
        return x0, y0, x1, y1

    def marked(self, box: Box) -> bool:
        """Whether the render shows anything but one flat colour in the box (True where it
        is too small on the render to tell)."""
        t = self.tolerances
        x0, y0, x1, y1 = self._window(box, 0)
        if x1 - x0 < t.min_box_px or y1 - y0 < t.min_box_px:
            return True
        inside = self.pixels[y0:y1, x0:x1].reshape(-1, 3).astype(numpy.int16)
        return bool((inside.max(axis=0) - inside.min(axis=0)).max() > t.ground_tolerance)

    def unseen(self, box: Box, color: int) -> HiddenKind | None:
        """``ground_coloured`` when the word's box holds nothing but its ground and the text
        is that colour, ``covered`` when the box holds nothing but one flat colour the text
        is not (something opaque drawn over it); None when it left a mark, or is too small
        on the render to tell."""
        t = self.tolerances
        x0, y0, x1, y1 = self._window(box, 0)
        if x1 - x0 < t.min_box_px or y1 - y0 < t.min_box_px:
            return None
        inside = self.pixels[y0:y1, x0:x1].reshape(-1, 3).astype(numpy.int16)
        flat = bool((inside.max(axis=0) - inside.min(axis=0)).max() <= t.ground_tolerance)
        if not flat:
            return None
        gx0, gy0, gx1, gy1 = self._window(box, t.ring_px)
        around = self.pixels[gy0:gy1, gx0:gx1].reshape(-1, 3).astype(numpy.int16)
        ground = numpy.median(around, axis=0)
        text = _rgb(color)
        if numpy.abs(text - ground).max() <= t.ground_tolerance:
            return "ground_coloured"
        if numpy.abs(inside.mean(axis=0) - text).max() <= t.ground_tolerance:
            return None  # a flat box of the text's own colour: a solid glyph filling its box
        return "covered"


def over_image(box: Box, images: Sequence[Box]) -> bool:
    """Whether the word's centre lies on one of the page's images."""
    centre = box.centre
    return any(image.contains(centre) for image in images)
