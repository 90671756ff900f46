"""Every event and command on the wire: the contract other systems subscribe to.

Commands are imperative (``ExtractPage``), events past tense (``PageExtracted``).
Messages are small and carry object keys (claim-check), never page content.
"""

from datetime import date, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from shared.contracts.links import JobLinks, ProjectLinks, SheetLinks
from shared.contracts.models import (
    Coverage,
    ExtractionStatus,
    IntakeReport,
    PageVerdict,
    Rung,
    Usage,
)
from shared.contracts.report import ReadySummary, ReportStatus
from shared.pagetext import Box
from shared.sheet.header import SheetHeader

JOB_ID_EXAMPLE = "j_4f9c2b7e1a6d4c0e9b8a7f6e5d4c3b2a"
# A project's id: it names the project's keys in the bucket and in the job state store, so it
# is kept to what both take as it is (no dots: a dot separates the state store's key tokens).
PROJECT_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$"
PROJECT_EXAMPLE = "tower-b"


class JobOptions(BaseModel):
    """Per-job overrides of the deployment's settings (``options`` at upload)."""

    model_config = ConfigDict(extra="forbid")

    coverage_floor: float | None = Field(None, ge=0.0, le=1.0, examples=[0.6])
    text_retry: bool | None = Field(None, description="allow rung 2 (text-only structuring)")
    fallback: bool | None = Field(None, description="allow rung 3 (deterministic stubs)")
    judge: bool | None = Field(None, description="allow the model judge in verify")
    vision: bool | None = Field(None, description="use the vision model for rung 1 when configured")
    project: str | None = Field(
        None,
        pattern=PROJECT_ID_PATTERN,
        description="the project whose drawing register the job's sheets join (1-64 letters, "
        "digits, '-' or '_', starting with a letter or digit); none: the job stands alone",
        examples=[PROJECT_EXAMPLE],
    )
    issue: str | None = Field(
        None,
        min_length=1,
        max_length=64,
        description="what issue of the set the upload is, kept with each sheet version it "
        "gives a project's register",
        examples=["Addendum 2"],
    )
    issue_date: date | None = Field(
        None, description="the issue's date (ISO 8601)", examples=["2026-03-14"]
    )


class _PageMessage(BaseModel):
    job_id: str = Field(examples=[JOB_ID_EXAMPLE])
    page_number: int = Field(ge=1, examples=[3])


class JobAccepted(BaseModel):
    job_id: str = Field(examples=[JOB_ID_EXAMPLE])
    file_name: str = Field(examples=["A-set.pdf"])
    page_count: int = Field(ge=1, examples=[12])
    source_key: str = Field(examples=[f"jobs/{JOB_ID_EXAMPLE}/source.pdf"])
    options: JobOptions = JobOptions()
    intake: IntakeReport = IntakeReport()
    created_at: datetime
    links: JobLinks | None = Field(None, description="where the job opens (screen, API)")


class ExtractPage(_PageMessage):
    source_key: str = Field(examples=[f"jobs/{JOB_ID_EXAMPLE}/source.pdf"])
    options: JobOptions = JobOptions()
    window: int = Field(
        0,
        ge=0,
        description="pages of the job queued at once: starting this page queues page "
        "page_number + window, up to page_count (0: every page was queued at intake)",
        examples=[16],
    )
    page_count: int = Field(0, ge=0, description="the job's pages", examples=[120])


class PageExtracted(_PageMessage):
    result_key: str = Field(examples=[f"jobs/{JOB_ID_EXAMPLE}/pages/3/extracted.json"])
    text_key: str = Field(examples=[f"jobs/{JOB_ID_EXAMPLE}/pages/3/text.json"])
    source_key: str = Field(
        description="the source PDF the page was read from",
        examples=[f"jobs/{JOB_ID_EXAMPLE}/source.pdf"],
    )
    status: ExtractionStatus
    rung: Rung = "offline"
    has_text_layer: bool
    usage: dict[str, Usage] = {}
    options: JobOptions = JobOptions()


class StructurePage(_PageMessage):
    """Rung 2: ask extract for text-only structuring of a low-coverage page."""

    text_key: str
    sheet: SheetHeader = Field(
        SheetHeader(), description="what is known of the sheet so far: a hint for the model"
    )
    options: JobOptions = JobOptions()


