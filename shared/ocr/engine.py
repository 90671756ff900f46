"""OCR for pages without a text layer: RapidOCR on onnxruntime, models shipped in the wheel
(no download at run time).

Text is found and read at two resolutions. Detection runs on a reduced image (the page
image, 2048 px on the long side): on scanned E-size sheets it finds as many lines there as
at 2560 px, and far more than at 1536. Each line is then read from a render of the page at
``RECOGNITION_DPI``, where 3/32 in text is about 28 px tall instead of 5: the recogniser
scales every line to 48 px, so a sharper source costs nothing more to read.
Only the area that holds text is rendered: blank margins and empty parts of the sheet are
neither rendered at high resolution nor read.

Before its lines are read, the page's orientation is found (``page_turn``): which way its
text runs, for a drawing scanned sideways or upside down inside the page. Lines along the
text's direction are read that way, lines across it the way a drawing prints vertical text
(towards the text's top); a line that reads poorly so is read turned round too, so a part of
the sheet turned the other way (a stamp, a header) reads as well.

Words come back in the displayed page's frame (PDF points, rotation applied), with the
direction their line runs, marked ``origin="ocr"``.
"""

import itertools
import logging
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import cv2
import imagecodecs
import numpy
import pymupdf

from shared.contracts.interfaces import Raster
from shared.pagetext import Box, Word
from shared.pdf.sources import PDF_LOCK, open_pdf

_ARENA = "EngineConfig.onnxruntime.enable_cpu_mem_arena"
# Measured on a scanned 36x24 in sheet at 2048 px, 2 busy cores: together these take a
# third off OCR's CPU time and about half off its wall time, reading the same words.
ENGINE_PARAMS = {
    "Global.log_level": "error",
    # The angle classifier only flips lines printed upside down, which drawing sheets do
    # not have; vertical lines are turned the way they read here, below.
    "Global.use_cls": False,
    # Keep the detection image's own size: the default 2000 px cap resamples a 2048 px page,
    # and a closer region (a title strip down a sheet's edge) is long and narrow. What is
    # detected is bounded by its callers (the page image, ``DETECTION_MAX_PX``).
    "Global.max_side_len": 4096,
    # One thread per inference: the other services (and extract workers) share the cores,
    # and onnxruntime's spinning worker threads lose more to contention than they gain.
    "EngineConfig.onnxruntime.intra_op_num_threads": 1,
    "EngineConfig.onnxruntime.inter_op_num_threads": 1,
    # RapidOCR turns the arena off; without it every run re-allocates the detector's
    # full-page feature maps (``OcrEngine(arena=False)`` where nothing reads pages).
    _ARENA: True,
    # Detect at the size given, never enlarged: the default enlarges an image whose short
    # side is under 736 px, so a narrow clip (a title-block strip) would cost as much as a
    # page.
    "Det.limit_type": "max",
    "Det.limit_side_len": 4096,
    # The recogniser pads each line to at least 320 px wide by default; most lines on a
    # sheet (tags, numbers, short labels) are a third of that, so on a scanned sheet 39% of
    # what it ran was padding. Same reading, 40% less recognition CPU.
    "Rec.rec_img_shape": [3, 48, 48],
}
# What a ruled line touching a word reads as.
WALL_GLYPHS = frozenset("|")

