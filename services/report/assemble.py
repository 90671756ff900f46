"""Assemble a job's ``report.json`` from its pages' terminal outcomes.

Pure functions: the report service loads the outcomes (``verified.json`` or a
``PageFailed`` event per page) and hands them here. Every page 1..page_count
ends in the report; a page nothing was recorded for is a named failed page.
"""

import statistics
from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from functools import reduce

from pydantic import BaseModel, Field

from services.report import priority
from shared.contracts.models import (
    PROBLEM_KIND_ORDER,
    GuardCounts,
    IntakeReport,
    PageVerdict,
    VerifiedPage,
    merge_usage,
)
from shared.contracts.report import (
    CoverageSummary,
    FailedPageSummary,
    ModelFailureSummary,
    PageReport,
    Report,
    ReportStatus,
    ReportSummary,
    SheetSummary,
    StageTiming,
    VerificationSummary,
)
from shared.sheet.discipline import set_disciplines
from shared.sheet.identity import decide_identity, read_from_page
from shared.sheet.sheet_set import Correction, SheetSet

NO_OUTCOME_REASON = "no outcome recorded"


class JobInfo(BaseModel):
    """What the report needs to know about the job itself (from ``JobAccepted`` / job KV)."""

    job_id: str
    file_name: str
    page_count: int = Field(ge=0)
    created_at: datetime
    canceled: bool = False
    coverage_floor: float = Field(0.6, ge=0.0, le=1.0)
    intake: IntakeReport = IntakeReport()


class FailedPage(BaseModel):
    """A page that reached no verdict: the stage that gave up and why."""

    page_number: int = Field(ge=1)
    stage: str
    reason: str
    deliveries: int = 0


PageOutcome = VerifiedPage | FailedPage


def build_report(
    job: JobInfo,
    pages: Sequence[PageOutcome],
    *,
    finished_at: datetime,
    sheet_set: SheetSet | None = None,
) -> Report:
    """Build the ``report.json`` document for ``job``.

    ``pages`` may be in any order, have gaps, or hold duplicates (at-least-once
    delivery): a verified outcome beats a failed one for the same page, and a
    page with no outcome appears failed with reason ``"no outcome recorded"``.
    Outcomes for page numbers outside 1..page_count are ignored. ``sheet_set`` is the
    set's reconciliation (``shared.sheet.reconcile``): stored under ``set``, counted
    in ``summary.set``, and its corrections applied to the pages' sheet identities.
    """
    sheet_set = sheet_set or SheetSet()
    outcomes = with_disciplines(apply_corrections(_one_outcome_per_page(job, pages), sheet_set))
    failed = [o for o in outcomes if isinstance(o, FailedPage)]
    corrections = {c.page_number: c for c in sheet_set.corrections}
    entries = [_page_entry(o, corrections.get(o.page_number)) for o in outcomes]
    if job.canceled:
        status: ReportStatus = "canceled"
    elif failed:
        status = "partial"
    else:
        status = "complete"
    return Report(
        job_id=job.job_id,
        file_name=job.file_name,
        page_count=job.page_count,
        status=status,
        created_at=job.created_at,
        finished_at=finished_at,
        coverage_floor=job.coverage_floor,
        pages=entries,
        summary=_summary(outcomes).model_copy(
            update={
                "set": sheet_set.summary(),
                "pages_by_priority": priority.by_level(p.review_priority for p in entries),
                **_honesty_summary(job, outcomes),
            }
        ),
        set=sheet_set,
    )


def apply_corrections(outcomes: list[PageOutcome], sheet_set: SheetSet) -> list[PageOutcome]:
    """The outcomes with each page the set corrected carrying its new identity (its source
    the correction's basis; the title read with the number where the page had none, or
    where the set chose another number than the page alone)."""
    corrections = {c.page_number: c for c in sheet_set.corrections}
    corrected: list[PageOutcome] = []
    for outcome in outcomes:
        c = corrections.get(outcome.page_number)
        if c and isinstance(outcome, VerifiedPage):
            sheet = decide_identity(outcome.reading, header=outcome.sheet, set_choice=c)
            outcome = outcome.model_copy(update={"sheet": sheet})
        corrected.append(outcome)
    return corrected


