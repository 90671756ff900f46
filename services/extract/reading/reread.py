"""A page read again in the cell where the set's template says its sheet number sits
(``shared.sheet.template``), when its own reading found none there.

The cell is rendered closer (``RECOGNITION_DPI``) and its text found at that resolution,
where a label and its value part into two lines (at the page image's resolution the
detector takes them for one, and the value is read glued to its label); then, if that reads
no number in the cell, once more from a second binarisation of the same render (Otsu's
threshold, strokes thickened: large thin hand-lettered glyphs that grey anti-aliasing
leaves broken). On a page whose text layer has no words in the cell (drawn as outlines),
the cell's words are added; on an OCR page they are added in place of the words read there
at page resolution, which keep their ids (set aside, never read again). The number is then
read by the page's own reader from the page's words: the template only says where to look,
and the value found is the page's own printed text.
"""

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass

import cv2
import numpy

from services.extract.reading.page import Readers, closer_raster, ocr_layer, with_ocr_words
from services.extract.reading.title_ocr import text_turn
from shared.contracts.interfaces import Raster
from shared.infra.bounded import OverLimit
from shared.infra.settings import Settings
from shared.pagetext import Box, TextLayer, Word
from shared.sheet.decide import TEMPLATE_PAGES
from shared.sheet.reading import SheetReading, read_sheet
from shared.sheet.template import at_cell, cells_to_reread, labelled

# A word read in the cell is split after the end of the set's label when at least this
# many of the label's letters begin it (a lone letter could be the value's own).
MIN_LABEL_PART = 2
# Strokes are thickened by this many pixels of the closer render (at 300 dpi, a pixel is a
# quarter of a hairline pen).
THICKEN_PX = 2


Read = tuple[TextLayer, SheetReading]


@dataclass(frozen=True)
class CellReread:
    """A cell read again: the words read there, and the page's words and reading with
    them (``with_cell_words``)."""

    words: list[Word]
    layer: TextLayer
    reading: SheetReading


async def reread_missed(
    pdf: bytes, pages: Mapping[int, Read], settings: Settings, readers: Readers
) -> dict[int, Read]:
    """The set's pages (page number → its words and reading), each page that read no sheet
    number (or, scanned, one no label vouches for, outside the cell, or one OCR was unsure
    of) read again in the cell the set's template names (``cells_to_reread``); a page the
    cell adds nothing to, or gives a number OCR was less sure of, stays as it was."""
    readings = {n: reading for n, (_, reading) in pages.items()}
    again = dict(pages)
    for n, cell in cells_to_reread(readings).items():
        layer, reading = pages[n]
        found = await reread_number(
            pdf, layer, reading, cell.box, cell.label, settings, readers, pages=cell.pages
        )
        if found is not None and not _less_sure(found.reading, reading, cell.box):
            again[n] = (found.layer, found.reading)
    return again


def _less_sure(found: SheetReading, first: SheetReading, cell: Box) -> bool:
    """Whether the cell read again gave a number OCR was less sure of than the one first
    read in it (a number first read elsewhere, a count's position, is not its rival)."""
    if not at_cell(first, cell) or first.number is None or found.number is None:
        return False
    return (found.number.confidence or 1.0) < (first.number.confidence or 1.0)


async def reread_number(
    pdf: bytes,
    layer: TextLayer,
    reading: SheetReading,
    cell: Box,
    label: str | None,
    settings: Settings,
    readers: Readers,
    *,
    pages: int = TEMPLATE_PAGES,
) -> CellReread | None:
    """The page (``layer``, ``reading``) with ``cell`` read again closer (a value read glued
    to the end of the set's ``label`` for the number parted from it: ``apart_from_label``),
    when the page's own reader then chooses a number standing in the cell; None when it
    does not, when the page's text layer has words of its own in the cell (it was read:
    nothing is OCR'd there), or when the cell cannot be rendered within the page's
    limits."""
    if layer.source != "ocr" and any(
        w.hidden is None and cell.contains(w.bbox.centre) for w in layer.words
    ):
        return None
    try:
        raster = await closer_raster(pdf, layer.page_number, cell, settings, readers.pages)
    except OverLimit:
        return None
    hints = (reading.page_label, reading.bookmarks)
    turn = text_turn(layer.words)
    for image in (raster, binarised(raster)):
        read = await asyncio.to_thread(
            readers.ocr.ocr_raster, image, turn, detection_zoom=raster.zoom
        )
        if not read:
            continue
        words = apart_from_label(read, label)
        again = with_cell_words(layer, cell, words)
        found = await asyncio.to_thread(read_sheet, again, *hints)
        if (
            found.number
            and at_cell(found, cell)
            and (pages >= TEMPLATE_PAGES or labelled(found.chosen_number))
        ):
            kept = with_first_title(reading, found, again)
            return CellReread(words, again, kept) if kept is not None else None
    return None


