"""A job's review records in the bucket: ``jobs/{id}/review/{record}.json``, one object per
record, ordered by their ids (ingest writes them, the report service reads them); a
project's, ``projects/{project}/review/{record}.json``, likewise."""

import asyncio
import secrets
from datetime import datetime

from pydantic import TypeAdapter

from shared.contracts.interfaces import Bucket
from shared.contracts.review import (
    ProblemReview,
    ProjectRecord,
    ProposalDecision,
    ReviewRecord,
    SheetCorrection,
    SheetMoved,
)
from shared.infra.storage import Keys

# Reads a record of either kind.
RECORD: TypeAdapter[SheetCorrection | ProblemReview] = TypeAdapter(ReviewRecord)
PROJECT_RECORD: TypeAdapter[ProposalDecision | SheetMoved] = TypeAdapter(ProjectRecord)


def new_record_id(at: datetime) -> str:
    return f"{at:%Y%m%dT%H%M%S%f}-{secrets.token_hex(4)}"


async def save_record(bucket: Bucket, record: SheetCorrection | ProblemReview) -> None:
    await bucket.put_json(Keys.review(record.job_id, record.record_id), record)


async def review_records(bucket: Bucket, job_id: str) -> list[SheetCorrection | ProblemReview]:
    """Every review record of the job, oldest first."""
    keys = await bucket.list_keys(Keys.reviews(job_id))
    raw = await asyncio.gather(*(bucket.get_bytes(key) for key in keys))
    records = [RECORD.validate_json(data) for data in raw]
    return sorted(records, key=lambda r: r.record_id)


async def save_project_record(bucket: Bucket, record: ProposalDecision | SheetMoved) -> str:
    """Store a project's record (again: the same id is the same object); its key."""
    key = Keys.project_review(record.project, record.record_id)
    await bucket.put_json(key, record)
    return key


async def project_records(bucket: Bucket, project: str) -> list[ProposalDecision | SheetMoved]:
    """Every review record of the project, oldest first."""
    keys = await bucket.list_keys(Keys.project_reviews(project))
    raw = await asyncio.gather(*(bucket.get_bytes(key) for key in keys))
    return sorted((PROJECT_RECORD.validate_json(data) for data in raw), key=lambda r: r.record_id)