# Lines are read from a render at this resolution: 3/32 in text is about 28 px tall.
RECOGNITION_DPI = 300
# The high-resolution render's size cap (gray, one byte a pixel): a 36x24 in sheet at
# 300 DPI is 78 million pixels; larger sheets are read at a lower resolution.
RECOGNITION_MAX_PIXELS = 100_000_000
# Detection's image, long side at most (for a clip rendered larger than this).
DETECTION_MAX_PX = 4096
# Text is found in tiles of at most this side (pixels), none much longer than wide: the
# detector misses text on a long narrow image (a title strip down a sheet's edge). Tiles
# overlap by more than a line of text is thick.
DETECTION_TILE_PX = 2048
_TILE_RATIO = 1.6
DETECTION_OVERLAP_PX = 64
# A tile whose darkest pixel is lighter than this is blank paper: not searched.
_BLANK = 200
# Two pieces of a line cut by a seam share this much of their thickness.
_SAME_LINE = 0.6
# The recogniser's line height: larger crops are shrunk to it here, with area averaging
# (its own resize is bilinear, which aliases when it shrinks a tall title).
_LINE_PX = 48
# A reading below this confidence is noise (hatching, symbols), not text.
MIN_SCORE = 0.5
# A line read with less confidence than this may be turned the other way (a part of the
# sheet turned apart from the rest): it is read the other way round too (a line read the
# wrong way still scores 0.6-0.8 on its shapes).
SURE_SCORE = 0.9
# A box this much longer than thick is a line of text whose long side is its length (a
# squarer box, a tag or a number, is taken to run the way the page's text does).
_LINE_RATIO = 1.5
# The page's orientation is voted by the lines at least this much longer than thick (their
# direction is plain), and read from up to this many of the longest of them both ways.
_CLEAR_RATIO = 3.0
_ORIENTATION_SAMPLE = 6
# A box shorter than ``_CLEAR_RATIO`` times its thickness this close to one of the page's
# axes (degrees) runs along it.
_SNAP_DEGREES = 10.0
# Clockwise turns of a page's content in the displayed page, in degrees.
TURNS = (0, 90, 180, 270)
# Margin around the text area rendered for recognition, in points.
_MARGIN_PT = 4.0

_NON_SPACE = re.compile(r"\S+")


def render_area(pdf: bytes, page_number: int, area: Box, dpi: float) -> Raster:
    """Render ``area`` (displayed page coordinates, points) of page ``page_number``
    (1-based) of ``pdf`` in gray at ``dpi``, lowered when the render would exceed
    ``RECOGNITION_MAX_PIXELS``. Takes ``PDF_LOCK`` (do not hold it). Run it where page
    renders run (a bounded child, ``services.extract.reading.isolation``) or in a worker thread."""
    with PDF_LOCK:
        page = open_pdf(pdf).load_page(page_number - 1)
        rect = pymupdf.Rect(area) & page.rect
        if rect.is_empty:
            return Raster(numpy.zeros((0, 0), numpy.uint8), dpi / 72, rect.x0, rect.y0)
        zoom = min(dpi / 72, (RECOGNITION_MAX_PIXELS / (rect.width * rect.height)) ** 0.5)
        pixmap = page.get_pixmap(
            matrix=pymupdf.Matrix(zoom, zoom), clip=rect, colorspace=pymupdf.csGRAY, alpha=False
        )
    rows = numpy.frombuffer(pixmap.samples_mv, numpy.uint8).reshape(pixmap.height, pixmap.stride)
    # The pixmap's own origin: MuPDF rounds the clip outwards to whole pixels.
    return Raster(rows[:, : pixmap.width].copy(), zoom, pixmap.x / zoom, pixmap.y / zoom)


def page_raster(png: bytes, zoom: float) -> Raster:
    """A PNG of the page (``zoom`` pixels per point, its corner at the page's origin) as a
    raster: the page image, what lines are read from when the page cannot be rendered at
    ``RECOGNITION_DPI`` within its limits, or a tile whose words are offset afterwards."""
    image = imagecodecs.png_decode(png)
    if image.ndim == 3:
        image = cv2.cvtColor(image[:, :, :3], cv2.COLOR_RGB2GRAY)
    return Raster(image, zoom, 0.0, 0.0)


