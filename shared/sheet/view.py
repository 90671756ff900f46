"""The page as its title block is read: in the frame of one text direction, with the ruled
lines of the page's drawing as cell walls.

A sheet turned sideways (its title block running up the right edge) is read in the frame of
its vertical text, where that title block lies along the bottom like any other. Coordinates
are the page-text model's (``shared.pagetext.Frame``): x runs along the text, y down the
lines. The sheet's extent is the extent of what it prints, not of the paper, so a drawing
frame that sits inside a larger page still has its title block at its own lower right.
"""

import itertools
import statistics
import threading
import unicodedata
import weakref
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple

from shared.pagetext import (
    Box,
    Frame,
    FramedLine,
    Point,
    TextLayer,
    Word,
    direction_key,
    frame_of,
    framed_line,
)

# A line of the page-text model in a view, or a single word of another direction (its
# ``line_id`` -1): what the title block is read from.
Run = FramedLine

# OCR measures print only by its word boxes, whose heights vary by up to this ratio for one
# print (two lines of one title in capitals came back 20 and 15 pt high): sizes of OCR'd
# lines compared with each other are allowed this much more.
OCR_SIZE_RATIO = 1.4
# A value printed wider than its cell runs past the wall by up to this share of its
# height, about its last glyph (a date in a narrow column of a form), or where that glyph
# is a Chinese or Japanese one, as wide as it is high, by up to its height: the wall still
# parts it from the next cell's text.
OVERHANG = 0.5
WIDE_OVERHANG = 1.0


def read_by_ocr(run: Run) -> bool:
    """Whether a line's words were read from the page image."""
    return run.words[run.ids[0]].origin == "ocr"


# Where a title block sits, as shares of the sheet's extent: its right strip or bottom band.
ZONE_RIGHT = 0.65
ZONE_BOTTOM = 0.8
# A ruled line that runs this share of the extent's height (width) bounds a strip.
STRIP_RULE_SPAN = 0.5
# A ruled cell larger than this share of the extent is a drawing frame, not a field.
CELL_MAX_SHARE = 0.45
# An empty band between double walls is at most this high (or two text heights).
THIN_BAND = 18.0
# A direction read as a view needs this many lines of its own.
MIN_VIEW_LINES = 3
# Words of one printed line never overlap along it: two that overlap by this share of the
# shorter, their centres this share of a text height apart across it, are on two lines the
# page's rows rule joined (OCR's boxes taller than a title's line pitch, handwriting across
# a printed line).
STACKED_OVERLAP = 0.3
STACKED_OFFSET = 0.25


class Rule(NamedTuple):
    """A ruled line of the page in a view: where it stands across, from where to where."""

    at: float
    start: float
    end: float


