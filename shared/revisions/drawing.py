"""What changed in a sheet's drawing between two versions: its linework, compared as printed.

Both versions are compared as the page images extract stored (the register keeps them), so a
vector sheet, a scan and a sheet re-encoded as a raster are compared alike, and no PDF is
opened again: reading a large CAD sheet's paths (``page.get_drawings()``) costs more than
extract's whole read of the page (bench/RESULTS.md), decoding its image a small part of it.

1. **Align.** The old image is laid on the new one by an affine map (a re-plot may shift,
   scale or rotate the whole sheet a little, a scan may be skewed): first where the texts both
   sheets print place it (``SheetDelta.placement``); where that leaves ink unmatched,
   refined on the two images' ink (OpenCV's ECC on reduced, blurred copies), the refinement
   kept only when it fits better.
2. **Compare** in the new image's pixels. Ink is what is clearly darker than the lightest
   shade around it (the paper, or the fill it is drawn on); a version's ink is *missing* from
   the other only where the other has no mark at all (not even a light one) within half a
   heavy line's width: a line anti-aliased lighter in one rendering, a JPEG's ringing, or a
   line that moved by less than a line width is no change. Words of either text layer are
   left to the text delta: their boxes are masked.
3. **Cluster** what is missing each way into changed regions (missing ink within 18 pt of
   other missing ink is one region), each with its box on both sheets and the share of the
   sheet it covers; a region too small to be a drawn change (a few stray pixels) is dropped,
   and one inside the title block's region is marked so (``title_block``).

Known limits (bench/RESULTS.md): linework drawn lighter than the ink's contrast (a fine
hatching) is not ink, and a word whose text-layer box is far taller than its glyphs masks the
linework under it.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any, Literal

import cv2
import imagecodecs
import numpy
from numpy.typing import NDArray

from shared.pagetext import Box

RegionKind = Literal["added", "removed", "changed"]

# Ink: darker than the paper by this much (a clear line); a mark: by this much (any line,
# however light its rendering or encoding made it).
INK_CONTRAST = 90
MARK_CONTRAST = 12
# The shade a pixel is judged against: the lightest within this many points (the paper, or
# the fill the line is drawn on: a line across a tinted room is ink, the tint is not).
BACKGROUND_POINTS = 6.0
# Ink within this many PDF points of the other version's marks is the same line (half a
# heavy line's width: a line moved by less is not a change), and never less than a pixel.
SAME_LINE_POINTS = 0.75
SAME_LINE_MIN_PX = 1
# Missing ink within this many points of other missing ink is one region.
CLUSTER_POINTS = 18.0
# A region holds at least this many missing pixels, and this much line (points of ink at one
# pixel's width): fewer is noise of the rendering, not a drawn change.
MIN_REGION_PX = 12
MIN_REGION_LINE_POINTS = 14.0
# The alignment is refined on copies reduced to this long side, blurred by this sigma.
ALIGN_LONG_SIDE_PX = 640
ALIGN_BLUR_SIGMA = 1.5
ALIGN_ITERATIONS = 40
ALIGN_EPS = 1e-4
# The texts' placement is refined on the ink only when it leaves more pixels than this
# unmatched (a sheet re-issued unchanged, laid where its texts put it, leaves none).
REFINE_ABOVE_PX = 40
# A refined map is kept only if it moves no corner by more than this share of the long side
# from the first guess (ECC lost on a sheet that changed much is worse than the guess).
ALIGN_MAX_MOVE_SHARE = 0.03
# Word boxes are grown by this many pixels before they are masked (anti-aliasing).
WORD_PAD_PX = 1


@dataclass(frozen=True)
class Region:
    """A changed region of the drawing: ink only the new version has (added), only the old
    (removed), or both kinds near each other (changed: linework moved or redrawn); its box
    on each sheet (PDF points) and the share of the new sheet's area its box covers."""

    kind: RegionKind
    before_bbox: Box
    after_bbox: Box
    share: float
    title_block: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "before_bbox": list(self.before_bbox),
            "after_bbox": list(self.after_bbox),
            "share": self.share,
            "title_block": self.title_block,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Region":
        return cls(
            kind=data["kind"],
            before_bbox=Box(*data["before_bbox"]),
            after_bbox=Box(*data["after_bbox"]),
            share=data["share"],
            title_block=data.get("title_block", False),
        )


