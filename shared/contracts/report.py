"""``report.json``'s shape: the one definition the report service writes, the HTML report and
the command line read, the ``report.ready`` event carries, and the report's JSON Schema is
generated from (``sheetflow report-schema``).

Every summary field says, in its description, what it counts; the README's report section
repeats those definitions.
"""

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from shared.contracts.links import SheetLinks
from shared.contracts.models import (
    CheckedShare,
    Coverage,
    EvidenceCrop,
    ExtractionStatus,
    GuardCounts,
    HiddenText,
    IntakeReport,
    ModelFailure,
    PageObject,
    PageVerdict,
    Rung,
    Usage,
)
from shared.contracts.register import RegisterOutcome
from shared.contracts.review import ReviewRecord
from shared.sheet.header import SheetHeader
from shared.sheet.sheet_set import SetSummary, SheetSet

ReportStatus = Literal["complete", "partial", "canceled"]


class ProblemState(BaseModel):
    """A reported problem as a person left it: still open, dismissed or confirmed."""

    number: int = Field(ge=1, description="its place among the page's problems (1 = first)")
    text: str
    state: Literal["open", "dismissed", "confirmed"]
    by: str | None = Field(None, description="who decided (a token's name)")
    reason: str | None = None


class PageReview(BaseModel):
    """What a person changed on a page: the values set, the pipeline's beside them, and the
    state of each reported problem."""

    corrected: dict[str, str | None] = Field(
        {}, description="sheet identity fields a person set", examples=[{"sheet_number": "A-202"}]
    )
    original: dict[str, str | None] = Field(
        {},
        description="what the pipeline found for those fields",
        examples=[{"sheet_number": "A-201"}],
    )
    problems: list[ProblemState] = []


PriorityLevel = Literal["high", "normal", "low"]
PRIORITY_ORDER: tuple[PriorityLevel, ...] = ("high", "normal", "low")


class PriorityReason(BaseModel):
    """One reason a person should look at a page."""

    kind: Literal[
        "failed",
        "problem_open",
        "low_ocr_confidence",
        "set_override",
        "title_from_template",
        "unchecked",
        "hidden_text",
    ] = Field(examples=["low_ocr_confidence"])
    says: str = Field(examples=["OCR read the sheet number with confidence 0.62"])


class ReviewPriority(BaseModel):
    """Which pages to look at first: high (a problem open, a page lost, a number or title
    OCR was unsure of, the set overriding what the page reads), normal (nothing
    independent checked it, its title only from the set's template, hidden text), low
    (nothing to add)."""

    level: PriorityLevel = Field(examples=["high"])
    reasons: list[PriorityReason] = []


class PageReport(BaseModel):
    """One page of the set: verified (objects, coverage, verdict) or failed (stage, reason)."""

    page_number: int = Field(ge=1)
    status: Literal["verified", "failed"]
    failure_reason: str | None = Field(None, description="why a failed page failed")
    failure_stage: str | None = Field(None, description="the stage a failed page failed in")
    deliveries: int = Field(0, description="deliveries of the message that gave up (failed)")
    has_text_layer: bool | None = Field(None, description="None for a failed page")
    degraded: bool = Field(False, description="a rung's reply was cut off or failed")
    extraction_status: ExtractionStatus | None = Field(None, description="rung 1's status")
    extraction_reason: str | None = Field(
        None, description="why a rung was cut off or failed, named by rung"
    )
    sheet: SheetHeader = SheetHeader()
    objects: list[PageObject] = []
    coverage: Coverage | None = None
    coverage_before: Coverage | None = Field(None, description="after rung 1 alone")
    floor: float | None = None
    below_floor: bool = False
    rungs: list[Rung] = []
    rung_status: dict[Rung, ExtractionStatus] = {}
    guard: GuardCounts | None = None
    verification: PageVerdict | None = Field(None, description="None for a failed page")
    judge_disagreements: list[dict[str, Any]] = []
    model_failures: list[ModelFailure] = Field(
        [], description="configured model calls on this page that failed for good"
    )
    evidence_crops: list[EvidenceCrop] = Field(
        [], description="small images of the sheet around each refuted object's evidence"
    )
    review: PageReview | None = Field(
        None, description="what a person corrected or decided on this page; null: nothing"
    )
    hidden_text: HiddenText | None = Field(
        None,
        description="words the page's text layer holds and the page does not show (never "
        "read as the page's text): how many, why, a sample",
    )
    review_priority: ReviewPriority | None = Field(
        None, description="how soon a person should look at this page, and why"
    )

    def unjudged_why(self) -> str | None:
        """Why the page is unjudged, as a reader wants it ("page 5 is a scan read by OCR;
        nothing independent read it"); None when it is judged, skipped as blank or failed."""
        v = self.verification
        if v is None or not v.unjudged or v.skipped == "blank":
            return None
        if self.has_text_layer is False:
            return f"page {self.page_number} is a scan read by OCR; nothing independent read it"
        return f"page {self.page_number}: {v.reason or 'nothing gave a definite verdict'}"