def with_disciplines(outcomes: list[PageOutcome]) -> list[PageOutcome]:
    """The verified pages with the discipline the set says for each
    (``shared.sheet.discipline``): its numbering scheme, its titles and its drawing index."""
    verified = [o for o in outcomes if isinstance(o, VerifiedPage)]
    index = [row for page in verified for row in page.drawing_index]
    found = set_disciplines([(p.sheet.sheet_number, p.sheet.sheet_title) for p in verified], index)
    said = {p.page_number: d for p, d in zip(verified, found, strict=True)}
    return [
        o.model_copy(update={"sheet": o.sheet.model_copy(update={"discipline": said[n]})})
        if isinstance(o, VerifiedPage) and (n := o.page_number) in said
        else o
        for o in outcomes
    ]


def _one_outcome_per_page(job: JobInfo, pages: Sequence[PageOutcome]) -> list[PageOutcome]:
    chosen: dict[int, PageOutcome] = {}
    for outcome in pages:
        n = outcome.page_number
        if not 1 <= n <= job.page_count:
            continue
        # A page retried after a failure may still verify; the verdict is the truth then.
        if n in chosen and isinstance(chosen[n], VerifiedPage) and isinstance(outcome, FailedPage):
            continue
        chosen[n] = outcome
    missing_stage = "canceled" if job.canceled else "unknown"
    return [
        chosen.get(n) or FailedPage(page_number=n, stage=missing_stage, reason=NO_OUTCOME_REASON)
        for n in range(1, job.page_count + 1)
    ]


def _page_entry(outcome: PageOutcome, correction: Correction | None) -> PageReport:
    if isinstance(outcome, FailedPage):
        return PageReport(
            page_number=outcome.page_number,
            status="failed",
            failure_reason=outcome.reason,
            failure_stage=outcome.stage,
            deliveries=outcome.deliveries,
            review_priority=priority.of_failed(outcome.stage == "canceled"),
        )
    page = outcome
    return PageReport(
        page_number=page.page_number,
        status="verified",
        has_text_layer=page.has_text_layer,
        degraded=page.degraded,
        extraction_status=page.extraction_status,
        extraction_reason=page.extraction_reason,
        sheet=page.sheet,
        objects=page.objects,
        coverage=page.coverage,
        coverage_before=page.coverage_before,
        floor=page.floor,
        below_floor=page.below_floor,
        rungs=page.rungs,
        rung_status=page.rung_status,
        guard=page.guard,
        verification=page.verdict,
        judge_disagreements=page.judge_disagreements,
        model_failures=page.model_failures,
        evidence_crops=page.evidence_crops,
        hidden_text=page.hidden_text,
        review_priority=priority.of_page(page, correction),
    )


def _summary(outcomes: list[PageOutcome]) -> ReportSummary:
    verified = [o for o in outcomes if isinstance(o, VerifiedPage)]
    failed = [o for o in outcomes if isinstance(o, FailedPage)]
    return ReportSummary(
        extraction_coverage=_coverage_summary(verified),
        verification=verification_summary([p.verdict for p in verified]).model_copy(
            update={
                "hidden_text_pages": [p.page_number for p in verified if p.hidden_text],
                "blank_pages": [p.page_number for p in verified if declared_blank(p.verdict)],
            }
        ),
        guard=reduce(GuardCounts.add, (p.guard for p in verified), GuardCounts()),
        sheets=_sheet_summary(verified),
        failed_pages=[
            FailedPageSummary(page_number=f.page_number, stage=f.stage, reason=f.reason)
            for f in failed
        ],
        degraded_pages=[p.page_number for p in verified if p.degraded],
        usage=dict(sorted(merge_usage(*(p.usage for p in verified)).items())),
        timings=_timings(verified),
    )


def _honesty_summary(job: JobInfo, outcomes: list[PageOutcome]) -> dict:
    """What was done to the upload at intake (``intake``: active content removed, repairs),
    and every configured model call that failed for good (``model_failures``, by page)."""
    return {
        "intake": job.intake,
        "model_failures": [
            ModelFailureSummary(page_number=page.page_number, **failure.model_dump())
            for page in outcomes
            if isinstance(page, VerifiedPage)
            for failure in page.model_failures
        ],
    }


