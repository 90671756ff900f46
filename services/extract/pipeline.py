"""What the extract handlers call: rung 1 (vision, or offline/OCR without a model), rung 2
(text-only structuring) and rung 3 (deterministic fallback), each ending in an
``ExtractionResult`` that has passed the grounding guard.

Collaborators (settings, model client, page readers) are arguments. Opening the PDF, reading
the text layer and rendering run in a child process bounded in time and memory; OCR, offline
extraction and the guard run in a worker thread; so the event loop keeps serving other
pages and in-progress acks.
"""

import asyncio
import time
from dataclasses import dataclass
from typing import Any

import pymupdf

from services.extract.fallback import fallback_stubs
from services.extract.guard import apply_grounding_guard
from services.extract.isolation import PageReaders
from services.extract.ocr import (
    RECOGNITION_DPI,
    OcrEngine,
    Raster,
    page_raster,
    render_area,
    text_area,
)
from services.extract.offline import extract_offline
from services.extract.render import (
    check_page_content,
    check_page_size,
    encode_png,
    render_page,
    render_thumbnail_jpeg,
    render_zoom,
)
from services.extract.structuring import build_structuring_messages
from services.extract.textlayer import ocr_text_layer, read_text_layer
from services.extract.title_ocr import closer_regions, detection_zoom, long_rules, read_already
from services.extract.vision import (
    ParsedReply,
    ReplyUnparseable,
    build_compact_retry_messages,
    build_vision_messages,
    parse_reply,
)
from shared.bounded import OverLimit
from shared.damage import page_damage
from shared.interfaces import LLMError, ModelClient
from shared.models import ExtractionResult, GuardCounts, PageObject, Rung, SheetHeader, Usage
from shared.pagetext import Box, TextLayer, Word
from shared.settings import Settings
from shared.sheet import read_title_block
from shared.sources import PDF_LOCK, open_pdf


