"""The page's ``SheetReading``, read once from its words; on a scan, read closer where a sheet
names itself until its number shows, and on a page with a text layer whose title block is
drawn as outlines, that title block OCR'd (``services.extract.reading.title_ocr``)."""

import asyncio
from collections.abc import Callable

import numpy

from services.extract.reading.page import (
    Readers,
    RenderedPage,
    closer_raster,
    ocr_layer,
    with_ocr_words,
)
from services.extract.reading.title_ocr import (
    apart_from,
    closer_regions,
    cut_short,
    detection_zoom,
    long_rules,
    read_already,
    text_turn,
    title_regions,
    with_closer_title,
    wordless_title_block,
)
from shared.infra.bounded import OverLimit
from shared.infra.settings import Settings
from shared.pagetext import Box, TextLayer, Word
from shared.sheet.reader import OCR_SURE, unsure
from shared.sheet.reading import PlacedGuess, SheetReading, read_sheet

# A title block found by its number and few labels (not a ruled strip or band of the sheet)
# is read closer this share of the page's shorter side around them: its unread labels lie
# in the cells about the number. A strip is read as it is, at the closer resolution.
TITLE_BLOCK_MARGIN = 0.1


async def read_identity(
    pdf: bytes,
    page: RenderedPage,
    text_layer: TextLayer,
    turn: int,
    settings: Settings,
    readers: Readers,
) -> tuple[TextLayer, SheetReading]:
    """The page's ``SheetReading``, read from its words. An OCR page whose words show no sheet
    number is read closer where a sheet names itself (``_closer_title_block``), and its
    reading is made from those words instead."""

    def read(layer: TextLayer) -> SheetReading:
        return read_sheet(layer, page.label, page.bookmarks)

    reading = await asyncio.to_thread(read, text_layer)
    if text_layer.source != "ocr":
        if text_layer.has_text_layer and settings.ocr_enabled and reading.number is None:
            text_layer, reading = await _outlined_title_block(
                pdf, page, (text_layer, reading), read, settings, readers
            )
        return text_layer, _unsure_title_withheld(text_layer, reading)
    if not reading.number:
        text_layer, reading = await _closer_title_block(
            pdf, page, (text_layer, reading), turn, read, settings, readers
        )
    if reading.number and not reading.title and reading.region:
        text_layer, reading = await _closer_title_cells(
            pdf, (text_layer, reading), turn, read, settings, readers
        )
    text_layer, reading = await _closer_title(
        pdf, page.zoom, (text_layer, reading), read, settings, readers
    )
    return text_layer, _unsure_title_withheld(text_layer, reading)


def _unsure_title_withheld(layer: TextLayer, reading: SheetReading) -> SheetReading:
    """A title OCR was unsure of a word of, read closer or not ("CENERAL" for "GENERAL"),
    is not the page's title but a guess, which the set takes only where its other sheets
    print theirs at the same place: a letter misread is a wrong title."""
    words = [layer.words[i] for i in reading.title.word_ids] if reading.title else []
    if reading.title is None or not (doubt := unsure(words)):
        return reading
    word = doubt[0]
    confidence = word.confidence or 0.0
    why = (
        f"OCR was unsure of {word.text!r} ({confidence:.2f})"
        if confidence < OCR_SURE
        else f"OCR read {word.text!r}, brackets whose content it lost"
    )
    return reading.model_copy(
        update={
            "title": None,
            "title_guess": PlacedGuess.of(
                reading.title.text,
                reading.title.word_ids,
                layer,
                box=Box.union(w.bbox for w in words),
            ),
            "title_reason": f"{reading.title_reason}; not taken: {why}",
        }
    )


async def _closer_title_block(
    pdf: bytes,
    page: RenderedPage,
    read_so_far: tuple[TextLayer, SheetReading],
    turn: int,
    read: Callable[[TextLayer], SheetReading],
    settings: Settings,
    readers: Readers,
) -> tuple[TextLayer, SheetReading]:
    """An OCR page's words and reading with the lines read closer where a sheet names itself
    (``services.extract.reading.title_ocr``), region by region until its reading shows a sheet
    number: each region rendered in a bounded child like the page itself (one over the
    page's limits is left as the page's reading has it), and only its lines not read
    already are read."""
    text_layer, reading = read_so_far
    # A scan's ruled lines are in its image; a page of drawn outlines has them listed.
    rules = text_layer.rules or await asyncio.to_thread(long_rules, page.png, page.zoom)
    for region in closer_regions(text_layer, turn, rules):
        if closer := await _read_closer(pdf, text_layer, region, turn, read, settings, readers):
            text_layer, reading = closer
            if reading.number:
                break
    return text_layer, reading