@dataclass
class View:
    """The page's runs and ruled lines in the frame of one text direction."""

    frame: Frame
    words: list[Word]
    runs: list[Run]
    extent: Box
    horizontal: list[Rule]  # at y, from x0 to x1
    vertical: list[Rule]  # at x, from y0 to y1
    typical_size: float
    run_of_word: dict[int, Run] = field(default_factory=dict)
    # A word printed across the view's direction (read on its own here) → the words of its
    # own printed line: a value beside a label turned 90° ("SCALE:" up the cell, "1 : 100"
    # across it) is that line, not its first word.
    crossing: dict[int, tuple[int, ...]] = field(default_factory=dict)

    @cached_property
    def aligned(self) -> list[Run]:
        """The runs along the view's direction: its lines."""
        return [r for r in self.runs if r.line_id >= 0]

    @cached_property
    def _by_top(self) -> tuple[list[float], list[Run]]:
        ordered = sorted(self.runs, key=lambda r: r.box.y0)
        return [r.box.y0 for r in ordered], ordered

    @cached_property
    def tallest(self) -> float:
        """The height of the view's tallest run."""
        return max((r.box.height for r in self.runs), default=0.0)

    def runs_between(self, top: float, bottom: float) -> list[Run]:
        """The runs whose top edge lies between two heights."""
        tops, ordered = self._by_top
        return ordered[bisect_left(tops, top) : bisect_right(tops, bottom)]

    def box_of(self, ids: tuple[int, ...]) -> Box:
        """The view box of some of the page's words."""
        return Box.union(self.words[i].bbox.in_frame(self.frame) for i in ids)

    def run_of(self, ids: tuple[int, ...]) -> Run:
        """The run the first of some words belongs to."""
        return self.run_of_word[ids[0]]

    def in_zone(self, box: Box) -> bool:
        """Whether a box lies where a title block sits: the extent's right strip or bottom
        band, or beyond a ruled line that cuts such a strip off the drawing."""
        x0, y0, x1, y1 = self.extent
        cx, cy = box.centre
        if cx >= x0 + ZONE_RIGHT * (x1 - x0) or cy >= y0 + ZONE_BOTTOM * (y1 - y0):
            return True
        strip_x, strip_y = self.strips
        return (strip_x is not None and cx >= strip_x) or (strip_y is not None and cy >= strip_y)

    def edge_score(self, box: Box) -> float:
        """How close to the extent's right or bottom edge a box sits (1.0 = on it)."""
        x0, y0, x1, y1 = self.extent
        cx, cy = box.centre
        return max((cx - x0) / max(x1 - x0, 1.0), (cy - y0) / max(y1 - y0, 1.0))

    @cached_property
    def strips(self) -> tuple[float | None, float | None]:
        """The left wall of a ruled right strip and the top wall of a ruled bottom band: the
        innermost long rule in the outer part of the extent, short of its border."""
        x0, y0, x1, y1 = self.extent
        width, height = x1 - x0, y1 - y0
        walls_x = [
            x
            for x, a, b in self.vertical
            if b - a >= STRIP_RULE_SPAN * height and x0 + 0.6 * width <= x <= x1 - 0.03 * width
        ]
        walls_y = [
            y
            for y, a, b in self.horizontal
            if b - a >= STRIP_RULE_SPAN * width and y0 + 0.6 * height <= y <= y1 - 0.03 * height
        ]
        return (min(walls_x) if walls_x else None, min(walls_y) if walls_y else None)

    def cell(self, point: Point) -> Box | None:
        """The ruled cell around a point: the nearest rule on each side that spans it, or
        None when the point is not boxed in (or the box is a drawing frame, not a field)."""
        x, y = point
        across, down = self._sorted_rules
        top, bottom = across.nearest(y, x, -1), across.nearest(y, x, 1)
        left, right = down.nearest(x, y, -1), down.nearest(x, y, 1)
        if top is None or bottom is None or left is None or right is None:
            return None
        ex0, ey0, ex1, ey1 = self.extent
        if right - left > CELL_MAX_SHARE * (ex1 - ex0) or bottom - top > CELL_MAX_SHARE * (
            ey1 - ey0
        ):
            return None
        return Box(left, top, right, bottom)

    @cached_property
    def _sorted_rules(self) -> tuple["_Sorted", "_Sorted"]:
        return _Sorted(self.horizontal), _Sorted(self.vertical)

    def cell_above(self, cell: Box) -> Box | None:
        """The ruled cell above a cell, past the empty bands double walls make."""
        return self._next_cell(cell, -1)

    def cell_below(self, cell: Box) -> Box | None:
        """The ruled cell below a cell, past the empty bands double walls make."""
        return self._next_cell(cell, 1)

    def _next_cell(self, cell: Box, step: int) -> Box | None:
        x = cell.centre.x
        for _ in range(3):
            found = self.cell(Point(x, cell.y0 - 0.5 if step < 0 else cell.y1 + 0.5))
            if found is None:
                return None
            thin = found.height <= max(2 * self.typical_size, THIN_BAND)
            if not thin or self.holds_text(found):
                return found
            cell = found
        return None

    def holds_text(self, box: Box) -> bool:
        """Whether any run's centre lies in a box."""
        return any(box.contains(r.box.centre) for r in self.runs)


def views(layer: TextLayer) -> Iterator[View]:
    """A view for each axis direction the page's lines run in (most lines first), built
    as they are asked for, and kept for the next reader of the same words in this thread
    (the title block's number and its other fields are read from the same views)."""
    if not layer.words:
        return iter(())
    kept: _Views | None = getattr(_kept, "views", None)
    if kept is None or kept.layer() is not layer:
        kept = _kept.views = _Views(layer)
    return iter(kept)


# The last page's views, per thread: pages are read in worker threads, each page once.
_kept = threading.local()


class _Views:
    """The views of one page's words, built once each, in order, as they are asked for."""

    def __init__(self, layer: TextLayer) -> None:
        self.layer = weakref.ref(layer)
        lines = Counter(direction_key(layer.words[line[0]].dir) for line in layer.lines if line)
        axis = {frame_key: n for frame_key, n in lines.items() if frame_key % 18 == 0}
        keys = [k for k, n in sorted(axis.items(), key=lambda kv: -kv[1]) if n >= MIN_VIEW_LINES]
        self.keys = keys or [0]
        self.built: list[View] = []

    def __iter__(self) -> Iterator[View]:
        for i, key in enumerate(self.keys):
            if i == len(self.built):
                layer = self.layer()
                if layer is None:
                    return
                self.built.append(_view(layer, key))
            yield self.built[i]


