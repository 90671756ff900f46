"""OCR for pages without a text layer: RapidOCR on onnxruntime, models shipped in the wheel
(no download at run time).

Text is found and read at two resolutions. Detection runs on a reduced image (the page
image, 2048 px on the long side): on scanned E-size sheets it finds as many lines there as
at 2560 px, and far more than at 1536. Each line is then read from a render of the page at
``RECOGNITION_DPI``, where 3/32 in text is about 28 px tall instead of 5: the recogniser
scales every line to 48 px, so a sharper source costs nothing more to read.
Only the area that holds text is rendered: blank margins and empty parts of the sheet are
neither rendered at high resolution nor read.

Words come back in the displayed page's frame (PDF points, rotation applied), with the
direction their line runs, marked ``origin="ocr"``.
"""

import logging
import re
import threading
from dataclasses import dataclass
from typing import Any

import cv2
import imagecodecs
import numpy
import pymupdf

from shared.pagetext import Box, Word
from shared.sources import PDF_LOCK, open_pdf

# Measured on a scanned 36x24 in sheet at 2048 px, 2 busy cores: together these take a
# third off OCR's CPU time and about half off its wall time, reading the same words.
ENGINE_PARAMS = {
    "Global.log_level": "error",
    # The angle classifier only flips lines printed upside down, which drawing sheets do
    # not have; vertical lines are turned the way they read here, below.
    "Global.use_cls": False,
    # Keep the detection image's own size: the default 2000 px cap resamples a 2048 px page.
    "Global.max_side_len": 2048,
    # One thread per inference: the other services (and extract workers) share the cores,
    # and onnxruntime's spinning worker threads lose more to contention than they gain.
    "EngineConfig.onnxruntime.intra_op_num_threads": 1,
    "EngineConfig.onnxruntime.inter_op_num_threads": 1,
    # RapidOCR turns the arena off; without it every run re-allocates the detector's
    # full-page feature maps.
    "EngineConfig.onnxruntime.enable_cpu_mem_arena": True,
    # Detect at the size given, never enlarged: the default enlarges an image whose short
    # side is under 736 px, so a narrow clip (a title-block strip) would cost as much as a
    # page.
    "Det.limit_type": "max",
    "Det.limit_side_len": 2048,
    # The recogniser pads each line to at least 320 px wide by default; most lines on a
    # sheet (tags, numbers, short labels) are a third of that, so on a scanned sheet 39% of
    # what it ran was padding. Same reading, 40% less recognition CPU.
    "Rec.rec_img_shape": [3, 48, 48],
}
# Lines are read from a render at this resolution: 3/32 in text is about 28 px tall.
RECOGNITION_DPI = 300
# The high-resolution render's size cap (gray, one byte a pixel): a 36x24 in sheet at
# 300 DPI is 78 million pixels; larger sheets are read at a lower resolution.
RECOGNITION_MAX_PIXELS = 100_000_000
# Detection's image, long side at most (for a clip rendered larger than this).
DETECTION_MAX_PX = 2048
# The recogniser's line height: larger crops are shrunk to it here, with area averaging
# (its own resize is bilinear, which aliases when it shrinks a tall title).
_LINE_PX = 48
# A reading below this confidence is noise (hatching, symbols), not text.
MIN_SCORE = 0.5
# A vertical line read with less confidence than this may be upside down: it is read the
# other way round too (a line read the wrong way still scores 0.6-0.8 on its shapes).
SURE_SCORE = 0.9
# A box this much taller than wide is a line of vertical text.
_VERTICAL_RATIO = 1.5
# Margin around the text area rendered for recognition, in points.
_MARGIN_PT = 4.0

_NON_SPACE = re.compile(r"\S+")


@dataclass(frozen=True)
class Raster:
    """Gray pixels of a region of the displayed page: pixel (column, row) shows the page
    point ``(x0 + column / zoom, y0 + row / zoom)``."""

    pixels: numpy.ndarray
    zoom: float  # pixels per PDF point
    x0: float
    y0: float


