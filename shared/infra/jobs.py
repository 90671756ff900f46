"""Job and page state in a JetStream key-value bucket.

Keys (one writer per key family, so no two services race on a key):
``job.{id}`` the job record (ingest creates, report finishes, ingest cancels);
``page.{id}.{n}`` the furthest stage a page reached (every stage);
``ladder.{id}.{n}`` the coverage ladder of a page (coverage, ``services.coverage.store``);
``terminal.{id}`` page → verified|failed (report, ``services.report.store``);
``intake.{id}`` an intake under way: from just before the job's source is stored until every
page is announced (ingest writes and clears it; report's supervision clears one abandoned).
"""

import asyncio
import json
import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Literal, TypeVar

from nats.aio.client import Client as NatsClient
from nats.errors import TimeoutError as NatsTimeoutError
from nats.js.errors import KeyNotFoundError, KeyWrongLastSequenceError, NoKeysError
from nats.js.kv import KeyValue
from pydantic import BaseModel, Field

from shared.contracts import subjects
from shared.contracts.interfaces import Document, Publisher, StateStore
from shared.contracts.messages import JobOptions, JobProgress
from shared.contracts.models import IntakeReport
from shared.infra.broker import msg_id

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


# Compare-and-set attempts before a writer gives up on a key others keep changing.
CAS_ATTEMPTS = 50
# A key the job store takes, whole: a key becomes part of a NATS subject (a direct get's), so
# a line break in one would end the protocol line (nats-py's own check lets a trailing one by).
KEY_RE = re.compile(r"[-/_=.a-zA-Z0-9]+")
# Values a scan asks the server for in one direct-get batch, and how long it waits for each.
SCAN_BATCH = 1000
SCAN_REPLY_WAIT_S = 5.0
D = TypeVar("D", bound=Document)


def now() -> datetime:
    return datetime.now(UTC)


class JobRecord(BaseModel):
    job_id: str
    file_name: str
    page_count: int
    source_key: str
    options: JobOptions = JobOptions()
    intake: IntakeReport = IntakeReport()
    status: JobStatus = "accepted"
    created_at: datetime
    finished_at: datetime | None = None
    report_key: str | None = None
    canceled: bool = False
    announced: bool = Field(False, description="report.ready was published")
    submitted_by: str | None = Field(None, description="the name of the token that uploaded it")
    report_revision: int = Field(0, description="the revision of the report stored (0: none)")
    announced_revision: int = Field(0, description="the report revision report.ready announced")


class IntakeMarker(BaseModel):
    """An intake under way: ``intake.{id}``, cleared once every page is announced."""

    job_id: str
    started_at: datetime


class PageState(BaseModel):
    stage: PageStage
    updated_at: datetime


class PageWork(BaseModel):
    """A page a worker is working on: the stage, and when the worker last said so."""

    stage: str
    updated_at: datetime


class ScanError(RuntimeError):
    """The job store did not answer a scan as it should (or a server older than NATS 2.11,
    which has no batched direct gets)."""