@dataclass(frozen=True)
class PageImage:
    """A stored page image with the size of the page it shows (PDF points)."""

    png: bytes
    width: float
    height: float


# An affine map of points (2x3): x' = a·x + b·y + c, y' = d·x + e·y + f.
Affine = NDArray[numpy.float64]


@dataclass(frozen=True)
class DrawingDelta:
    """The drawing's changed regions and how the old sheet lies on the new (an affine map
    of PDF points, row-major 2x3)."""

    regions: list[Region]
    alignment: tuple[float, ...]


def darkest(png: bytes) -> NDArray[numpy.uint8]:
    """Each pixel's darkest channel: coloured linework is as dark as black is."""
    pixels: NDArray[numpy.uint8] = imagecodecs.png_decode(png)
    if pixels.ndim == 2:
        return pixels
    least = pixels[..., 0]
    for channel in range(1, min(pixels.shape[2], 3)):
        least = numpy.minimum(least, pixels[..., channel])
    return least


def points_affine(scale: float, dx: float, dy: float) -> Affine:
    return numpy.array([[scale, 0.0, dx], [0.0, scale, dy]])


def drawing_delta(
    before: PageImage,
    after: PageImage,
    *,
    words: tuple[Sequence[Box], Sequence[Box]] = ((), ()),
    placement: Affine | None = None,
    title_region: Box | None = None,
) -> DrawingDelta:
    """The changed regions of the drawing from ``before`` to ``after``: ``words`` are the
    boxes of each version's words (the text delta's), ``placement`` where the texts put the
    old sheet on the new one (an affine map of points) when they say, ``title_region`` the
    new sheet's title block."""
    old, new = darkest(before.png), darkest(after.png)
    zoom_new = new.shape[1] / after.width
    zoom_old = old.shape[1] / before.width
    guess = points_affine(1.0, 0.0, 0.0) if placement is None else placement
    # Old pixels to new pixels: old px -> old points -> new points -> new px.
    to_new = _compose(_scaling(zoom_new), _compose(guess, _scaling(1 / zoom_old)))
    zooms = (zoom_old, zoom_new)
    compared = _compared(old, new, to_new, zooms, words)
    refined = _refined(old, new, to_new) if compared.missing > REFINE_ABOVE_PX else None
    if refined is not None:
        # The texts' placement leaves ink unmatched: ECC on the ink may lay it better (and
        # can settle a little off on a sheet of repeated lines: kept when it fits better).
        again = _compared(old, new, refined, zooms, words)
        if again.missing < compared.missing:
            to_new, compared = refined, again
    missing_old, missing_new = compared.old, compared.new
    regions = _regions(missing_old, missing_new, zoom_new, to_new, zoom_old, title_region)
    points = _compose(_scaling(1 / zoom_new), _compose(to_new, _scaling(zoom_old)))
    return DrawingDelta(regions, tuple(float(v) for v in points.ravel()))


@dataclass(frozen=True)
class _Compared:
    """Each version's ink missing from the other (new image pixels)."""

    old: NDArray[numpy.bool_]
    new: NDArray[numpy.bool_]

    @property
    def missing(self) -> int:
        return int(numpy.count_nonzero(self.old)) + int(numpy.count_nonzero(self.new))


def _compared(
    old: NDArray[numpy.uint8],
    new: NDArray[numpy.uint8],
    to_new: Affine,
    zooms: tuple[float, float],
    words: tuple[Sequence[Box], Sequence[Box]],
) -> _Compared:
    """The two versions compared with the old image laid on the new by ``to_new``; off the
    old image, and in either version's words, nothing is compared."""
    height, width = new.shape
    ignored = numpy.zeros((height, width), numpy.bool_)
    if old.shape == new.shape and numpy.allclose(to_new, points_affine(1.0, 0.0, 0.0)):
        old_on_new = old  # page on page: nothing to resample
    else:
        old_on_new = numpy.asarray(
            cv2.warpAffine(old, to_new, (width, height), flags=cv2.INTER_LINEAR, borderValue=255),
            numpy.uint8,
        )
        everywhere = numpy.full(old.shape, 255, numpy.uint8)
        ignored |= cv2.warpAffine(everywhere, to_new, (width, height), flags=cv2.INTER_NEAREST) == 0
    _mark_words(ignored, words[1], _scaling(zooms[1]))
    _mark_words(ignored, words[0], _compose(to_new, _scaling(zooms[0])))
    missing_old, missing_new = _missing(old_on_new, new, zooms[1])
    return _Compared(missing_old & ~ignored, missing_new & ~ignored)


