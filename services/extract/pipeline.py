"""What the extract handlers call: rung 1 (vision, or offline/OCR without a model), rung 2
(text-only structuring) and rung 3 (deterministic fallback), each ending in an
``ExtractionResult`` that has passed the grounding guard.

Collaborators (settings, model client, page readers) are arguments. Opening the PDF, reading
the text layer and rendering run in a child process bounded in time and memory; OCR, offline
extraction and the guard run in a worker thread; so the event loop keeps serving other
pages and in-progress acks.
"""

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pymupdf

from services.extract.fallback import fallback_stubs
from services.extract.guard import apply_grounding_guard
from services.extract.hints import bookmarks_by_page, page_label
from services.extract.isolation import PageReaders
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
from services.extract.tiles import (
    describe,
    merge_tile_objects,
    plan_tiles,
    render_page_tiles,
    units_in,
)
from services.extract.title_ocr import (
    apart_from,
    closer_regions,
    detection_zoom,
    long_rules,
    read_already,
    title_regions,
    with_closer_title,
)
from services.extract.visibility import PageRender
from services.extract.vision import (
    REPLY_JSON_SCHEMA,
    ParsedReply,
    ReplyUnparseable,
    build_compact_retry_messages,
    build_vision_messages,
    parse_reply,
)
from shared.contracts.interfaces import LLMError, ModelClient
from shared.contracts.models import ExtractionResult, GuardCounts, PageObject, Rung, Usage
from shared.infra.bounded import OverLimit
from shared.infra.settings import Settings
from shared.ocr.engine import (
    RECOGNITION_DPI,
    OcrEngine,
    Raster,
    page_raster,
    render_area,
    text_area,
)
from shared.pagetext import Box, TextLayer, Word
from shared.pagetext.units import PageUnits
from shared.pdf.damage import DAMAGED, page_damage
from shared.pdf.sources import PDF_LOCK, open_pdf
from shared.sheet.fields import read_units
from shared.sheet.header import SheetHeader, sheet_header
from shared.sheet.reading import SheetReading, read_sheet


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
    label: str | None  # the file's page label
    bookmarks: list[str]  # titles of the bookmarks pointing at the page


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
        page = doc.load_page(page_number - 1)
    except Exception:  # MuPDF raises plain RuntimeErrors on a broken page tree
        raise PageUnreadable(page_damage(doc, page_number - 1) or DAMAGED) from None
    try:
        # A page the file lost (truncated, damaged) is failed, never taken for a blank one:
        # in a repaired file every page is checked, elsewhere a page that reads empty.
        refusal = page_damage(doc, page_number - 1) if doc.is_repaired else None
        refusal = refusal or check_page_size(page, settings.page_max_side_in)
        refusal = refusal or check_page_content(page, settings.page_max_content_mb * 1024 * 1024)
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