async def _closer_title_cells(
    pdf: bytes,
    read_so_far: tuple[TextLayer, SheetReading],
    turn: int,
    read: Callable[[TextLayer], SheetReading],
    settings: Settings,
    readers: Readers,
) -> tuple[TextLayer, SheetReading]:
    """An OCR page that read a number but no title: its title block read closer, since the
    fields' labels (small print, often turned 90°) can be too small for the page image's
    detector to see, and without them no cell is labelled. A strip is read first as it is
    (a margin would lower the closer resolution), then with the margin a box gets. Only
    lines not read already are added; kept when the page then reads a number and a title
    from its labelled title cell."""
    text_layer, reading = read_so_far
    assert reading.region is not None
    # A turned view's region comes back corner to corner.
    ax, ay, bx, by = reading.region
    x0, x1, y0, y1 = min(ax, bx), max(ax, bx), min(ay, by), max(ay, by)
    margin = TITLE_BLOCK_MARGIN * min(text_layer.width, text_layer.height)
    around = Box(x0 - margin, y0 - margin, x1 + margin, y1 + margin)
    strip = x1 - x0 >= text_layer.width / 2 or y1 - y0 >= text_layer.height / 2
    for region in (Box(x0, y0, x1, y1), around) if strip else (around,):
        closer = await _read_closer(pdf, text_layer, region, turn, read, settings, readers)
        if closer and closer[1].number and _titled_by_its_field(closer[1]):
            return closer
    return text_layer, reading


def _titled_by_its_field(reading: SheetReading) -> bool:
    """Whether a reading's title is the value of a labelled title cell: what reading closer
    is for; a title guessed where no label shows is worth no second look."""
    ids = set(reading.title.word_ids) if reading.title else set()
    return bool(ids) and any(
        cell.field == "title" and cell.label and ids <= set(cell.value_ids)
        for cell in reading.cells
    )


async def _read_closer(
    pdf: bytes,
    text_layer: TextLayer,
    region: Box,
    turn: int,
    read: Callable[[TextLayer], SheetReading],
    settings: Settings,
    readers: Readers,
) -> tuple[TextLayer, SheetReading] | None:
    """The page's words with the lines OCR reads closer in ``region`` that it had not read
    added, and the reading of them; None when there were none."""
    skip = read_already(text_layer.words)
    words = await _ocr_region(pdf, text_layer.page_number, region, turn, skip, settings, readers)
    if not words:
        return None
    layer = ocr_layer(text_layer.words + words, text_layer)
    return layer, await asyncio.to_thread(read, layer)


async def _closer_title(
    pdf: bytes,
    zoom: float,
    read_so_far: tuple[TextLayer, SheetReading],
    read: Callable[[TextLayer], SheetReading],
    settings: Settings,
    readers: Readers,
) -> tuple[TextLayer, SheetReading]:
    """An OCR page's words and reading with its title's lines read again closer where its
    print is small in the page image (``zoom`` pixels per point; ``title_regions``,
    ``with_closer_title``): kept when the page then reads the same sheet number with a
    title. A region over the page's limits is left as the page read it."""
    text_layer, reading = read_so_far
    ids = reading.title.word_ids if reading.title else []
    if not ids or (regions := title_regions(text_layer, ids, zoom)) is None:
        return text_layer, reading
    region, core = regions
    title = [text_layer.words[i] for i in ids]
    own = text_turn(title)  # read in the title's own frame: a title block may be turned

    async def closer_in(area: Box) -> list[Word] | None:
        near = [w for w in text_layer.words if w.bbox.overlaps(area)]
        skip = apart_from(core, near)
        return await _ocr_region(pdf, text_layer.page_number, area, own, skip, settings, readers)

    closer = await closer_in(region)
    if closer is None:
        return text_layer, reading
    if (longer := cut_short(region, title, closer)) is not None:
        closer = await closer_in(longer) or closer
    layer = ocr_layer(with_closer_title(text_layer.words, closer, core), text_layer)
    again = await asyncio.to_thread(read, layer)
    if again.title is None or again.sheet_number != reading.sheet_number:
        return text_layer, reading
    return layer, again


async def _outlined_title_block(
    pdf: bytes,
    page: RenderedPage,
    read_so_far: tuple[TextLayer, SheetReading],
    read: Callable[[TextLayer], SheetReading],
    settings: Settings,
    readers: Readers,
) -> tuple[TextLayer, SheetReading]:
    """A page with a text layer whose reading finds no sheet number, when its title block
    is drawn as outlines (``wordless_title_block``: an inked edge strip its text layer has
    no words in): that one region OCR'd and its words added to the page's. Kept when the
    page then reads a number (and its title with it); otherwise the page stays as its text
    layer has it: a title alone from OCR'd linework is not worth a wrong title."""
    text_layer, reading = read_so_far
    turn = text_turn(text_layer.words)
    region = await asyncio.to_thread(wordless_title_block, text_layer, page.png, page.zoom, turn)
    if region is None:
        return text_layer, reading
    skip = read_already(text_layer.words)
    words = await _ocr_region(pdf, text_layer.page_number, region, turn, skip, settings, readers)
    if not words:
        return text_layer, reading
    layer = with_ocr_words(text_layer, words)
    again = await asyncio.to_thread(read, layer)
    return (layer, again) if again.number else (text_layer, reading)


async def _ocr_region(
    pdf: bytes,
    page_number: int,
    region: Box,
    turn: int,
    skip: Callable[[numpy.ndarray], bool],
    settings: Settings,
    readers: Readers,
) -> list[Word] | None:
    """The words OCR reads in ``region`` of the page rendered closer (in a bounded child,
    like the page itself), apart from those ``skip`` rejects; None when the region is over
    the page's limits (the page image was read already: nothing closer to see there)."""
    try:
        raster = await closer_raster(pdf, page_number, region, settings, readers.pages)
    except OverLimit:
        return None
    return await asyncio.to_thread(
        readers.ocr.ocr_raster, raster, turn, detection_zoom=detection_zoom(region), skip=skip
    )
