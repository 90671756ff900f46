"""Every subject sheetflow publishes on, in one place, each with the one event it carries.

Names are relative to the namespace (``SHEETFLOW_NAMESPACE``, default
``sheetflow``) so that a test, or a second deployment on the same NATS
cluster, gets its own stream without touching code: the full subject is
``f"{namespace}.{name}"``.

A subject is its name (a ``str``), typed by its event: ``Publisher.publish`` takes a
``Subject[E]`` and an ``E``, so publishing an event on another event's subject is a type
error, not a message that no subscriber can parse.
"""

from typing import Generic, TypeVar

from pydantic import BaseModel

from shared.contracts.messages import (
    CellRead,
    DeliverWebhook,
    ExtractPage,
    FallbackPage,
    JobAccepted,
    JobProgress,
    PageCovered,
    PageExtracted,
    PageFailed,
    PageStructured,
    PageVerified,
    ProblemReviewed,
    ProposalDecided,
    ReadCell,
    RegisterUpdated,
    ReportReady,
    SheetCorrected,
    SheetRevised,
    StructurePage,
)

E = TypeVar("E", bound=BaseModel)


class Subject(str, Generic[E]):
    """A subject's name relative to the namespace, and the model of the event it carries."""

    event: type[E]

    def __new__(cls, name: str, event: type[E]) -> "Subject[E]":
        subject = super().__new__(cls, name)
        subject.event = event
        return subject

    def __getnewargs__(self) -> tuple[str, type[E]]:  # type: ignore[override]
        return str(self), self.event


JOB_ACCEPTED = Subject("job.accepted", JobAccepted)
JOB_PROGRESS = Subject("job.progress", JobProgress)
PAGE_EXTRACT = Subject("page.extract", ExtractPage)
PAGE_EXTRACTED = Subject("page.extracted", PageExtracted)
PAGE_STRUCTURE = Subject("page.structure", StructurePage)
PAGE_FALLBACK = Subject("page.fallback", FallbackPage)
PAGE_STRUCTURED = Subject("page.structured", PageStructured)
PAGE_COVERED = Subject("page.covered", PageCovered)
PAGE_VERIFIED = Subject("page.verified", PageVerified)
PAGE_FAILED = Subject("page.failed", PageFailed)
PAGE_READ_CELL = Subject("page.read_cell", ReadCell)
PAGE_CELL_READ = Subject("page.cell_read", CellRead)
REPORT_READY = Subject("report.ready", ReportReady)
SHEET_CORRECTED = Subject("sheet.corrected", SheetCorrected)
PROBLEM_REVIEWED = Subject("problem.reviewed", ProblemReviewed)
WEBHOOK_DELIVER = Subject("webhook.deliver", DeliverWebhook)
SHEET_REVISED = Subject("sheet.revised", SheetRevised)
REGISTER_UPDATED = Subject("register.updated", RegisterUpdated)
PROPOSAL_DECIDED = Subject("proposal.decided", ProposalDecided)
