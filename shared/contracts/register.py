"""A project's drawing register: for each sheet (by its normalised number) the versions its
uploads gave it, what changed between them, and the matches proposed for sheets that look
renumbered. The report service is its one writer (``services.report.projects``); the API
reads it (``shared.infra.register_store``).
"""

import re
from datetime import date, datetime
from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

from shared.sheet.normal import ascii_number, iso_date

Outcome = Literal["added", "revised", "reissued", "proposed"]
ProposalStatus = Literal["proposed", "accepted", "rejected"]


def proposal_id(sheet_key: str, matches_key: str) -> str:
    """A proposal's id, stable and safe in a URL: the two keys, each non-alphanumeric as
    ``-``."""
    return "--".join(re.sub(r"[^A-Za-z0-9]", "-", key) for key in (sheet_key, matches_key))


class UnitCounts(BaseModel):
    """Text units a version added, removed and changed against the version before, and the
    changed regions of its drawing."""

    added: int = 0
    removed: int = 0
    changed: int = 0
    regions: int = Field(0, description="changed regions of the drawing (linework)")

    @property
    def total(self) -> int:
        return self.added + self.removed + self.changed + self.regions


class Reissue(BaseModel):
    """A later upload of a version with nothing changed."""

    job_id: str
    page_number: int
    uploaded_at: datetime


class SheetVersion(BaseModel):
    """One version of a sheet: the upload that gave it, the title block's revision and date,
    and where its page is kept (copied out of the job, which may be removed)."""

    version: int = Field(ge=1)
    job_id: str
    page_number: int = Field(ge=1)
    file_name: str
    sheet_number: str = Field(
        description="with ASCII hyphens, as matched and exported", examples=["100-00"]
    )
    sheet_number_printed: str = Field("", description="as the sheet prints it", examples=["100‐00"])
    sheet_title: str | None = None
    revision: str | None = Field(None, description="the revision mark, as printed")
    issue_date: str | None = Field(
        None,
        description="the sheet's date in ISO 8601, its day/month order read from its upload's "
        "set; null when that set's order is ambiguous (the printed form is kept)",
        examples=["2016-04-12"],
    )
    issue_date_printed: str | None = Field(
        None, description="the sheet's date, as printed", examples=["04/12/16"]
    )
    issue: str | None = Field(
        None, description="the upload's issue label (options.issue)", examples=["Addendum 2"]
    )
    issued_on: date | None = Field(None, description="the upload's issue date (options)")
    uploaded_at: datetime
    text_key: str = Field(description="the page's words (TextLayer)")
    image_key: str | None = Field(None, description="the rendered page")
    reading_key: str | None = Field(
        None, description="what extract read of its identity (where its title block is)"
    )
    changes: UnitCounts | None = Field(None, description="against the version before")
    title_block_only: bool = Field(False, description="only title-block fields changed")
    delta_key: str | None = Field(None, description="the change from the version before")
    overlay_key: str | None = Field(None, description="the overlay with the version before")
    reissued: list[Reissue] = Field([], description="later uploads with nothing changed")

    @model_validator(mode="before")
    @classmethod
    def _printed_forms(cls, data: Any) -> Any:
        """A version kept before normalised forms: its number and date were the printed."""
        if isinstance(data, dict) and "sheet_number_printed" not in data:
            data = dict(data)
            printed = data.get("sheet_number") or ""
            data["sheet_number_printed"] = printed
            data["sheet_number"] = ascii_number(printed) or printed
            data["issue_date_printed"] = data.get("issue_date")
            data["issue_date"] = iso_date(data.get("issue_date"), None)
        return data


class ProposedMatch(BaseModel):
    """A sheet new to the register that looks like one it holds under another number: the
    same title and nearly the same text. Recorded and shown, never applied until a person
    accepts it (the old number's versions then follow the new one); kept once decided."""

    proposal_id: str = Field(
        "", description="stable and URL-safe: the two keys", examples=["A109--A102"]
    )
    sheet_key: str
    sheet_number: str = Field(description="the new number", examples=["A-109"])
    matches_key: str
    matches_number: str = Field(description="the number it may be", examples=["A-102"])
    sheet_title: str | None = None
    similarity: float = Field(ge=0, le=1, description="share of their words the two share")
    job_id: str
    status: ProposalStatus = "proposed"
    decided_by: str | None = Field(None, description="the token's name that decided it")
    decided_at: datetime | None = None
    reason: str | None = Field(None, description="why, as the person said")

    @model_validator(mode="after")
    def _named(self) -> "ProposedMatch":
        if not self.proposal_id:  # proposed before ids were given, or just now
            self.proposal_id = proposal_id(self.sheet_key, self.matches_key)
        return self


class RegisterSheet(BaseModel):
    key: str = Field(description="the sheet number as compared (sheet_key)")
    sheet_number: str = Field(
        description="as its latest version prints it, with ASCII hyphens (a person's "
        "correction or decision may have given it)"
    )
    sheet_title: str | None = None
    versions: list[SheetVersion]

    @property
    def current(self) -> SheetVersion:
        return self.versions[-1]


class Register(BaseModel):
    project: str
    sequence: int = Field(0, description="changes applied: jobs, and people's reviews")
    jobs: list[str] = Field([], description="the jobs applied, in order")
    applied: list[str] = Field(
        [],
        description="every change applied, in order: jobs' ids and review records' (a "
        "correction, a decided proposal); the n-th made sequence n",
    )
    sheets: dict[str, RegisterSheet] = {}
    proposals: list[ProposedMatch] = []
    updated_at: datetime | None = None

    @model_validator(mode="after")
    def _applied(self) -> "Register":
        if not self.applied:  # kept before reviews reached the register: jobs only
            self.applied = list(self.jobs)
        return self

    def sequence_of(self, applied: str) -> int | None:
        """The sequence the change (a job, a review record) made; None: not applied."""
        return self.applied.index(applied) + 1 if applied in self.applied else None


class SheetOutcome(BaseModel):
    """What one job did to one sheet of the register."""

    sheet_key: str
    sheet_number: str
    sheet_title: str | None = None
    page_number: int = Field(ge=1)
    outcome: Outcome = Field(
        description="added: version 1 of a new number; revised: a new version; reissued: "
        "uploaded again unchanged; proposed: a new number that looks like a sheet the "
        "register holds (see proposed_match)"
    )
    from_version: int | None = None
    to_version: int
    from_revision: str | None = None
    to_revision: str | None = None
    changes: UnitCounts | None = None
    title_block_only: bool = False
    delta_key: str | None = None
    overlay_key: str | None = None
    proposed_match: ProposedMatch | None = None


class RegisterOutcome(BaseModel):
    """What a job did to its project's register: ``report.json``'s ``changes``."""

    project: str
    job_id: str
    sequence: int = Field(ge=1, description="the register's sequence after this job")
    register_key: str
    issue: str | None = Field(None, description="the upload's issue label (options.issue)")
    issued_on: date | None = Field(None, description="the upload's issue date (options)")
    sheets: list[SheetOutcome] = []
    carried: list[str] = Field(
        [], description="sheet numbers the register holds that the upload lacks: still current"
    )
    unregistered_pages: list[int] = Field(
        [], description="pages without a sheet number: not in the register"
    )
    duplicate_pages: list[int] = Field(
        [], description="pages repeating a number an earlier page of the job carries"
    )

    def count(self, outcome: Outcome) -> int:
        return sum(s.outcome == outcome for s in self.sheets)
