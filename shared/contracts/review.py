"""A person's review of a job's report, as records of its own: a sheet identity corrected, a
reported problem dismissed or confirmed — each with who (the token's name), when, the value
before and after, and why. Ingest writes them (``jobs/{id}/review/{record}.json``, one object
per record, never touching what the pipeline stored); the report service rebuilds the report
from the pipeline's results plus these records (kept in the bucket by
``shared.infra.review_store``)."""

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
