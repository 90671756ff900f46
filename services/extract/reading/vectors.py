"""The boxes of a page's vector paths, from the structured-text pass that reads its words.

MuPDF's text device, asked to collect vectors, keeps a box per straight piece of every
path (a path is split at each move: CAD's "one path, many lines" gives a box per line), in
the displayed page's frame. Collecting them costs about 5 ms a page, reading them back
about 8 and taking their widening back, as arrays (thousands of pieces a page), about 10,
where listing the same paths as dicts (``page.get_cdrawings()``) and walking their items
cost about 140. PyMuPDF does not expose a vector block's flags (stroked,
rectangle, continues), so the block list is walked with ``ctypes`` over ``fz_stext_block``
as MuPDF's header lays it out; the layout is checked against what PyMuPDF does expose
before it is trusted, and MuPDF's XML print of the blocks is read instead when it does
not match (another MuPDF build).

A stroked box is widened by half the path's line width in the path's own units, not the
page's (MuPDF's ``add_vectors_from_path``): on a CAD sheet drawn at a small scale a 0.5 pt
line's box can be 12 pt thick. The widening is taken back here: measured on the path's own
lines where it has two or more (a straight two-point piece's box is exactly twice the
widening thick), and otherwise told from the page's render (a widened line inks its box's
middle, a rectangle its edges)."""

import ctypes
import re
from functools import cache
from typing import NamedTuple

import numpy
import pymupdf

from services.extract.reading.visibility import PageRender

_VECTOR_BLOCK = pymupdf.mupdf.FZ_STEXT_BLOCK_VECTOR
_STROKED = pymupdf.mupdf.FZ_STEXT_VECTOR_IS_STROKED
_RECTANGLE = pymupdf.mupdf.FZ_STEXT_VECTOR_IS_RECTANGLE
_CONTINUES = pymupdf.mupdf.FZ_STEXT_VECTOR_CONTINUES  # the path's next piece comes next
# A stroked piece's box at most this thick (points) is a drawn line's.
_LINE_BOX = 3.0
# Two boxes of one path as thin as each other to this much are two of its lines.
_SAME_WIDENING = 1e-3
# A box of a path that shows no widening, this thick (points), may be a widened line or a
# rectangle: the render decides. Thinner, the two readings make walls a hair apart (one);
# thicker, no line is widened that much (a drawing read back from SVG widens its 1.3 pt
# lines to 31 pt boxes: the widening is in the path's own units).
_UNSURE_BOX = (6.0, 40.0)
# An unflagged piece's box at least this many times as long as it is thick may be a line.
_WALL_LIKE = 8
# Points along such a box the render is read at, and the darkness (0-255) that is ink.
_SAMPLES = 9
_INK = 24


class Vectors(NamedTuple):
    """A page's vector pieces (straight pieces, or the rest of a path, curves and bends, in
    one box) as arrays, one row each: thousands a page, so no object is made per piece."""

    boxes: numpy.ndarray  # (n, 4) x0, y0, x1, y1 in the displayed page's points
    stroked: numpy.ndarray  # (n,) bool
    rectangle: numpy.ndarray  # (n,) bool: a line or an axis-aligned rectangle


class _Block(ctypes.Structure):
    """``fz_stext_block`` with its union read as a vector's (flags first) and padded to its
    largest member (an image's matrix and pointer)."""


_Block._fields_ = [
    ("type", ctypes.c_int),
    ("id", ctypes.c_int),
    ("x0", ctypes.c_float),
    ("y0", ctypes.c_float),
    ("x1", ctypes.c_float),
    ("y1", ctypes.c_float),
    ("flags", ctypes.c_uint32),
    ("argb", ctypes.c_uint32),
    ("_rest_of_union", ctypes.c_byte * (6 * 4 + ctypes.sizeof(ctypes.c_void_p) - 8)),
    ("prev", ctypes.c_void_p),
    ("next", ctypes.c_void_p),
]

# A vector piece as read: its box (x0, y0, x1, y1) and flags.
Raw = tuple[float, float, float, float, int]

_XML_VECTOR = re.compile(rb'<vector bbox="([^"]+)" stroke="(\d)" rectangle="(\d)" continues="(\d)"')


def vector_boxes(
    display: pymupdf.DisplayList, render: PageRender, shortest: float = 0.0
) -> tuple[int, Vectors]:
    """How many vector pieces the page ``display`` lists, and those at least ``shortest``
    long one way, each stroke's widening taken back (``render``: the page rendered from it)."""
    textpage = display.get_textpage(flags=pymupdf.TEXT_COLLECT_VECTORS)
    raw = _walked(textpage) if _layout_matches() else _printed(textpage)
    return len(raw), _unwidened(raw, render, shortest)


