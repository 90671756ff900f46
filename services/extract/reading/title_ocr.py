"""A closer OCR reading of where a scanned sheet names itself, when its page-resolution
reading shows no sheet number; and of a title block drawn as outlines on a page whose text
layer holds the rest of its words (``wordless_title_block``).

The page image is rendered for the whole sheet (2048 px on its long side: under 60 dpi on an
E-size sheet), where small print is a few pixels high and the detector misses it. The places
a sheet names itself are found from the page's own reading, in the frame its text runs in
(``page_turn``), not from fixed shares of the page: the heading in the largest print with
what is printed under it (a map title and its "SHEET 3 OF 10"), then the strip along the
sheet's edges where its reading gathers most small text (a title block along any edge, or a
number printed in the margin). Each is rendered at ``RECOGNITION_DPI``, its text found at
``CLOSER_DETECTION_DPI`` and only the lines the page's reading did not read already are read
(each part of the page is read once).
"""

import cv2
import imagecodecs
import numpy

from shared.pagetext import Box, TextLayer, Word
from shared.sheet.reader import unsure

# Text is found in a closer region at this resolution: 6 pt print is 9 px high.
CLOSER_DETECTION_DPI = 150
# A region's detection image, at most (pixels): larger regions are searched at a lower
# resolution, so a closer look costs about as much as a third of a page's detection.
CLOSER_MAX_PIXELS = 3_000_000
# Below the heading, its region reaches this many heading heights (the title's other lines,
# the sheet's "SHEET 3 OF 10"), above it one, and along it a quarter of its length either side.
HEADING_BELOW = 6.0
HEADING_SIDE = 0.25
# The words of the heading's line are printed within this ratio of its size.
HEADING_SIZE = 1.5
# A heading word has at least this many letters (not a stray mark, a tag or a stamp's
# number) and runs the way the page's text does.
HEADING_MIN_LETTERS = 4
# The edge strips of a sheet, as shares of its upright extent: a title block or margin
# print lies within them, and a ruled line this close to an edge may bound a title strip.
EDGE_SHARE = 0.2
STRIP_SHARE = 0.3
# A ruled line runs at least this share of the page's extent along it (a frame, or the
# edge of a title strip), and is found on the page image darker than this.
RULE_SHARE = 0.4
_INK = 128
# Lines closer than this share of the extent to the outermost one are the same border.
_BORDER_SHARE = 0.02
# A line of the closer reading that the page's words cover this much (of its area, by words
# of about its print size) was read already.
READ_ALREADY = 0.5
SAME_SIZE = 2.0


# A title read from the page is read again closer from a render of its box grown by this
# many of its print sizes each way (its lines whole, with what is printed around them); the
# words whose centres lie in its box grown by this share of a print size are replaced.
TITLE_MARGIN = 2.0
TITLE_CORE = 0.5
# Where the closer reading finds a word at an end of that region along the title's lines
# (its other lines start or end further out, or what the page read of it was a piece of a
# line), the region is read again grown this many print sizes further that way.
TITLE_ALONG = 6.0
# A title whose print is this many pixels tall in the page image was found and read there
# as well as a closer look would (a map's heading); smaller print is read again closer.
TITLE_CLEAR_PX = 32.0
# ... unless OCR was unsure of one of its words (``shared.sheet.reader.unsure``: two lines
# read as one tall word, a letter taken for another).


# A title block drawn as outlines on a page with a text layer: an edge strip holding at most
# this many of the page's shown words (a logo's name, a stamp) ...
WORDLESS_WORDS = 2
# ... and inked on at least this share of its pixels in the page image by marks no longer
# than ``MARK_LENGTH`` points (outlined lettering, not a frame's or a cell's walls: a blank
# margin or a ruled gutter is not worth reading).
INKED_SHARE = 0.001
MARK_LENGTH = 24.0


# The way text runs on the displayed page (a word's ``dir``) for each turn of its content.
_RUNS = {0: (1.0, 0.0), 90: (0.0, 1.0), 180: (-1.0, 0.0), 270: (0.0, -1.0)}


def to_upright(box: Box, turn: int, width: float, height: float) -> Box:
    """``box`` of the displayed page (``width`` x ``height``) in the frame of its content
    turned upright (content turned ``turn`` degrees clockwise)."""
    corners = [_upright_point(x, y, turn, width, height) for x, y in (box[:2], box[2:])]
    (a, b), (c, d) = corners
    return Box(min(a, c), min(b, d), max(a, c), max(b, d))


def to_page(box: Box, turn: int, width: float, height: float) -> Box:
    """The inverse of ``to_upright``: a box of the upright content on the displayed page."""
    back = (360 - turn) % 360
    w, h = (height, width) if turn in (90, 270) else (width, height)
    return to_upright(box, back, w, h)


