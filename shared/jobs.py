"""Job and page state in a JetStream key-value bucket.

Keys (one writer per key family, so no two services race on a key):
``job.{id}`` the job record (ingest creates, report finishes, ingest cancels);
``page.{id}.{n}`` the furthest stage a page reached (every stage);
``ladder.{id}.{n}`` the coverage ladder of a page (coverage);
``terminal.{id}`` page → verified|failed (report, compare-and-set).
"""

import asyncio
import json
from datetime import UTC, datetime
from typing import Any, Literal

from nats.js.errors import KeyNotFoundError, KeyWrongLastSequenceError, NoKeysError
from nats.js.kv import KeyValue
from pydantic import BaseModel, Field

from shared.messages import JobOptions

JobStatus = Literal["accepted", "running", "complete", "partial", "canceled"]
PageStage = Literal["queued", "extracted", "covered", "verified", "failed", "skipped"]
# A page's stage only moves forward; "failed" and "verified" are terminal.
STAGE_RANK: dict[str, int] = {
    "queued": 0,
    "extracted": 1,
    "covered": 2,
    "verified": 3,
    "failed": 3,
    "skipped": 3,
}


def now() -> datetime:
    return datetime.now(UTC)


class JobRecord(BaseModel):
    job_id: str
    file_name: str
    page_count: int
    source_key: str
    options: JobOptions = JobOptions()
    status: JobStatus = "accepted"
    created_at: datetime
    finished_at: datetime | None = None
    report_key: str | None = None
    canceled: bool = False
    announced: bool = Field(False, description="report.ready was published")


class PageState(BaseModel):
    stage: PageStage
    updated_at: datetime


class JobStore:
    """Typed access to the job/page KV bucket."""

    def __init__(self, kv: KeyValue) -> None:
        self.kv = kv

    async def _get(self, key: str) -> tuple[Any, int] | None:
        try:
            entry = await self.kv.get(key)
        except (KeyNotFoundError, NoKeysError):
            return None
        if entry.value is None:
            return None
        if entry.revision is None:  # compare-and-set below relies on it; a get always has it
            raise RuntimeError(f"the job store answered {key} without its revision")
        return json.loads(entry.value), entry.revision

    async def _put(self, key: str, value: BaseModel | dict[str, Any]) -> None:
        data = value.model_dump_json() if isinstance(value, BaseModel) else json.dumps(value)
        await self.kv.put(key, data.encode())

    # jobs
    async def create_job(self, job: JobRecord) -> None:
        await self._put(f"job.{job.job_id}", job)

    async def get_job(self, job_id: str) -> JobRecord | None:
        found = await self._get(f"job.{job_id}")
        return JobRecord.model_validate(found[0]) if found else None

    async def update_job(self, job_id: str, **changes: Any) -> JobRecord | None:
        """Compare-and-set update of the job record; retried on a concurrent writer."""
        key = f"job.{job_id}"
        for _ in range(20):
            found = await self._get(key)
            if not found:
                return None
            job = JobRecord.model_validate(found[0]).model_copy(update=changes)
            try:
                await self.kv.update(key, job.model_dump_json().encode(), last=found[1])
                return job
            except KeyWrongLastSequenceError:
                await asyncio.sleep(0.01)
        raise RuntimeError(f"could not update job {job_id}: too much contention")

    async def is_canceled(self, job_id: str) -> bool:
        job = await self.get_job(job_id)
        return bool(job and job.canceled)

    # pages
    async def mark_page(self, job_id: str, page_number: int, stage: PageStage) -> None:
        """Record that a page reached ``stage``; never moves a page backwards, and a
        verified page is never marked failed by a late duplicate."""
        key = f"page.{job_id}.{page_number}"
        current = await self._get(key)
        if current and (
            STAGE_RANK[current[0]["stage"]] > STAGE_RANK[stage]
            or (current[0]["stage"] == "verified" and stage != "verified")
        ):
            return
        await self._put(key, PageState(stage=stage, updated_at=now()))

    async def page_states(self, job_id: str) -> dict[int, PageState]:
        watcher = await self.kv.watch(f"page.{job_id}.*")
        states: dict[int, PageState] = {}
        try:
            async for entry in watcher:
                if entry is None:
                    break
                if entry.value:
                    states[int(entry.key.rsplit(".", 1)[1])] = PageState.model_validate_json(
                        entry.value
                    )
        finally:
            await watcher.stop()
        return states

    # generic documents owned by one service (the coverage ladder)
    async def get_doc(self, key: str) -> dict[str, Any] | None:
        found = await self._get(key)
        return found[0] if found else None

    async def put_doc(self, key: str, value: BaseModel | dict[str, Any]) -> None:
        await self._put(key, value)

    # terminal pages (report service)
    async def add_terminal(
        self, job_id: str, page_number: int, outcome: Literal["verified", "failed"]
    ) -> dict[int, str]:
        """Record a terminal page; a verified outcome is never downgraded to failed."""
        key = f"terminal.{job_id}"
        for _ in range(50):
            found = await self._get(key)
            pages: dict[str, str] = found[0] if found else {}
            if pages.get(str(page_number)) == "verified" or pages.get(str(page_number)) == outcome:
                return {int(k): v for k, v in pages.items()}
            pages[str(page_number)] = outcome
            data = json.dumps(pages).encode()
            try:
                if found:
                    await self.kv.update(key, data, last=found[1])
                else:
                    await self.kv.create(key, data)
                return {int(k): v for k, v in pages.items()}
            except KeyWrongLastSequenceError:  # another report replica won the race: re-read
                await asyncio.sleep(0.01)
        raise RuntimeError(f"could not record terminal page {job_id}/{page_number}: contention")

    async def terminal_pages(self, job_id: str) -> dict[int, str]:
        found = await self._get(f"terminal.{job_id}")
        return {int(k): v for k, v in found[0].items()} if found else {}
