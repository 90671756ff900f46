"""Coverage's subscribers: rung-1 results in, rung 2/3 answers back, covered pages out."""

from typing import Annotated

from faststream import Context
from faststream.nats.annotations import NatsMessage

from services.coverage.usecases import Collaborators, on_extracted, on_structured
from shared.contracts import subjects
from shared.contracts.messages import PageExtracted, PageStructured
from shared.infra.service import COLLABORATORS, Subscriptions, run_stage

IoDep = Annotated[Collaborators, Context(COLLABORATORS)]


def register(subscriptions: Subscriptions) -> None:
    @subscriptions.page_subscriber(subjects.PAGE_EXTRACTED, durable="coverage")
    async def on_page_extracted(event: PageExtracted, msg: NatsMessage, io: IoDep) -> None:
        await run_stage(msg, "coverage", event, io, lambda: on_extracted(io, event))

    @subscriptions.page_subscriber(subjects.PAGE_STRUCTURED, durable="coverage-structured")
    async def on_page_structured(event: PageStructured, msg: NatsMessage, io: IoDep) -> None:
        await run_stage(msg, "coverage", event, io, lambda: on_structured(io, event))