def _upright_point(x: float, y: float, turn: int, width: float, height: float):
    if turn == 90:
        return y, width - x
    if turn == 180:
        return width - x, height - y
    if turn == 270:
        return height - y, x
    return x, y


def long_rules(png: bytes, zoom: float) -> list[Box]:
    """The long straight lines of a page image (``zoom`` pixels per point), across or down
    the page: a sheet's frame and the edges of its title strip, as thin boxes in points."""
    ink = _ink(png).astype(numpy.uint8)
    height, width = ink.shape
    rules: list[Box] = []
    for axis, reach in ((0, height), (1, width)):
        length = max(2, int(RULE_SHARE * reach))
        kernel = numpy.ones((length, 1) if axis == 0 else (1, length), numpy.uint8)
        runs = cv2.morphologyEx(ink, cv2.MORPH_OPEN, kernel).any(axis=axis)
        for at in numpy.flatnonzero(runs):
            if axis == 0:  # a column with a long vertical line
                rules.append(Box(at / zoom, 0.0, (at + 1) / zoom, height / zoom))
            else:
                rules.append(Box(0.0, at / zoom, width / zoom, (at + 1) / zoom))
    return rules


def closer_regions(layer: TextLayer, turn: int, rules: list[Box] | None = None) -> list[Box]:
    """Where to read the page closer, most promising first (displayed page coordinates):
    the heading in the largest print and what lies under it, then an edge strip of the
    sheet: one a long ruled line bounds (a title strip, with the margin outside its
    border), else the one with the most small print read on it; of equals, the right and
    bottom ones first, where title blocks usually sit. ``rules`` are the page's long lines
    (``long_rules`` of a scan's image), else its drawn ones."""
    w, h = layer.width, layer.height
    uw, uh = (h, w) if turn in (90, 270) else (w, h)
    words = [(word, to_upright(word.bbox, turn, w, h)) for word in layer.words]
    regions: list[Box] = []
    runs = _RUNS[turn]
    heading = _heading([(word, box) for word, box in words if _along(word.dir, runs)])
    if heading:
        regions.append(heading)
    frame = Box.union(layer.rules) if layer.rules else Box(0.0, 0.0, w, h)
    x0, y0, x1, y1 = to_upright(frame, turn, w, h)
    dx, dy = EDGE_SHARE * (x1 - x0), EDGE_SHARE * (y1 - y0)
    # The margin outside a ruled frame belongs to the strip beside it.
    strips = [
        Box(x1 - dx, 0.0, uw, uh),
        Box(0.0, y1 - dy, uw, uh),
        Box(0.0, 0.0, x0 + dx, uh),
        Box(0.0, 0.0, uw, y0 + dy),
    ]
    small = [box for word, box in words if heading is None or not _centre_in(heading, box)]

    def gathered(strip: Box) -> float:
        return sum(1 for box in small if _centre_in(strip, box)) / max(1.0, _area(strip))

    ruled = _ruled_strips(
        [to_upright(r, turn, w, h) for r in (rules if rules is not None else layer.rules)],
        uw,
        uh,
    )
    best = max(ruled or strips, key=gathered)  # the first of equals: right, then bottom
    regions.append(best)
    return [to_page(r, turn, w, h) for r in regions]


def _ruled_strips(rules: list[Box], width: float, height: float) -> list[Box]:
    """Strips along the edges of an upright sheet (right, bottom, left, top) that a long
    ruled line bounds: the innermost line near an edge, when it is not the border itself."""
    down = sorted({round(r.x0) for r in rules if r.height > RULE_SHARE * height})
    across = sorted({round(r.y0) for r in rules if r.width > RULE_SHARE * width})
    strips = []
    if (x := _inner(down, width, far=True)) is not None:
        strips.append(Box(x, 0.0, width, height))
    if (y := _inner(across, height, far=True)) is not None:
        strips.append(Box(0.0, y, width, height))
    if (x := _inner(down, width, far=False)) is not None:
        strips.append(Box(0.0, 0.0, x, height))
    if (y := _inner(across, height, far=False)) is not None:
        strips.append(Box(0.0, 0.0, width, y))
    return strips


def _inner(lines: list[int], reach: float, *, far: bool) -> float | None:
    """Of the lines within ``STRIP_SHARE`` of an edge (the far one, or the near one), the
    innermost, when it lies apart from the outermost (the border)."""
    if far:
        near = [at for at in lines if at > (1 - STRIP_SHARE) * reach]
        inner, border = (min(near), max(near)) if near else (0, 0)
    else:
        near = [at for at in lines if at < STRIP_SHARE * reach]
        inner, border = (max(near), min(near)) if near else (0, 0)
    return float(inner) if near and abs(border - inner) > _BORDER_SHARE * reach else None


