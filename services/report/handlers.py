"""Report's subscribers: terminal pages in, one report per job out."""

from collections.abc import Awaitable, Callable
from typing import Annotated

from faststream import Context
from faststream.nats.annotations import NatsMessage

from services.report.register_review import apply_decision, follow_correction
from services.report.usecases import Collaborators, on_cell_read, on_failed, on_verified, revise
from shared.contracts import subjects
from shared.contracts.messages import (
    CellRead,
    PageFailed,
    PageVerified,
    ProblemReviewed,
    ProposalDecided,
    SheetCorrected,
)
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

    @subscriptions.page_subscriber(subjects.PAGE_CELL_READ, durable="report-cell-read")
    async def on_page_cell_read(event: CellRead, msg: NatsMessage, io: IoDep) -> None:
        await retried(msg, io, lambda: on_cell_read(io, event), f"the report of {event.job_id}")

    @subscriptions.page_subscriber(
        subjects.SHEET_CORRECTED, durable="report-corrected", concurrency=RARE_EVENT_LOOPS
    )
    async def on_sheet_corrected(event: SheetCorrected, msg: NatsMessage, io: IoDep) -> None:
        # The register first: the report's changes then name the sheet as corrected.
        async def corrected() -> None:
            await follow_correction(io.bucket, io.jobs, io.publisher, event)
            await revise(io, event.job_id)

        await retried(msg, io, corrected, f"the review of {event.job_id}")

    @subscriptions.page_subscriber(
        subjects.PROBLEM_REVIEWED, durable="report-reviewed", concurrency=RARE_EVENT_LOOPS
    )
    async def on_problem_reviewed(event: ProblemReviewed, msg: NatsMessage, io: IoDep) -> None:
        await retried(msg, io, lambda: revise(io, event.job_id), f"the review of {event.job_id}")

    @subscriptions.page_subscriber(
        subjects.PROPOSAL_DECIDED, durable="report-decided", concurrency=1
    )
    async def on_proposal_decided(event: ProposalDecided, msg: NatsMessage, io: IoDep) -> None:
        async def decided() -> None:
            await apply_decision(io.bucket, io.jobs.state, io.publisher, event)

        await retried(msg, io, decided, f"the decision {event.record_id} of {event.project}")


async def retried(
    msg: NatsMessage, io: Collaborators, work: Callable[[], Awaitable[None]], what: str
) -> None:
    """Apply a review (rebuild the report, change the register); a failure is retried with
    backoff, never turned into a failed page (the pages are not at fault), and given up
    after the bound: the next review rebuilds the report with every record anyway."""
    await run_delivery(msg, settings=io.settings, work=work, give_up=f"applying {what}")
