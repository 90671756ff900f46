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
from shared.sheet.reading import SheetReading, read_sheet
from shared.sheet.template import at_cell, cells_to_reread

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
    number read again in the cell the set's template names (``cells_to_reread``); a page
    the cell adds nothing to stays as it was."""
    readings = {n: reading for n, (_, reading) in pages.items()}
    again = dict(pages)
    for n, cell in cells_to_reread(readings).items():
        layer, reading = pages[n]
        found = await reread_number(pdf, layer, reading, cell.box, settings, readers)
        if found is not None:
            again[n] = (found.layer, found.reading)
    return again


async def reread_number(
    pdf: bytes,
    layer: TextLayer,
    reading: SheetReading,
    cell: Box,
    settings: Settings,
    readers: Readers,
) -> CellReread | None:
    """The page (``layer``, ``reading``) with ``cell`` read again closer, when the page's
    own reader then chooses a number standing in the cell; None when it does not, when the
    page's text layer has words of its own in the cell (it was read: nothing is OCR'd
    there), or when the cell cannot be rendered within the page's limits."""
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
        words = await asyncio.to_thread(
            readers.ocr.ocr_raster, image, turn, detection_zoom=raster.zoom
        )
        if not words:
            continue
        again = with_cell_words(layer, cell, words)
        found = await asyncio.to_thread(read_sheet, again, *hints)
        if found.number and at_cell(found, cell):
            return CellReread(words, again, found)
    return None


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