class OcrEngine:
    """RapidOCR for a worker's pages: its models load on first use (about a second, which a
    set without scans never pays), and it reads one image at a time (the engine is not
    thread-safe; the lock is taken by each call below). Blocking and CPU-bound: call it from
    a worker thread."""

    def __init__(self, arena: bool = True) -> None:
        # onnxruntime's memory arena keeps what its largest run needed and never hands it
        # back: reading whole pages, it saves the detector re-allocating its full-page
        # feature maps (a third of detection's CPU) and holds about 900 MB; reading lines
        # only (verify's OCR check), it saves nothing measurable and grew by 50 MB over a
        # second pass of the corpus (bench/RESULTS.md §35).
        self._arena = arena
        self._engine: Any = None
        self._lock = threading.Lock()
        # Readings of the lines the last ``page_turn`` sampled, by (line, turn).
        self._sampled: dict[tuple[bytes, int], tuple[str, float, Any]] = {}

    def _rapid(self) -> Any:
        if self._engine is None:
            from rapidocr import RapidOCR  # imported lazily: it pulls in cv2 and onnxruntime

            self._engine = RapidOCR(params=ENGINE_PARAMS | {_ARENA: self._arena})
            logging.getLogger("RapidOCR").setLevel(logging.ERROR)
        return self._engine

    def find_lines(self, png: bytes, zoom: float) -> list[numpy.ndarray]:
        """The text lines on a page image (``zoom`` pixels per point), each a quadrilateral
        (top-left, top-right, bottom-right, bottom-left) in page points."""
        image = imagecodecs.png_decode(png)
        with self._lock:
            return [quad / zoom for quad in self._detect(image)]

    def read_lines(self, raster: Raster, lines: list[numpy.ndarray], turn: int = 0) -> list[Word]:
        """Read each line (page points) from ``raster`` in the frame of content turned
        ``turn`` degrees clockwise: its words, placed along it."""
        with self._lock:
            return self._recognise(raster, lines, turn)

    def load_recogniser(self) -> None:
        """Load the recognition model now (about a second of CPU) rather than on the first
        line read: for a service that reads lines of every page."""
        with self._lock:
            self._rapid()._load_rec_model()

    def read_crops(self, crops: list[numpy.ndarray]) -> list[tuple[str, float]]:
        """Read each crop (gray pixels of one line, reading left to right, about ``_LINE_PX``
        tall) in one batched recognition call: its text and confidence ("" when the
        confidence is below ``MIN_SCORE``, as a line read from a page is dropped)."""
        if not crops:
            return []
        from rapidocr.ch_ppocr_rec.typings import TextRecInput  # with the engine, lazily

        images = [cv2.cvtColor(crop, cv2.COLOR_GRAY2BGR) for crop in crops]
        with self._lock:
            recogniser = self._rapid()._load_rec_model()
            result = recogniser(TextRecInput(img=images, return_word_box=False))
        return [
            (text if score >= MIN_SCORE else "", float(score))
            for text, score in zip(result.txts, result.scores, strict=True)
        ]

    def page_turn(self, raster: Raster, lines: list[numpy.ndarray]) -> int:
        """How the page's text is turned (degrees clockwise, one of ``TURNS``): the axis most
        of its clear lines' length runs along, then, of the two ways along it, the one its
        longest lines read with more confidence (the usual way alone when they read surely
        that way)."""
        sides = [(quad, _sides(quad)) for quad in lines]
        clear = [(q, lg) for q, (lg, sh) in sides if _norm(lg) >= _CLEAR_RATIO * _norm(sh)]
        if not clear:
            return 0
        down = sum(_norm(v) for _, v in clear if abs(v[1]) > abs(v[0]))
        flat = sum(_norm(v) for _, v in clear) - down
        # Drawings print their vertical text reading upwards: that way is tried first.
        turns = (0, 180) if flat >= down else (270, 90)
        sample = [(q, v) for q, v in clear if (abs(v[1]) > abs(v[0])) == (turns[0] == 270)]
        sample.sort(key=lambda pair: -_norm(pair[1]))
        quads = [q for q, _ in sample[:_ORIENTATION_SAMPLE]]
        with self._lock:
            self._sampled = {
                (q.tobytes(), turns[0]): self._read(raster, _line(q, turns[0])) for q in quads
            }
            usual = sum(reading[1] for reading in self._sampled.values())
            if usual >= SURE_SCORE * len(quads):
                return turns[0]
            self._sampled.update(
                {(q.tobytes(), turns[1]): self._read(raster, _line(q, turns[1])) for q in quads}
            )
            other = sum(self._sampled[q.tobytes(), turns[1]][1] for q in quads)
        return turns[1] if other > usual else turns[0]

    def ocr_clip(self, pdf: bytes, page_number: int, clip: Box, dpi: float) -> list[Word]:
        """OCR the part ``clip`` (displayed page coordinates, points) of page ``page_number``
        (1-based) of ``pdf``, rendered at ``dpi``: words in page coordinates. For a region
        worth a closer look than the whole page gets, such as a title block. Renders in this
        process (``render_area`` then ``ocr_raster`` put the render where page renders
        run)."""
        return self.ocr_raster(render_area(pdf, page_number, clip, dpi))

    def ocr_raster(
        self,
        raster: Raster,
        turn: int = 0,
        *,
        detection_zoom: float | None = None,
        skip: Callable[[numpy.ndarray], bool] | None = None,
    ) -> list[Word]:
        """OCR a rendered region: lines found on it, reduced to ``detection_zoom`` pixels
        per point (and at most ``DETECTION_MAX_PX``) when larger and turned upright (content
        turned ``turn``), then read from it at full resolution in that frame; lines for which
        ``skip`` (given the line in page points) says so are not read (read already)."""
        height, width = raster.pixels.shape
        if not height or not width:
            return []
        scale = min(1.0, DETECTION_MAX_PX / max(height, width))
        if detection_zoom:
            scale = min(scale, detection_zoom / raster.zoom)
        reduced = raster.pixels
        if scale < 1:
            size = (max(1, round(width * scale)), max(1, round(height * scale)))
            reduced = cv2.resize(reduced, size, interpolation=cv2.INTER_AREA)
        with self._lock:
            quads = self._detect_upright(reduced, turn)
            origin = numpy.array([raster.x0, raster.y0])
            lines = [origin + q / (scale * raster.zoom) for q in quads]
            if skip:
                lines = [q for q in lines if not skip(q)]
            return self._recognise(raster, lines, turn)

    def _detect_upright(self, gray: numpy.ndarray, turn: int) -> list[numpy.ndarray]:
        """Text lines on a gray image of content turned ``turn``, found with the image turned
        upright (the detector merges close lines that run down the page: a title's stacked
        lines in a turned title block come out as one), in the image's own pixels."""
        quarters = turn // 90 % 4
        upright = numpy.ascontiguousarray(numpy.rot90(gray, quarters))
        found = self._detect(cv2.cvtColor(upright, cv2.COLOR_GRAY2BGR))
        height, width = gray.shape[:2]
        return [_turned_back(quad, quarters, width, height) for quad in found]

    def _detect(self, image: numpy.ndarray) -> list[numpy.ndarray]:
        """Text lines on ``image``: each a quadrilateral (four corners in turn) in its
        pixels, found tile by tile (``DETECTION_TILE_PX``; blank tiles are skipped), a line
        cut by a seam joined again. The caller holds the lock."""
        height, width = image.shape[:2]
        ink = image if image.ndim == 2 else image.min(axis=2)
        side = min(DETECTION_TILE_PX, max(256, int(_TILE_RATIO * min(height, width))))
        step = side - DETECTION_OVERLAP_PX
        pieces: list[tuple[numpy.ndarray, bool]] = []
        for y in range(0, max(1, height - DETECTION_OVERLAP_PX), step):
            for x in range(0, max(1, width - DETECTION_OVERLAP_PX), step):
                tile = image[y : y + side, x : x + side]
                if ink[y : y + side, x : x + side].min() > _BLANK:
                    continue
                th, tw = tile.shape[:2]
                # A tile reports the lines whose centre lies in its core (its share of the
                # overlaps), and marks those that touch a seam, to be joined.
                core = (
                    x + (DETECTION_OVERLAP_PX / 2 if x else 0),
                    y + (DETECTION_OVERLAP_PX / 2 if y else 0),
                    x + tw - (DETECTION_OVERLAP_PX / 2 if x + tw < width else 0),
                    y + th - (DETECTION_OVERLAP_PX / 2 if y + th < height else 0),
                )
                for quad in self._detect_tile(tile):
                    quad = quad + numpy.array([x, y], float)
                    cx, cy = quad.mean(axis=0)
                    if core[0] <= cx < core[2] and core[1] <= cy < core[3]:
                        near = DETECTION_OVERLAP_PX / 4  # a cut line's box may stop short
                        seam = (
                            (x and quad[:, 0].min() < x + near)
                            or (y and quad[:, 1].min() < y + near)
                            or (x + tw < width and quad[:, 0].max() > x + tw - near)
                            or (y + th < height and quad[:, 1].max() > y + th - near)
                        )
                        pieces.append((quad, bool(seam)))
        return _join_cut_lines(pieces)

    def _detect_tile(self, image: numpy.ndarray) -> list[numpy.ndarray]:
        found = self._rapid()(image, use_det=True, use_cls=False, use_rec=False)
        if found.boxes is None:
            return []
        return [numpy.asarray(box, dtype=numpy.float64) for box in found.boxes]

    def _read(self, raster: Raster, line: "_Line"):
        """RapidOCR's recognition-only call on one line: its text, score and word layout."""
        result = self._rapid()(
            _crop(raster, line), use_det=False, use_cls=False, use_rec=True, return_word_box=True
        )
        if not result.txts:
            return "", 0.0, None
        return result.txts[0], float(result.scores[0]), result.word_results[0]

    def _recognise(self, raster: Raster, quads: list[numpy.ndarray], turn: int) -> list[Word]:
        """Read each detected line (page points) from ``raster`` in the frame of content
        turned ``turn``; the caller holds the lock. A line that reads with less than
        ``SURE_SCORE`` is read turned round as well, and the better reading kept."""
        words: list[Word] = []
        # The lines ``page_turn`` read to find the turn are not read again.
        sampled, self._sampled = self._sampled, {}
        for quad in quads:
            line = _line(quad, turn)
            known = sampled.get((quad.tobytes(), turn))
            text, score, layout = known or self._read(raster, line)
            if score < SURE_SCORE:
                turned = line.turned()
                turned_text, turned_score, turned_layout = self._read(raster, turned)
                if turned_score > score:
                    line, text, score, layout = turned, turned_text, turned_score, turned_layout
            if score >= MIN_SCORE and text.strip():
                for word in _words(line, text, layout):
                    word.confidence = round(score, 3)
                    words.append(word)
        return words


