"""The ruled lines of a page's drawing: the walls of its title-block cells, from its vector
drawing (``ruled_lines``) or, on a page that is an image, from its pixels (``image_rules``).

Only long, straight, horizontal or vertical strokes count (and filled bars thin enough to
be a drawn line); curves, fills and the short strokes of lettering do not. Collinear pieces
that touch are joined, so a wall drawn in segments is one rule; walls a hair apart across
(a cell's edge and its neighbour's, each drawn on its own) are one wall.
"""

from bisect import bisect_left, bisect_right

import cv2
import numpy

from services.extract.reading.vectors import Vectors
from shared.contracts.interfaces import Raster
from shared.pagetext import Box, Word
from shared.sheet.reader import OCR_SURE

# A rule is at least this long (PDF points; a third of an inch) ...
MIN_RULE = 24.0
# ... or, as a wall between two rules it meets at both ends (the walls of a title block's
# low rows: GOST's 5 mm), at least this long.
MIN_WALL = 8.0
# ... and a drawn line or a filled bar at most this thick. Walls closer than this across
# are one: no text fits between them, and a stroke's box may stand off its line by up to
# half the line's width.
MAX_BAR = 3.0
# Pieces this close along one line are one rule.
JOIN_GAP = 1.5
# Enough walls for any title block; past this only the longest are kept.
MAX_RULES = 4000

# Pixels this much darker than the paper are ink in a page image: a JPEG's thin line comes
# out mid-grey (130-200 on white), and a scan's paper may itself be grey.
INK_CONTRAST = 55

Piece = tuple[float, float, float]  # where it stands across, where it starts and ends along

# A rule is a stroke of the lettering when it lies this close within a word's box.
LETTER_SLACK = 1.0


def ruled_lines(vectors: Vectors, page: Box) -> list[Box]:
    """The long horizontal and vertical lines of a page's vector pieces
    (``services.extract.reading.vectors``, in displayed coordinates), cut to the displayed
    ``page`` (CAD plots draw past the paper's edge), joined and rounded. A thin stroked
    piece is a line, a thin filled rectangle a bar, a stroked rectangle its four edges."""
    x0, y0, x1, y1 = vectors.boxes.T
    wide, tall = x1 - x0, y1 - y0
    drawn = (vectors.stroked | vectors.rectangle) & (numpy.maximum(wide, tall) >= MIN_WALL)
    thin = drawn & (numpy.minimum(wide, tall) <= MAX_BAR)
    lying = wide > tall
    framed = drawn & ~thin & vectors.stroked & vectors.rectangle
    middle_y, middle_x = (y0 + y1) / 2, (x0 + x1) / 2
    # Each piece as (where it stands across, start, end along), rows stacked by kind.
    horizontal = numpy.concatenate(
        [
            numpy.stack((middle_y, x0, x1), axis=1)[thin & lying],
            numpy.stack((y0, x0, x1), axis=1)[framed],
            numpy.stack((y1, x0, x1), axis=1)[framed],
        ]
    )
    vertical = numpy.concatenate(
        [
            numpy.stack((middle_x, y0, y1), axis=1)[thin & ~lying],
            numpy.stack((x0, y0, y1), axis=1)[framed],
            numpy.stack((x1, y0, y1), axis=1)[framed],
        ]
    )
    px0, py0, px1, py1 = page
    return _rules(_cut(horizontal, py0, py1, px0, px1), _cut(vertical, px0, px1, py0, py1))


def _cut(pieces: numpy.ndarray, low: float, high: float, start: float, end: float) -> list[Piece]:
    """The pieces standing between ``low`` and ``high`` across, cut to ``start``–``end``
    along."""
    inside = pieces[(pieces[:, 0] >= low) & (pieces[:, 0] <= high)]
    inside[:, 1] = numpy.maximum(inside[:, 1], start)
    inside[:, 2] = numpy.minimum(inside[:, 2], end)
    return [(at, a, b) for at, a, b in inside.tolist()]


