"""Extract's subscribers: rung 1 per page, and the coverage service's rung 2/3 requests."""

from faststream.nats.annotations import NatsMessage

from services.extract.usecases import Collaborators, extract, fallback, structure
from shared import subjects
from shared.messages import ExtractPage, FallbackPage, StructurePage
from shared.service import ServiceContext
from shared.sources import SourceCache


def register(ctx: ServiceContext, concurrency: int) -> None:
    sources = SourceCache(ctx.store)

    def collaborators() -> Collaborators:
        return Collaborators(
            bucket=ctx.store,
            jobs=ctx.jobs,
            publisher=ctx.publisher,
            settings=ctx.settings,
            llm=ctx.llm,
            sources=sources,
            worker_id=ctx.worker_id,
        )

    @ctx.page_subscriber(subjects.PAGE_EXTRACT, durable="extract", concurrency=concurrency)
    async def on_extract_page(task: ExtractPage, msg: NatsMessage) -> None:
        await ctx.run_stage(msg, "extract", task, lambda: extract(collaborators(), task))

    @ctx.page_subscriber(
        subjects.PAGE_STRUCTURE, durable="extract-structure", concurrency=concurrency
    )
    async def on_structure_page(task: StructurePage, msg: NatsMessage) -> None:
        await ctx.run_stage(msg, "text_structuring", task, lambda: structure(collaborators(), task))

    @ctx.page_subscriber(
        subjects.PAGE_FALLBACK, durable="extract-fallback", concurrency=concurrency
    )
    async def on_fallback_page(task: FallbackPage, msg: NatsMessage) -> None:
        await ctx.run_stage(msg, "fallback", task, lambda: fallback(collaborators(), task))
