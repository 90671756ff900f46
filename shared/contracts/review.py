"""A person's review of a job's report, as records of its own: a sheet identity corrected, a
reported problem dismissed or confirmed — each with who (the token's name), when, the value
before and after, and why. Ingest writes them (``jobs/{id}/review/{record}.json``, one object
per record, never touching what the pipeline stored); the report service rebuilds the report
from the pipeline's results plus these records (kept in the bucket by
``shared.infra.review_store``).

A project's register has records of its own (``projects/{project}/review/{record}.json``): a
proposed match accepted or rejected (ingest writes it), and a sheet the register moved to
another number for a correction or an accepted proposal (its writer, the report service,
writes it)."""

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, Field

# The sheet identity a person may correct.
SheetField = Literal["sheet_number", "sheet_title", "discipline", "revision"]
SHEET_FIELDS: tuple[str, ...] = ("sheet_number", "sheet_title", "discipline", "revision")
Decision = Literal["dismissed", "confirmed"]


class _Record(BaseModel):
    record_id: str = Field(
        description="orders the records: when it was made, then a random part",
        examples=["20260529T090000123456-1a2b3c4d"],
    )
    job_id: str
    page_number: int = Field(ge=1)
    by: str = Field(description="the name of the token that made it", examples=["dana"])
    at: datetime
    reason: str = Field(examples=["the title block reads S-201; the index agrees"])


class SheetCorrection(_Record):
    """A page's sheet identity as a person corrected it: the fields changed, before and after."""

    kind: Literal["sheet"] = "sheet"
    before: dict[str, str | None] = Field(examples=[{"sheet_number": "A-201"}])
    after: dict[str, str | None] = Field(examples=[{"sheet_number": "A-202"}])


class ProblemReview(_Record):
    """A reported problem as a person judged it: dismissed (not a problem) or confirmed."""

    kind: Literal["problem"] = "problem"
    problem: int = Field(ge=1, description="the problem's number on its page (1 = first)")
    text: str = Field(description="the problem as the report states it")
    before: Decision | None = Field(description="the decision it replaces, if any")
    after: Decision


ReviewRecord = Annotated[SheetCorrection | ProblemReview, Field(discriminator="kind")]


class _ProjectRecord(BaseModel):
    record_id: str = Field(
        description="orders the records: when it was made, then a random part",
        examples=["20260529T090000123456-1a2b3c4d"],
    )
    project: str = Field(examples=["tower-b"])
    by: str = Field(description="the name of the token that made it", examples=["dana"])
    at: datetime
    reason: str = Field(examples=["the same drawing: the set was renumbered in Addendum 2"])


class ProposalDecision(_ProjectRecord):
    """A proposed match (``shared.contracts.register.ProposedMatch``) as a person decided it."""

    kind: Literal["proposal"] = "proposal"
    proposal_id: str = Field(examples=["A109--A102"])
    sheet_key: str = Field(description="the new number, as compared", examples=["A109"])
    matches_key: str = Field(description="the number it may be, as compared", examples=["A102"])
    decision: Literal["accepted", "rejected"]


class SheetMoved(_ProjectRecord):
    """What the register did for a correction or an accepted proposal: the sheet under
    ``from_key`` now stands under ``to_key``, its versions with it (after those ``to_key``
    held, when it held a sheet already)."""

    kind: Literal["moved"] = "moved"
    from_key: str = Field(examples=["A102"])
    to_key: str = Field(examples=["A109"])
    from_number: str = Field(description="as printed before", examples=["A-102"])
    to_number: str = Field(description="as printed now", examples=["A-109"])
    job_id: str = Field(description="the upload whose page the review was about")
    page_number: int = Field(ge=1)
    cause: Literal["correction", "proposal"]
    cause_record_id: str = Field(
        description="the correction (the job's review) or the decision (the project's)"
    )
    versions: int = Field(ge=1, description="versions the sheet has under to_key now")


ProjectRecord = Annotated[ProposalDecision | SheetMoved, Field(discriminator="kind")]


def sheet_values(
    records: list[SheetCorrection | ProblemReview],
) -> dict[int, dict[str, str | None]]:
    """Page → each field a person set, the latest value winning."""
    values: dict[int, dict[str, str | None]] = {}
    for record in records:
        if isinstance(record, SheetCorrection):
            values.setdefault(record.page_number, {}).update(record.after)
    return values


def decisions(
    records: list[SheetCorrection | ProblemReview],
) -> dict[tuple[int, int], ProblemReview]:
    """(page, problem number) → the latest decision on it."""
    latest: dict[tuple[int, int], ProblemReview] = {}
    for record in records:
        if isinstance(record, ProblemReview):
            latest[(record.page_number, record.problem)] = record
    return latest
