"""Assemble a job's ``report.json`` from its pages' terminal outcomes.

Pure functions: the report service loads the outcomes (``verified.json`` or a
``PageFailed`` event per page) and hands them here. Every page 1..page_count
ends in the report; a page nothing was recorded for is a named failed page.
"""

import statistics
from collections import Counter
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from services.report.set_model import SheetSet
from shared.models import PROBLEM_KIND_ORDER, VerifiedPage, merge_usage
from shared.title_block import discipline_for

NO_OUTCOME_REASON = "no outcome recorded"

ReportStatus = Literal["complete", "partial", "canceled"]


class JobInfo(BaseModel):
    """What the report needs to know about the job itself (from ``JobAccepted`` / job KV)."""

    job_id: str
    file_name: str
    page_count: int = Field(ge=0)
    created_at: datetime
    canceled: bool = False
    coverage_floor: float = Field(0.6, ge=0.0, le=1.0)


class FailedPage(BaseModel):
    """A page that reached no verdict: the stage that gave up and why."""

    page_number: int = Field(ge=1)
    stage: str
    reason: str
    deliveries: int = 0


PageOutcome = VerifiedPage | FailedPage


def build_report(
    job: JobInfo,
    pages: list[PageOutcome],
    *,
    finished_at: datetime,
    sheet_set: SheetSet | None = None,
) -> dict[str, Any]:
    """Build the ``report.json`` document for ``job``.

    ``pages`` may be in any order, have gaps, or hold duplicates (at-least-once
    delivery): a verified outcome beats a failed one for the same page, and a
    page with no outcome appears failed with reason ``"no outcome recorded"``.
    Outcomes for page numbers outside 1..page_count are ignored. ``sheet_set`` is the
    set's reconciliation (``services.report.reconcile``): stored under ``set``, counted
    in ``summary.set``, and its corrections applied to the pages' sheet identities.
    """
    sheet_set = sheet_set or SheetSet()
    outcomes = apply_corrections(_one_outcome_per_page(job, pages), sheet_set)
    entries = [_page_entry(outcome) for outcome in outcomes]
    failed = [o for o in outcomes if isinstance(o, FailedPage)]
    if job.canceled:
        status: ReportStatus = "canceled"
    elif failed:
        status = "partial"
    else:
        status = "complete"
    return {
        "job_id": job.job_id,
        "file_name": job.file_name,
        "page_count": job.page_count,
        "status": status,
        "created_at": job.created_at.isoformat(),
        "finished_at": finished_at.isoformat(),
        "coverage_floor": job.coverage_floor,
        "pages": entries,
        "summary": {**_summary(outcomes), "set": sheet_set.counts()},
        "set": sheet_set.model_dump(mode="json"),
    }


def apply_corrections(outcomes: list[PageOutcome], sheet_set: SheetSet) -> list[PageOutcome]:
    """The outcomes with each page the drawing index corrected carrying its new identity
    (source ``drawing_index``; the title read beside the number where the page had none)."""
    corrections = {c.page_number: c for c in sheet_set.corrections}
    corrected: list[PageOutcome] = []
    for outcome in outcomes:
        c = corrections.get(outcome.page_number)
        if c and isinstance(outcome, VerifiedPage):
            sheet = outcome.sheet.model_copy(
                update={
                    "sheet_number": c.now,
                    "sheet_title": outcome.sheet.sheet_title or c.sheet_title,
                    "discipline": discipline_for(c.now),
                    "sheet_number_source": "drawing_index",
                }
            )
            outcome = outcome.model_copy(update={"sheet": sheet})
        corrected.append(outcome)
    return corrected


def report_ready_summary(report: dict[str, Any]) -> dict[str, Any]:
    """The compact summary carried by the ``ReportReady`` event.

    Same names as the report's summary (``extraction_coverage.mean_ratio`` …),
    with failed pages reduced to their numbers and no usage or timings.
    """
    summary = report["summary"]
    coverage = summary["extraction_coverage"]
    failed_numbers = [f["page_number"] for f in summary["failed_pages"]]
    return {
        "page_count": report["page_count"],
        "pages_failed": len(failed_numbers),
        "failed_pages": failed_numbers,
        "degraded_pages": summary["degraded_pages"],
        "extraction_coverage": {
            key: coverage[key]
            for key in (
                "pages_below_floor",
                "mean_ratio",
                "text_structured_pages",
                "fallback_pages",
            )
        },
        "verification": dict(summary["verification"]),
        "sheets": dict(summary["sheets"]),
        "set": dict(summary["set"]),
    }


def _one_outcome_per_page(job: JobInfo, pages: list[PageOutcome]) -> list[PageOutcome]:
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