def _heading(words: list[tuple[Word, Box]]) -> Box | None:
    """The region of the heading in the largest print (upright coordinates): its line, a
    quarter of its length either side, one height above and ``HEADING_BELOW`` below."""
    named = [(word, box) for word, box in words if _letters(word.text) >= HEADING_MIN_LETTERS]
    if not named:
        return None
    box = max((b for _, b in named), key=lambda b: b.height)
    size = box.height
    line = [
        b
        for _, b in words
        if abs(b.centre[1] - box.centre[1]) < size / 2
        and size / HEADING_SIZE <= b.height <= size * HEADING_SIZE
    ]
    x0, _, x1, _ = Box.union(line)
    reach = HEADING_SIDE * (x1 - x0)
    return Box(x0 - reach, box.y0 - size, x1 + reach, box.y1 + HEADING_BELOW * size)


def detection_zoom(region: Box) -> float:
    """Pixels per point at which to find a region's text: ``CLOSER_DETECTION_DPI``, lower
    when that image would exceed ``CLOSER_MAX_PIXELS``."""
    zoom = CLOSER_DETECTION_DPI / 72
    return min(zoom, (CLOSER_MAX_PIXELS / max(1.0, _area(region))) ** 0.5)


def read_already(words: list[Word]):
    """A test of a detected line (page points): whether ``words`` of about its print size
    cover it already (the page's reading read it)."""

    def covered(quad) -> bool:
        x0, y0 = quad.min(axis=0)
        x1, y1 = quad.max(axis=0)
        return _covered(Box(float(x0), float(y0), float(x1), float(y1)), words)

    return covered


def _covered(line: Box, words: list[Word]) -> bool:
    """Whether ``words`` of about the print size of ``line`` cover it."""
    thick = min(line.width, line.height)
    inside = sum(_overlap(line, w.bbox) for w in words if _alike(w.size, thick))
    return inside >= READ_ALREADY * max(_area(line), 1e-6)


def _along(direction: tuple[float, float], runs: tuple[float, float]) -> bool:
    return direction[0] * runs[0] + direction[1] * runs[1] > 0.95


def _alike(size: float, other: float) -> bool:
    """Whether two print sizes are about the same: a detector's boxes of one line found at
    the page image's resolution and closer differ by up to about this much."""
    return other / SAME_SIZE <= size <= other * SAME_SIZE


def _letters(text: str) -> int:
    return sum(c.isalpha() for c in text)


def _area(box: Box) -> float:
    return max(0.0, box.x1 - box.x0) * max(0.0, box.y1 - box.y0)


def _overlap(a: Box, b: Box) -> float:
    return max(0.0, a.overlap_x(b)) * max(0.0, a.overlap_y(b))


def _centre_in(region: Box, box: Box) -> bool:
    cx, cy = box.centre
    return region.x0 <= cx < region.x1 and region.y0 <= cy < region.y1


def title_regions(layer: TextLayer, word_ids: list[int], zoom: float) -> tuple[Box, Box] | None:
    """Where a title read from a page's OCR words lies (displayed page coordinates), when
    its print is small in the page image (``zoom`` pixels per point) or OCR was unsure of
    one of its words: the region to render and read again closer, and within it the core
    whose words the closer reading replaces."""
    words = [layer.words[i] for i in word_ids]
    size = max(w.size for w in words)
    if size * zoom >= TITLE_CLEAR_PX and not unsure(words):
        return None
    x0, y0, x1, y1 = Box.union(w.bbox for w in words)
    grow, core = TITLE_MARGIN * size, TITLE_CORE * size
    return (
        Box(x0 - grow, y0 - grow, x1 + grow, y1 + grow),
        Box(x0 - core, y0 - core, x1 + core, y1 + core),
    )


def cut_short(region: Box, title: list[Word], closer: list[Word]) -> Box | None:
    """The title's ``region`` grown along its lines by ``TITLE_ALONG`` print sizes, when a
    word of the ``closer`` reading there reaches an end of it along them (a line it cut);
    None when none does."""
    size = max(w.size for w in title)
    down = abs(title[0].dir[0]) < abs(title[0].dir[1])  # its lines run down the page
    slack, grow = TITLE_CORE * size, TITLE_ALONG * size
    if down:
        ends = any(w.bbox.y0 <= region.y0 + slack or w.bbox.y1 >= region.y1 - slack for w in closer)
        return Box(region.x0, region.y0 - grow, region.x1, region.y1 + grow) if ends else None
    ends = any(w.bbox.x0 <= region.x0 + slack or w.bbox.x1 >= region.x1 - slack for w in closer)
    return Box(region.x0 - grow, region.y0, region.x1 + grow, region.y1) if ends else None


def apart_from(core: Box, words: list[Word]):
    """A test of a detected line (page points): whether it lies apart from ``core`` (none
    of its words could replace one there) and the page's ``words`` read it already, so it
    is not read."""
    already = read_already(words)

    def apart(quad) -> bool:
        x0, y0 = quad.min(axis=0)
        x1, y1 = quad.max(axis=0)
        line = Box(float(x0), float(y0), float(x1), float(y1))
        return _overlap(core, line) <= 0 and already(quad)

    return apart