def _turned_back(quad: numpy.ndarray, quarters: int, width: int, height: int) -> numpy.ndarray:
    """Points of an image turned a quarter counter-clockwise ``quarters`` times
    (``numpy.rot90``) in the pixels of the ``width`` x ``height`` image it was turned from."""
    x, y = quad[:, 0], quad[:, 1]
    if quarters == 1:
        x, y = width - y, x
    elif quarters == 2:
        x, y = width - x, height - y
    elif quarters == 3:
        x, y = y, height - x
    return numpy.stack((x, y), axis=1)


def _join_cut_lines(pieces: list[tuple[numpy.ndarray, bool]]) -> list[numpy.ndarray]:
    """The lines found, those cut by a tile's seam joined: two pieces touching a seam that
    run the same way, overlap along it and lie on one line become one box."""
    whole = [quad for quad, seam in pieces if not seam]
    cut = [quad for quad, seam in pieces if seam]
    joined = True
    while joined:
        joined = False
        for i, j in itertools.combinations(range(len(cut)), 2):
            if _one_line(cut[i], cut[j]):
                points = numpy.concatenate([cut[i], cut[j]]).astype(numpy.float32)
                cut[i] = cv2.boxPoints(cv2.minAreaRect(points)).astype(numpy.float64)
                del cut[j]
                joined = True
                break
    return whole + cut