def _scaling(factor: float) -> Affine:
    return numpy.array([[factor, 0.0, 0.0], [0.0, factor, 0.0]])


def _compose(outer: Affine, inner: Affine) -> Affine:
    """The map ``outer ∘ inner``."""
    full = numpy.vstack([outer, [0.0, 0.0, 1.0]]) @ numpy.vstack([inner, [0.0, 0.0, 1.0]])
    return numpy.asarray(full[:2], numpy.float64)


def _inverse(affine: Affine) -> Affine:
    return numpy.asarray(cv2.invertAffineTransform(affine), numpy.float64)


def _refined(old: NDArray[numpy.uint8], new: NDArray[numpy.uint8], guess: Affine) -> Affine | None:
    """``guess`` (old pixels to new) refined on reduced, blurred copies of the ink; None
    when ECC does not converge near it."""
    factor = ALIGN_LONG_SIDE_PX / max(new.shape)
    if factor >= 1.0:
        factor = 1.0
    small_new = _reduced(new, factor)
    small_old = _reduced(old, factor * _scale_of(guess))
    # The guess between the reduced copies.
    old_factor = small_old.shape[1] / old.shape[1]
    start = _compose(_scaling(factor), _compose(guess, _scaling(1 / old_factor)))
    # ECC maps template (new) coordinates to input (old) coordinates.
    start_warp = numpy.asarray(_inverse(start), numpy.float32)
    criteria = (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, ALIGN_ITERATIONS, ALIGN_EPS)
    try:
        _, warp = cv2.findTransformECC(
            small_new, small_old, start_warp, cv2.MOTION_AFFINE, criteria
        )
    except cv2.error:
        return None
    refined_small = _inverse(numpy.asarray(warp, numpy.float64))
    refined = _compose(_scaling(1 / factor), _compose(refined_small, _scaling(old_factor)))
    limit = ALIGN_MAX_MOVE_SHARE * max(new.shape)
    corners = numpy.array(
        [[0, 0, 1], [old.shape[1], 0, 1], [0, old.shape[0], 1], [old.shape[1], old.shape[0], 1]],
        float,
    )
    moved = numpy.abs(corners @ refined.T - corners @ guess.T).max()
    return refined if moved <= limit else None


def _scale_of(affine: Affine) -> float:
    return math.sqrt(abs(float(numpy.linalg.det(affine[:, :2]))))


def _reduced(image: NDArray[numpy.uint8], factor: float) -> NDArray[numpy.float32]:
    """The image's ink (dark = high) reduced by ``factor`` and blurred, as ECC takes it."""
    ink: NDArray[numpy.float32] = (255 - image).astype(numpy.float32)
    if factor < 1.0:
        size = (max(1, round(image.shape[1] * factor)), max(1, round(image.shape[0] * factor)))
        ink = numpy.asarray(cv2.resize(ink, size, interpolation=cv2.INTER_AREA), numpy.float32)
    return numpy.asarray(cv2.GaussianBlur(ink, (0, 0), ALIGN_BLUR_SIGMA), numpy.float32)


def _missing(
    old: NDArray[numpy.uint8], new: NDArray[numpy.uint8], zoom: float
) -> tuple[NDArray[numpy.bool_], NDArray[numpy.bool_]]:
    """Ink of each version with no mark of the other within a line's tolerance."""
    reach = max(SAME_LINE_MIN_PX, math.ceil(SAME_LINE_POINTS * zoom))
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * reach + 1, 2 * reach + 1))
    ink_old, mark_old = _ink(old, zoom)
    ink_new, mark_new = _ink(new, zoom)
    near_old = cv2.dilate(mark_old.view(numpy.uint8), kernel) > 0
    near_new = cv2.dilate(mark_new.view(numpy.uint8), kernel) > 0
    return ink_old & ~near_new, ink_new & ~near_old


