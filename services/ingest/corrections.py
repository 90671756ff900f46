"""Ingest's review use cases (a reviewer's): correct a page's sheet identity, dismiss or
confirm a reported problem, read the review records. Each is stored as a record of its own
(who, when, before, after, why) and announced; the report service rebuilds the report."""

from typing import Literal

from pydantic import BaseModel, Field, model_validator

from services.ingest.refusals import Refusal, RefusalKind, not_found, refusing_outages
from services.ingest.roles import Caller
from services.ingest.usecases import Collaborators, report
from shared.contracts import subjects
from shared.contracts.links import sheet_links
from shared.contracts.messages import ProblemReviewed, SheetCorrected
from shared.contracts.report import PageReport, Report
from shared.contracts.review import (
    SHEET_FIELDS,
    ProblemReview,
    SheetCorrection,
    decisions,
    sheet_values,
)
from shared.infra.jobs import now
from shared.infra.review_store import new_record_id, review_records, save_record

Reason = Field(min_length=3, max_length=2000, description="why: kept in the record")


class SheetFix(BaseModel):
    """The fields to correct (those given; null clears one) and why."""

    sheet_number: str | None = Field(None, max_length=64, examples=["A-202"])
    sheet_title: str | None = Field(None, max_length=300)
    discipline: str | None = Field(None, max_length=64)
    revision: str | None = Field(None, max_length=32)
    reason: str = Reason

    @model_validator(mode="after")
    def _some_field(self) -> "SheetFix":
        if not set(SHEET_FIELDS) & self.model_fields_set:
            raise ValueError(f"name at least one of {', '.join(SHEET_FIELDS)}")
        return self

    def values(self) -> dict[str, str | None]:
        given = {f: getattr(self, f) for f in SHEET_FIELDS if f in self.model_fields_set}
        return {f: (v.strip() or None) if v is not None else None for f, v in given.items()}


class ProblemDecision(BaseModel):
    decision: Literal["dismiss", "confirm"]
    reason: str = Reason


async def _finished_report(io: Collaborators, job_id: str) -> Report:
    try:
        return Report.model_validate_json(await report(io, job_id, "json"))
    except Refusal as refusal:
        if refusal.error == "report_not_ready":
            raise Refusal(
                RefusalKind.CONFLICT,
                "report_not_ready",
                "The job's report is not written yet; review it once it is.",
            ) from refusal
        raise


def _page(found: Report, page_number: int) -> PageReport:
    for page in found.pages:
        if page.page_number == page_number:
            return page
    raise not_found(f"The job has pages 1 to {found.page_count}.")


def _pipeline_value(page: PageReport, field: str) -> str | None:
    """What the pipeline found for ``field`` (the report keeps it beside a person's value)."""
    if page.review and field in page.review.original:
        return page.review.original[field]
    return getattr(page.sheet, field, None)


@refusing_outages
async def correct_sheet(
    io: Collaborators, caller: Caller, job_id: str, page_number: int, fix: SheetFix
) -> SheetCorrection:
    found = await _finished_report(io, job_id)
    page = _page(found, page_number)
    records = await review_records(io.bucket, job_id)
    current = sheet_values(records).get(page_number, {})
    after = fix.values()
    before = {f: current[f] if f in current else _pipeline_value(page, f) for f in after}
    if before == after:
        raise Refusal(RefusalKind.INVALID, "no_change", "The page already says that.")
    at = now()
    record = SheetCorrection(
        record_id=new_record_id(at),
        job_id=job_id,
        page_number=page_number,
        by=caller.name,
        at=at,
        reason=fix.reason,
        before=before,
        after=after,
    )
    await save_record(io.bucket, record)
    event = SheetCorrected(
        job_id=job_id,
        page_number=page_number,
        record_id=record.record_id,
        before=before,
        after=after,
        by=caller.name,
        reason=fix.reason,
        at=at,
        links=sheet_links(io.settings.public_url, job_id, page_number),
    )
    await io.publisher.publish(subjects.SHEET_CORRECTED, event, dedup_id=record.record_id)
    return record


@refusing_outages
async def review_problem(
    io: Collaborators,
    caller: Caller,
    job_id: str,
    page_number: int,
    problem: int,
    decision: ProblemDecision,
) -> ProblemReview:
    found = await _finished_report(io, job_id)
    page = _page(found, page_number)
    problems = page.verification.problems if page.verification else []
    if not 1 <= problem <= len(problems):
        raise not_found(f"Page {page_number} reports {len(problems)} problem(s).")
    previous = decisions(await review_records(io.bucket, job_id)).get((page_number, problem))
    after: Literal["dismissed", "confirmed"] = (
        "dismissed" if decision.decision == "dismiss" else "confirmed"
    )
    at = now()
    record = ProblemReview(
        record_id=new_record_id(at),
        job_id=job_id,
        page_number=page_number,
        by=caller.name,
        at=at,
        reason=decision.reason,
        problem=problem,
        text=problems[problem - 1],
        before=previous.after if previous else None,
        after=after,
    )
    await save_record(io.bucket, record)
    event = ProblemReviewed(
        job_id=job_id,
        page_number=page_number,
        record_id=record.record_id,
        problem=problem,
        text=record.text,
        decision=after,
        by=caller.name,
        reason=decision.reason,
        at=at,
        links=sheet_links(io.settings.public_url, job_id, page_number),
    )
    await io.publisher.publish(subjects.PROBLEM_REVIEWED, event, dedup_id=record.record_id)
    return record


@refusing_outages
async def review_log(io: Collaborators, job_id: str) -> list[SheetCorrection | ProblemReview]:
    await _finished_report(io, job_id)
    return await review_records(io.bucket, job_id)