def with_first_title(
    first: SheetReading, found: SheetReading, layer: TextLayer
) -> SheetReading | None:
    """The reading with the cell read again, titled as the page was first read: the cell is
    read for the number, and its words read anew may join what the page read apart (a
    title cut short, glued to its neighbour). None when that title's words were set aside
    (the page then keeps its first reading). A page first read without a title, or whose
    first title stood where the number now does (the number's cell misread: "SHEET
    NO.A-103"), takes the title read with its number."""
    if first.title is None or (found.title is not None and found.title.text == first.title.text):
        return found
    number = [layer.words[i].bbox for i in found.number.word_ids] if found.number else []
    titled = [layer.words[i].bbox for i in first.title.word_ids]
    if any(a.overlaps(b) for a in number for b in titled):
        return found
    if any(layer.words[i].hidden for i in first.title.word_ids):
        return None
    candidates = [
        c.model_copy(update={"title": first.title}) if c.chosen else c for c in found.candidates
    ]
    return found.model_copy(update={"title": first.title, "candidates": candidates})


def apart_from_label(words: list[Word], label: str | None) -> list[Word]:
    """Words read in the cell, each that begins with the end of the set's label for the
    number (its folded key, e.g. ``SHEETNO``) and goes on with a digit ("NO.A-103",
    "SHEETNO.A-103": the value printed close after its label and read as one word) split in
    two, the label's part and the value's, its box shared in proportion to their letters."""
    key = _folded(label or "")
    return [part for word in words for part in _split(word, key)]


def _split(word: Word, key: str) -> list[Word]:
    folded = _folded(word.text)
    for k in range(len(key), MIN_LABEL_PART - 1, -1):
        rest = folded[k:]
        if folded.startswith(key[-k:]) and any(c.isdigit() for c in rest):
            cut = _after_alnum(word.text, k)
            return [_part(word, 0, cut), _part(word, cut, len(word.text))]
    return [word]


def _after_alnum(text: str, count: int) -> int:
    """The index in ``text`` after its ``count``-th letter or digit and the punctuation that
    follows it ("NO.A-103", 2 → 3)."""
    seen = 0
    for i, c in enumerate(text):
        seen += c.isalnum()
        if seen == count:
            end = i + 1
            while end < len(text) and not text[end].isalnum():
                end += 1
            return end
    return len(text)


def _part(word: Word, start: int, end: int) -> Word:
    """The characters ``start:end`` of a word, its box cut along the way it runs."""
    share0, share1 = start / len(word.text), end / len(word.text)
    x0, y0, x1, y1 = word.bbox
    dx, dy = word.dir
    if abs(dx) >= abs(dy):
        a, b = (share0, share1) if dx >= 0 else (1 - share1, 1 - share0)
        box = Box(x0 + a * (x1 - x0), y0, x0 + b * (x1 - x0), y1)
    else:
        a, b = (share0, share1) if dy >= 0 else (1 - share1, 1 - share0)
        box = Box(x0, y0 + a * (y1 - y0), x1, y0 + b * (y1 - y0))
    return word.model_copy(update={"text": word.text[start:end].strip(), "bbox": box})


def _folded(text: str) -> str:
    return "".join(c for c in text.upper() if c.isalnum())


def binarised(raster: Raster) -> Raster:
    """The render in black and white at Otsu's threshold, its dark strokes thickened by
    ``THICKEN_PX``: a second look at print the grey render shows faint or broken."""
    if not raster.pixels.size:
        return raster
    _, ink = cv2.threshold(raster.pixels, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    kernel = numpy.ones((THICKEN_PX, THICKEN_PX), numpy.uint8)
    thick = cv2.erode(ink, kernel)  # white ground: eroding it widens the dark strokes
    return Raster(thick, raster.zoom, raster.x0, raster.y0)


def with_cell_words(layer: TextLayer, cell: Box, words: list[Word]) -> TextLayer:
    """The page's words with the cell's read closer added after them (the page's words keep
    their ids, so what cites them still does): on a text layer, where it has none of its
    own (lettering drawn as outlines); on an OCR page, in place of the words read in the
    cell at page resolution, which stay, set aside (``hidden="covered"``: the closer reading
    covers them) so that no line reads them any more."""
    inside = [w for w in words if cell.contains(w.bbox.centre)]
    if layer.source != "ocr":
        own = [w.bbox for w in layer.words if w.hidden is None]
        return with_ocr_words(layer, [w for w in inside if not _on_any(w.bbox, own)])
    kept = [
        w.model_copy(update={"hidden": "covered"})
        if w.hidden is None and cell.contains(w.bbox.centre)
        else w
        for w in layer.words
    ]
    return ocr_layer(kept + inside, layer)


def _on_any(box: Box, others: list[Box]) -> bool:
    """Whether a word read closer lies on one of the page's own words (it was read)."""
    return any(other.contains(box.centre) or box.contains(other.centre) for other in others)