def image_rules(raster: Raster) -> list[Box]:
    """The ruled lines of a page image (a scan, a raster): runs of ink at least MIN_WALL
    long across or down, each no thicker than MAX_BAR on average (a scan's slightly
    skewed line is one run; a filled area or a block of lettering is none), joined and
    kept as ``ruled_lines`` keeps a drawing's, in the raster's page points."""
    if raster.pixels.size == 0:
        return []
    ink = (raster.pixels < _paper(raster.pixels) - INK_CONTRAST).astype(numpy.uint8)
    zoom, length = raster.zoom, max(3, round(MIN_WALL * raster.zoom))
    found: list[list[Piece]] = []
    for kernel in (numpy.ones((1, length), numpy.uint8), numpy.ones((length, 1), numpy.uint8)):
        across = kernel.shape[0] == 1
        runs = cv2.morphologyEx(ink, cv2.MORPH_OPEN, kernel)
        _, _, stats, _ = cv2.connectedComponentsWithStats(runs, connectivity=8)
        # Across: pieces stand at a height and run along x; down, the other way round.
        origin_at, origin_along = (raster.y0, raster.x0) if across else (raster.x0, raster.y0)
        pieces = []
        for x, y, w, h, area in stats[1:].tolist():
            at, start, thick, along = (y, x, h, w) if across else (x, y, w, h)
            if area / along <= MAX_BAR * zoom:
                pieces.append(
                    (
                        origin_at + (at + thick / 2) / zoom,
                        origin_along + start / zoom,
                        origin_along + (start + along) / zoom,
                    )
                )
        found.append(pieces)
    return _rules(*found)


def _paper(pixels: "numpy.ndarray") -> int:
    """The paper's grey: what most of a drawing's page is (a sample is enough)."""
    return int(numpy.median(pixels[::8, ::8]))


def _rules(horizontal: list[Piece], vertical: list[Piece]) -> list[Box]:
    """Rule boxes of a page's horizontal and vertical pieces: joined, the long ones and the
    short walls between them, the longest MAX_RULES, rounded."""
    across, down = _joined(horizontal), _joined(vertical)
    long_across = [r for r in across if r[2] - r[1] >= MIN_RULE]
    long_down = [r for r in down if r[2] - r[1] >= MIN_RULE]
    rules = [Box(x0, y, x1, y) for y, x0, x1 in _walls(across, long_down)]
    rules += [Box(x, y0, x, y1) for x, y0, y1 in _walls(down, long_across)]
    rules.sort(key=lambda r: -(r.width + r.height))
    return [
        Box(round(x0, 2), round(y0, 2), round(x1, 2), round(y1, 2))
        for x0, y0, x1, y1 in rules[:MAX_RULES]
    ]


def _joined(pieces: list[Piece]) -> list[Piece]:
    """Pieces within MAX_BAR of each other across that touch or overlap along, joined (at
    the first one's place); only those at least MIN_WALL long."""
    lines: list[list[float]] = []
    near = 0  # lines before this one stand too far back across for any piece still to come
    for at, start, end in sorted(pieces):
        while near < len(lines) and at - lines[near][0] > MAX_BAR:
            near += 1
        for line in lines[near:]:
            if line[1] - JOIN_GAP <= end and start <= line[2] + JOIN_GAP:
                line[1], line[2] = min(line[1], start), max(line[2], end)
                break
        else:
            lines.append([at, start, end])
    return [(at, start, end) for at, start, end in lines if end - start >= MIN_WALL]


def _walls(rules: list[Piece], crossing: list[Piece]) -> list[Piece]:
    """The long rules, and the short ones that meet a long crossing rule at both ends."""
    crossing = sorted(crossing)
    places = [c[0] for c in crossing]

    def met(at: float, end: float) -> bool:
        first, last = bisect_left(places, end - JOIN_GAP), bisect_right(places, end + JOIN_GAP)
        return any(
            c_start - JOIN_GAP <= at <= c_end + JOIN_GAP
            for _, c_start, c_end in crossing[first:last]
        )

    return [
        (at, start, end)
        for at, start, end in rules
        if end - start >= MIN_RULE or (met(at, start) and met(at, end))
    ]


def off_lettering(rules: list[Box], words: list[Word]) -> list[Box]:
    """The rules of a page OCR read that are not strokes of its lettering: a bar lying
    wholly within a word (the long bars of 平 and 面, on an image or drawn as outlines) is
    no wall, and a cell whose wall it were would cut a title's lines apart. A word OCR was
    unsure of is no such evidence: a wall read as a glyph ("0" at 0.6 over the wall between
    two cells) would take the wall it is."""
    boxes = [w.bbox for w in words if w.confidence is None or w.confidence >= OCR_SURE]
    return [r for r in rules if not any(_within(r, box) for box in boxes)]


def _within(rule: Box, box: Box) -> bool:
    return (
        rule.x0 >= box.x0 - LETTER_SLACK
        and rule.x1 <= box.x1 + LETTER_SLACK
        and rule.y0 >= box.y0 - LETTER_SLACK
        and rule.y1 <= box.y1 + LETTER_SLACK
    )