def _one_line(a: numpy.ndarray, b: numpy.ndarray) -> bool:
    """Whether two axis-aligned pieces are parts of one line: the same way, overlapping or
    touching along it, and most of the thinner one's thickness shared across it."""
    (ax0, ay0), (ax1, ay1) = a.min(axis=0), a.max(axis=0)
    (bx0, by0), (bx1, by1) = b.min(axis=0), b.max(axis=0)
    a_flat, b_flat = ax1 - ax0 >= ay1 - ay0, bx1 - bx0 >= by1 - by0
    if a_flat != b_flat:
        return False
    if not a_flat:  # down the page: swap the axes
        ax0, ay0, ax1, ay1, bx0, by0, bx1, by1 = ay0, ax0, ay1, ax1, by0, bx0, by1, bx1
    along = min(ax1, bx1) - max(ax0, bx0)
    across = min(ay1, by1) - max(ay0, by0)
    return along >= -1 and across >= _SAME_LINE * min(ay1 - ay0, by1 - by0)


def text_area(lines: list[numpy.ndarray]) -> Box:
    """The part of the page that holds ``lines`` (page points), with a small margin: the
    only part worth rendering at ``RECOGNITION_DPI``."""
    points = numpy.concatenate(lines)
    x0, y0 = points.min(axis=0) - _MARGIN_PT
    x1, y1 = points.max(axis=0) + _MARGIN_PT
    return Box(float(x0), float(y0), float(x1), float(y1))