def _walked(textpage: pymupdf.mupdf.FzStextPage) -> list[Raw]:
    first = textpage.m_internal.first_block
    address = int(first.this) if first is not None else None
    out = []
    while address:
        b = _Block.from_address(address)
        if b.type == _VECTOR_BLOCK:
            out.append((b.x0, b.y0, b.x1, b.y1, b.flags))
        address = b.next
    return out


def _printed(textpage: pymupdf.mupdf.FzStextPage) -> list[Raw]:
    """The same from MuPDF's XML print."""
    mupdf = pymupdf.mupdf
    buffer = mupdf.fz_new_buffer(1 << 16)
    out = mupdf.FzOutput(buffer)
    mupdf.fz_print_stext_page_as_xml(out, textpage, 0)
    out.fz_close_output()
    found = []
    for match in _XML_VECTOR.finditer(buffer.fz_buffer_extract()):
        x0, y0, x1, y1 = map(float, match.group(1).split())
        stroked, rectangle, continues = (match.group(n) == b"1" for n in (2, 3, 4))
        flags = _STROKED * stroked | _RECTANGLE * rectangle | _CONTINUES * continues
        found.append((x0, y0, x1, y1, flags))
    return found


@cache
def _layout_matches() -> bool:
    """Whether ``_Block`` reads a known page's blocks as PyMuPDF's own accessors do."""
    doc = pymupdf.open()
    page = doc.new_page(width=200, height=200)
    page.insert_text((20, 40), "x")
    page.draw_line((10, 100), (150, 100), width=2)
    page.draw_rect(pymupdf.Rect(30, 120, 90, 180), width=0)
    textpage = page.get_displaylist().get_textpage(flags=pymupdf.TEXT_COLLECT_VECTORS)
    swig = textpage.m_internal.first_block
    if swig is None:
        return False
    address: int | None = int(swig.this)
    seen = 0
    while swig is not None and address:
        b = _Block.from_address(address)
        box = (b.x0, b.y0, b.x1, b.y1)
        if b.type != swig.type or box != (swig.bbox.x0, swig.bbox.y0, swig.bbox.x1, swig.bbox.y1):
            return False
        seen += b.type == _VECTOR_BLOCK and bool(b.flags & _RECTANGLE)
        swig, address = swig.next, b.next
    if swig is not None or address:
        return False
    return seen >= 2


def _unwidened(raw: list[Raw], render: PageRender, shortest: float) -> Vectors:
    """The boxes at least ``shortest`` long one way, each stroke's widening taken back. A
    path of two or more straight pieces shows its widening: its lines' boxes are all twice
    it thick. A piece no thicker than a drawn line is a line. A piece of a path that shows
    nothing is a line or a rectangle as thick as its box: the page's ``render`` says which
    where that matters (ink along its middle, or at its edges); a rectangle loses the
    page's usual widening. A path MuPDF never ended (its last piece says it continues) is
    left out."""
    pieces = numpy.array(raw, dtype=numpy.float64).reshape(-1, 5)
    box, flags = pieces[:, :4], pieces[:, 4].astype(numpy.int64)
    ends = flags & _CONTINUES == 0
    path = numpy.cumsum(ends) - ends  # each piece's path: the ends before it
    stroked, rectangle = flags & _STROKED != 0, flags & _RECTANGLE != 0
    wide, tall = box[:, 2] - box[:, 0], box[:, 3] - box[:, 1]
    thickness = numpy.minimum(wide, tall)
    finished = path < ends.sum()
    own, seen = _own_widenings(path, finished & stroked & rectangle, thickness / 2)
    kept = finished & ((wide >= shortest) | (tall >= shortest))
    by = numpy.where(stroked & ~numpy.isnan(own), own, 0.0)
    line = stroked & kept & numpy.isnan(own) & (thickness <= _LINE_BOX)
    by[line] = thickness[line] / 2
    rest = stroked & kept & numpy.isnan(own) & ~line
    # MuPDF leaves some straight pieces unflagged (seen on a CAD sheet read back from SVG):
    # those long enough to be a wall are asked too, not a curve's box.
    long = numpy.maximum(wide, tall) >= _WALL_LIKE * thickness
    unsure = rest & (rectangle | long) & (thickness >= _UNSURE_BOX[0])
    unsure &= thickness <= _UNSURE_BOX[1]
    drawn = numpy.zeros(len(pieces), bool)
    drawn[unsure] = _drawn_as_lines(render, box[unsure])
    measured = numpy.concatenate((seen, by[line], thickness[drawn] / 2))
    usual = float(numpy.median(measured)) if measured.size else 0.0
    by[rest] = numpy.minimum(usual, thickness[rest] / 2)
    by[drawn] = thickness[drawn] / 2
    return Vectors(_shrunk(box[kept], by[kept]), stroked[kept], rectangle[kept])


