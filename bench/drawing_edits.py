"""The sheets ``bench.revisions`` compares for the drawing's delta, made in memory with PyMuPDF
from one corpus page: the same sheet again as a plotter or a scanner would give it (re-plotted
shifted or scaled, rendered at another size, re-encoded as a JPEG raster, skewed), and the
edits a drawing team makes (a wall added, a door moved, a detail deleted, a dimension's
text changed, a revision cloud and triangle added), each with the box where it is.

Every edit is drawn in the sheet's displayed coordinates at places spread over its drawing
area, seeded by the sheet's name (the same places every run). Drawing with PyMuPDF rewrites
the page (its content wrapped, resources added, and a redaction cleans its streams), which on
some sheets changes how other content renders; each pair's earlier version went through the
same untouched: the two differ by the edit alone.
"""

import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TypeVar

import cv2
import numpy
import pymupdf

from shared.pagetext import Box, TextLayer

T = TypeVar("T")
# A detail deleted is at least this many paths wholly inside a 150 pt square, whose removal
# changes at least this many pixels of a 1024 px rendering by this much (paths that printed
# nothing, or a lone arrowhead, are no detail).
DETAIL_PATHS = 5
VISIBLE_PX = 60
VISIBLE_CHANGE = 60
# Places tried for such a detail.
DELETE_TRIES = 16
DETAIL_POINTS = 150.0


@dataclass(frozen=True)
class Edited:
    """A revision pair: the earlier and later PDF (one page) and the boxes (displayed
    coordinates, PDF points) of what the edit changed on the sheet."""

    kind: str
    before: bytes
    after: bytes
    boxes: tuple[Box, ...]


def shifted(pdf: bytes, dx: float, dy: float, scale: float = 1.0) -> bytes:
    """The sheet re-plotted: its whole content (annotations baked in) drawn again through a
    shift and a scale."""
    doc = pymupdf.open(stream=pdf, filetype="pdf")
    doc.bake()
    page = doc[0]
    data = b"q %.4f 0 0 %.4f %.3f %.3f cm\n" % (scale, scale, dx, dy)
    data += b"\n".join(doc.xref_stream(x) for x in page.get_contents()) + b"\nQ\n"
    xref = doc.get_new_xref()
    doc.update_object(xref, "<<>>")
    doc.update_stream(xref, data)
    page.set_contents(xref)
    return doc.tobytes()


def rastered(pdf: bytes, dpi: int, angle: float = 0.0, quality: int = 75) -> bytes:
    """The sheet as a scan: rendered at ``dpi``, turned by ``angle`` degrees, JPEG-encoded
    and placed on an empty page of its size (no text layer, no vectors)."""
    with pymupdf.open(stream=pdf, filetype="pdf") as doc:
        page = doc[0]
        size = page.rect
        pixmap = page.get_pixmap(dpi=dpi, alpha=False)
    image = numpy.frombuffer(pixmap.samples, numpy.uint8).reshape(pixmap.h, pixmap.w, 3)
    if angle:
        turn = cv2.getRotationMatrix2D((pixmap.w / 2, pixmap.h / 2), angle, 1.0)
        white = (255, 255, 255)
        image = numpy.asarray(
            cv2.warpAffine(image, turn, (pixmap.w, pixmap.h), borderValue=white), numpy.uint8
        )
    jpeg = cv2.imencode(".jpg", image[..., ::-1], [cv2.IMWRITE_JPEG_QUALITY, quality])[1]
    out = pymupdf.open()
    placed = out.new_page(width=size.width, height=size.height)
    placed.insert_image(placed.rect, stream=jpeg.tobytes())
    return out.tobytes()


REPLOTS: dict[str, Callable[[bytes], bytes]] = {
    "shifted 4,-3 pt": lambda pdf: shifted(pdf, 4, -3),
    "scaled 98.5%, shifted": lambda pdf: shifted(pdf, 20, 12, 0.985),
    "JPEG raster 150 dpi": lambda pdf: rastered(pdf, 150),
    "JPEG raster 100 dpi, skewed 0.4°": lambda pdf: rastered(pdf, 100, 0.4),
}


def _point(page: pymupdf.Page, x: float, y: float) -> pymupdf.Point:
    return pymupdf.Point(x, y) * page.derotation_matrix


def _rect(page: pymupdf.Page, box: Box) -> pymupdf.Rect:
    rect = pymupdf.Rect(box) * page.derotation_matrix
    rect.normalize()
    return rect


def _untouched(page: pymupdf.Page) -> None:
    """What drawing and redacting with PyMuPDF do to a page, with nothing visible drawn or
    taken away (a line off the sheet; a redaction of a tenth of a point in its corner)."""
    shape = page.new_shape()
    shape.draw_line(_point(page, -20, -20), _point(page, -10, -20))
    shape.finish(color=(0, 0, 0), width=1)
    shape.commit()
    page.add_redact_annot(pymupdf.Rect(0, 0, 0.1, 0.1))
    page.apply_redactions(images=0, graphics=0, text=1)


def _variant(pdf: bytes, make: Callable[[pymupdf.Page], T]) -> tuple[bytes, T]:
    doc = pymupdf.open(stream=pdf, filetype="pdf")
    made = make(doc[0])
    return doc.tobytes(), made


def _wall(page: pymupdf.Page, x: float, y: float) -> Box:
    shape = page.new_shape()
    for offset in (0.0, 6.0):
        shape.draw_line(_point(page, x, y + offset), _point(page, x + 140, y + offset))
    shape.finish(color=(0, 0, 0), width=1.2)
    shape.commit()
    return Box(x, y, x + 140, y + 6)


