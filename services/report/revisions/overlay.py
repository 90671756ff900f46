"""What changed on a sheet, in a picture: the two versions laid over each other, the previous
in red, the new in blue, what both print in grey, each changed unit boxed.

Made from the two page images extract already stored (``pages/{n}/image.png``) and the pages'
sizes, never by rendering the PDFs again: decoding two PNGs costs a small part of one render
of an E-size sheet, and the register has the images at hand. The images are aligned by the
sheet's frame (its drawing border: the outermost long ruled lines), so a sheet re-issued on
another paper size or with its drawing shifted on the page still lays over its previous
version; a sheet without a border is aligned page to page.
"""

from dataclasses import dataclass
from typing import cast

import imagecodecs
import numpy
from numpy.typing import NDArray

from services.report.revisions.delta import SheetDelta
from shared.pagetext import Box

# A pixel darker than this (in its darkest channel) is ink: coloured linework counts too.
INK_BELOW = 160
# A frame line runs along at least this share of the image's side.
FRAME_LINE_SHARE = 0.5
# Two frames agree when their aspect ratios are within this share of each other.
FRAME_ASPECT_TOLERANCE = 0.03
# Ink of one version within this many pixels of the other's is the same line, a pixel off.
ALIGN_SLACK_PX = 1

# The overlay's colours, by the code a pixel gets.
WHITE, GREY, RED, BLUE, BOX = range(5)
PALETTE = numpy.array(
    [
        (255, 255, 255),  # no ink on either version
        (170, 170, 170),  # ink on both: unchanged
        (220, 30, 30),  # only the previous version: removed
        (30, 70, 230),  # only the new version: added
        (255, 150, 0),  # a changed unit's box
    ],
    numpy.uint8,
)
BOX_WIDTH_PX = 3
BOX_PAD_PX = 4


@dataclass(frozen=True)
class PageImage:
    """A stored page image with the size of the page it shows (PDF points)."""

    png: bytes
    width: float
    height: float


@dataclass(frozen=True)
class _Frame:
    """A rectangle in an image's pixels."""

    x0: float
    y0: float
    x1: float
    y1: float

    @property
    def aspect(self) -> float:
        return (self.x1 - self.x0) / max(self.y1 - self.y0, 1.0)


def overlay_png(before: PageImage, after: PageImage, delta: SheetDelta) -> bytes:
    """The overlay of ``before`` and ``after`` on the new image's pixels, as a PNG: red
    where only the previous version has ink, blue where only the new one has, grey where
    both have, and the delta's changed units boxed (their boxes on both sheets)."""
    old_ink, new_ink = _ink(before.png), _ink(after.png)
    height, width = new_ink.shape
    old_frame, new_frame = _frame(old_ink), _frame(new_ink)
    if old_frame is None or new_frame is None or not _agree(old_frame, new_frame):
        old_frame = _Frame(0, 0, old_ink.shape[1], old_ink.shape[0])
        new_frame = _Frame(0, 0, width, height)
    # Each pixel of the new image looks up the old image's pixel at the same place of the frame.
    sx = (old_frame.x1 - old_frame.x0) / max(new_frame.x1 - new_frame.x0, 1.0)
    sy = (old_frame.y1 - old_frame.y0) / max(new_frame.y1 - new_frame.y0, 1.0)
    cols = numpy.rint((numpy.arange(width) - new_frame.x0) * sx + old_frame.x0).astype(numpy.intp)
    rows = numpy.rint((numpy.arange(height) - new_frame.y0) * sy + old_frame.y0).astype(numpy.intp)
    inside_x = (cols >= 0) & (cols < old_ink.shape[1])
    inside_y = (rows >= 0) & (rows < old_ink.shape[0])
    old_aligned = old_ink[
        numpy.ix_(
            numpy.clip(rows, 0, old_ink.shape[0] - 1), numpy.clip(cols, 0, old_ink.shape[1] - 1)
        )
    ]
    old_aligned &= inside_y[:, None] & inside_x[None, :]

    # One code per pixel (an index into PALETTE), coloured once at the end.
    codes = numpy.zeros((height, width), numpy.uint8)
    # Ink within the slack of the other version's ink is the same line: grey, not colour.
    codes[old_aligned | new_ink] = GREY
    codes[old_aligned & ~_grown(new_ink)] = RED
    codes[new_ink & ~_grown(old_aligned)] = BLUE

    new_zoom = (width / after.width, height / after.height)
    old_zoom = (old_ink.shape[1] / before.width, old_ink.shape[0] / before.height)
    for change in delta.changes:
        if change.after_bbox is not None:
            _draw_box(codes, _scaled(change.after_bbox, new_zoom))
        if change.before_bbox is not None:
            in_old = _scaled(change.before_bbox, old_zoom)
            _draw_box(
                codes,
                Box(
                    (in_old.x0 - old_frame.x0) / sx + new_frame.x0,
                    (in_old.y0 - old_frame.y0) / sy + new_frame.y0,
                    (in_old.x1 - old_frame.x0) / sx + new_frame.x0,
                    (in_old.y1 - old_frame.y0) / sy + new_frame.y0,
                ),
            )
    image = numpy.empty((height, width, 3), numpy.uint8)
    for channel in range(3):
        numpy.take(PALETTE[:, channel], codes, out=image[..., channel])
    png = imagecodecs.png_encode(
        image, level=imagecodecs.PNG.COMPRESSION.SPEED, filter=imagecodecs.PNG.FILTER.NONE
    )
    return cast(bytes, png)


