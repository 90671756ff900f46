"""Report's subscribers: terminal pages in, one report per job out."""

from typing import Annotated

from faststream import Context
from faststream.nats.annotations import NatsMessage

from services.report.usecases import Collaborators, on_failed, on_verified, revise
from shared.contracts import subjects
from shared.contracts.messages import PageFailed, PageVerified, ProblemReviewed, SheetCorrected
from shared.infra.broker import run_delivery
from shared.infra.service import COLLABORATORS, Subscriptions, run_stage

IoDep = Annotated[Collaborators, Context(COLLABORATORS)]


# Reviews and corrections come one at a time from people, and failed pages are few: a few
# pull loops serve them, where each idle loop asks NATS again every few seconds.
RARE_EVENT_LOOPS = 2


def register(subscriptions: Subscriptions) -> None:
    @subscriptions.page_subscriber(subjects.PAGE_VERIFIED, durable="report")
    async def on_page_verified(event: PageVerified, msg: NatsMessage, io: IoDep) -> None:
        await run_stage(msg, "report", event, io, lambda: on_verified(io, event))

    @subscriptions.page_subscriber(subjects.PAGE_FAILED, durable="report-failed", concurrency=4)
    async def on_page_failed(event: PageFailed, msg: NatsMessage, io: IoDep) -> None:
        await run_stage(msg, "report", event, io, lambda: on_failed(io, event))

    @subscriptions.page_subscriber(
        subjects.SHEET_CORRECTED, durable="report-corrected", concurrency=RARE_EVENT_LOOPS
    )
    async def on_sheet_corrected(event: SheetCorrected, msg: NatsMessage, io: IoDep) -> None:
        await rebuild(msg, io, event.job_id)

    @subscriptions.page_subscriber(
        subjects.PROBLEM_REVIEWED, durable="report-reviewed", concurrency=RARE_EVENT_LOOPS
    )
    async def on_problem_reviewed(event: ProblemReviewed, msg: NatsMessage, io: IoDep) -> None:
        await rebuild(msg, io, event.job_id)


async def rebuild(msg: NatsMessage, io: Collaborators, job_id: str) -> None:
    """Rebuild the report after a review; a failure is retried with backoff, never turned
    into a failed page (the pages are not at fault), and given up after the bound: the next
    review rebuilds the report with every record anyway."""
    await run_delivery(
        msg,
        settings=io.settings,
        work=lambda: revise(io, job_id),
        give_up=f"rebuilding the report of {job_id}",
    )