def _ink(
    image: NDArray[numpy.uint8], zoom: float
) -> tuple[NDArray[numpy.bool_], NDArray[numpy.bool_]]:
    """The image's ink and marks: darker than the lightest shade around them (the paper, or
    the fill they are drawn on) by the ink's and the mark's contrast."""
    reach = max(1, round(BACKGROUND_POINTS * zoom))
    kernel = cv2.getStructuringElement(cv2.MORPH_RECT, (2 * reach + 1, 2 * reach + 1))
    background = cv2.dilate(image, kernel).astype(numpy.int16)
    return image < background - INK_CONTRAST, image < background - MARK_CONTRAST


def _mark_words(mask: NDArray[numpy.bool_], words: Sequence[Box], to_pixels: Affine) -> None:
    """Set ``mask`` over the words' boxes (PDF points, laid on its pixels by ``to_pixels``)."""
    if not words:
        return
    boxes = numpy.fromiter(chain.from_iterable(words), numpy.float64, 4 * len(words))
    boxes = boxes.reshape(-1, 4)
    corners = numpy.stack(
        [boxes[:, [0, 1]], boxes[:, [2, 1]], boxes[:, [0, 3]], boxes[:, [2, 3]]], axis=1
    )
    placed = corners @ to_pixels[:, :2].T + to_pixels[:, 2]
    low = numpy.floor(placed.min(axis=1)).astype(numpy.intp) - WORD_PAD_PX
    high = numpy.ceil(placed.max(axis=1)).astype(numpy.intp) + WORD_PAD_PX
    height, width = mask.shape
    low = numpy.maximum(low, 0)
    high = numpy.minimum(high, (width, height))
    for (c0, r0), (c1, r1) in zip(low.tolist(), high.tolist(), strict=True):
        if c1 > c0 and r1 > r0:
            mask[r0:r1, c0:c1] = True


def _points(x0: float, y0: float, x1: float, y1: float, zoom: float) -> Box:
    """A box of pixels in PDF points, to a hundredth (as it is stored)."""
    return Box(*(round(v / zoom, 2) for v in (x0, y0, x1, y1)))


def _regions(
    removed: NDArray[numpy.bool_],
    added: NDArray[numpy.bool_],
    zoom: float,
    to_new: Affine,
    zoom_old: float,
    title_region: Box | None,
) -> list[Region]:
    changed = removed | added
    if not changed.any():
        return []
    reach = max(1, round(CLUSTER_POINTS * zoom / 2))
    kernel = cv2.getStructuringElement(cv2.MORPH_RECT, (2 * reach + 1, 2 * reach + 1))
    grouped = cv2.dilate(changed.view(numpy.uint8), kernel)
    count, labels = cv2.connectedComponents(grouped, connectivity=8)
    rows, cols = numpy.nonzero(changed)
    owner = labels[rows, cols]
    height, width = changed.shape
    page_area = float(height * width)
    to_old = _inverse(to_new)
    min_px = max(MIN_REGION_PX, MIN_REGION_LINE_POINTS * zoom)
    regions = []
    order = numpy.argsort(owner, kind="stable")
    bounds = numpy.searchsorted(owner[order], numpy.arange(1, count + 1))
    for label in range(1, count):
        picked = order[bounds[label - 1] : bounds[label]]
        if len(picked) < min_px:
            continue
        r, c = rows[picked], cols[picked]
        was_removed = removed[r, c]
        kind: RegionKind = (
            "changed"
            if was_removed.any() and not was_removed.all()
            else "removed"
            if was_removed.all()
            else "added"
        )
        x0, y0, x1, y1 = float(c.min()), float(r.min()), float(c.max() + 1), float(r.max() + 1)
        after = _points(x0, y0, x1, y1, zoom)
        corners = numpy.array([[x0, y0, 1], [x1, y0, 1], [x0, y1, 1], [x1, y1, 1]]) @ to_old.T
        (ox0, oy0), (ox1, oy1) = corners.min(axis=0).tolist(), corners.max(axis=0).tolist()
        before = _points(ox0, oy0, ox1, oy1, zoom_old)
        in_title = title_region is not None and title_region.contains(after.centre)
        share = round((x1 - x0) * (y1 - y0) / page_area, 5)
        regions.append(Region(kind, before, after, share, in_title))
    return sorted(regions, key=lambda g: (round(g.after_bbox.y0), g.after_bbox.x0))