def _ink(png: bytes) -> NDArray[numpy.bool_]:
    """Where the image has ink (any channel dark)."""
    pixels = imagecodecs.png_decode(png)
    if pixels.ndim == 3:
        channels = pixels.shape[2]
        darkest = pixels[..., 0]
        for c in range(1, min(channels, 3)):
            darkest = numpy.minimum(darkest, pixels[..., c])
        pixels = darkest
    ink: NDArray[numpy.bool_] = pixels < INK_BELOW
    return ink


def _grown(mask: NDArray[numpy.bool_]) -> NDArray[numpy.bool_]:
    """The mask grown by ALIGN_SLACK_PX pixels each way."""
    grown = mask.copy()
    for _ in range(ALIGN_SLACK_PX):
        step = grown.copy()
        step[1:] |= grown[:-1]
        step[:-1] |= grown[1:]
        step[:, 1:] |= grown[:, :-1]
        step[:, :-1] |= grown[:, 1:]
        grown = step
    return grown


def _frame(ink: NDArray[numpy.bool_]) -> _Frame | None:
    """The sheet's drawing border: the outermost rows and columns of ink that run along most
    of the image (long ruled lines); None when the sheet has no such lines both ways."""
    rows = numpy.flatnonzero(ink.mean(axis=1) >= FRAME_LINE_SHARE)
    cols = numpy.flatnonzero(ink.mean(axis=0) >= FRAME_LINE_SHARE)
    if len(rows) < 2 or len(cols) < 2 or rows[-1] - rows[0] < 2 or cols[-1] - cols[0] < 2:
        return None
    return _Frame(float(cols[0]), float(rows[0]), float(cols[-1]), float(rows[-1]))


def _agree(old: _Frame, new: _Frame) -> bool:
    return abs(old.aspect / new.aspect - 1.0) <= FRAME_ASPECT_TOLERANCE


def _scaled(box: Box, scale: tuple[float, float]) -> Box:
    return Box(box.x0 * scale[0], box.y0 * scale[1], box.x1 * scale[0], box.y1 * scale[1])


def _draw_box(codes: NDArray[numpy.uint8], box: Box) -> None:
    """An outline around ``box`` (image pixels), padded, clipped to the image."""
    height, width = codes.shape
    x0 = max(int(box.x0) - BOX_PAD_PX, 0)
    y0 = max(int(box.y0) - BOX_PAD_PX, 0)
    x1 = min(int(box.x1 + 0.999) + BOX_PAD_PX, width - 1)
    y1 = min(int(box.y1 + 0.999) + BOX_PAD_PX, height - 1)
    if x1 <= x0 or y1 <= y0:
        return
    w = BOX_WIDTH_PX
    codes[y0 : y0 + w, x0 : x1 + 1] = BOX
    codes[max(y1 - w + 1, 0) : y1 + 1, x0 : x1 + 1] = BOX
    codes[y0 : y1 + 1, x0 : x0 + w] = BOX
    codes[y0 : y1 + 1, max(x1 - w + 1, 0) : x1 + 1] = BOX