class CoverageSummary(BaseModel):
    """How much of the set's text the objects cover, and which rungs it took."""

    pages_below_floor: list[int] = Field(
        description="pages (numbers) with a text layer whose objects cover less than the floor"
    )
    pages_below_floor_count: int = Field(description="how many pages are in pages_below_floor")
    mean_ratio: float | None = Field(
        description="mean coverage ratio over pages with a PDF text layer and text lines; "
        "null when there is none (blank and scanned pages are left out)"
    )
    text_structured_pages: int = Field(
        description="pages whose text-only structuring (rung 2) reply succeeded "
        "(a reply cut off but with objects counts, and degrades the page)"
    )
    text_structuring_failed_pages: int = Field(
        description="pages where rung 2 was asked but its call failed or its reply was "
        "unusable; not in text_structured_pages"
    )
    fallback_pages: list[int] = Field(description="pages (numbers) given fallback stubs (rung 3)")
    fallback_pages_count: int = Field(description="how many pages are in fallback_pages")
    rungs: dict[Rung, int] = Field(
        description="rung → pages it ran on, however it ended (see rung_status per page)"
    )


class VerificationSummary(BaseModel):
    """The verdicts: pages_verified = pages_passed + verify_failed + pages_unjudged."""

    pages_verified: int = Field(
        description="pages that went through verify, judged or not, blank pages included "
        "(every page of the set but the failed ones)"
    )
    pages_unjudged: int = Field(
        description="pages among pages_verified that nothing could judge (no problem found and "
        "no definite verdict), blank pages included: never a pass"
    )
    pages_skipped_blank: int = Field(
        description="blank pages skipped by verify; a subset of pages_unjudged"
    )
    pages_blank: int = Field(
        0,
        description="pages the extraction declared empty (no objects), skipped or not: "
        "pages_blank - pages_skipped_blank counts declarations a witness contradicted "
        "(blank_contradicted on the page's verification)",
    )
    pages_self_read: int = Field(
        0,
        description="pages among pages_unjudged whose objects are the page's own text and "
        "that nothing independent (a model, the judge, OCR) read: the default run without a "
        "model, where the OCR check could not confirm anything",
    )
    pages_passed: int = Field(
        description="pages an independent check (a model's claims against the text layer, "
        "the judge, or OCR of the evidence) judged, with no problem"
    )
    pages_passed_by_basis: dict[str, int] = Field(
        {},
        description="basis → passed pages it confirmed something on (an object, or for ocr "
        "the title block's number; judge also counts a confirmed blank page): a page "
        "counts under each basis that confirmed on it",
    )
    objects: int = Field(0, description="objects on the verified pages")
    objects_checked: int = Field(
        0, description="of those, the ones a check gave a verdict (confirmed, refuted, uncertain)"
    )
    ocr_lines: int = Field(0, description="lines the OCR check read, over every page")
    verify_failed: int = Field(description="judged pages with at least one problem")
    problem_rate: float | None = Field(
        description="verify_failed / (pages_verified - pages_unjudged): the share of judged "
        "pages with a problem; null when no page was judged"
    )
    kinds: dict[str, int] = Field(
        description="problem kind → pages with at least one problem of that kind, in the "
        "fixed kind order"
    )
    hidden_text_pages: list[int] = Field(
        [], description="pages (numbers) whose text layer holds text the page does not show"
    )
    blank_pages: list[int] = Field(
        [],
        description="the pages (numbers) pages_blank counts: declared empty by the "
        "extraction, skipped as blank or contradicted by a witness",
    )