def render_area(pdf: bytes, page_number: int, area: Box, dpi: float) -> Raster:
    """Render ``area`` (displayed page coordinates, points) of page ``page_number``
    (1-based) of ``pdf`` in gray at ``dpi``, lowered when the render would exceed
    ``RECOGNITION_MAX_PIXELS``. Takes ``PDF_LOCK`` (do not hold it). Run it where page
    renders run (a bounded child, ``services.extract.isolation``) or in a worker thread."""
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

    def __init__(self) -> None:
        self._engine: Any = None
        self._lock = threading.Lock()

    def _rapid(self) -> Any:
        if self._engine is None:
            from rapidocr import RapidOCR  # imported lazily: it pulls in cv2 and onnxruntime

            self._engine = RapidOCR(params=ENGINE_PARAMS)
            logging.getLogger("RapidOCR").setLevel(logging.ERROR)
        return self._engine

    def find_lines(self, png: bytes, zoom: float) -> list[numpy.ndarray]:
        """The text lines on a page image (``zoom`` pixels per point), each a quadrilateral
        (top-left, top-right, bottom-right, bottom-left) in page points."""
        image = imagecodecs.png_decode(png)
        with self._lock:
            return [quad / zoom for quad in self._detect(image)]

    def read_lines(self, raster: Raster, lines: list[numpy.ndarray]) -> list[Word]:
        """Read each line (page points) from ``raster``: its words, placed along it."""
        with self._lock:
            return self._recognise(raster, lines)

    def ocr_clip(self, pdf: bytes, page_number: int, clip: Box, dpi: float) -> list[Word]:
        """OCR the part ``clip`` (displayed page coordinates, points) of page ``page_number``
        (1-based) of ``pdf``, rendered at ``dpi``: words in page coordinates. For a region
        worth a closer look than the whole page gets, such as a title block. Renders in this
        process (``render_area`` then ``ocr_raster`` put the render where page renders
        run)."""
        return self.ocr_raster(render_area(pdf, page_number, clip, dpi))

    def ocr_raster(self, raster: Raster) -> list[Word]:
        """OCR a rendered region: lines found on it (reduced to ``DETECTION_MAX_PX`` when
        larger), read from it at full resolution."""
        height, width = raster.pixels.shape
        if not height or not width:
            return []
        scale = min(1.0, DETECTION_MAX_PX / max(height, width))
        reduced = raster.pixels
        if scale < 1:
            size = (max(1, round(width * scale)), max(1, round(height * scale)))
            reduced = cv2.resize(reduced, size, interpolation=cv2.INTER_AREA)
        with self._lock:
            quads = self._detect(cv2.cvtColor(reduced, cv2.COLOR_GRAY2BGR))
            origin = numpy.array([raster.x0, raster.y0])
            return self._recognise(raster, [origin + q / (scale * raster.zoom) for q in quads])

    def _detect(self, image: numpy.ndarray) -> list[numpy.ndarray]:
        """Text lines on ``image``: each a quadrilateral (top-left, top-right, bottom-right,
        bottom-left) in its pixels. The caller holds the lock."""
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

    def _recognise(self, raster: Raster, quads: list[numpy.ndarray]) -> list[Word]:
        """Read each detected line (page points) from ``raster``; the caller holds the lock.
        A vertical line that bottom to top reads with less than ``SURE_SCORE`` is read top to
        bottom as well, and the better reading kept."""
        words: list[Word] = []
        for quad in quads:
            line = _line(quad)
            text, score, layout = self._read(raster, line)
            vertical = abs(line.along[1]) > abs(line.along[0])
            if vertical and score < SURE_SCORE:
                turned = line.turned()
                turned_text, turned_score, turned_layout = self._read(raster, turned)
                if turned_score > score:
                    line, text, score, layout = turned, turned_text, turned_score, turned_layout
            if score >= MIN_SCORE and text.strip():
                words += _words(line, text, layout)
        return words


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


def _line(quad: numpy.ndarray) -> _Line:
    """How a detected box reads: left to right, or, when it is much taller than wide,
    bottom to top (how drawings print vertical text)."""
    top_left, top_right, _, bottom_left = quad
    width = numpy.linalg.norm(top_right - top_left)
    height = numpy.linalg.norm(bottom_left - top_left)
    if height >= _VERTICAL_RATIO * width:
        return _Line(bottom_left, top_left - bottom_left, quad[2] - bottom_left)
    return _Line(top_left, top_right - top_left, bottom_left - top_left)


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
    length = float(numpy.linalg.norm(line.along))
    direction = tuple(round(float(v), 4) + 0.0 for v in line.along / length)
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
    for chars, cols in zip(layout.words, layout.word_cols, strict=True):
        start = max(0.0, (cols[0] + 0.5 - half_char) / columns)
        end = min(1.0, (cols[-1] + 0.5 + half_char) / columns)
        words.append(_word("".join(chars), line, start, end, direction, size))
    return words


def _word(text: str, line: _Line, start: float, end: float, direction, size: float) -> Word:
    corners = numpy.array(
        [line.point(start, 0), line.point(end, 0), line.point(end, 1), line.point(start, 1)]
    )
    x0, y0 = corners.min(axis=0)
    x1, y1 = corners.max(axis=0)
    bbox = Box(round(float(x0), 2), round(float(y0), 2), round(float(x1), 2), round(float(y1), 2))
    return Word(text=text, bbox=bbox, size=size, dir=direction, origin="ocr")