def _structuring_ok(page: VerifiedPage) -> bool:
    # Pages stored before rung_status existed count by the rung alone.
    return page.rung_status.get("text_structuring", "ok") != "failed"


def _coverage_summary(pages: list[VerifiedPage]) -> CoverageSummary:
    # Only a PDF text layer is held to the floor: blank and scanned (OCR) pages are left out.
    ratios = [p.coverage.ratio for p in pages if p.has_text_layer and p.coverage.total_lines > 0]
    rungs = Counter(rung for p in pages for rung in dict.fromkeys(p.rungs))
    structured = [p for p in pages if "text_structuring" in p.rungs]
    below = [p.page_number for p in pages if p.below_floor]
    fallback = [p.page_number for p in pages if "fallback" in p.rungs]
    return CoverageSummary(
        pages_below_floor=below,
        pages_below_floor_count=len(below),
        mean_ratio=round(statistics.fmean(ratios), 4) if ratios else None,
        text_structured_pages=sum(_structuring_ok(p) for p in structured),
        text_structuring_failed_pages=sum(not _structuring_ok(p) for p in structured),
        fallback_pages=fallback,
        fallback_pages_count=len(fallback),
        rungs=dict(sorted(rungs.items())),
    )


def passed_bases(verdict: PageVerdict) -> set[str]:
    """The bases that confirmed something on a page: an object, or the title block's number
    (ocr); a page judged with neither was a blank page the judge confirmed empty."""
    checked = verdict.checked
    if checked is None:
        return set()
    bases = {basis for basis, share in checked.by_basis.items() if share.confirmed}
    if checked.title_block_read:
        bases.add("ocr")
    return bases or {"judge"}


def declared_blank(verdict: PageVerdict) -> bool:
    """The extraction found nothing on the page: skipped as blank, or contradicted."""
    return verdict.skipped == "blank" or verdict.blank_contradicted


def verification_summary(verdicts: list[PageVerdict]) -> VerificationSummary:
    """Tally the verdicts of the pages that went through verify, as the summary defines:
    every page is unjudged, passed or failed; blank pages are among the unjudged."""
    unjudged = sum(v.unjudged for v in verdicts)
    failed = sum(not v.ok and not v.unjudged for v in verdicts)
    judged = len(verdicts) - unjudged
    kinds = Counter(kind for v in verdicts for kind in dict.fromkeys(v.kinds))
    ordered = [k for k in PROBLEM_KIND_ORDER if k in kinds] + sorted(
        k for k in kinds if k not in PROBLEM_KIND_ORDER
    )
    passed_by: Counter[str] = Counter()
    for v in verdicts:
        if v.ok and not v.unjudged:
            passed_by.update(passed_bases(v))
    checked = [v.checked for v in verdicts if v.checked is not None]
    return VerificationSummary(
        pages_passed_by_basis=dict(sorted(passed_by.items())),
        objects=sum(c.objects for c in checked),
        objects_checked=sum(c.checked for c in checked),
        ocr_lines=sum(c.ocr_lines for c in checked),
        pages_verified=len(verdicts),
        pages_unjudged=unjudged,
        pages_skipped_blank=sum(v.unjudged and v.skipped == "blank" for v in verdicts),
        pages_blank=sum(map(declared_blank, verdicts)),
        pages_self_read=sum(v.unjudged and v.self_read for v in verdicts),
        pages_passed=judged - failed,
        verify_failed=failed,
        problem_rate=round(failed / judged, 4) if judged else None,
        kinds={k: kinds[k] for k in ordered},
    )


def _sheet_summary(pages: list[VerifiedPage]) -> SheetSummary:
    identified = [p for p in pages if p.sheet.sheet_number]
    return SheetSummary(
        identified=len(identified),
        recovered_from_text_layer=sum(read_from_page(p.sheet) for p in identified),
        missing=len(pages) - len(identified),
    )


def _timings(pages: list[VerifiedPage]) -> dict[str, StageTiming]:
    by_stage: dict[str, list[float]] = {}
    for page in pages:
        for stage, ms in page.timings_ms.items():
            by_stage.setdefault(stage, []).append(ms)
    return {
        stage: StageTiming(
            p50_ms=round(statistics.median(values), 1),
            max_ms=round(max(values), 1),
            pages=len(values),
        )
        for stage, values in sorted(by_stage.items())
    }
