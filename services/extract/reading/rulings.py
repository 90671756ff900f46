"""The ruled lines of a page's drawing: the walls of its title-block cells.

Only long, straight, horizontal or vertical strokes count (and filled bars thin enough to
be a drawn line); curves, fills and the short strokes of lettering do not. Collinear pieces
that touch are joined, so a wall drawn in segments is one rule. How long, thin and close
is ``RulingTolerances`` (``services.extract.tolerances``), passed per call.
"""

from collections.abc import Iterable, Iterator

import pymupdf

from services.extract.tolerances import RULINGS, RulingTolerances
from shared.pagetext import Box

Point = tuple[float, float]


def ruled_lines(
    paths: list[dict],
    matrix: pymupdf.Matrix,
    page: Box,
    tolerances: RulingTolerances = RULINGS,
) -> list[Box]:
    """The long horizontal and vertical lines of ``paths`` (``page.get_cdrawings()``), in
    displayed coordinates (``matrix``: the page's rotation matrix), cut to the displayed
    ``page`` (CAD plots draw past the paper's edge), joined and rounded."""
    px0, py0, px1, py1 = page
    same_line = tolerances.same_line
    horizontal: list[tuple[float, float, float]] = []  # (y, x0, x1)
    vertical: list[tuple[float, float, float]] = []  # (x, y0, y1)
    for a, b in _segments(paths, tolerances.max_bar):
        (x0, y0), (x1, y1) = _turn(a, matrix), _turn(b, matrix)
        if abs(y1 - y0) <= same_line and py0 <= y0 <= py1:
            horizontal.append(((y0 + y1) / 2, max(min(x0, x1), px0), min(max(x0, x1), px1)))
        elif abs(x1 - x0) <= same_line and px0 <= x0 <= px1:
            vertical.append(((x0 + x1) / 2, max(min(y0, y1), py0), min(max(y0, y1), py1)))
    rules = [Box(x0, y, x1, y) for y, x0, x1 in _joined(horizontal, tolerances)]
    rules += [Box(x, y0, x, y1) for x, y0, y1 in _joined(vertical, tolerances)]
    rules.sort(key=lambda r: -(r.width + r.height))
    return [
        Box(round(x0, 2), round(y0, 2), round(x1, 2), round(y1, 2))
        for x0, y0, x1, y1 in rules[: tolerances.max_rules]
    ]


def _turn(point: Point, m: pymupdf.Matrix) -> Point:
    x, y = point
    return x * m.a + y * m.c + m.e, x * m.b + y * m.d + m.f


def _segments(paths: list[dict], max_bar: float) -> Iterator[tuple[Point, Point]]:
    """Straight pieces of stroked paths, rectangle edges, and the long axis of thin bars."""
    for path in paths:
        stroked = "s" in path.get("type", "")
        for item in path["items"]:
            kind = item[0]
            if kind == "l" and stroked:
                yield item[1], item[2]
            elif kind == "re":
                yield from _rect_edges(item[1], stroked, max_bar)
            elif kind == "qu":
                xs, ys = [p[0] for p in item[1]], [p[1] for p in item[1]]
                box = Box(min(xs), min(ys), max(xs), max(ys))
                yield from _rect_edges(box, stroked, max_bar)


def _rect_edges(rect: Box, stroked: bool, max_bar: float) -> Iterable[tuple[Point, Point]]:
    x0, y0, x1, y1 = rect
    if stroked:
        return [
            ((x0, y0), (x1, y0)),
            ((x0, y1), (x1, y1)),
            ((x0, y0), (x0, y1)),
            ((x1, y0), (x1, y1)),
        ]
    if y1 - y0 <= max_bar < x1 - x0:
        return [((x0, (y0 + y1) / 2), (x1, (y0 + y1) / 2))]
    if x1 - x0 <= max_bar < y1 - y0:
        return [(((x0 + x1) / 2, y0), ((x0 + x1) / 2, y1))]
    return []


def _joined(
    pieces: list[tuple[float, float, float]], tolerances: RulingTolerances
) -> list[tuple[float, float, float]]:
    """Collinear pieces (same position across, within ``same_line``) that touch or overlap,
    joined; only those at least ``min_rule`` long."""
    same_line, join_gap = tolerances.same_line, tolerances.join_gap
    joined: list[list[float]] = []
    for at, start, end in sorted(pieces, key=lambda p: (round(p[0] / same_line), p[1])):
        last = joined[-1] if joined else None
        if last and abs(last[0] - at) <= same_line and start <= last[2] + join_gap:
            last[2] = max(last[2], end)
        else:
            joined.append([at, start, end])
    return [(a, s, e) for a, s, e in joined if e - s >= tolerances.min_rule]