class SheetSummary(BaseModel):
    identified: int = Field(description="verified pages with a sheet number")
    recovered_from_text_layer: int = Field(
        description="of those, numbers read from the title block's words (its text layer, or "
        "OCR where it has none), not extracted"
    )
    missing: int = Field(description="verified pages without a sheet number")


class FailedPageSummary(BaseModel):
    page_number: int = Field(ge=1)
    stage: str
    reason: str


class ModelFailureSummary(ModelFailure):
    page_number: int = Field(ge=1)


class StageTiming(BaseModel):
    p50_ms: float
    max_ms: float
    pages: int


class ReviewSummary(BaseModel):
    """A person's review, counted apart from what the pipeline found."""

    corrections: int = Field(0, description="sheet identity corrections made by a person")
    pages_corrected: int = Field(0, description="pages whose sheet identity a person corrected")
    problems_dismissed: int = Field(
        0, description="reported problems a person dismissed (still listed, marked dismissed)"
    )
    problems_confirmed: int = Field(0, description="reported problems a person confirmed")
    pages_with_open_problems: int = Field(
        0, description="verified pages with a problem no person dismissed"
    )


class ReportSummary(BaseModel):
    extraction_coverage: CoverageSummary
    verification: VerificationSummary
    guard: GuardCounts = Field(description="the grounding guard's counts, summed over pages")
    sheets: SheetSummary
    failed_pages: list[FailedPageSummary] = Field(description="pages that reached no verdict")
    degraded_pages: list[int] = Field(
        description="verified pages (numbers) where a rung was cut off or failed"
    )
    usage: dict[str, Usage] = Field(description="model usage per stage, summed over pages")
    timings: dict[str, StageTiming] = Field(description="per-stage time per page")
    intake: IntakeReport = Field(
        IntakeReport(),
        description="what ingest did to the upload: active content removed (by kind; never "
        "run), a damaged file repaired and the pages it lost",
    )
    model_failures: list[ModelFailureSummary] = Field(
        [],
        description="every configured model call that failed for good, by page and stage "
        "(the page was read offline instead, or left unjudged); any makes `run` exit 2",
    )
    set: SetSummary = Field(
        default_factory=SetSummary, description="the set's reconciliation, counted"
    )
    review: ReviewSummary = Field(
        default_factory=ReviewSummary, description="a person's corrections and decisions"
    )
    pages_by_priority: dict[str, int] = Field(
        {}, description="pages per review priority (high, normal, low): which to look at first"
    )


