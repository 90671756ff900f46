"""Report's subscribers: terminal pages in, one report per job out."""

from typing import Annotated

from faststream import Context
from faststream.nats.annotations import NatsMessage

from services.report.usecases import Collaborators, on_failed, on_verified
from shared import subjects
from shared.messages import PageFailed, PageVerified
from shared.service import COLLABORATORS, Subscriptions, run_stage

IoDep = Annotated[Collaborators, Context(COLLABORATORS)]


def register(subscriptions: Subscriptions) -> None:
    @subscriptions.page_subscriber(subjects.PAGE_VERIFIED, durable="report")
    async def on_page_verified(event: PageVerified, msg: NatsMessage, io: IoDep) -> None:
        await run_stage(msg, "report", event, io, lambda: on_verified(io, event))

    @subscriptions.page_subscriber(subjects.PAGE_FAILED, durable="report-failed")
    async def on_page_failed(event: PageFailed, msg: NatsMessage, io: IoDep) -> None:
        await run_stage(msg, "report", event, io, lambda: on_failed(io, event))
