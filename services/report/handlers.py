"""Report's subscribers: terminal pages in, one report per job out."""

import asyncio

from faststream.nats.annotations import NatsMessage

from services.report.finalize import on_failed, on_verified
from shared import subjects
from shared.messages import PageFailed, PageVerified
from shared.service import ServiceContext


def register(ctx: ServiceContext) -> None:
    locks: dict[str, asyncio.Lock] = {}

    @ctx.page_subscriber(subjects.PAGE_VERIFIED, durable="report")
    async def on_page_verified(event: PageVerified, msg: NatsMessage) -> None:
        await ctx.run_stage(msg, "report", event, lambda: on_verified(ctx, event, locks))

    @ctx.page_subscriber(subjects.PAGE_FAILED, durable="report-failed")
    async def on_page_failed(event: PageFailed, msg: NatsMessage) -> None:
        await ctx.run_stage(msg, "report", event, lambda: on_failed(ctx, event, locks))