class Report(BaseModel):
    """``report.json``: every page 1..page_count, verified or named failed, and the summary."""

    job_id: str
    file_name: str
    page_count: int = Field(ge=0)
    status: ReportStatus = Field(
        description="complete: every page verified; partial: a page failed; canceled"
    )
    created_at: datetime
    finished_at: datetime
    coverage_floor: float
    pages: list[PageReport]
    summary: ReportSummary
    set: SheetSet = Field(
        default_factory=SheetSet,
        description="the set as a whole: its drawing index reconciled with its sheets, "
        "duplicate numbers, references to sheets it does not hold",
    )
    revision: int = Field(
        1, ge=1, description="1, then one more for each correction or review it includes"
    )
    review: list[ReviewRecord] = Field(
        [], description="the audit trail: every correction and decision a person made"
    )
    changes: RegisterOutcome | None = Field(
        None,
        description="for a job of a project: what its sheets did to the project's drawing "
        "register (new sheets, new versions with what changed, re-issued unchanged, proposed "
        "matches of renumbered sheets); null for a job without a project",
    )
    changes_error: str | None = Field(
        None,
        description="why the job's sheets could not join its project's register (the "
        "report is complete without it); null when they did, or for a job without a project",
    )


# The most a ``report.ready`` event's sheet index may take, as JSON, before its links.
READY_INDEX_BYTES = 256 * 1024


class ReadySheet(BaseModel):
    """One verified page's sheet in ``report.ready``: its identity and title-block fields."""

    page_number: int = Field(ge=1)
    sheet_number: str | None = None
    sheet_title: str | None = None
    discipline: str | None = Field(None, description="as the set says it, or unknown")
    revision: str | None = Field(None, description="the current revision mark, as printed")
    issue_date: str | None = Field(None, description="the sheet's date, as printed")
    project_number: str | None = None
    project_name: str | None = None
    scale: str | None = None
    review_priority: PriorityLevel | None = Field(
        None, description="how soon a person should look at the page (high, normal, low)"
    )
    checked: CheckedShare | None = Field(
        None, description="how much of the page the checks read, by basis"
    )
    links: SheetLinks | None = Field(None, description="where the sheet opens (screen, PDF)")


class ReadySummary(BaseModel):
    """The summary ``report.ready`` carries: the report's, less usage and timings, with
    failed pages reduced to their numbers."""

    page_count: int
    pages_failed: int
    failed_pages: list[int]
    degraded_pages: list[int]
    extraction_coverage: CoverageSummary
    verification: VerificationSummary
    guard: GuardCounts
    sheets: SheetSummary
    set: SetSummary = Field(default_factory=SetSummary)
    review: ReviewSummary = Field(default_factory=ReviewSummary)
    pages_by_priority: dict[str, int] = Field(
        {}, description="pages per review priority (high, normal, low)"
    )
    sheet_index: list[ReadySheet] = Field(
        [], description="every verified page's sheet: number, title and title-block fields"
    )
    sheet_index_complete: bool = Field(
        True,
        description="false when the set's index is too large for the event (a set of "
        "thousands of sheets): the list is then empty and the report holds the index",
    )

    @classmethod
    def of(cls, report: Report) -> "ReadySummary":
        summary = report.summary
        failed = [f.page_number for f in summary.failed_pages]
        index = [
            ReadySheet(
                page_number=p.page_number,
                **p.sheet.model_dump(include=set(ReadySheet.model_fields) - {"page_number"}),
                review_priority=p.review_priority.level if p.review_priority else None,
                checked=p.verification.checked if p.verification else None,
            )
            for p in report.pages
            if p.status == "verified"
        ]
        # NATS refuses a message over its max payload (1 MiB by default); each sheet gains
        # its links after this, so the index keeps well under it or is left to the report.
        carried = sum(len(sheet.model_dump_json()) for sheet in index) <= READY_INDEX_BYTES
        return cls(
            page_count=report.page_count,
            pages_failed=len(failed),
            failed_pages=failed,
            degraded_pages=summary.degraded_pages,
            extraction_coverage=summary.extraction_coverage,
            verification=summary.verification,
            guard=summary.guard,
            sheets=summary.sheets,
            set=summary.set,
            review=summary.review,
            pages_by_priority=summary.pages_by_priority,
            sheet_index=index if carried else [],
            sheet_index_complete=carried,
        )


def report_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of ``report.json``, as written."""
    schema = Report.model_json_schema(mode="serialization")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}