class PageUnreadable(Exception):
    """The page cannot be opened, rendered or is refused (absurd size); the message is a
    sentence a person understands."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Readers:
    """What reads a worker's pages: bounded child processes for MuPDF's work, and the OCR
    engine for pages without a text layer (built once per worker by its bootstrap)."""

    pages: PageReaders
    ocr: OcrEngine


@dataclass(frozen=True)
class Rung1Output:
    """Rung 1's products: the text layer (``pages/{n}/text.json``; OCR words with
    ``source="ocr"`` on a scanned page read offline), the page image
    (``pages/{n}/image.png``), its thumbnail for the report (``pages/{n}/thumb.jpg``) and the
    extraction result (``pages/{n}/extracted.json``)."""

    text_layer: TextLayer
    png: bytes
    thumbnail: bytes
    result: ExtractionResult


@dataclass(frozen=True)
class _Page:
    text_layer: TextLayer
    png: bytes
    thumbnail: bytes
    zoom: float  # image pixels per PDF point
    has_images: bool


def _elapsed_ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)


async def _read_page_bounded(
    pdf: bytes, page_number: int, settings: Settings, readers: PageReaders
) -> _Page:
    """``_read_page`` in a child process held to the page's time and memory limits, so a
    page that would take minutes or gigabytes fails by name instead of stalling the worker.
    A child that dies (``ChildDied``) is retried like any failure: a stop of the worker's
    process group kills it too, and that is no fault of the page."""
    try:
        return await readers.read(
            _read_page,
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


def _read_page(pdf: bytes, page_number: int, settings: Settings) -> _Page:
    with PDF_LOCK:
        pixmap, fields = _load_page(pdf, page_number, settings)
    # Outside the lock: the encode is the largest part of a page and releases the GIL.
    return _Page(png=encode_png(pixmap), **fields)


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
        # A page the file lost (truncated, damaged) is failed, never taken for a blank one.
        refusal = page_damage(doc, page_number - 1)
        page = doc.load_page(page_number - 1)
        refusal = refusal or check_page_size(page, settings.page_max_side_in)
        refusal = refusal or check_page_content(page, settings.page_max_content_mb * 1024 * 1024)
        if refusal:
            raise PageUnreadable(refusal)
        max_px, max_pixels = settings.page_image_max_px, settings.page_image_max_pixels
        # The page's content is interpreted once; its words, image and thumbnail are all
        # read from the one display list.
        display = page.get_displaylist()
        text_layer = read_text_layer(page, page_number, settings.text_layer_min_chars, display)
        if not settings.text_layer_enabled:
            text_layer = _without_text(text_layer)
        return render_page(display, max_px, max_pixels), {
            "text_layer": text_layer,
            "thumbnail": render_thumbnail_jpeg(display),
            "zoom": render_zoom(page, max_px, max_pixels),
            "has_images": bool(page.get_images()),
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


async def _page_words(
    pdf: bytes, page: _Page, settings: Settings, readers: Readers
) -> tuple[TextLayer, int]:
    """The page's words: its text layer, or, on a page without one that carries an image or
    drawings (or text whose layer is switched off), OCR words standing in for it (a truly
    blank page is not worth OCR's cost); and how its text is turned (0 unless OCR found
    otherwise)."""
    text_layer = page.text_layer
    wants_ocr = settings.ocr_enabled and not text_layer.has_text_layer
    inked = page.has_images or text_layer.has_drawings or not settings.text_layer_enabled
    if wants_ocr and inked:
        words, turn = await _ocr_words(pdf, page, settings, readers)
        if words:
            return _ocr_layer(words, text_layer), turn
    return text_layer, 0


async def _ocr_words(
    pdf: bytes, page: _Page, settings: Settings, readers: Readers
) -> tuple[list[Word], int]:
    """OCR words of the page and how its text is turned: lines found on its image, read
    from a sharper render of the area holding them (made in a bounded child like the page's
    own render) in the frame its text runs in."""
    lines = await asyncio.to_thread(readers.ocr.find_lines, page.png, page.zoom)
    if not lines:
        return [], 0
    raster = await _area_raster(pdf, page, text_area(lines), settings, readers.pages)
    turn = await asyncio.to_thread(readers.ocr.page_turn, raster, lines)
    return await asyncio.to_thread(readers.ocr.read_lines, raster, lines, turn), turn


async def _area_raster(
    pdf: bytes, page: _Page, area: Box, settings: Settings, readers: PageReaders
) -> Raster:
    """``area`` of the page at ``RECOGNITION_DPI``, or, when that render goes past the
    page's time or memory limits, the page image: its lines are then read at the page
    image's resolution rather than lost."""
    try:
        return await readers.read(
            render_area,
            pdf,
            page.text_layer.page_number,
            area,
            RECOGNITION_DPI,
            timeout_s=settings.page_render_timeout_s,
            max_mb=settings.page_render_max_mb,
        )
    except OverLimit:
        return await asyncio.to_thread(page_raster, page.png, page.zoom)


def _ocr_layer(words: list[Word], like: TextLayer) -> TextLayer:
    return ocr_text_layer(
        words,
        like.page_number,
        like.width,
        like.height,
        rotation=like.rotation,
        has_drawings=like.has_drawings,
        rules=like.rules,
    )


async def _closer_title_block(
    pdf: bytes, page: _Page, text_layer: TextLayer, turn: int, settings: Settings, readers: Readers
) -> TextLayer:
    """An OCR page whose words show no sheet number, read closer where a sheet names itself
    (``services.extract.title_ocr``), region by region until one does: each rendered in a
    bounded child like the page itself (a region over the page's limits is left as the
    page's reading has it), and only its lines not read already are read."""
    if text_layer.source != "ocr":
        return text_layer
    if (await asyncio.to_thread(read_title_block, text_layer)).number:
        return text_layer
    # A scan's ruled lines are in its image; a page of drawn outlines has them listed.
    rules = text_layer.rules or await asyncio.to_thread(long_rules, page.png, page.zoom)
    for region in closer_regions(text_layer, turn, rules):
        try:
            raster = await readers.pages.read(
                render_area,
                pdf,
                text_layer.page_number,
                region,
                RECOGNITION_DPI,
                timeout_s=settings.page_render_timeout_s,
                max_mb=settings.page_render_max_mb,
            )
        except OverLimit:
            continue  # the page image was read already: nothing closer to see there
        words = await asyncio.to_thread(
            readers.ocr.ocr_raster,
            raster,
            turn,
            detection_zoom=detection_zoom(region),
            skip=read_already(text_layer.words),
        )
        if words:
            text_layer = _ocr_layer(text_layer.words + words, text_layer)
            if (await asyncio.to_thread(read_title_block, text_layer)).number:
                break
    return text_layer


