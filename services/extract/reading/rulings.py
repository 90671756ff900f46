"""The ruled lines of a page's drawing: the walls of its title-block cells.

Only long, straight, horizontal or vertical strokes count (and filled bars thin enough to
be a drawn line); curves, fills and the short strokes of lettering do not. Collinear pieces
that touch are joined, so a wall drawn in segments is one rule.
"""

from collections.abc import Iterable, Iterator

import pymupdf

from shared.pagetext import Box

# A rule is at least this long (PDF points; a third of an inch) ...
MIN_RULE = 24.0
# ... or, as a wall between two rules it meets at both ends (the walls of a title block's
# low rows: GOST's 5 mm), at least this long.
MIN_WALL = 8.0
# ... and a filled bar at most this thick.
MAX_BAR = 3.0
# Pieces this close along one line are one rule; lines this close across are one line.
JOIN_GAP = 1.5
SAME_LINE = 0.75
# Enough walls for any title block; past this only the longest are kept.
MAX_RULES = 4000

Point = tuple[float, float]


def ruled_lines(paths: list[dict], matrix: pymupdf.Matrix, page: Box) -> list[Box]:
    """The long horizontal and vertical lines of ``paths`` (``page.get_cdrawings()``), in
    displayed coordinates (``matrix``: the page's rotation matrix), cut to the displayed
    ``page`` (CAD plots draw past the paper's edge), joined and rounded."""
    px0, py0, px1, py1 = page
    horizontal: list[tuple[float, float, float]] = []  # (y, x0, x1)
    vertical: list[tuple[float, float, float]] = []  # (x, y0, y1)
    for a, b in _segments(paths):
        (x0, y0), (x1, y1) = _turn(a, matrix), _turn(b, matrix)
        if abs(y1 - y0) <= SAME_LINE and py0 <= y0 <= py1:
            horizontal.append(((y0 + y1) / 2, max(min(x0, x1), px0), min(max(x0, x1), px1)))
        elif abs(x1 - x0) <= SAME_LINE and px0 <= x0 <= px1:
            vertical.append(((x0 + x1) / 2, max(min(y0, y1), py0), min(max(y0, y1), py1)))
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


def _turn(point: Point, m: pymupdf.Matrix) -> Point:
    x, y = point
    return x * m.a + y * m.c + m.e, x * m.b + y * m.d + m.f


def _segments(paths: list[dict]) -> Iterator[tuple[Point, Point]]:
    """Straight pieces of stroked paths, rectangle edges, and the long axis of thin bars.
    A path smaller than a wall every way is passed over: a CAD sheet's paths are mostly
    such (hatching, lettering drawn as outlines), reading their pieces was half the cost,
    and joined they only made walls nobody drew."""
    for path in paths:
        x0, y0, x1, y1 = path["rect"]
        if x1 - x0 < MIN_WALL and y1 - y0 < MIN_WALL:
            continue
        stroked = "s" in path.get("type", "")
        for item in path["items"]:
            kind = item[0]
            if kind == "l" and stroked:
                yield item[1], item[2]
            elif kind == "re":
                yield from _rect_edges(item[1], stroked)
            elif kind == "qu":
                xs, ys = [p[0] for p in item[1]], [p[1] for p in item[1]]
                yield from _rect_edges(Box(min(xs), min(ys), max(xs), max(ys)), stroked)


def _rect_edges(rect: Box, stroked: bool) -> Iterable[tuple[Point, Point]]:
    x0, y0, x1, y1 = rect
    if stroked:
        return [
            ((x0, y0), (x1, y0)),
            ((x0, y1), (x1, y1)),
            ((x0, y0), (x0, y1)),
            ((x1, y0), (x1, y1)),
        ]
    if y1 - y0 <= MAX_BAR < x1 - x0:
        return [((x0, (y0 + y1) / 2), (x1, (y0 + y1) / 2))]
    if x1 - x0 <= MAX_BAR < y1 - y0:
        return [(((x0 + x1) / 2, y0), ((x0 + x1) / 2, y1))]
    return []


def _joined(pieces: list[tuple[float, float, float]]) -> list[tuple[float, float, float]]:
    """Collinear pieces (same position across, within SAME_LINE) that touch or overlap,
    joined; only those at least MIN_RULE long."""
    joined: list[list[float]] = []
    for at, start, end in sorted(pieces, key=lambda p: (round(p[0] / SAME_LINE), p[1])):
        last = joined[-1] if joined else None
        if last and abs(last[0] - at) <= SAME_LINE and start <= last[2] + JOIN_GAP:
            last[2] = max(last[2], end)
        else:
            joined.append([at, start, end])
    return [(at, start, end) for at, start, end in joined if end - start >= MIN_WALL]


def _walls(
    rules: list[tuple[float, float, float]], crossing: list[tuple[float, float, float]]
) -> list[tuple[float, float, float]]:
    """The long rules, and the short ones that meet a long crossing rule at both ends."""

    def met(at: float, end: float) -> bool:
        return any(
            abs(c_at - end) <= JOIN_GAP and c_start - JOIN_GAP <= at <= c_end + JOIN_GAP
            for c_at, c_start, c_end in crossing
        )

    return [
        (at, start, end)
        for at, start, end in rules
        if end - start >= MIN_RULE or (met(at, start) and met(at, end))
    ]
