"""Extract's subscribers: rung 1 per page, and the coverage service's rung 2/3 requests."""

import asyncio

from faststream.nats.annotations import NatsMessage

from services.extract.pipeline import PageUnreadable, extract_rung1, fallback_result, structure_text
from shared import subjects
from shared.broker import PageFailure, msg_id
from shared.messages import (
    ExtractPage,
    FallbackPage,
    PageExtracted,
    PageFailed,
    PageStructured,
    StructurePage,
)
from shared.models import ExtractionResult, TextLayer
from shared.service import ServiceContext
from shared.sources import SourceCache
from shared.storage import Keys

CANCELED_REASON = "the job was canceled before this page was extracted"


async def extract(ctx: ServiceContext, sources: SourceCache, task: ExtractPage) -> None:
    if await ctx.jobs.is_canceled(task.job_id):
        await ctx.jobs.mark_page(task.job_id, task.page_number, "skipped")
        skipped = PageFailed(
            job_id=task.job_id,
            page_number=task.page_number,
            stage="canceled",
            reason=CANCELED_REASON,
        )
        await ctx.publish(
            subjects.PAGE_FAILED,
            skipped,
            dedup_id=msg_id(task.job_id, task.page_number, "canceled"),
        )
        return
    pdf = await sources.get(task.source_key)
    try:
        out = await extract_rung1(
            pdf,
            task.page_number,
            ctx.settings,
            ctx.llm,
            use_vision=task.options.vision is not False,
            worker_id=ctx.worker_id,
            job_id=task.job_id,
        )
    except PageUnreadable as exc:
        raise PageFailure(exc.reason) from exc
    text_key = Keys.page(task.job_id, task.page_number, "text.json")
    result_key = Keys.page(task.job_id, task.page_number, "extracted.json")
    await asyncio.gather(
        ctx.store.put_json(text_key, out.text_layer),
        ctx.store.put_bytes(
            Keys.page(task.job_id, task.page_number, "image.png"), out.png, "image/png"
        ),
        ctx.store.put_bytes(
            Keys.page(task.job_id, task.page_number, "thumb.jpg"), out.thumbnail, "image/jpeg"
        ),
        ctx.store.put_json(result_key, out.result),
    )
    event = PageExtracted(
        job_id=task.job_id,
        page_number=task.page_number,
        result_key=result_key,
        text_key=text_key,
        status=out.result.status,
        rung=out.result.rung,
        has_text_layer=out.text_layer.has_text_layer,
        usage=out.result.usage,
        options=task.options,
    )
    # Marked before announced: whoever sees the event also sees the page's progress.
    await ctx.mark(task.job_id, task.page_number, "extracted")
    await ctx.publish(
        subjects.PAGE_EXTRACTED, event, dedup_id=msg_id(task.job_id, task.page_number)
    )


async def answer(
    ctx: ServiceContext, task: StructurePage | FallbackPage, result: ExtractionResult
) -> None:
    key = Keys.page(task.job_id, task.page_number, f"structured-{result.rung}.json")
    await ctx.store.put_json(key, result)
    event = PageStructured(
        job_id=task.job_id,
        page_number=task.page_number,
        rung=result.rung,
        result_key=key,
        status=result.status,
        usage=result.usage,
    )
    await ctx.publish(
        subjects.PAGE_STRUCTURED, event, dedup_id=msg_id(task.job_id, task.page_number, result.rung)
    )


async def structure(ctx: ServiceContext, task: StructurePage) -> None:
    text_layer = await ctx.store.get_model(task.text_key, TextLayer)
    result = await structure_text(
        text_layer,
        ctx.settings,
        ctx.llm,
        job_id=task.job_id,
        worker_id=ctx.worker_id,
        sheet=task.sheet,
    )
    await answer(ctx, task, result)


async def fallback(ctx: ServiceContext, task: FallbackPage) -> None:
    text_layer = await ctx.store.get_model(task.text_key, TextLayer)
    result = await asyncio.to_thread(
        fallback_result,
        text_layer,
        ctx.settings,
        lines=task.lines,
        job_id=task.job_id,
        worker_id=ctx.worker_id,
    )
    await answer(ctx, task, result)


def register(ctx: ServiceContext, concurrency: int) -> None:
    sources = SourceCache(ctx.store)

    @ctx.page_subscriber(subjects.PAGE_EXTRACT, durable="extract", concurrency=concurrency)
    async def on_extract_page(task: ExtractPage, msg: NatsMessage) -> None:
        await ctx.run_stage(msg, "extract", task, lambda: extract(ctx, sources, task))

    @ctx.page_subscriber(
        subjects.PAGE_STRUCTURE, durable="extract-structure", concurrency=concurrency
    )
    async def on_structure_page(task: StructurePage, msg: NatsMessage) -> None:
        await ctx.run_stage(msg, "text_structuring", task, lambda: structure(ctx, task))

    @ctx.page_subscriber(
        subjects.PAGE_FALLBACK, durable="extract-fallback", concurrency=concurrency
    )
    async def on_fallback_page(task: FallbackPage, msg: NatsMessage) -> None:
        await ctx.run_stage(msg, "fallback", task, lambda: fallback(ctx, task))
