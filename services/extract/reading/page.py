"""A page read once: opened, checked and rendered in a child process bounded in time and memory,
its words (the text layer, or OCR words standing in for it on a scan) and its image.

The readers are arguments (``Readers``, built by the bootstrap). MuPDF's work runs in the
bounded child; OCR runs in a worker thread; so the event loop keeps serving other pages and
in-progress acks.
"""

import asyncio
from dataclasses import dataclass
from typing import Any

import pymupdf

from services.extract.reading.hints import bookmarks_by_page, page_label
from services.extract.reading.render import (
    check_page_content,
    check_page_images,
    check_page_size,
    encode_png,
    render_page,
    render_thumbnail_jpeg,
    render_zoom,
)
from services.extract.reading.rulings import image_rules, off_lettering
from services.extract.reading.textlayer import ocr_text_layer, read_text_layer
from services.extract.reading.visibility import PageRender
from shared.contracts.interfaces import Ocr, PageReader, Raster
from shared.infra.bounded import OverLimit
from shared.infra.settings import Settings
from shared.ocr.engine import (
    RECOGNITION_DPI,
    page_raster,
    render_area,
)
from shared.pagetext import Box, TextLayer, Word, laid_out
from shared.pdf.damage import DAMAGED, page_damage
from shared.pdf.sources import PDF_LOCK, open_pdf


class PageUnreadable(Exception):
    """The page cannot be opened, rendered or is refused (absurd size); the message is a
    sentence a person understands."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Readers:
    """What reads a worker's pages: bounded child processes for MuPDF's work, and the OCR
    engine for pages without a text layer (built once per worker by its bootstrap; fakes in
    unit tests)."""

    pages: PageReader
    ocr: Ocr


@dataclass(frozen=True)
class RenderedPage:
    text_layer: TextLayer
    png: bytes
    thumbnail: bytes
    zoom: float  # image pixels per PDF point
    has_images: bool
    label: str | None  # the file's page label
    bookmarks: list[str]  # titles of the bookmarks pointing at the page


async def read_page_bounded(
    pdf: bytes, page_number: int, settings: Settings, readers: PageReader
) -> RenderedPage:
    """``read_page`` in a child process held to the page's time and memory limits, so a
    page that would take minutes or gigabytes fails by name instead of stalling the worker.
    A child that dies (``ChildDied``) is retried like any failure: a stop of the worker's
    process group kills it too, and that is no fault of the page."""
    try:
        return await readers.read(
            read_page,
            pdf,
            page_number,
            settings,
            timeout_s=settings.page_render_timeout_s,
            max_mb=settings.page_render_max_mb,
        )
    except OverLimit as exc:
        raise PageUnreadable(
            f"page {page_number} is too complex to render within {exc.limit}"
        ) from exc


def read_page(pdf: bytes, page_number: int, settings: Settings) -> RenderedPage:
    with PDF_LOCK:
        pixmap, fields = _load_page(pdf, page_number, settings)
    # Outside the lock: the encode is the largest part of a page and releases the GIL.
    return RenderedPage(png=encode_png(pixmap), **fields)


def _load_page(
    pdf: bytes, page_number: int, settings: Settings
) -> tuple[pymupdf.Pixmap, dict[str, Any]]:
    """The page's render and every other product of PyMuPDF for it, or PageUnreadable."""
    try:
        doc = open_pdf(pdf)
    except Exception as exc:
        raise PageUnreadable(f"the PDF could not be opened: {exc}") from exc
    if doc.needs_pass:
        raise PageUnreadable("the PDF is password-protected")
    if not 1 <= page_number <= doc.page_count:
        raise PageUnreadable(
            f"page {page_number} does not exist: the PDF has {doc.page_count} pages"
        )
    try:
        page = doc.load_page(page_number - 1)
    except Exception:  # MuPDF raises plain RuntimeErrors on a broken page tree
        raise PageUnreadable(page_damage(doc, page_number - 1) or DAMAGED) from None
    try:
        # A page the file lost (truncated, damaged) is failed, never taken for a blank one:
        # in a repaired file every page is checked, elsewhere a page that reads empty.
        refusal = page_damage(doc, page_number - 1) if doc.is_repaired else None
        refusal = refusal or check_page_size(page, settings.page_max_side_in)
        refusal = refusal or check_page_content(page, settings.page_max_content_mb * 1024 * 1024)
        refusal = refusal or check_page_images(page, settings.max_image_pixels)
        if refusal:
            raise PageUnreadable(refusal)
        max_px, max_pixels = settings.page_image_max_px, settings.page_image_max_pixels
        # The page's content is interpreted once; its words, image and thumbnail are all
        # read from the one display list, and the image tells which words the page shows.
        display = page.get_displaylist()
        pixmap = render_page(display, max_px, max_pixels)
        zoom = render_zoom(page, max_px, max_pixels)
        text_layer = read_text_layer(
            page,
            page_number,
            settings.text_layer_min_chars,
            display,
            render=PageRender(pixmap, zoom),
        )
        reads_empty = not text_layer.words and pixmap.is_unicolor
        if reads_empty and not doc.is_repaired and (refusal := page_damage(doc, page_number - 1)):
            raise PageUnreadable(refusal)
        if not settings.text_layer_enabled:
            text_layer = _without_text(text_layer)
        return pixmap, {
            "text_layer": text_layer,
            "thumbnail": render_thumbnail_jpeg(display),
            "zoom": zoom,
            "has_images": bool(page.get_images()),
            "label": page_label(page),
            "bookmarks": bookmarks_by_page(pdf).get(page_number, []),
        }
    except PageUnreadable:
        raise
    except Exception as exc:  # MuPDF raises plain RuntimeErrors on broken content
        reason = f"page {page_number} could not be read or rendered: {exc}"
        raise PageUnreadable(reason) from exc


