"""What changed on a sheet, in a picture: the two versions laid over each other, the previous
in red, the new in blue, what both print in grey, each changed unit boxed (orange) and each
changed region of the drawing boxed (magenta).

Made from the two page images extract already stored (``pages/{n}/image.png``) and the pages'
sizes, never by rendering the PDFs again: decoding two PNGs costs a small part of one render
of an E-size sheet, and the register has the images at hand. The images are aligned by the
sheet's frame (its drawing border: the outermost long ruled lines), so a sheet re-issued on
another paper size or with its drawing shifted on the page still lays over its previous
version; a sheet without a border is aligned where the delta's texts place the drawing
(``SheetDelta.placement``), else page to page.
"""

from dataclasses import dataclass
from typing import cast

import cv2
import imagecodecs
import numpy
from numpy.typing import NDArray

from shared.pagetext import Box
from shared.revisions.delta import Placement, SheetDelta
from shared.revisions.drawing import PageImage

# A pixel darker than this (in its darkest channel) is ink: coloured linework counts too.
INK_BELOW = 160
# A frame line runs along at least this share of the image's side.
FRAME_LINE_SHARE = 0.5
# A frame line is any mark this dark or darker: a border drawn in a light pen counts.
FRAME_BELOW = 230
# Two frames are one sheet's when their aspect ratios are within this share of each other,
# and lay the drawing where its texts put it within this share of the image's long side.
FRAME_ASPECT = 0.03
FRAME_TRUST_SHARE = 0.01
# A frame spans at least this share of the image each way.
FRAME_MIN_SHARE = 0.6
# Ink of one version within this many pixels of the other's is the same line, a pixel off.
ALIGN_SLACK_PX = 1

# The overlay's colours, by the code a pixel gets.
WHITE, GREY, RED, BLUE, BOX, REGION = range(6)
PALETTE = numpy.array(
    [
        (255, 255, 255),  # no ink on either version
        (170, 170, 170),  # ink on both: unchanged
        (220, 30, 30),  # only the previous version: removed
        (30, 70, 230),  # only the new version: added
        (255, 150, 0),  # a changed unit's box
        (200, 0, 170),  # a changed region of the drawing
    ],
    numpy.uint8,
)
# The palette as opaque RGBA pixels, each one 32-bit word.
RGBA = numpy.hstack([PALETTE, numpy.full((len(PALETTE), 1), 255, numpy.uint8)]).view(numpy.uint32)[
    :, 0
]
BOX_WIDTH_PX = 3
BOX_PAD_PX = 4


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


@dataclass(frozen=True)
class _Map:
    """Where a pixel of the new image is on the old one: ``old = scale * new + shift`` on
    each axis."""

    scale_x: float
    shift_x: float
    scale_y: float
    shift_y: float

    @classmethod
    def between(cls, new: _Frame, old: _Frame) -> "_Map":
        """The map that lays the new frame onto the old one."""
        sx = (old.x1 - old.x0) / max(new.x1 - new.x0, 1.0)
        sy = (old.y1 - old.y0) / max(new.y1 - new.y0, 1.0)
        return cls(sx, old.x0 - sx * new.x0, sy, old.y0 - sy * new.y0)

    @classmethod
    def placed(
        cls, placement: Placement, new_zoom: tuple[float, float], old_zoom: tuple[float, float]
    ) -> "_Map":
        """The map the texts' placement gives (PDF points, each image at its own zoom)."""
        s = placement.scale
        return cls(
            old_zoom[0] / (s * new_zoom[0]),
            -old_zoom[0] * placement.dx / s,
            old_zoom[1] / (s * new_zoom[1]),
            -old_zoom[1] * placement.dy / s,
        )

    def agrees(self, other: "_Map", width: int, height: int, tolerance: float) -> bool:
        """Both maps put the new image's corners within ``tolerance`` old pixels."""
        return all(
            abs(self.scale_x * x + self.shift_x - other.scale_x * x - other.shift_x) <= tolerance
            and abs(self.scale_y * y + self.shift_y - other.scale_y * y - other.shift_y)
            <= tolerance
            for x, y in ((0, 0), (width, height))
        )

    def to_new(self, box: Box) -> Box:
        """A box of old pixels, on the new image."""
        return Box(
            (box.x0 - self.shift_x) / self.scale_x,
            (box.y0 - self.shift_y) / self.scale_y,
            (box.x1 - self.shift_x) / self.scale_x,
            (box.y1 - self.shift_y) / self.scale_y,
        )