def _own_widenings(
    path: numpy.ndarray, candidate: numpy.ndarray, half: numpy.ndarray
) -> tuple[numpy.ndarray, numpy.ndarray]:
    """The widening each piece's path shows (NaN where none), and each path's once: the
    half-thickness of its thinnest stroked straight pieces, two or more as thin."""
    at = numpy.flatnonzero(candidate)
    at = at[numpy.lexsort((half[at], path[at]))]  # by path, thinnest first
    first = numpy.flatnonzero(numpy.r_[True, path[at][1:] != path[at][:-1]])
    first = first[first + 1 < len(at)]
    pair = first[path[at][first + 1] == path[at][first]]
    pair = pair[half[at][pair + 1] - half[at][pair] <= _SAME_WIDENING]
    widenings = numpy.full(int(path.max(initial=0)) + 1, numpy.nan)
    widenings[path[at][pair]] = half[at][pair]
    return widenings[path], half[at][pair]


def _drawn_as_lines(render: PageRender, boxes: numpy.ndarray) -> numpy.ndarray:
    """For each box (rows of x0, y0, x1, y1), whether the render shows ink along its middle
    and none at its edges (a line MuPDF widened) rather than at its edges (a rectangle),
    sampled at points along it, all boxes at once."""
    if not len(boxes):
        return numpy.zeros(0, bool)
    z, (ox, oy) = render.zoom, render.origin
    pixels = render.pixels
    height, width = pixels.shape[:2]
    b = boxes * z
    b -= (ox, oy, ox, oy)
    lying = (b[:, 2] - b[:, 0]) >= (b[:, 3] - b[:, 1])
    # Along: start, end; across: low edge, high edge (pixels), whichever way the box lies.
    along = numpy.where(lying[:, None], b[:, [0, 2]], b[:, [1, 3]])
    across = numpy.where(lying[:, None], b[:, [1, 3]], b[:, [0, 2]])
    inset = across[:, 1:2] - across[:, 0:1]  # past the stroke's caps at either end
    steps = (numpy.arange(_SAMPLES) + 0.5) / _SAMPLES
    at = along[:, 0:1] + inset + steps * numpy.maximum(along[:, 1:2] - along[:, 0:1] - 2 * inset, 0)
    rows = {
        "middle": (across[:, 0] + across[:, 1]) / 2,
        "low": across[:, 0] + 0.5,
        "high": across[:, 1] - 0.5,
    }
    ink = {}
    for name, line in rows.items():
        darkest = numpy.zeros(at.shape)
        for shift in (-0.5, 0.0, 0.5):  # a thin line's ink falls on one row or its neighbour
            cross = numpy.broadcast_to((line + shift)[:, None], at.shape)
            ys = numpy.where(lying[:, None], cross, at).astype(int).clip(0, height - 1)
            xs = numpy.where(lying[:, None], at, cross).astype(int).clip(0, width - 1)
            darkest = numpy.maximum(darkest, 255 - pixels[ys, xs].min(axis=2))
        ink[name] = numpy.median(darkest, axis=1)
    edges = numpy.maximum(ink["low"], ink["high"])
    return (ink["middle"] >= _INK) & (edges < ink["middle"] / 2)


def _shrunk(boxes: numpy.ndarray, by: numpy.ndarray) -> numpy.ndarray:
    """Each box shrunk by its ``by`` on every side, collapsed to its middle where it is
    thinner than that."""
    x0, y0, x1, y1 = boxes.T
    a, b, c, d = x0 + by, y0 + by, x1 - by, y1 - by
    narrow, low = (c < a) & (by > 0), (d < b) & (by > 0)
    a[narrow] = c[narrow] = ((x0 + x1) / 2)[narrow]
    b[low] = d[low] = ((y0 + y1) / 2)[low]
    return numpy.stack((a, b, c, d), axis=1)
