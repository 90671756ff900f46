"""One rule for rows: things side by side across a frame (words of a line, cells of a
table row, entries of a list), each caller with its own tolerance.

Items are taken in order down the frame; an item joins the last row when its centre is
within the row's reach of the row's centre, else it starts a row. Like pdfplumber's
``cluster_objects(objects, key, tolerance)``, the rule is one and the tolerance is the
caller's: words settle their row as it grows, cells and list entries keep their first's.
"""

from collections.abc import Callable, Iterable
from typing import TypeVar

from shared.pagetext.geometry import Box

T = TypeVar("T")


def half_the_smaller(row_height: float, item_height: float) -> float:
    """Centres within half the smaller text height: the reach of words and cells."""
    return 0.5 * min(item_height, row_height)


def rows(
    items: Iterable[T],
    box: Callable[[T], Box],
    *,
    height: Callable[[T], float] | None = None,
    reach: Callable[[float, float], float] = half_the_smaller,
    settle: bool = False,
    by_top: bool = False,
) -> list[list[T]]:
    """``items`` grouped into rows, top to bottom, each row's items in order along the frame.

    ``box`` is an item's box in the frame (x along, y across); ``height`` its text height
    (default: its box's). Items are taken by the centre of their box (by its top with
    ``by_top``), then along; an item joins the last row when its centre is within
    ``reach(row height, item height)`` of the row's centre. A row's centre and height are
    its first item's, or, with ``settle``, the mean of its items'.
    """
    placed = []
    for item in items:
        b = box(item)
        centre = (b.y0 + b.y1) / 2
        h = height(item) if height is not None else b.y1 - b.y0
        placed.append(((b.y0 if by_top else centre, b.x0), centre, h, item))
    placed.sort(key=lambda p: p[0])
    grouped: list[list[tuple[float, T]]] = []
    row_centre = row_height = 0.0
    for (_, x0), centre, h, item in placed:
        if grouped and abs(centre - row_centre) <= reach(row_height, h):
            grouped[-1].append((x0, item))
            if settle:
                n = len(grouped[-1])
                row_centre += (centre - row_centre) / n
                row_height += (h - row_height) / n
            continue
        grouped.append([(x0, item)])
        row_centre, row_height = centre, h
    return [[item for _, item in sorted(row, key=lambda p: p[0])] for row in grouped]