@dataclass(frozen=True)
class _Line:
    """A detected line in page points: it reads from ``start`` along ``along`` (its
    length), with ``across`` running from the top of its letters to their foot."""

    start: numpy.ndarray
    along: numpy.ndarray
    across: numpy.ndarray

    def turned(self) -> "_Line":
        """The same box read the other way round (a vertical line read top to bottom)."""
        return _Line(self.start + self.along + self.across, -self.along, -self.across)

    def point(self, t: float, s: float) -> numpy.ndarray:
        return self.start + t * self.along + s * self.across


def _norm(v: numpy.ndarray) -> float:
    return float(numpy.linalg.norm(v))


def _sides(quad: numpy.ndarray) -> tuple[numpy.ndarray, numpy.ndarray]:
    """A detected box's (longer, shorter) side vectors."""
    a, b = quad[1] - quad[0], quad[3] - quad[0]
    return (a, b) if _norm(a) >= _norm(b) else (b, a)


def _frame(turn: int) -> tuple[numpy.ndarray, numpy.ndarray]:
    """(the way text runs, the way its letters' tops point) for content turned ``turn``
    degrees clockwise, in page coordinates (y down)."""
    t = numpy.radians(turn)
    c, s = round(float(numpy.cos(t))), round(float(numpy.sin(t)))
    return numpy.array([c, s], float), numpy.array([s, -c], float)


def _line(quad: numpy.ndarray, turn: int = 0) -> _Line:
    """How a detected box reads in the frame of content turned ``turn``: a line along the
    text's direction reads that way, a line across it towards the text's top (how drawings
    print vertical text); a squarish box runs the way the text does."""
    runs, up = _frame(turn)
    long, short = _sides(quad)
    if _norm(long) < _LINE_RATIO * _norm(short):
        a, b = quad[1] - quad[0], quad[3] - quad[0]
        long, short = (a, b) if abs(a @ runs) >= abs(b @ runs) else (b, a)
    way = runs if abs(long @ runs) >= abs(long @ up) else up
    along = long if long @ way >= 0 else -long
    # The letters' foot is a quarter turn clockwise from the way the line reads.
    foot = numpy.array([-along[1], along[0]])
    across = short if short @ foot >= 0 else -short
    centre = quad.mean(axis=0)
    return _Line(centre - (along + across) / 2, along, across)


def _crop(raster: Raster, line: _Line) -> numpy.ndarray:
    """The line's pixels, turned to read left to right, at most ``_LINE_PX`` tall (BGR)."""
    corners = [line.point(0, 0), line.point(1, 0), line.point(1, 1), line.point(0, 1)]
    source = numpy.array(
        [(p - (raster.x0, raster.y0)) * raster.zoom for p in corners], dtype=numpy.float32
    )
    width = max(1, round(numpy.linalg.norm(line.along) * raster.zoom))
    height = max(1, round(numpy.linalg.norm(line.across) * raster.zoom))
    target = numpy.array([(0, 0), (width, 0), (width, height), (0, height)], dtype=numpy.float32)
    matrix = cv2.getPerspectiveTransform(source, target)
    crop = cv2.warpPerspective(
        raster.pixels,
        matrix,
        (width, height),
        flags=cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_REPLICATE,
    )
    if height > _LINE_PX:
        size = (max(1, round(width * _LINE_PX / height)), _LINE_PX)
        crop = cv2.resize(crop, size, interpolation=cv2.INTER_AREA)
    return cv2.cvtColor(crop, cv2.COLOR_GRAY2BGR)


