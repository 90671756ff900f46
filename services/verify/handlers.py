"""Verify's subscriber: covered pages in, verified pages (with every object's verdict) out."""

import asyncio

from faststream.nats.annotations import NatsMessage

from services.verify.pipeline import verify_page
from shared import subjects
from shared.broker import msg_id
from shared.messages import PageCovered, PageVerified
from shared.models import CoveredPage, TextLayer
from shared.service import ServiceContext
from shared.sources import SourceCache
from shared.storage import Keys, ObjectMissing


def judge_configured(ctx: ServiceContext) -> bool:
    return bool(ctx.llm and ctx.settings.llm_verify_model)


async def verify(ctx: ServiceContext, sources: SourceCache, event: PageCovered) -> None:
    job, n = event.job_id, event.page_number
    covered, text_layer = await asyncio.gather(
        ctx.store.get_model(event.covered_key, CoveredPage),
        ctx.store.get_model(event.text_key, TextLayer),
    )
    judge_enabled = event.options.judge is not False
    judging = judge_enabled and judge_configured(ctx)
    png = None
    # The page image only matters to the judge and to telling a blank page from a scan.
    if judging or not text_layer.has_text_layer:
        try:
            png = await ctx.store.get_bytes(Keys.page(job, n, "image.png"))
        except ObjectMissing:
            png = None
    # The PDF renders evidence crops: high-DPI ones for the judge, small ones for the report.
    pdf = await sources.get(Keys.source(job))
    out = await verify_page(
        covered,
        text_layer,
        pdf,
        png,
        ctx.settings,
        ctx.llm,
        judge_enabled=judge_enabled,
    )
    await asyncio.gather(
        *(
            ctx.store.put_bytes(Keys.job(job) + key, jpeg, "image/jpeg")
            for key, jpeg in out.crops.items()
        )
    )
    verified_key = Keys.page(job, n, "verified.json")
    await ctx.store.put_json(verified_key, out.verified)
    event_out = PageVerified(
        job_id=job, page_number=n, verified_key=verified_key, verdict=out.verified.verdict
    )
    await ctx.mark(job, n, "verified")
    await ctx.publish(subjects.PAGE_VERIFIED, event_out, dedup_id=msg_id(job, n))


def register(ctx: ServiceContext) -> None:
    sources = SourceCache(ctx.store, max_bytes=256 * 1024 * 1024)

    @ctx.page_subscriber(subjects.PAGE_COVERED, durable="verify", concurrency=8)
    async def on_page_covered(event: PageCovered, msg: NatsMessage) -> None:
        await ctx.run_stage(msg, "verify", event, lambda: verify(ctx, sources, event))