async def _ask_model(
    llm: ModelClient, model: str, messages: list[dict], settings: Settings, id_prefix: str
) -> tuple[ParsedReply | None, str | None, Usage]:
    """One call, and one compact retry when the reply is unparseable. Returns the parsed
    reply, or None with the reason it failed; usage covers every answered call."""
    usage = Usage()
    try:
        reply = await llm.chat(model=model, messages=messages, max_tokens=settings.llm_max_tokens)
        usage = usage.add(reply.usage)
        try:
            return parse_reply(reply.content, reply.finish_reason, id_prefix), None, usage
        except ReplyUnparseable:
            retry = build_compact_retry_messages(messages)
            reply = await llm.chat(model=model, messages=retry, max_tokens=settings.llm_max_tokens)
            usage = usage.add(reply.usage)
            return parse_reply(reply.content, reply.finish_reason, id_prefix), None, usage
    except ReplyUnparseable as exc:
        reason = f"the model's reply could not be parsed, even after a compact retry ({exc})"
        return None, reason, usage
    except LLMError as exc:
        return None, f"the model call failed: {exc}", usage


def _stamp(objects: list[PageObject], page_number: int, rung: Rung) -> list[PageObject]:
    return [o.model_copy(update={"page_number": page_number, "rung": rung}) for o in objects]


async def _model_result(
    text_layer: TextLayer,
    settings: Settings,
    llm: ModelClient,
    *,
    model: str,
    messages: list[dict],
    rung: Rung,
    stage: str,
    id_prefix: str,
    job_id: str,
    worker_id: str | None,
    started: float,
) -> ExtractionResult:
    parsed, reason, usage = await _ask_model(llm, model, messages, settings, id_prefix)
    result = ExtractionResult(
        job_id=job_id,
        page_number=text_layer.page_number,
        rung=rung,
        status="failed",
        reason=reason,
        model_failure=reason,
        has_text_layer=text_layer.has_text_layer,
        usage={stage: usage} if usage.calls else {},
        worker_id=worker_id,
    )
    if parsed is not None:
        objects = _stamp(parsed.objects, text_layer.page_number, rung)
        kept, counts = await asyncio.to_thread(apply_grounding_guard, objects, text_layer)
        result.status = "degraded" if parsed.truncated else "ok"
        if parsed.truncated:
            result.reason = "the model's reply was cut off at the token limit"
        else:
            result.reason = None
        result.model_failure = None
        result.sheet = parsed.sheet
        result.objects = kept
        result.unresolved_items = parsed.unresolved_items
        result.guard = counts
    result.elapsed_ms = _elapsed_ms(started)
    return result


async def extract_rung1(
    pdf: bytes,
    page_number: int,
    settings: Settings,
    llm: ModelClient | None,
    *,
    readers: Readers,
    use_vision: bool = True,
    worker_id: str,
    job_id: str,
) -> Rung1Output:
    """Rung 1 for one page of ``pdf`` (1-based ``page_number``): the page's words (its text
    layer, or OCR words on a scanned page) and image, then one vision call when ``llm`` is
    given, a model is configured and ``use_vision``; else the offline extractor.

    The vision result is ``degraded`` when the reply was cut off. When the model failed or
    its reply was unparseable twice, the page is read by the offline extractor instead (OCR
    on a scanned page) and the result is ``degraded``, its ``reason`` and ``model_failure``
    saying why. Raises :class:`PageUnreadable` for a page that cannot be opened or
    rendered, or is absurdly large.
    """
    started = time.perf_counter()
    page = await _read_page_bounded(pdf, page_number, settings, readers.pages)
    text_layer, turn = await _page_words(pdf, page, settings, readers)
    text_layer = await _closer_title_block(pdf, page, text_layer, turn, settings, readers)
    model = settings.llm_extract_model if settings.model_configured else None
    if llm is not None and model and use_vision:
        messages = build_vision_messages(page.png, text_layer, settings.text_layer_max_chars)
        result = await _model_result(
            text_layer,
            settings,
            llm,
            model=model,
            messages=messages,
            rung="vision",
            stage="extract",
            id_prefix=f"p{page_number}-v",
            job_id=job_id,
            worker_id=worker_id,
            started=started,
        )
        if result.status != "failed":
            return Rung1Output(
                text_layer=text_layer, png=page.png, thumbnail=page.thumbnail, result=result
            )
        # The model failed: the page is still read, offline (its OCR words on a scan), and
        # says why.
        out = await _offline_rung1(page, text_layer, job_id=job_id, worker_id=worker_id)
        out.result.status = "degraded"
        out.result.reason = f"{result.reason}; the page was read offline instead"
        out.result.model_failure = result.reason
        out.result.usage = result.usage
        out.result.elapsed_ms = _elapsed_ms(started)
        return out
    out = await _offline_rung1(page, text_layer, job_id=job_id, worker_id=worker_id)
    out.result.elapsed_ms = _elapsed_ms(started)
    return out