def _door(page: pymupdf.Page, x: float, y: float) -> Box:
    """A door: its leaf (36 pt) and its swing, a quarter circle."""
    shape = page.new_shape()
    shape.draw_line(_point(page, x, y), _point(page, x, y - 36))
    swing = [i * math.pi / 16 for i in range(9)]
    shape.draw_polyline([_point(page, x + 36 * math.sin(a), y - 36 * math.cos(a)) for a in swing])
    shape.finish(color=(0, 0, 0), width=0.8)
    shape.commit()
    return Box(x, y - 36, x + 36, y)


def _cloud(page: pymupdf.Page, x: float, y: float) -> Box:
    """A revision cloud (arcs around 110 x 60 pt) and a revision triangle with its number."""
    shape = page.new_shape()
    width, height, bump = 110.0, 60.0, 8.0
    sides = (
        (x, y, x + width, y),
        (x + width, y, x + width, y + height),
        (x + width, y + height, x, y + height),
        (x, y + height, x, y),
    )
    for x0, y0, x1, y1 in sides:
        count = max(1, int(math.hypot(x1 - x0, y1 - y0) // (2 * bump)))
        for i in range(count):
            ax, ay = x0 + (x1 - x0) * i / count, y0 + (y1 - y0) * i / count
            bx, by = x0 + (x1 - x0) * (i + 1) / count, y0 + (y1 - y0) * (i + 1) / count
            control = ((ax + bx) / 2 + (by - ay) * 0.6, (ay + by) / 2 - (bx - ax) * 0.6)
            shape.draw_curve(_point(page, ax, ay), _point(page, *control), _point(page, bx, by))
    tx, ty = x + width + 6, y
    corners = [(tx, ty + 20), (tx + 12, ty), (tx + 24, ty + 20), (tx, ty + 20)]
    shape.draw_polyline([_point(page, *c) for c in corners])
    shape.finish(color=(0.9, 0, 0), width=1.0)
    shape.commit()
    page.insert_text(
        _point(page, tx + 9, ty + 17), "2", fontsize=9, rotate=page.rotation, color=(0.9, 0, 0)
    )
    return Box(x - bump, y - bump, tx + 24, y + height + bump)


def _deleted(page: pymupdf.Page, box: Box) -> int:
    """The linework wholly inside ``box`` taken away (its text kept); how many paths."""
    before = len(page.get_drawings())
    page.add_redact_annot(_rect(page, box))
    page.apply_redactions(images=0, graphics=1, text=1)
    return before - len(page.get_drawings())


def _dimension(page: pymupdf.Page, layer: TextLayer) -> Box | None:
    """A number printed in the drawing area (a dimension, a tag) rewritten in place: each
    digit moved on by 3."""
    width, height = page.rect.width, page.rect.height
    for word in layer.words:
        x, y = word.bbox.centre
        inside = 0.15 * width < x < 0.7 * width and 0.15 * height < y < 0.8 * height
        if inside and any(c.isdigit() for c in word.text) and word.dir == (1.0, 0.0):
            page.add_redact_annot(_rect(page, word.bbox))
            page.apply_redactions(images=0, graphics=0)
            text = "".join(str((int(c) + 3) % 10) if c.isdigit() else c for c in word.text)
            baseline = word.bbox.y1 - 0.22 * word.bbox.height
            page.insert_text(
                _point(page, word.bbox.x0, baseline), text, fontsize=word.size, rotate=page.rotation
            )
            return word.bbox
    return None


def visible(before: bytes, after: bytes, box: Box) -> bool:
    """The two versions print differently inside ``box``."""
    images = []
    for pdf in (before, after):
        with pymupdf.open(stream=pdf, filetype="pdf") as doc:
            page = doc[0]
            zoom = 1024 / max(page.rect.width, page.rect.height)
            clip = pymupdf.Rect(box) & page.rect
            pixmap = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), clip=clip, alpha=False)
            images.append(numpy.frombuffer(pixmap.samples, numpy.uint8).astype(numpy.int16))
    if images[0].shape != images[1].shape:
        return True
    return int(numpy.count_nonzero(abs(images[0] - images[1]) > VISIBLE_CHANGE)) >= VISIBLE_PX


def edits(pdf: bytes, layer: TextLayer, seed: str) -> list[Edited]:
    """The five edits of one sheet (a detail deleted only where a visible one is found)."""
    base, _ = _variant(pdf, _untouched)
    with pymupdf.open(stream=base, filetype="pdf") as doc:
        width, height = doc[0].rect.width, doc[0].rect.height
    places = random.Random(seed)

    def place() -> tuple[float, float]:
        return width * places.uniform(0.15, 0.65), height * places.uniform(0.15, 0.8)

    made: list[Edited] = []
    wall_at, door_at, cloud_at = place(), place(), place()
    after, box = _variant(base, lambda p: _wall(p, *wall_at))
    made.append(Edited("wall added", base, after, (box,)))
    before, old = _variant(base, lambda p: _door(p, *door_at))
    after, new = _variant(base, lambda p: _door(p, door_at[0] + 70, door_at[1]))
    made.append(Edited("door moved", before, after, (old, new)))
    after, box = _variant(base, lambda p: _cloud(p, *cloud_at))
    made.append(Edited("cloud and triangle", base, after, (box,)))
    for _ in range(DELETE_TRIES):
        x, y = place()
        detail = Box(x, y, x + DETAIL_POINTS, y + DETAIL_POINTS)
        after, paths = _variant(base, partial(_deleted, box=detail))
        if paths >= DETAIL_PATHS and visible(base, after, detail):
            made.append(Edited("detail deleted", base, after, (detail,)))
            break
    after, number = _variant(base, lambda p: _dimension(p, layer))
    if number is not None:
        made.append(Edited("dimension text", base, after, (number,)))
    return made
