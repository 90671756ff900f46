"""Legible vision input for large sheets.

The page image is rendered with its long side at ``page_image_max_px``: on an E-size sheet
(44 x 34 in) at 2048 px, 3/32 in text is about 5 px high, which no vision model reads. When
the page's small text would render below ``legible_px``, the vision pass gets the sheet as
overlapping tiles rendered so that text is legible (each no larger than the page image),
plus the whole sheet small for its layout; each tile comes with the units that lie in it.
A page whose reading is too long for one prompt is tiled too, so each tile's units fit.
The number of tiles is bounded (``SHEETFLOW_VISION_MAX_TILES``): past the bound the tiles
grow, and the text in them is as large as the bound allows. What is legible and how tiles
overlap is ``TileTolerances`` (``services.extract.tolerances``), passed per call.
"""

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pymupdf

from services.extract.reading.render import encode_png
from services.extract.tolerances import TILES, TileTolerances
from shared.contracts.models import PageObject
from shared.pagetext import Box, TextLayer, alnum_count, normalize
from shared.pagetext.units import Unit
from shared.pdf.sources import PDF_LOCK, open_pdf


@dataclass(frozen=True)
class TilePlan:
    """Where the tiles are (displayed page coordinates, points) and their zoom (pixels per
    point)."""

    clips: list[Box]
    zoom: float


@dataclass(frozen=True)
class Tiles:
    """The rendered tiles (PNG each, in the order of the plan) and the whole sheet, small."""

    images: list[bytes]
    overview: bytes


def small_text_pt(layer: TextLayer, tolerances: TileTolerances = TILES) -> float:
    """The height, in points, of the page's small text: the ``small_text_share`` quantile of
    the heights (across their direction) of the words its lines show, or
    ``default_text_pt`` without words."""
    shown = (layer.words[i] for line in layer.lines for i in line)
    heights = sorted(
        w.bbox.width if abs(w.dir[0]) < abs(w.dir[1]) else w.bbox.height
        for w in shown
        if alnum_count(w.text) >= 2
    )
    heights = [h for h in heights if h > 0]
    if not heights:
        return tolerances.default_text_pt
    return heights[int(tolerances.small_text_share * (len(heights) - 1))]


def plan_tiles(
    layer: TextLayer,
    page_zoom: float,
    tile_px: int,
    max_tiles: int,
    *,
    inked: bool = True,
    units: Sequence[Unit] = (),
    max_chars: int | None = None,
    tolerances: TileTolerances = TILES,
) -> TilePlan:
    """The tiles of the page, a grid of overlapping tiles covering it, each at most
    ``tile_px`` square: the fewest that show its small text ``legible_px`` high and whose
    own ``units`` each fit in ``max_chars`` (a reading too long for one prompt is read in
    parts, as a person reads a dense sheet region by region), or the most ``max_tiles``
    allows. None (an empty plan) when the page image shows the text legibly and its reading
    fits, when tiles would not show the text ``min_gain`` times larger, when ``max_tiles``
    is below 2, or on a page with neither words nor ink (``inked``: images or drawings)."""
    t = tolerances
    text_pt = small_text_pt(layer, t)
    legible = text_pt * page_zoom * t.min_gain > t.legible_px
    fits = max_chars is None or _chars(units) <= max_chars
    if (not layer.lines and not inked) or max_tiles < 2 or (legible and fits):
        return TilePlan([], page_zoom)
    wanted = 0.0 if legible else t.legible_px / text_pt
    best: TilePlan | None = None
    zoom = t.min_gain * page_zoom
    while True:
        plan = _grid(layer.width, layer.height, tile_px, zoom, t.overlap)
        if len(plan.clips) > max_tiles:
            break  # the bound: the last grid within it is as good as it gets
        best = plan
        if zoom >= wanted and (
            max_chars is None or all(_chars(units_in(units, c)) <= max_chars for c in plan.clips)
        ):
            break
        step = zoom * t.zoom_step  # more, smaller tiles
        zoom = wanted if zoom < wanted < step else step
    if best is None or len(best.clips) < 2:
        return TilePlan([], page_zoom)
    return best


def _grid(width: float, height: float, tile_px: int, zoom: float, overlap: float) -> TilePlan:
    """Overlapping tiles covering a page of ``width`` x ``height`` points at ``zoom``."""
    # A tile's side, points (MuPDF may round the image up a pixel on each side).
    side = (tile_px - 2) / zoom
    columns, rows = _count(width, side, overlap), _count(height, side, overlap)
    clips = [
        Box(x, y, min(x + side, width), min(y + side, height))
        for y in _starts(height, side, rows)
        for x in _starts(width, side, columns)
    ]
    return TilePlan(clips, zoom)


def _chars(units: Iterable[Unit]) -> int:
    """The length of the units' reading."""
    return sum(len(u.line) + 1 for u in units)


def _count(extent: float, side: float, overlap: float) -> int:
    """Tiles of ``side`` overlapping by ``overlap`` (a share of it) that span ``extent``."""
    if side >= extent:
        return 1
    return math.ceil((extent - side) / (side * (1 - overlap))) + 1


def _starts(extent: float, side: float, count: int) -> list[float]:
    """Where ``count`` tiles of ``side`` start to span ``extent``, evenly spread."""
    if count == 1:
        return [0.0]
    step = (extent - side) / (count - 1)
    return [i * step for i in range(count)]


def render_page_tiles(
    pdf: bytes, page_number: int, plan: TilePlan, tolerances: TileTolerances = TILES
) -> Tiles:
    """The plan's tiles at its zoom, and the whole page at ``overview_px`` (run in a bounded
    child, like the page's own render)."""
    with PDF_LOCK:
        page = open_pdf(pdf).load_page(page_number - 1)
        matrix = pymupdf.Matrix(plan.zoom, plan.zoom)
        pixmaps = [
            page.get_pixmap(matrix=matrix, clip=pymupdf.Rect(clip), alpha=False)
            for clip in plan.clips
        ]
        small = tolerances.overview_px / max(page.rect.width, page.rect.height)
        overview = page.get_pixmap(matrix=pymupdf.Matrix(small, small), alpha=False)
    return Tiles([encode_png(p) for p in pixmaps], encode_png(overview))


def units_in(units: Iterable[Unit], clip: Box) -> list[Unit]:
    """The units whose centre lies in ``clip``."""
    return [u for u in units if clip.contains(u.box.centre)]


def describe(clip: Box, layer: TextLayer) -> str:
    """Which part of the sheet a tile shows, for the prompt."""

    def share(a: float, b: float, extent: float) -> str:
        return f"{round(100 * a / extent)}–{round(100 * b / extent)}%"

    return (
        f"the part from {share(clip.x0, clip.x1, layer.width)} of its width and "
        f"{share(clip.y0, clip.y1, layer.height)} of its height"
    )


def merge_tile_objects(objects: list[PageObject]) -> list[PageObject]:
    """The objects of a page's tiles as one list, as rungs merge: an object placed on the
    same words as one kept before it (a unit in the overlap of two tiles) is the same
    object; one placed nowhere is the same as one kept before it with its normalised
    ``source_text``. Graphical objects (no text) are all kept."""
    kept: list[PageObject] = []
    placed: set[tuple[int, ...]] = set()
    texts: set[str] = set()
    for obj in objects:
        text = normalize(obj.source_text or "")
        if obj.evidence:
            key = tuple(obj.evidence)
            if key in placed:
                continue
            placed.add(key)
        elif text in texts:
            continue
        if text:
            texts.add(text)
        kept.append(obj)
    return kept
