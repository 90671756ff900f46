"""Coverage's subscribers: rung-1 results in, rung 2/3 answers back, covered pages out."""

from faststream.nats.annotations import NatsMessage

from services.coverage.store import LadderStore
from services.coverage.usecases import Collaborators, on_extracted, on_structured
from shared import subjects
from shared.messages import PageExtracted, PageStructured
from shared.service import ServiceContext


def register(ctx: ServiceContext) -> None:
    def collaborators() -> Collaborators:
        return Collaborators(
            bucket=ctx.store,
            jobs=ctx.jobs,
            ladders=LadderStore(ctx.state),
            publisher=ctx.publisher,
            settings=ctx.settings,
        )

    @ctx.page_subscriber(subjects.PAGE_EXTRACTED, durable="coverage")
    async def on_page_extracted(event: PageExtracted, msg: NatsMessage) -> None:
        await ctx.run_stage(msg, "coverage", event, lambda: on_extracted(collaborators(), event))

    @ctx.page_subscriber(subjects.PAGE_STRUCTURED, durable="coverage-structured")
    async def on_page_structured(event: PageStructured, msg: NatsMessage) -> None:
        await ctx.run_stage(msg, "coverage", event, lambda: on_structured(collaborators(), event))
