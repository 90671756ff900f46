"""Revision pairs made from a real drawing set with PyMuPDF, as an architect's office re-issues
sheets: a word of a note changed, a revision mark changed, a sheet renumbered. Each edit takes
the printed word out (redaction of that word alone, nothing drawn under it touched) and prints
the new one on the same baseline, at the same size or smaller to fit before the next word."""

import pymupdf

from shared.pagetext import Box
from tests.support.corpus import pdf_bytes


def pages_of(file: str, pages: list[int]) -> bytes:
    """A set of ``pages`` (numbers) of a corpus file, in memory."""
    source = pymupdf.open(stream=pdf_bytes(file), filetype="pdf")
    out = pymupdf.open()
    for n in pages:
        out.insert_pdf(source, from_page=n - 1, to_page=n - 1)
    return out.tobytes(garbage=3, deflate=True)


def _spans(page: pymupdf.Page) -> list[dict]:
    return [
        span
        for block in page.get_text("dict")["blocks"]
        for line in block.get("lines", [])
        for span in line["spans"]
    ]


def replace_word(
    page: pymupdf.Page, old: str, new: str, *, near: tuple[float, float] | None = None
) -> int:
    """Replace the printed word ``old`` by ``new`` (every one, or the one nearest ``near``);
    how many were replaced."""
    every = page.get_text("words")
    words = [w for w in every if w[4] == old]
    if near is not None and words:
        words = [min(words, key=lambda w: abs(w[0] - near[0]) + abs(w[1] - near[1]))]
    spans = _spans(page)
    printed = []
    for x0, y0, x1, y1, *_ in words:
        rect = pymupdf.Rect(x0, y0, x1, y1)
        middle = (rect.tl + rect.br) / 2
        span = next(s for s in spans if middle in pymupdf.Rect(s["bbox"]))
        inset = pymupdf.Rect(x0 + 0.3, y0 + 0.3, x1 - 0.3, y1 - 0.3)
        page.add_redact_annot(inset)
        # As large as the word it replaces, unless it would run into the next word.
        after = [w[0] for w in every if w[0] > x1 and abs(w[3] - y1) < (y1 - y0) / 2]
        room = min(after, default=page.rect.x1) - x0 - 1.0
        wide = pymupdf.get_text_length(new, fontname="helv", fontsize=span["size"])
        size = span["size"] * min(1.0, room / wide)
        printed.append((pymupdf.Point(x0, span["origin"][1]), size))
    # Images and line art under the word stay (PDF_REDACT_IMAGE_NONE, _LINE_ART_NONE: 0).
    page.apply_redactions(images=0, graphics=0)
    for origin, size in printed:
        page.insert_text(origin, new, fontsize=size, fontname="helv")
    return len(words)


def edited(pdf: bytes, edits: list[tuple[int, str, str, tuple[float, float] | None]]) -> bytes:
    """``pdf`` with each edit (page number, old word, new word, near) made."""
    doc = pymupdf.open(stream=pdf, filetype="pdf")
    for page_number, old, new, near in edits:
        assert replace_word(doc[page_number - 1], old, new, near=near), (page_number, old)
    return doc.tobytes(garbage=3, deflate=True)


def with_wall(pdf: bytes, page_number: int, at: tuple[float, float]) -> tuple[bytes, Box]:
    """``pdf`` with a wall drawn on a page (two parallel lines, 160 pt long and 6 pt apart,
    from ``at`` in the page's displayed coordinates), no word changed; and the wall's box."""
    doc = pymupdf.open(stream=pdf, filetype="pdf")
    page = doc[page_number - 1]
    x, y = at
    shape = page.new_shape()
    for offset in (0.0, 6.0):
        start = pymupdf.Point(x, y + offset) * page.derotation_matrix
        end = pymupdf.Point(x + 160, y + offset) * page.derotation_matrix
        shape.draw_line(start, end)
    shape.finish(color=(0, 0, 0), width=1.2)
    shape.commit()
    return doc.tobytes(garbage=3, deflate=True), Box(x, y, x + 160, y + 6)