def _page_entry(outcome: PageOutcome) -> dict[str, Any]:
    if isinstance(outcome, FailedPage):
        return {
            "page_number": outcome.page_number,
            "status": "failed",
            "failure_reason": outcome.reason,
            "failure_stage": outcome.stage,
            "deliveries": outcome.deliveries,
            "has_text_layer": None,
            "degraded": False,
            "sheet": {
                "sheet_number": None,
                "sheet_title": None,
                "discipline": None,
                "sheet_number_source": None,
            },
            "objects": [],
            "coverage": None,
            "rungs": [],
            "verification": None,
        }
    page = outcome
    return {
        "page_number": page.page_number,
        "status": "verified",
        "failure_reason": None,
        "has_text_layer": page.has_text_layer,
        "degraded": page.degraded,
        "extraction_status": page.extraction_status,
        "extraction_reason": page.extraction_reason,
        "sheet": page.sheet.model_dump(mode="json"),
        "objects": [o.model_dump(mode="json") for o in page.objects],
        "coverage": page.coverage.model_dump(mode="json"),
        "coverage_before": page.coverage_before.model_dump(mode="json"),
        "floor": page.floor,
        "below_floor": page.below_floor,
        "rungs": list(page.rungs),
        "guard": page.guard.model_dump(mode="json"),
        "verification": page.verdict.model_dump(mode="json"),
        "judge_disagreements": page.judge_disagreements,
    }


def _summary(outcomes: list[PageOutcome]) -> dict[str, Any]:
    verified = [o for o in outcomes if isinstance(o, VerifiedPage)]
    failed = [o for o in outcomes if isinstance(o, FailedPage)]
    return {
        "extraction_coverage": _coverage_summary(verified),
        "verification": _verification_summary(verified),
        "sheets": _sheet_summary(verified),
        "failed_pages": [
            {"page_number": f.page_number, "stage": f.stage, "reason": f.reason} for f in failed
        ],
        "degraded_pages": [p.page_number for p in verified if p.degraded],
        "usage": {
            stage: usage.model_dump()
            for stage, usage in sorted(merge_usage(*(p.usage for p in verified)).items())
        },
        "timings": _timings(verified),
    }


def _coverage_summary(pages: list[VerifiedPage]) -> dict[str, Any]:
    # Only a PDF text layer is held to the floor: blank and scanned (OCR) pages are left out.
    ratios = [p.coverage.ratio for p in pages if p.has_text_layer and p.coverage.total_lines > 0]
    rungs = Counter(rung for p in pages for rung in dict.fromkeys(p.rungs))
    return {
        "pages_below_floor": sum(p.below_floor for p in pages),
        "below_floor_pages": [p.page_number for p in pages if p.below_floor],
        "mean_ratio": round(statistics.fmean(ratios), 4) if ratios else None,
        "text_structured_pages": rungs["text_structuring"],
        "fallback_pages": rungs["fallback"],
        "rungs": dict(sorted(rungs.items())),
    }


def _verification_summary(pages: list[VerifiedPage]) -> dict[str, Any]:
    """Tally verdicts; a skipped blank page is counted apart from other unjudged pages."""
    skipped_blank = [p for p in pages if p.verdict.skipped == "blank"]
    unjudged = [p for p in pages if p.verdict.unjudged and p.verdict.skipped != "blank"]
    kinds = Counter(kind for p in pages for kind in dict.fromkeys(p.verdict.kinds))
    ordered = [k for k in PROBLEM_KIND_ORDER if k in kinds] + sorted(
        k for k in kinds if k not in PROBLEM_KIND_ORDER
    )
    return {
        "pages_verified": sum(p.verdict.ok and not p.verdict.unjudged for p in pages),
        "pages_unjudged": len(unjudged),
        "pages_skipped_blank": len(skipped_blank),
        "verify_failed": sum(not p.verdict.ok for p in pages),
        "kinds": {k: kinds[k] for k in ordered},
    }


def _sheet_summary(pages: list[VerifiedPage]) -> dict[str, int]:
    identified = [p for p in pages if p.sheet.sheet_number]
    return {
        "identified": len(identified),
        "recovered_from_text_layer": sum(
            p.sheet.sheet_number_source == "text_layer" for p in identified
        ),
        "missing": len(pages) - len(identified),
    }


def _timings(pages: list[VerifiedPage]) -> dict[str, dict[str, float]]:
    by_stage: dict[str, list[float]] = {}
    for page in pages:
        for stage, ms in page.timings_ms.items():
            by_stage.setdefault(stage, []).append(ms)
    return {
        stage: {
            "p50_ms": round(statistics.median(values), 1),
            "max_ms": round(max(values), 1),
            "pages": len(values),
        }
        for stage, values in sorted(by_stage.items())
    }