class KvStateStore:
    """The state store on a JetStream key-value bucket (made with direct gets allowed).

    Nothing here creates a consumer: single keys are read by direct get, and a scan by
    batched direct gets (NATS 2.11+), request and reply on the connection's own inbox. A
    ``kv.watch`` per read would leave a consumer on the server for minutes after it stopped,
    and JetStream refuses new consumers past its limit."""

    def __init__(self, kv: KeyValue, connection: NatsClient, bucket: str) -> None:
        self.kv = kv
        self.connection = connection
        self.prefix = f"$KV.{bucket}."
        self.direct_get = f"$JS.API.DIRECT.GET.KV_{bucket}"

    async def get(self, key: str) -> tuple[Any, int] | None:
        if not _valid_key(key):
            return None  # no such key can be stored
        try:
            entry = await self.kv.get(key)
        except (KeyNotFoundError, NoKeysError):
            return None
        if entry.value is None:
            return None
        if entry.revision is None:  # compare-and-set relies on it; a get always has it
            raise RuntimeError(f"the job store answered {key} without its revision")
        return json.loads(entry.value), entry.revision

    async def put(self, key: str, value: Document) -> None:
        await self.kv.put(_checked(key), _encode(value))

    async def put_if(self, key: str, value: Document, *, revision: int | None) -> bool:
        key = _checked(key)
        try:
            if revision is None:
                await self.kv.create(key, _encode(value))
            else:
                await self.kv.update(key, _encode(value), last=revision)
        except KeyWrongLastSequenceError:
            return False
        return True

    async def scan(self, prefix: str) -> dict[str, Any]:
        """Every value under ``prefix``, read in batches of the bucket's stream from its first
        message on, the last value of each key winning (removed keys left out)."""
        if not KEY_RE.fullmatch(prefix):
            return {}
        inbox = self.connection.new_inbox()
        sub = await self.connection.subscribe(inbox)
        found: dict[str, Any] = {}
        seq = 1
        try:
            while True:
                ask = {"seq": seq, "next_by_subj": f"{self.prefix}{prefix}>", "batch": SCAN_BATCH}
                request = json.dumps(ask).encode()
                await self.connection.publish(self.direct_get, request, reply=inbox)
                pending = await _read_batch(sub, self.prefix, found)
                if pending is None:
                    return found
                seq = pending
        finally:
            await sub.unsubscribe()

    async def delete(self, key: str) -> None:
        await self.kv.delete(_checked(key))


def _valid_key(key: str) -> bool:
    return bool(KEY_RE.fullmatch(key)) and not key.startswith(".") and not key.endswith(".")


def _checked(key: str) -> str:
    if not _valid_key(key):
        raise ValueError(f"not a job store key: {key!r}")
    return key


async def _read_batch(sub: Any, bucket_pre: str, found: dict[str, Any]) -> int | None:
    """Read one batch's replies into ``found``; the sequence to ask from next when values
    remain past the batch, else None."""
    while True:
        try:
            msg = await sub.next_msg(timeout=SCAN_REPLY_WAIT_S)
        except NatsTimeoutError as exc:
            raise ScanError("the job store did not answer a scan in time") from exc
        headers = msg.headers or {}
        status = headers.get("Status")
        if status == "404":  # nothing under the prefix
            return None
        if status == "204":  # the end of this batch
            if int(headers.get("Nats-Num-Pending", "0")) == 0:
                return None
            return int(headers["Nats-Last-Sequence"]) + 1
        if status or "Nats-Num-Pending" not in headers:
            raise ScanError(
                f"the job store refused a batched read ({status or 'not supported'} "
                f"{headers.get('Description', '')}); it needs NATS 2.11 or later"
            )
        key = headers["Nats-Subject"][len(bucket_pre) :]
        if headers.get("KV-Operation") in ("DEL", "PURGE") or not msg.data:
            found.pop(key, None)
        else:
            found[key] = json.loads(msg.data)


def _encode(value: Document) -> bytes:
    if isinstance(value, BaseModel):
        return value.model_dump_json().encode()
    return json.dumps(value).encode()


async def compare_and_set(
    state: StateStore, key: str, change: Callable[[Any], D | None], *, what: str
) -> D | None:
    """Write ``change(current)`` at ``key`` (``current`` is None when the key holds nothing)
    unless another writer changed the key meanwhile; then try again on what that writer
    left. ``change`` returns ``current`` itself, or None, to leave the key as it is. Returns
    what the key holds now, as ``change`` last gave it."""
    for _ in range(CAS_ATTEMPTS):
        found = await state.get(key)
        current = found[0] if found else None
        value = change(current)
        if value is None or value is current:
            return value
        if await state.put_if(key, value, revision=found[1] if found else None):
            return value
        await asyncio.sleep(0.01)  # another writer won the race: read what it wrote
    raise RuntimeError(f"could not update {what}: too much contention")