class FallbackPage(_PageMessage):
    """Rung 3: ask extract for deterministic stubs of a still-low-coverage page."""

    text_key: str
    lines: list[int] | None = Field(
        None,
        description="the text.json line ids no object covers yet, to be cited by stubs; "
        "null: every coverage unit of the page",
        examples=[[3, 4, 9]],
    )
    options: JobOptions = JobOptions()


class PageStructured(_PageMessage):
    rung: Literal["text_structuring", "fallback"]
    result_key: str
    status: ExtractionStatus
    usage: dict[str, Usage] = {}


class PageCovered(_PageMessage):
    covered_key: str = Field(examples=[f"jobs/{JOB_ID_EXAMPLE}/pages/3/covered.json"])
    text_key: str
    source_key: str = Field(
        description="the source PDF the page was read from (evidence crops are rendered from it)",
        examples=[f"jobs/{JOB_ID_EXAMPLE}/source.pdf"],
    )
    coverage: Coverage
    rungs: list[Rung]
    sheet: SheetHeader
    options: JobOptions = JobOptions()


class PageVerified(_PageMessage):
    verified_key: str = Field(examples=[f"jobs/{JOB_ID_EXAMPLE}/pages/3/verified.json"])
    verdict: PageVerdict


class PageFailed(_PageMessage):
    stage: str = Field(examples=["extract"])
    reason: str = Field(examples=["the page could not be rendered: cannot open broken document"])
    deliveries: int = Field(0, description="deliveries of the message that gave up")


class ReadCell(_PageMessage):
    """The report's set step asks extract to read a page again in one cell: where the set's
    confident pages print their sheet number, on a page that read none. The cell only says
    where to look; whatever is read there is the page's own text."""

    source_key: str = Field(examples=[f"jobs/{JOB_ID_EXAMPLE}/source.pdf"])
    cell: Box = Field(
        description="the cell, displayed page coordinates (PDF points)",
        examples=[[1040.0, 700.0, 1220.0, 790.0]],
    )
    label: str | None = Field(
        None, description="the label the set prints its numbers under", examples=["SHEET NO."]
    )
    pages: int = Field(ge=1, description="the confident pages printing their number there")


class CellRead(_PageMessage):
    """Extract read a page again in the cell the report's set step asked for."""

    result_key: str = Field(examples=[f"jobs/{JOB_ID_EXAMPLE}/pages/3/cell-read.json"])
    number: str | None = Field(
        None,
        description="the sheet number the page's own reader chose in the cell; null: none",
        examples=["A-103"],
    )


class JobProgress(BaseModel):
    job_id: str = Field(examples=[JOB_ID_EXAMPLE])
    page_number: int = Field(ge=1)
    stage: str = Field(examples=["extracted"])


class SheetCorrected(BaseModel):
    """A person corrected a page's sheet identity (the record: ``jobs/{id}/review/``)."""

    job_id: str = Field(examples=[JOB_ID_EXAMPLE])
    page_number: int = Field(ge=1, examples=[4])
    record_id: str = Field(examples=["20260529T090000123456-1a2b3c4d"])
    before: dict[str, str | None] = Field(examples=[{"sheet_number": "A-201"}])
    after: dict[str, str | None] = Field(examples=[{"sheet_number": "A-202"}])
    by: str = Field(description="the name of the token that corrected it", examples=["dana"])
    reason: str = Field(examples=["the title block reads A-202"])
    at: datetime
    links: SheetLinks | None = Field(None, description="where the page opens (screen, PDF)")


class ProblemReviewed(BaseModel):
    """A person dismissed or confirmed a reported problem."""

    job_id: str = Field(examples=[JOB_ID_EXAMPLE])
    page_number: int = Field(ge=1, examples=[2])
    record_id: str
    problem: int = Field(ge=1, description="the problem's number on its page")
    text: str = Field(description="the problem as the report states it")
    decision: Literal["dismissed", "confirmed"]
    by: str = Field(examples=["dana"])
    reason: str
    at: datetime
    links: SheetLinks | None = Field(None, description="where the page opens (screen, PDF)")


class ReportReady(BaseModel):
    job_id: str = Field(examples=[JOB_ID_EXAMPLE])
    file_name: str = Field(examples=["A-set.pdf"])
    page_count: int = Field(examples=[12])
    status: ReportStatus
    summary: ReadySummary
    report_key: str = Field(examples=[f"jobs/{JOB_ID_EXAMPLE}/report.json"])
    html_key: str = Field(examples=[f"jobs/{JOB_ID_EXAMPLE}/report.html"])
    revision: int = Field(
        1, ge=1, description="1, then one more for each correction or review the report includes"
    )
    links: JobLinks | None = Field(
        None, description="where the job opens: the screen, the report, the CSV, the downloads"
    )