def _view(layer: TextLayer, key: int) -> View:
    frame = frame_of(key)
    words = layer.words
    runs: list[Run] = []
    in_lines: set[int] = set()
    horizontal, vertical = _rules(layer, frame)
    walls = _Walls(vertical)
    crossing: dict[int, tuple[int, ...]] = {}
    for line_id, line in enumerate(layer.lines):
        if not line:
            continue
        if direction_key(words[line[0]].dir) != key:
            if len(line) > 1:
                crossing.update(dict.fromkeys(line, tuple(line)))
            continue
        in_lines.update(line)
        framed = {i: words[i].bbox.in_frame(frame) for i in line}
        for printed in _printed_rows(line, framed):
            for row in walls.split(printed, framed, words):
                runs.append(framed_line(words, row, frame, line_id, [framed[i] for i in row]))
    runs += [
        framed_line(words, (w.id,), frame)
        for w in words
        if w.id not in in_lines and w.hidden is None
    ]
    boxes = [r.box for r in runs] + [rule.in_frame(frame) for rule in layer.rules]
    sizes = [w.size for w in words if w.size] or [r.box.height for r in runs]
    view = View(
        frame=frame,
        words=words,
        runs=runs,
        extent=Box.union(boxes),
        horizontal=horizontal,
        vertical=vertical,
        typical_size=statistics.median(sizes),
        crossing=crossing,
    )
    view.run_of_word = {i: run for run in runs for i in run.ids}
    return view


def _printed_rows(line: list[int], boxes: dict[int, Box]) -> list[list[int]]:
    """A line's words (their ``boxes`` in the view's frame) as the rows they are printed on:
    the line itself, or, where its words overlap along it at different heights, its words
    parted across it into rows (top to bottom) whose words do not overlap, each in order
    along it."""

    def stacked(a: int, b: int) -> bool:
        ba, bb = boxes[a], boxes[b]
        shorter = min(ba.width, bb.width)
        offset = abs(ba.centre.y - bb.centre.y)
        return ba.overlap_x(bb) > STACKED_OVERLAP * shorter and offset >= STACKED_OFFSET * min(
            ba.height, bb.height
        )

    if not any(stacked(a, b) for a, b in itertools.pairwise(line)):
        return [line]
    printed: list[list[int]] = []
    for i in sorted(line, key=lambda i: boxes[i].centre.y):
        if printed and not any(stacked(i, j) for j in printed[-1]):
            printed[-1].append(i)
        else:
            printed.append([i])
    return [sorted(row, key=lambda i: boxes[i].x0) for row in printed]


class _Sorted:
    """Rules of one axis by where they stand, for the nearest one past a point that spans
    it (a page of a CAD drawing has thousands)."""

    def __init__(self, rules: list[Rule]) -> None:
        self.rules = sorted(rules)
        self.at = [r.at for r in self.rules]

    def nearest(self, at: float, across: float, step: int) -> float | None:
        """The position of the nearest rule before (step -1) or after (step 1) ``at`` that
        spans ``across``."""
        k = bisect_left(self.at, at) - 1 if step < 0 else bisect_right(self.at, at)
        while 0 <= k < len(self.rules):
            rule = self.rules[k]
            if rule.at != at and rule.start - 1 <= across <= rule.end + 1:
                return rule.at
            k += step
        return None


class _Walls:
    """The vertical ruled lines of a view, by where they stand: a line of text that runs
    across one is two values in two cells (a firm's e-mail glued to a title)."""

    def __init__(self, vertical: list[Rule]) -> None:
        self.rules = sorted(vertical)
        self.at = [r.at for r in self.rules]

    def split(self, row: list[int], boxes: dict[int, Box], words: list[Word]) -> list[list[int]]:
        """A row's words (in order along it) as the parts no wall runs between."""
        parts = [[row[0]]]
        for a, b in itertools.pairwise(row):
            if self._between(boxes[a], boxes[b], _overhang(words[a].text)):
                parts.append([b])
            else:
                parts[-1].append(b)
        return parts

    def _between(self, a: Box, b: Box, overhang: float) -> bool:
        y = (a.centre.y + b.centre.y) / 2
        top, bottom = min(a.y0, b.y0), max(a.y1, b.y1)
        start = max(a.centre.x, a.x1 - max(0.5, overhang * a.height))
        end = min(b.centre.x, b.x0 + max(0.5, OVERHANG * b.height))
        lo, hi = bisect_left(self.at, start), bisect_right(self.at, end)
        # Under a word's last glyph only a wall ruled across the whole line counts: a short
        # stroke there (a date struck out and written over) is no cell's wall.
        return any(
            r.start <= y <= r.end
            and (a.x1 - 0.5 <= r.at <= b.x0 + 0.5 or (r.start <= top and bottom <= r.end))
            for r in self.rules[lo:hi]
        )


def _overhang(text: str) -> float:
    """How far past its wall a word may run, as a share of its height: its last glyph."""
    return WIDE_OVERHANG if text and is_wide(text[-1]) else OVERHANG


def is_wide(ch: str) -> bool:
    """Whether a character is full-width (a Chinese or Japanese one, as wide as it is high)."""
    return unicodedata.east_asian_width(ch) in ("W", "F")


def _rules(layer: TextLayer, frame: Frame) -> tuple[list[Rule], list[Rule]]:
    horizontal, vertical = [], []
    for rule in layer.rules:
        x0, y0, x1, y1 = rule.in_frame(frame)
        if x1 - x0 >= y1 - y0:
            horizontal.append(Rule((y0 + y1) / 2, x0, x1))
        else:
            vertical.append(Rule((x0 + x1) / 2, y0, y1))
    return horizontal, vertical