async def _offline_rung1(
    page: _Page, text_layer: TextLayer, *, job_id: str, worker_id: str | None
) -> Rung1Output:
    def offline() -> tuple[SheetHeader, list[PageObject], GuardCounts]:
        sheet, objects = extract_offline(text_layer)
        kept, counts = apply_grounding_guard(objects, text_layer)
        return sheet, kept, counts

    sheet, objects, counts = await asyncio.to_thread(offline)
    result = ExtractionResult(
        job_id=job_id,
        page_number=text_layer.page_number,
        rung="offline",
        status="ok",
        has_text_layer=text_layer.has_text_layer,
        sheet=sheet,
        objects=objects,
        guard=counts,
        worker_id=worker_id,
    )
    return Rung1Output(text_layer=text_layer, png=page.png, thumbnail=page.thumbnail, result=result)


async def structure_text(
    text_layer: TextLayer,
    settings: Settings,
    llm: ModelClient | None,
    *,
    job_id: str,
    worker_id: str | None = None,
    sheet: SheetHeader | None = None,
) -> ExtractionResult:
    """Rung 2: the page's text layer (no image) segmented by ``settings.structure_model``
    into one object per note, row, tag and field, with what is known of the ``sheet`` as a
    hint; guard applied. ``degraded`` when the reply was cut off, ``failed`` with the reason
    when no model is configured, the call fails or the reply is unparseable twice."""
    started = time.perf_counter()
    model = settings.structure_model
    if llm is None or not model or not settings.llm_base_url:
        return ExtractionResult(
            job_id=job_id,
            page_number=text_layer.page_number,
            rung="text_structuring",
            status="failed",
            reason="no model is configured for text structuring",
            has_text_layer=text_layer.has_text_layer,
            worker_id=worker_id,
        )
    return await _model_result(
        text_layer,
        settings,
        llm,
        model=model,
        messages=build_structuring_messages(text_layer, settings.text_layer_max_chars, sheet),
        rung="text_structuring",
        stage="structure",
        id_prefix=f"p{text_layer.page_number}-s",
        job_id=job_id,
        worker_id=worker_id,
        started=started,
    )


def fallback_result(
    text_layer: TextLayer,
    settings: Settings,
    *,
    lines: list[int] | None = None,
    job_id: str,
    worker_id: str | None = None,
) -> ExtractionResult:
    """Rung 3: low-confidence stubs citing ``lines`` (default: every coverage unit), at most
    ``settings.fallback_max_objects``. CPU-bound on dense pages: call it through
    ``asyncio.to_thread`` from a handler."""
    started = time.perf_counter()
    stubs = fallback_stubs(text_layer, settings.fallback_max_objects, lines)
    kept, counts = apply_grounding_guard(stubs, text_layer)
    return ExtractionResult(
        job_id=job_id,
        page_number=text_layer.page_number,
        rung="fallback",
        status="ok",
        has_text_layer=text_layer.has_text_layer,
        objects=kept,
        guard=counts,
        worker_id=worker_id,
        elapsed_ms=_elapsed_ms(started),
    )