class DeliverWebhook(BaseModel):
    """Command: attempt one webhook delivery (its body and log are kept in the bucket, under
    its subscription). ``round`` counts replays: a replay starts a new round of attempts."""

    subscription_id: str = Field(examples=["wh_5d41402abc4b2a76"])
    delivery_id: str = Field(examples=["20260529T090000-9e107d9d372bb682"])
    round: int = Field(1, ge=1)


class SheetRevised(BaseModel):
    """A project's sheet has a new version: what changed on it since the one before, counted
    in text units and in changed regions of its drawing, with the keys of the delta and the
    overlay (picture)."""

    project: str = Field(examples=[PROJECT_EXAMPLE])
    job_id: str = Field(examples=[JOB_ID_EXAMPLE])
    page_number: int = Field(ge=1, description="the sheet's page in the job", examples=[4])
    sheet_number: str = Field(examples=["A-201"])
    sheet_key: str = Field(description="the sheet number as compared", examples=["A201"])
    from_version: int = Field(ge=1, examples=[1])
    to_version: int = Field(ge=2, examples=[2])
    from_revision: str | None = Field(description="the revision mark before", examples=["1"])
    to_revision: str | None = Field(description="the revision mark now", examples=["2"])
    added: int = Field(ge=0, description="text units only the new version has", examples=[1])
    removed: int = Field(ge=0, description="text units only the old version had", examples=[0])
    changed: int = Field(ge=0, description="text units whose text changed", examples=[3])
    regions: int = Field(
        0, ge=0, description="changed regions of the drawing (linework)", examples=[1]
    )
    title_block_only: bool = Field(
        description="nothing changed but title-block fields (revision, date)", examples=[False]
    )
    delta_key: str = Field(examples=["projects/tower-b/sheets/A201/j_4f9c/delta.json"])
    overlay_key: str | None = Field(
        description="the overlay picture; null when it could not be drawn",
        examples=["projects/tower-b/sheets/A201/j_4f9c/overlay.png"],
    )
    links: ProjectLinks | None = Field(
        None, description="where the register, the sheet's versions and this change open"
    )
    sheet_links: SheetLinks | None = Field(None, description="where the new version's page opens")


class RegisterUpdated(BaseModel):
    """A job's sheets were matched to its project's register (once per job), or a person's
    review changed it (once per record)."""

    project: str = Field(examples=[PROJECT_EXAMPLE])
    job_id: str = Field(examples=[JOB_ID_EXAMPLE])
    sequence: int = Field(ge=1, description="jobs the register holds, this one included")
    added: int = Field(ge=0, description="sheets new to the project (version 1)")
    revised: int = Field(ge=0, description="sheets given a new version")
    reissued_unchanged: int = Field(ge=0, description="sheets uploaded again with no change")
    proposed: int = Field(
        ge=0,
        description="new sheet numbers that look like a sheet already in the register "
        "(renumbered?): proposed as a match, never merged",
    )
    carried: int = Field(ge=0, description="register sheets the upload lacks: still current")
    sheets_current: int = Field(ge=0, description="sheets in the register after the job")
    register_key: str = Field(examples=["projects/tower-b/register/00000002-j_4f9c.json"])
    record_id: str | None = Field(
        None,
        description="set when a person's review changed the register (a correction, a "
        "decided proposal): its record; job_id is then the upload the sheet came from",
    )
    moved: int = Field(0, ge=0, description="sheets the review moved to another number")
    links: ProjectLinks | None = Field(None, description="where the register opens")


class ProposalDecided(BaseModel):
    """A person accepted or rejected a proposed match of a project's register (the record:
    ``projects/{project}/review/``); the register's writer applies it."""

    project: str = Field(examples=[PROJECT_EXAMPLE])
    proposal_id: str = Field(examples=["A109--A102"])
    decision: Literal["accepted", "rejected"]
    record_id: str = Field(examples=["20260529T090000123456-1a2b3c4d"])
    record_key: str = Field(
        examples=["projects/tower-b/review/20260529T090000123456-1a2b3c4d.json"]
    )
    by: str = Field(examples=["dana"])
    at: datetime