def overlay_png(before: PageImage, after: PageImage, delta: SheetDelta) -> bytes:
    """The overlay of ``before`` and ``after`` on the new image's pixels, as a PNG: red
    where only the previous version has ink, blue where only the new one has, grey where
    both have, and the delta's changed units boxed (their boxes on both sheets)."""
    old_dark, new_dark = _darkest(before.png), _darkest(after.png)
    old_ink, new_ink = old_dark < INK_BELOW, new_dark < INK_BELOW
    height, width = new_ink.shape
    new_zoom = (width / after.width, height / after.height)
    old_zoom = (old_ink.shape[1] / before.width, old_ink.shape[0] / before.height)
    where = _alignment(old_dark, new_dark, delta, old_zoom, new_zoom)
    if delta.alignment is not None:
        # Where the drawing delta laid the old sheet (its texts' placement refined on the ink).
        old_aligned = _warped(old_ink, delta.alignment, old_zoom, new_zoom, new_ink.shape)
    else:
        old_aligned = _resampled(old_ink, where, new_ink.shape)

    boxes: list[Box] = []
    for change in delta.changes:
        on_new = [_scaled(change.after_bbox, new_zoom)] if change.after_bbox else []
        if change.before_bbox:
            on_new.append(where.to_new(_scaled(change.before_bbox, old_zoom)))
        # A unit changed where it stood gets one box around both its versions.
        if len(on_new) == 2 and on_new[0].overlaps(on_new[1]):
            on_new = [Box.union(on_new)]
        boxes += on_new
    frames = [_padded(box, width, height) for box in boxes]
    regions = [
        _padded(_scaled(region.after_bbox, new_zoom), width, height) for region in delta.graphics
    ]
    # Ink within the slack of the other version's ink is the same line, a pixel off: grey,
    # not colour. Inside a changed unit's box the versions are compared pixel for pixel, so
    # a rewritten word shows in colour where its strokes differ.
    near_new, near_old = _grown(new_ink), _grown(old_aligned)
    for x0, y0, x1, y1 in frames:
        near_new[y0:y1, x0:x1] = new_ink[y0:y1, x0:x1]
        near_old[y0:y1, x0:x1] = old_aligned[y0:y1, x0:x1]
    # One code per pixel (an index into PALETTE), coloured once at the end.
    codes = numpy.full((height, width), WHITE, numpy.uint8)
    codes[old_aligned | new_ink] = GREY
    codes[old_aligned & ~near_new] = RED
    codes[new_ink & ~near_old] = BLUE
    for frame in frames:
        _draw_box(codes, frame)
    for frame in regions:
        _draw_box(codes, frame, REGION)
    # Opaque RGBA: one 32-bit lookup per pixel, cheaper than three 8-bit ones.
    image = RGBA[codes].view(numpy.uint8).reshape(height, width, 4)
    png = imagecodecs.png_encode(
        image, level=imagecodecs.PNG.COMPRESSION.SPEED, filter=imagecodecs.PNG.FILTER.NONE
    )
    return cast(bytes, png)


def _darkest(png: bytes) -> NDArray[numpy.uint8]:
    """Each pixel's darkest channel: coloured linework is as dark as black is."""
    pixels: NDArray[numpy.uint8] = imagecodecs.png_decode(png)
    if pixels.ndim == 2:
        return pixels
    darkest = pixels[..., 0]
    for channel in range(1, min(pixels.shape[2], 3)):
        darkest = numpy.minimum(darkest, pixels[..., channel])
    return darkest


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


def _resampled(
    old_ink: NDArray[numpy.bool_], where: "_Map", shape: tuple[int, ...]
) -> NDArray[numpy.bool_]:
    """The old image's ink on the new image's pixels (nearest pixel; none off the old
    image)."""
    height, width = shape
    identity = (where.scale_x, where.shift_x, where.scale_y, where.shift_y) == (1, 0, 1, 0)
    if identity and old_ink.shape == shape:
        return old_ink
    cols = numpy.rint(numpy.arange(width) * where.scale_x + where.shift_x).astype(numpy.intp)
    rows = numpy.rint(numpy.arange(height) * where.scale_y + where.shift_y).astype(numpy.intp)
    inside_x = (cols >= 0) & (cols < old_ink.shape[1])
    inside_y = (rows >= 0) & (rows < old_ink.shape[0])
    resampled = old_ink[
        numpy.ix_(
            numpy.clip(rows, 0, old_ink.shape[0] - 1), numpy.clip(cols, 0, old_ink.shape[1] - 1)
        )
    ]
    resampled &= inside_y[:, None] & inside_x[None, :]
    return resampled


