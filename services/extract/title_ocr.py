"""A closer OCR reading of a title block on a sheet without a text layer.

The page image is rendered for the whole sheet (2048 px on its long side: under 60 dpi on an
E-size sheet), where a title block's small print is a few pixels high and OCR misses it.
When the page-resolution reading shows no sheet number, the places sheet numbers sit (the
lower right strip and the right of the bottom band of the sheet) are rendered again at
``TITLE_BLOCK_DPI``, in tiles the OCR engine reads at full size, and their words replace
the coarse ones there.
"""

from dataclasses import dataclass

import pymupdf

from services.extract.ocr import ENGINE_PARAMS, OcrEngine, page_raster
from services.extract.render import encode_png
from shared.pagetext import Box, TextLayer, Word
from shared.sources import PDF_LOCK, open_pdf

# The OCR engine's detector finds text from about 25 px high, and reads a tile as it is
# when its short side is over 736 px: 250 dpi brings 6 pt print to that height.
TITLE_BLOCK_DPI = 250
# Where sheet numbers sit, as shares of the sheet's extent (x0, y0, x1, y1): the lower part
# of the right strip, and the bottom band left of it.
REGIONS = ((0.78, 0.55, 1.0, 1.0), (0.5, 0.84, 0.78, 1.0))
# Tiles the engine reads without shrinking them, overlapping so no word is cut in two.
_ENGINE_SIDE_PX = ENGINE_PARAMS["Global.max_side_len"]
assert isinstance(_ENGINE_SIDE_PX, int), "the OCR engine's longest side is a number of pixels"
TILE_PX = _ENGINE_SIDE_PX
OVERLAP_PT = 36.0


@dataclass(frozen=True)
class _Tile:
    clip: Box  # displayed page coordinates, points
    core: Box  # the part of the clip whose words this tile reports
    png: bytes


def title_block_regions(layer: TextLayer) -> list[Box]:
    """The regions of the displayed page where a title block sits: parts of the extent of
    the sheet's ruled lines (so a frame inside a larger page counts), or of the page (a
    scan, whose words so far may all lie elsewhere)."""
    if layer.rules:
        x0, y0, x1, y1 = Box.union(layer.rules)
    else:
        x0, y0, x1, y1 = 0.0, 0.0, layer.width, layer.height
    w, h = x1 - x0, y1 - y0
    return [Box(x0 + a * w, y0 + b * h, x0 + c * w, y0 + d * h) for a, b, c, d in REGIONS]


def render_tiles(pdf: bytes, page_number: int, regions: list[Box]) -> list[_Tile]:
    """The regions rendered at ``TITLE_BLOCK_DPI`` in tiles of at most ``TILE_PX``."""
    step = TILE_PX * 72 / TITLE_BLOCK_DPI - OVERLAP_PT
    tiles: list[_Tile] = []
    with PDF_LOCK:
        page = open_pdf(pdf).load_page(page_number - 1)
        for rx0, ry0, rx1, ry1 in regions:
            for tx in _starts(rx0, rx1, step):
                for ty in _starts(ry0, ry1, step):
                    clip = Box(
                        tx,
                        ty,
                        min(tx + step + OVERLAP_PT, rx1),
                        min(ty + step + OVERLAP_PT, ry1),
                    )
                    core = Box(
                        tx if tx == rx0 else tx + OVERLAP_PT / 2,
                        ty if ty == ry0 else ty + OVERLAP_PT / 2,
                        clip.x1 if clip.x1 == rx1 else clip.x1 - OVERLAP_PT / 2,
                        clip.y1 if clip.y1 == ry1 else clip.y1 - OVERLAP_PT / 2,
                    )
                    pix = page.get_pixmap(clip=pymupdf.Rect(clip), dpi=TITLE_BLOCK_DPI)
                    tiles.append(_Tile(clip, core, encode_png(pix)))
    return tiles


def _starts(low: float, high: float, step: float) -> list[float]:
    starts = [low]
    while starts[-1] + step + OVERLAP_PT < high:
        starts.append(starts[-1] + step)
    return starts


def reread_title_block(
    layer: TextLayer, tiles: list[_Tile], regions: list[Box], ocr: OcrEngine
) -> list[Word]:
    """The layer's words with those inside ``regions`` replaced by the tiles' closer reading
    by ``ocr`` (each word from the tile whose core holds its centre)."""
    scale = 72 / TITLE_BLOCK_DPI
    closer: list[Word] = []
    for tile in tiles:
        for word in ocr.ocr_raster(page_raster(tile.png, 1 / scale)):
            x0, y0, x1, y1 = word.bbox
            dx, dy = tile.clip.x0, tile.clip.y0
            bbox = Box(x0 + dx, y0 + dy, x1 + dx, y1 + dy)
            if _holds(tile.core, bbox):
                closer.append(word.model_copy(update={"bbox": bbox}))
    kept = [w for w in layer.words if not any(_holds(r, w.bbox) for r in regions)]
    return kept + closer


def _holds(box: Box, bbox: Box) -> bool:
    """Whether a box's centre lies in ``box``, its right and bottom edges excluded (a word
    on the seam of two tiles belongs to one)."""
    cx, cy = bbox.centre
    return box.x0 <= cx < box.x1 and box.y0 <= cy < box.y1
