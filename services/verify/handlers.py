"""Verify's subscriber: covered pages in, verified pages (with every object's verdict) out."""

from typing import Annotated

from faststream import Context
from faststream.nats.annotations import NatsMessage

from services.verify.usecases import Collaborators, verify
from shared.contracts import subjects
from shared.contracts.messages import PageCovered
from shared.infra.service import COLLABORATORS, Subscriptions, run_stage

IoDep = Annotated[Collaborators, Context(COLLABORATORS)]


def register(subscriptions: Subscriptions) -> None:
    @subscriptions.page_subscriber(subjects.PAGE_COVERED, durable="verify", concurrency=8)
    async def on_page_covered(event: PageCovered, msg: NatsMessage, io: IoDep) -> None:
        await run_stage(msg, "verify", event, io, lambda: verify(io, event))
