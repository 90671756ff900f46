"""Rung 1 for one page: its words and image read once, its ``SheetReading``, then the vision
pass when a model is configured, else (or when the model fails) the offline extractor; the
result has passed the grounding guard."""

import asyncio
import contextlib
import time
from dataclasses import dataclass

from services.extract.clock import elapsed_ms
from services.extract.guard import apply_grounding_guard
from services.extract.model.calls import ModelAsk, model_result
from services.extract.model.tiles import describe, plan_tiles, render_page_tiles, units_in
from services.extract.model.vision import build_vision_messages
from services.extract.offline.extractor import extract_offline
from services.extract.reading.identity import read_identity
from services.extract.reading.page import Readers, RenderedPage, page_words, read_page_bounded
from shared.contracts.interfaces import ModelClient
from shared.contracts.models import ExtractionResult, GuardCounts, PageObject
from shared.infra.bounded import OverLimit
from shared.infra.settings import Settings
from shared.pagetext import TextLayer
from shared.pagetext.units import PageUnits
from shared.sheet.fields import read_units
from shared.sheet.identity import decide_identity
from shared.sheet.reading import SheetReading


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
    page = await read_page_bounded(pdf, page_number, settings, readers.pages)
    text_layer, turn = await page_words(pdf, page, settings, readers)
    text_layer, reading = await read_identity(pdf, page, text_layer, turn, settings, readers)
    model = settings.llm_extract_model if settings.model_configured else None
    if llm is not None and model and use_vision:
        ask = await _vision_ask(pdf, page, text_layer, settings, readers, model)
        result = await model_result(
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
        out.result.elapsed_ms = elapsed_ms(started)
        return out
    out = await _offline_rung1(page, text_layer, reading, job_id=job_id, worker_id=worker_id)
    out.result.elapsed_ms = elapsed_ms(started)
    return out


async def _vision_ask(
    pdf: bytes,
    page: RenderedPage,
    text_layer: TextLayer,
    settings: Settings,
    readers: Readers,
    model: str,
) -> ModelAsk:
    """The vision call for the page, or one call per tile when its small text would not be
    legible in the page image or its reading is too long for one prompt
    (``services.extract.model.tiles``); the whole page when the tiles' render is over the page's
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
        return ModelAsk(model, calls, units, "vision", "extract", prefix)
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
    return ModelAsk(model, calls, units, "vision", "extract", prefix, tiles=len(calls))


async def _offline_rung1(
    page: RenderedPage,
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
        sheet=decide_identity(reading),
        objects=objects,
        guard=counts,
        worker_id=worker_id,
        reading=reading,
    )
    return Rung1Output(text_layer=text_layer, png=page.png, thumbnail=page.thumbnail, result=result)