def _alignment(
    old_dark: NDArray[numpy.uint8],
    new_dark: NDArray[numpy.uint8],
    delta: SheetDelta,
    old_zoom: tuple[float, float],
    new_zoom: tuple[float, float],
) -> _Map:
    """How the old image lies on the new: page on page where the texts sit where they sat
    on an image of the same size; else frame on frame where both sheets have one of one
    shape (and the texts, where they place the drawing, agree); else where the texts place
    it; else page on page."""
    height, width = new_dark.shape
    page_on_page = _Map.between(_Frame(0, 0, width, height), _Frame(0, 0, *old_dark.shape[::-1]))
    if delta.placement == Placement() and old_dark.shape == new_dark.shape:
        return page_on_page  # the texts sit where they sat, on a page of the same size
    old_frame, new_frame = _frame(old_dark), _frame(new_dark)
    framed = None
    if old_frame and new_frame and abs(old_frame.aspect / new_frame.aspect - 1.0) <= FRAME_ASPECT:
        framed = _Map.between(new_frame, old_frame)
    placed = _Map.placed(delta.placement, new_zoom, old_zoom) if delta.placement else None
    tolerance = FRAME_TRUST_SHARE * max(old_dark.shape)
    if framed and (placed is None or framed.agrees(placed, width, height, tolerance)):
        return framed
    return placed or page_on_page


def _frame(darkest: NDArray[numpy.uint8]) -> _Frame | None:
    """The sheet's drawing border: the outermost rows and columns marked along most of the
    image (long ruled lines), spanning most of it; None when the sheet has no such frame."""
    marked = darkest < FRAME_BELOW
    height, width = marked.shape
    rows = numpy.flatnonzero(numpy.count_nonzero(marked, axis=1) >= FRAME_LINE_SHARE * width)
    cols = numpy.flatnonzero(numpy.count_nonzero(marked, axis=0) >= FRAME_LINE_SHARE * height)
    if len(rows) < 2 or len(cols) < 2:
        return None
    if (
        rows[-1] - rows[0] < FRAME_MIN_SHARE * height
        or cols[-1] - cols[0] < FRAME_MIN_SHARE * width
    ):
        return None
    return _Frame(float(cols[0]), float(rows[0]), float(cols[-1]), float(rows[-1]))


def _scaled(box: Box, scale: tuple[float, float]) -> Box:
    return Box(box.x0 * scale[0], box.y0 * scale[1], box.x1 * scale[0], box.y1 * scale[1])


def _padded(box: Box, width: int, height: int) -> tuple[int, int, int, int]:
    """A box of image pixels, padded and clipped to the image, as whole pixels (x0, y0,
    x1, y1), ends exclusive."""
    return (
        min(max(int(box.x0) - BOX_PAD_PX, 0), width),
        min(max(int(box.y0) - BOX_PAD_PX, 0), height),
        max(min(int(box.x1 + 0.999) + BOX_PAD_PX, width), 0),
        max(min(int(box.y1 + 0.999) + BOX_PAD_PX, height), 0),
    )


def _draw_box(
    codes: NDArray[numpy.uint8], frame: tuple[int, int, int, int], colour: int = BOX
) -> None:
    """The outline of a box of whole pixels (ends exclusive)."""
    x0, y0, x1, y1 = frame
    if x1 <= x0 or y1 <= y0:
        return
    w = BOX_WIDTH_PX
    codes[y0 : y0 + w, x0:x1] = colour
    codes[max(y1 - w, y0) : y1, x0:x1] = colour
    codes[y0:y1, x0 : x0 + w] = colour
    codes[y0:y1, max(x1 - w, x0) : x1] = colour


def _warped(
    old_ink: NDArray[numpy.bool_],
    alignment: tuple[float, ...],
    old_zoom: tuple[float, float],
    new_zoom: tuple[float, float],
    shape: tuple[int, ...],
) -> NDArray[numpy.bool_]:
    """The old image's ink on the new image's pixels, laid by an affine map of points."""
    points = numpy.array(alignment, numpy.float64).reshape(2, 3)
    to_new = numpy.diag(new_zoom) @ points @ numpy.diag([1 / old_zoom[0], 1 / old_zoom[1], 1.0])
    warped = cv2.warpAffine(
        old_ink.view(numpy.uint8), to_new, (shape[1], shape[0]), flags=cv2.INTER_NEAREST
    )
    return numpy.asarray(warped, numpy.uint8) > 0