async def _page_words(
    pdf: bytes, page: _Page, settings: Settings, readers: Readers
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
        return await _closer_raster(pdf, page.text_layer.page_number, area, settings, readers)
    except OverLimit:
        return await asyncio.to_thread(page_raster, page.png, page.zoom)


async def _closer_raster(
    pdf: bytes, page_number: int, area: Box, settings: Settings, readers: PageReaders
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


async def _reading(
    pdf: bytes, page: _Page, text_layer: TextLayer, turn: int, settings: Settings, readers: Readers
) -> tuple[TextLayer, SheetReading]:
    """The page's ``SheetReading``, read from its words. An OCR page whose words show no sheet
    number is read closer where a sheet names itself (``_closer_title_block``), and its
    reading is made from those words instead."""

    def read(layer: TextLayer) -> SheetReading:
        return read_sheet(layer, page.label, page.bookmarks)

    reading = await asyncio.to_thread(read, text_layer)
    if text_layer.source != "ocr":
        return text_layer, reading
    if not reading.number:
        text_layer, reading = await _closer_title_block(
            pdf, page, (text_layer, reading), turn, read, settings, readers
        )
    return await _closer_title(pdf, page.zoom, (text_layer, reading), turn, read, settings, readers)


async def _closer_title_block(
    pdf: bytes,
    page: _Page,
    read_so_far: tuple[TextLayer, SheetReading],
    turn: int,
    read: Callable[[TextLayer], SheetReading],
    settings: Settings,
    readers: Readers,
) -> tuple[TextLayer, SheetReading]:
    """An OCR page's words and reading with the lines read closer where a sheet names itself
    (``services.extract.title_ocr``), region by region until its reading shows a sheet
    number: each region rendered in a bounded child like the page itself (one over the
    page's limits is left as the page's reading has it), and only its lines not read
    already are read."""
    text_layer, reading = read_so_far
    # A scan's ruled lines are in its image; a page of drawn outlines has them listed.
    rules = text_layer.rules or await asyncio.to_thread(long_rules, page.png, page.zoom)
    for region in closer_regions(text_layer, turn, rules):
        try:
            raster = await _closer_raster(
                pdf, text_layer.page_number, region, settings, readers.pages
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
            reading = await asyncio.to_thread(read, text_layer)
            if reading.number:
                break
    return text_layer, reading


async def _closer_title(
    pdf: bytes,
    zoom: float,
    read_so_far: tuple[TextLayer, SheetReading],
    turn: int,
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
    try:
        raster = await _closer_raster(pdf, text_layer.page_number, region, settings, readers.pages)
    except OverLimit:
        return text_layer, reading
    closer = await asyncio.to_thread(
        readers.ocr.ocr_raster,
        raster,
        turn,
        detection_zoom=detection_zoom(region),
        skip=apart_from(core),
    )
    layer = _ocr_layer(with_closer_title(text_layer.words, closer, core), text_layer)
    again = await asyncio.to_thread(read, layer)
    if again.title is None or again.sheet_number != reading.sheet_number:
        return text_layer, reading
    return layer, again


async def _ask_model(
    llm: ModelClient, model: str, messages: list[dict], settings: Settings, id_prefix: str
) -> tuple[ParsedReply | None, str | None, Usage]:
    """One call, and one compact retry when the reply is unparseable. Returns the parsed
    reply, or None with the reason it failed; usage covers every answered call."""
    usage = Usage()
    try:
        max_tokens, schema = settings.llm_max_tokens, REPLY_JSON_SCHEMA
        reply = await llm.chat(model=model, messages=messages, max_tokens=max_tokens, schema=schema)
        usage = usage.add(reply.usage)
        try:
            return parse_reply(reply.content, reply.finish_reason, id_prefix), None, usage
        except ReplyUnparseable:
            retry = build_compact_retry_messages(messages)
            reply = await llm.chat(
                model=model, messages=retry, max_tokens=max_tokens, schema=schema
            )
            usage = usage.add(reply.usage)
            return parse_reply(reply.content, reply.finish_reason, id_prefix), None, usage
    except ReplyUnparseable as exc:
        reason = f"the model's reply could not be parsed, even after a compact retry ({exc})"
        return None, reason, usage
    except LLMError as exc:
        return None, f"the model call failed: {exc}", usage


def _stamp(objects: list[PageObject], page_number: int, rung: Rung) -> list[PageObject]:
    return [o.model_copy(update={"page_number": page_number, "rung": rung}) for o in objects]


@dataclass(frozen=True)
class _Ask:
    """What a model result is asked with: one message list per call (one call per tile of a
    tiled page), and the page's units its replies cite."""

    model: str
    calls: list[list[dict]]
    units: PageUnits
    rung: Rung
    stage: str
    id_prefix: str
    tiles: int = 0


async def _model_result(
    text_layer: TextLayer,
    settings: Settings,
    llm: ModelClient,
    ask: _Ask,
    *,
    job_id: str,
    worker_id: str | None,
    started: float,
) -> ExtractionResult:
    prefixes = (
        [ask.id_prefix]
        if len(ask.calls) == 1
        else [f"{ask.id_prefix}{n}-" for n in range(1, len(ask.calls) + 1)]
    )
    answers = await asyncio.gather(
        *(
            _ask_model(llm, ask.model, messages, settings, prefix)
            for messages, prefix in zip(ask.calls, prefixes, strict=True)
        )
    )
    usage = Usage(tiles=ask.tiles)
    for _, _, call_usage in answers:
        usage = usage.add(call_usage)
    replies = [
        (prefix, parsed)
        for (parsed, _, _), prefix in zip(answers, prefixes, strict=True)
        if parsed is not None
    ]
    failures = [reason for parsed, reason, _ in answers if parsed is None]
    reason = failures[0] if failures else None
    result = ExtractionResult(
        job_id=job_id,
        page_number=text_layer.page_number,
        rung=ask.rung,
        status="failed",
        reason=reason,
        model_failure=reason,
        has_text_layer=text_layer.has_text_layer,
        usage={ask.stage: usage} if usage.calls else {},
        worker_id=worker_id,
    )
    if replies:
        parsed = _merge_replies(replies)
        objects = _stamp(parsed.objects, text_layer.page_number, ask.rung)
        kept, counts = await asyncio.to_thread(
            apply_grounding_guard, objects, text_layer, parsed.cited, ask.units
        )
        problems = []
        if parsed.truncated:
            problems.append("the model's reply was cut off at the token limit")
        if failures:
            problems.append(f"{len(failures)} of {len(ask.calls)} tiles failed: {failures[0]}")
        result.status = "degraded" if problems else "ok"
        result.reason = "; ".join(problems) or None
        result.model_failure = None
        result.sheet = parsed.sheet
        result.objects = merge_tile_objects(kept) if len(replies) > 1 else kept
        result.unresolved_items = parsed.unresolved_items
        result.guard = counts
    result.elapsed_ms = _elapsed_ms(started)
    return result


def _merge_replies(replies: list[tuple[str, ParsedReply]]) -> ParsedReply:
    """Replies of one page's tiles (each with its tile's id prefix) as one: the first value
    of each header field, every object (its id made unique by its tile's prefix, as its
    citations), every unresolved item."""
    if len(replies) == 1:
        return replies[0][1]
    header: dict[str, Any] = {}
    objects: list[PageObject] = []
    cited: dict[str, list[str]] = {}
    for prefix, reply in replies:
        for name, value in reply.sheet.model_dump(exclude_none=True).items():
            header.setdefault(name, value)
        for obj in reply.objects:
            own = obj.object_id
            unique = own if own.startswith(prefix) else f"{prefix}{own}"
            objects.append(obj.model_copy(update={"object_id": unique}))
            if own in reply.cited:
                cited[unique] = reply.cited[own]
    return ParsedReply(
        sheet=SheetHeader(**header),
        objects=objects,
        unresolved_items=[i for _, r in replies for i in r.unresolved_items],
        truncated=any(r.truncated for _, r in replies),
        cited=cited,
    )


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
    text_layer, reading = await _reading(pdf, page, text_layer, turn, settings, readers)
    model = settings.llm_extract_model if settings.model_configured else None
    if llm is not None and model and use_vision:
        ask = await _vision_ask(pdf, page, text_layer, settings, readers, model)
        result = await _model_result(
            text_layer, settings, llm, ask, job_id=job_id, worker_id=worker_id, started=started
        )
        if result.status != "failed":
            result.reading = reading
            return Rung1Output(
                text_layer=text_layer, png=page.png, thumbnail=page.thumbnail, result=result
            )
        # The model failed: the page is still read, offline (its OCR words on a scan), and
        # says why.
        out = await _offline_rung1(page, text_layer, reading, job_id=job_id, worker_id=worker_id)
        out.result.status = "degraded"
        out.result.reason = f"{result.reason}; the page was read offline instead"
        out.result.model_failure = result.reason
        out.result.usage = result.usage
        out.result.elapsed_ms = _elapsed_ms(started)
        return out
    out = await _offline_rung1(page, text_layer, reading, job_id=job_id, worker_id=worker_id)
    out.result.elapsed_ms = _elapsed_ms(started)
    return out


async def _vision_ask(
    pdf: bytes, page: _Page, text_layer: TextLayer, settings: Settings, readers: Readers, model: str
) -> _Ask:
    """The vision call for the page, or one call per tile when its small text would not be
    legible in the page image or its reading is too long for one prompt
    (``services.extract.tiles``); the whole page when the tiles' render is over the page's
    limits."""
    units = await asyncio.to_thread(read_units, text_layer)
    limit = settings.text_layer_max_chars
    inked = page.has_images or text_layer.has_drawings
    max_px, max_tiles = settings.page_image_max_px, settings.vision_max_tiles
    # Only a text layer's units reach the prompt (OCR words of a scan do not).
    shown = units.units if text_layer.has_text_layer else []
    plan = plan_tiles(
        text_layer, page.zoom, max_px, max_tiles, inked=inked, units=shown, max_chars=limit
    )
    tiles = None
    if plan.clips:
        with contextlib.suppress(OverLimit):
            tiles = await readers.pages.read(
                render_page_tiles,
                pdf,
                text_layer.page_number,
                plan,
                timeout_s=settings.page_render_timeout_s,
                max_mb=settings.page_render_max_mb,
            )
    prefix = f"p{text_layer.page_number}-v"
    if tiles is None:
        calls = [build_vision_messages(page.png, text_layer, limit, units)]
        return _Ask(model, calls, units, "vision", "extract", prefix)
    calls = [
        build_vision_messages(
            image,
            text_layer,
            limit,
            PageUnits(units_in(units.units, clip)),
            overview=tiles.overview,
            tile=describe(clip, text_layer),
        )
        for clip, image in zip(plan.clips, tiles.images, strict=True)
    ]
    return _Ask(model, calls, units, "vision", "extract", prefix, tiles=len(calls))


async def _offline_rung1(
    page: _Page,
    text_layer: TextLayer,
    reading: SheetReading,
    *,
    job_id: str,
    worker_id: str | None,
) -> Rung1Output:
    def offline() -> tuple[list[PageObject], GuardCounts]:
        return apply_grounding_guard(extract_offline(text_layer), text_layer)

    objects, counts = await asyncio.to_thread(offline)
    result = ExtractionResult(
        job_id=job_id,
        page_number=text_layer.page_number,
        rung="offline",
        status="ok",
        has_text_layer=text_layer.has_text_layer,
        sheet=sheet_header(reading),
        objects=objects,
        guard=counts,
        worker_id=worker_id,
        reading=reading,
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
    units = await asyncio.to_thread(read_units, text_layer)
    messages = build_structuring_messages(text_layer, settings.text_layer_max_chars, sheet, units)
    ask = _Ask(
        model, [messages], units, "text_structuring", "structure", f"p{text_layer.page_number}-s"
    )
    return await _model_result(
        text_layer, settings, llm, ask, job_id=job_id, worker_id=worker_id, started=started
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