def _words(line: _Line, text: str, layout) -> list[Word]:
    """The line's words placed along it: RapidOCR gives the recogniser's column of each
    character; a word spans its columns and half a character either side."""
    direction = _direction(line)
    size = round(float(numpy.linalg.norm(line.across)), 2)
    columns = getattr(layout, "line_txt_len", 0) or 0
    if not columns or not layout.words:  # no layout: words placed by their characters
        n = len(text)
        return [
            _word(m.group(), line, m.start() / n, m.end() / n, direction, size)
            for m in _NON_SPACE.finditer(text)
        ]
    half_char = columns / max(1, len(text)) / 2  # in columns, spaces counted
    words = []
    for chars, cols in (_off_walls(c, k) for c, k in _unspaced(text, layout)):
        if not chars:
            continue
        start = max(0.0, (cols[0] + 0.5 - half_char) / columns)
        end = min(1.0, (cols[-1] + 0.5 + half_char) / columns)
        words.append(_word("".join(chars), line, start, end, direction, size))
    return words


def _unspaced(text: str, layout) -> list[tuple[list[str], list[int]]]:
    """The recogniser's words (characters and their columns), those printed with no space
    between them joined: it splits a line where the script changes ("建施" "-00"), a page's
    words are what its spaces separate, as in a text layer."""
    joined: list[tuple[list[str], list[int]]] = []
    at = 0
    for chars, cols in zip(layout.words, layout.word_cols, strict=True):
        word = "".join(chars)
        found = text.find(word, at)
        if joined and found == at:
            joined[-1] = (joined[-1][0] + list(chars), joined[-1][1] + list(cols))
        else:
            joined.append((list(chars), list(cols)))
        if found >= 0:
            at = found + len(word)
    return joined


def _off_walls(chars: list[str], cols: list[int]) -> tuple[list[str], list[int]]:
    """A word's characters without the bars at its ends: a cell's wall the recogniser read
    as "|" beside the text it touches ("|A.200")."""
    start, end = 0, len(chars)
    while start < end and chars[start] in WALL_GLYPHS:
        start += 1
    while end > start and chars[end - 1] in WALL_GLYPHS:
        end -= 1
    return chars[start:end], cols[start:end]


def _direction(line: _Line) -> tuple[float, float]:
    """The way a line's words run: its box's length, or, for a short box tilted a little
    off the page's axes, that axis (a short word's box, "OF" or a tag, leans a few degrees
    whichever way the detector drew it, and a word leaning so is no line of its own)."""
    length = float(numpy.linalg.norm(line.along))
    x, y = (float(v) for v in line.along / length)
    if length < _CLEAR_RATIO * float(numpy.linalg.norm(line.across)):
        angle = numpy.degrees(numpy.arctan2(y, x))
        axis = 90 * round(angle / 90)
        if abs(angle - axis) <= _SNAP_DEGREES:
            t = numpy.radians(axis)
            x, y = round(float(numpy.cos(t))), round(float(numpy.sin(t)))
    return round(x, 4) + 0.0, round(y, 4) + 0.0


def _word(text: str, line: _Line, start: float, end: float, direction, size: float) -> Word:
    corners = numpy.array(
        [line.point(start, 0), line.point(end, 0), line.point(end, 1), line.point(start, 1)]
    )
    x0, y0 = corners.min(axis=0)
    x1, y1 = corners.max(axis=0)
    bbox = Box(round(float(x0), 2), round(float(y0), 2), round(float(x1), 2), round(float(y1), 2))
    return Word(text=text, bbox=bbox, size=size, dir=direction, origin="ocr")
