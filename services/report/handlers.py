"""Report's subscribers: terminal pages in, one report per job out."""

import asyncio

from faststream.nats.annotations import NatsMessage

from services.report.store import TerminalPages
from services.report.usecases import Collaborators, on_failed, on_verified
from shared import subjects
from shared.messages import PageFailed, PageVerified
from shared.service import ServiceContext


def register(ctx: ServiceContext) -> None:
    finishing: dict[str, asyncio.Lock] = {}

    def collaborators() -> Collaborators:
        return Collaborators(
            bucket=ctx.store,
            jobs=ctx.jobs,
            terminal=TerminalPages(ctx.state),
            publisher=ctx.publisher,
            settings=ctx.settings,
            finishing=finishing,
        )

    @ctx.page_subscriber(subjects.PAGE_VERIFIED, durable="report")
    async def on_page_verified(event: PageVerified, msg: NatsMessage) -> None:
        await ctx.run_stage(msg, "report", event, lambda: on_verified(collaborators(), event))

    @ctx.page_subscriber(subjects.PAGE_FAILED, durable="report-failed")
    async def on_page_failed(event: PageFailed, msg: NatsMessage) -> None:
        await ctx.run_stage(msg, "report", event, lambda: on_failed(collaborators(), event))
