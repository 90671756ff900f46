"""Verify's subscriber: covered pages in, verified pages (with every object's verdict) out."""

from faststream.nats.annotations import NatsMessage

from services.verify.usecases import Collaborators, verify
from shared import subjects
from shared.messages import PageCovered
from shared.service import ServiceContext
from shared.sources import SourceCache


def register(ctx: ServiceContext) -> None:
    sources = SourceCache(ctx.store, max_bytes=256 * 1024 * 1024)

    def collaborators() -> Collaborators:
        return Collaborators(
            bucket=ctx.store,
            jobs=ctx.jobs,
            publisher=ctx.publisher,
            settings=ctx.settings,
            llm=ctx.llm,
            sources=sources,
        )

    @ctx.page_subscriber(subjects.PAGE_COVERED, durable="verify", concurrency=8)
    async def on_page_covered(event: PageCovered, msg: NatsMessage) -> None:
        await ctx.run_stage(msg, "verify", event, lambda: verify(collaborators(), event))