def _without_text(text_layer: TextLayer) -> TextLayer:
    """The page as if its PDF had no text layer (``SHEETFLOW_TEXT_LAYER_ENABLED`` off):
    its size and drawings stay, its words go, so vision and OCR alone read it."""
    return TextLayer(
        page_number=text_layer.page_number,
        width=text_layer.width,
        height=text_layer.height,
        rotation=text_layer.rotation,
        has_text_layer=False,
        source="none",
        has_drawings=text_layer.has_drawings,
    )


async def page_words(
    pdf: bytes, page: RenderedPage, settings: Settings, readers: Readers
) -> tuple[TextLayer, int]:
    """The page's words: its text layer, or, on a page without one that carries an image or
    drawings (or text whose layer is switched off), OCR words standing in for it (a truly
    blank page is not worth OCR's cost); and how its text is turned (0 unless OCR found
    otherwise). A searchable scan's own OCR text (``source="ocr"``) stands in already."""
    text_layer = page.text_layer
    scanned = text_layer.source == "ocr"
    wants_ocr = settings.ocr_enabled and not scanned and not text_layer.has_text_layer
    inked = page.has_images or text_layer.has_drawings or not settings.text_layer_enabled
    if wants_ocr and inked:
        words, turn, rules = await _ocr_words(pdf, page, settings, readers)
        if words:
            return ocr_layer(words, text_layer, rules), turn
    return text_layer, 0


async def _ocr_words(
    pdf: bytes, page: RenderedPage, settings: Settings, readers: Readers
) -> tuple[list[Word], int, list[Box]]:
    """OCR words of the page, how its text is turned, and its ruled lines (a page that is an
    image has them in its pixels only): lines found on its image, read from a sharper render
    of the page (made in a bounded child like the page's own render) in the frame its text
    runs in."""
    lines = await asyncio.to_thread(readers.ocr.find_lines, page.png, page.zoom)
    if not lines:
        return [], 0, []
    # The whole page, not only where its text is: the outer walls of a title block's last
    # cells (the drawing's frame) may stand well clear of any text, and a cell without its
    # walls is no cell.
    area = Box(0.0, 0.0, page.text_layer.width, page.text_layer.height)
    raster = await _area_raster(pdf, page, area, settings, readers.pages)
    turn = await asyncio.to_thread(readers.ocr.page_turn, raster, lines)
    words = await asyncio.to_thread(readers.ocr.read_lines, raster, lines, turn)
    # A page of drawn outlines has its walls listed already; only an image is searched.
    # Either way, what lies within a word is a stroke of its letters (text drawn as
    # outlines is drawn with bars too).
    rules = page.text_layer.rules or await asyncio.to_thread(image_rules, raster)
    return words, turn, off_lettering(rules, words)


async def _area_raster(
    pdf: bytes, page: RenderedPage, area: Box, settings: Settings, readers: PageReader
) -> Raster:
    """``area`` of the page at ``RECOGNITION_DPI``, or, when that render goes past the
    page's time or memory limits, the page image: its lines are then read at the page
    image's resolution rather than lost."""
    try:
        return await closer_raster(pdf, page.text_layer.page_number, area, settings, readers)
    except OverLimit:
        return await asyncio.to_thread(page_raster, page.png, page.zoom)


async def closer_raster(
    pdf: bytes, page_number: int, area: Box, settings: Settings, readers: PageReader
) -> Raster:
    """``area`` of the page rendered at ``RECOGNITION_DPI`` within the page's time and
    memory limits (``OverLimit`` past them)."""
    return await readers.read(
        render_area,
        pdf,
        page_number,
        area,
        RECOGNITION_DPI,
        timeout_s=settings.page_render_timeout_s,
        max_mb=settings.page_render_max_mb,
    )


def ocr_layer(words: list[Word], like: TextLayer, rules: list[Box] | None = None) -> TextLayer:
    """OCR words as the page's words, in ``like``'s page, with its ruled lines (or
    ``rules``)."""
    return ocr_text_layer(
        words,
        like.page_number,
        like.width,
        like.height,
        rotation=like.rotation,
        has_drawings=like.has_drawings,
        rules=like.rules if rules is None else rules,
    )


def with_ocr_words(layer: TextLayer, words: list[Word]) -> TextLayer:
    """A page's text layer with OCR words of a part the layer has no words for (a title
    block drawn as outlines) added after its own, marked ``origin="ocr"``: the page's
    words still, a reading of its image where its text layer is silent."""
    fields = layer.model_dump(exclude={"words", "lines", "blocks"})
    read = [w.model_copy(update={"origin": "ocr"}) for w in words]
    return laid_out(words=[*layer.words, *read], **fields)