def with_closer_title(words: list[Word], closer: list[Word], core: Box) -> list[Word]:
    """The page's words with those in the title's ``core`` replaced by the closer reading's
    words there, and the closer reading's words the page did not read added: the title's
    lines found and read again at a resolution where stacked lines part and short words show
    (page detection merges a title's close lines or finds one of them alone, drops or leans
    an "OF", misreads a letter)."""
    kept = [w for w in words if not _centre_in(core, w.bbox)]
    closer = [w for w in closer if not _within_larger(w, closer)]
    found = [w for w in closer if _centre_in(core, w.bbox) or not _covered(w.bbox, words)]
    return kept + found


def _within_larger(word: Word, words: list[Word]) -> bool:
    """Whether a larger word of ``words`` covers most of ``word`` (the detector found a
    piece of a line again in a box of its own)."""
    area = _area(word.bbox)
    return any(
        _area(other.bbox) > area and _overlap(other.bbox, word.bbox) >= READ_ALREADY * area
        for other in words
    )


def text_turn(words: list[Word]) -> int:
    """How a text layer's content is turned (degrees clockwise): the turn its shown words
    run along most (a sheet fed sideways keeps its text layer, turned with it)."""
    votes = dict.fromkeys(_RUNS, 0)
    for word in words:
        if word.hidden is None:
            for turn, runs in _RUNS.items():
                votes[turn] += _along(word.dir, runs)
    return max(votes, key=lambda turn: votes[turn])  # of equals the first: upright


def wordless_title_block(layer: TextLayer, png: bytes, zoom: float, turn: int) -> Box | None:
    """Where a page that has a text layer draws its title block as outlines (displayed
    page coordinates), or None: an edge strip of the sheet (one a long ruled line bounds
    first, of the page image's ``long_rules``, then the plain edge strips), right, bottom,
    left and top in the frame its text runs in (``turn``), that holds no more than
    ``WORDLESS_WORDS`` of the page's shown words and whose pixels in the page image
    (``zoom`` pixels per point) are inked by lettering at least ``INKED_SHARE``. A title
    block the text layer has words in is never one: it was read."""
    w, h = layer.width, layer.height
    uw, uh = (h, w) if turn in (90, 270) else (w, h)
    rules = [to_upright(r, turn, w, h) for r in long_rules(png, zoom)]
    dx, dy = EDGE_SHARE * uw, EDGE_SHARE * uh
    edges = [
        Box(uw - dx, 0.0, uw, uh),
        Box(0.0, uh - dy, uw, uh),
        Box(0.0, 0.0, dx, uh),
        Box(0.0, 0.0, uw, dy),
    ]
    ink = _lettering(png, zoom)
    shown = [w.bbox for w in layer.words if w.hidden is None]
    for strip in _ruled_strips(rules, uw, uh) + edges:
        region = to_page(strip, turn, w, h)
        words = sum(1 for box in shown if _centre_in(region, box))
        if words <= WORDLESS_WORDS and _inked(ink, region, zoom) >= INKED_SHARE:
            return region
    return None


def _ink(png: bytes) -> numpy.ndarray:
    """The page image's inked pixels (darker than mid-grey), as booleans."""
    gray = imagecodecs.png_decode(png)
    if gray.ndim == 3:
        gray = cv2.cvtColor(gray[:, :, :3], cv2.COLOR_RGB2GRAY)
    return numpy.asarray(gray < _INK)


def _lettering(png: bytes, zoom: float) -> numpy.ndarray:
    """The page image's inked pixels that are no part of a straight line ``MARK_LENGTH``
    long across or down (a frame, a cell wall): lettering and small marks."""
    ink = _ink(png).astype(numpy.uint8)
    length = max(2, round(MARK_LENGTH * zoom))
    across = cv2.morphologyEx(ink, cv2.MORPH_OPEN, numpy.ones((1, length), numpy.uint8))
    down = cv2.morphologyEx(ink, cv2.MORPH_OPEN, numpy.ones((length, 1), numpy.uint8))
    return numpy.asarray((ink > 0) & (across == 0) & (down == 0))


def _inked(ink: numpy.ndarray, region: Box, zoom: float) -> float:
    """The share of ``region``'s pixels (page points, ``zoom`` pixels per point) inked."""
    height, width = ink.shape
    x0, x1 = (min(width, max(0, round(v * zoom))) for v in (region.x0, region.x1))
    y0, y1 = (min(height, max(0, round(v * zoom))) for v in (region.y0, region.y1))
    part = ink[y0:y1, x0:x1]
    return float(part.mean()) if part.size else 0.0
