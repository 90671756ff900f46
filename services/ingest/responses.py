"""The API's answers as typed models: what OpenAPI (and so /docs) shows a client."""

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from shared.contracts.messages import JOB_ID_EXAMPLE
from shared.infra.jobs import JobRecord


class JobCreated(BaseModel):
    job_id: str = Field(examples=[JOB_ID_EXAMPLE])
    status_url: str = Field(examples=[f"http://127.0.0.1:8080/v1/jobs/{JOB_ID_EXAMPLE}"])
    report_url: str = Field(examples=[f"http://127.0.0.1:8080/v1/jobs/{JOB_ID_EXAMPLE}/report"])


class PageCounts(BaseModel):
    """Pages of the job by the furthest stage each has reached."""

    queued: int = 0
    extracted: int = 0
    covered: int = 0
    verified: int = 0
    failed: int = 0
    skipped: int = 0


class JobStatusBody(JobRecord):
    """The job record with its pages counted by stage, and whether it has stopped moving."""

    pages: PageCounts
    pages_terminal: int = Field(description="pages verified, failed or skipped")
    stalled: bool = Field(description="running, but no page has moved for a while")
    idle_seconds: float = Field(description="seconds since a page last moved")
    detail: str | None = Field(None, description="what to do about a stalled job")


class JobCanceling(BaseModel):
    job_id: str = Field(examples=[JOB_ID_EXAMPLE])
    status: Literal["canceling"] = "canceling"
    canceled: bool = Field(description="the job record now says canceled")


class SignedLink(BaseModel):
    """A link that opens without a token until it expires."""

    url: str = Field(
        examples=[
            (
                f"https://sheets.example.com/v1/jobs/{JOB_ID_EXAMPLE}/set.pdf?expires=1780045200"
                "&by=dana&signature=9e107d9d372bb6826bd81d3542a419d6"
            )
        ]
    )
    expires_at: datetime