class JobStore:
    """The job records and page stages every stage reads and writes."""

    def __init__(self, state: StateStore) -> None:
        self.state = state

    # jobs
    async def create_job(self, job: JobRecord) -> None:
        await self.state.put(f"job.{job.job_id}", job)

    async def get_job(self, job_id: str) -> JobRecord | None:
        found = await self.state.get(f"job.{job_id}")
        return JobRecord.model_validate(found[0]) if found else None

    async def update_job(self, job_id: str, **changes: Any) -> JobRecord | None:
        """Compare-and-set update of the job record; None when there is no such job."""

        def change(current: Any) -> JobRecord | None:
            if current is None:
                return None
            return JobRecord.model_validate(current).model_copy(update=changes)

        return await compare_and_set(self.state, f"job.{job_id}", change, what=f"job {job_id}")

    async def delete_job(self, job_id: str) -> None:
        await self.state.delete(f"job.{job_id}")

    async def is_canceled(self, job_id: str) -> bool:
        """Canceled, or gone: the record of an upload refused after its pages were queued is
        removed, and its pages are not worked on."""
        job = await self.get_job(job_id)
        return job is None or job.canceled

    # intakes under way
    async def intake_started(self, job_id: str) -> None:
        await self.state.put(f"intake.{job_id}", IntakeMarker(job_id=job_id, started_at=now()))

    async def intake_finished(self, job_id: str) -> None:
        await self.state.delete(f"intake.{job_id}")

    async def intakes(self) -> list[IntakeMarker]:
        """Every intake under way, or abandoned by an ingest that stopped mid-way."""
        found = await self.state.scan("intake.")
        return [IntakeMarker.model_validate(doc) for doc in found.values()]

    # pages
    async def mark_page(self, job_id: str, page_number: int, stage: PageStage) -> None:
        """Record that a page reached ``stage``; never moves a page backwards, and a
        verified page is never marked failed by a late duplicate."""
        key = f"page.{job_id}.{page_number}"
        current = await self.state.get(key)
        if current and (
            STAGE_RANK[current[0]["stage"]] > STAGE_RANK[stage]
            or (current[0]["stage"] == "verified" and stage != "verified")
        ):
            return
        await self.state.put(key, PageState(stage=stage, updated_at=now()))

    async def mark_working(self, job_id: str, page_number: int, stage: str) -> None:
        """Record that a worker is still working on a page in ``stage`` (its heartbeat, sent
        with the message's in-progress acks): a long page is moving, not stalled."""
        work = PageWork(stage=stage, updated_at=now())
        await self.state.put(f"work.{job_id}.{page_number}", work)

    async def page_work(self, job_id: str) -> dict[int, PageWork]:
        """The last heartbeat of each page a worker has been working on."""
        found = await self.state.scan(f"work.{job_id}.")
        return {int(k.rsplit(".", 1)[1]): PageWork.model_validate(v) for k, v in found.items()}

    async def page_stage(self, job_id: str, page_number: int) -> PageStage | None:
        """The furthest stage the page reached, or None when nothing recorded it yet."""
        found = await self.state.get(f"page.{job_id}.{page_number}")
        return PageState.model_validate(found[0]).stage if found else None

    async def page_states(self, job_id: str) -> dict[int, PageState]:
        found = await self.state.scan(f"page.{job_id}.")
        return {
            int(key.rsplit(".", 1)[1]): PageState.model_validate(doc) for key, doc in found.items()
        }


async def record_progress(
    jobs: JobStore, publisher: Publisher, job_id: str, page_number: int, stage: PageStage
) -> None:
    """Record a page's progress in the job store, then announce it for live progress (in
    that order: whoever sees a stage's event also sees the page's progress)."""
    await jobs.mark_page(job_id, page_number, stage)
    progress = JobProgress(job_id=job_id, page_number=page_number, stage=stage)
    await publisher.publish(
        subjects.JOB_PROGRESS, progress, dedup_id=msg_id(job_id, page_number, stage)
    )
