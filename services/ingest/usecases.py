"""Ingest's use cases: turn an accepted PDF into a job (store the source, record the job,
fan out its pages), and tell a job's progress."""

import asyncio
import logging
import secrets
from dataclasses import dataclass
from pathlib import Path

from shared import subjects
from shared.broker import msg_id
from shared.interfaces import Bucket, Publisher
from shared.jobs import JobRecord, JobStore, now
from shared.messages import ExtractPage, JobAccepted, JobOptions
from shared.models import IntakeReport
from shared.settings import Settings
from shared.storage import Keys

log = logging.getLogger("sheetflow.ingest")

# Page messages are published this many at a time: enough to keep the 202 under a
# second for a 500-page set, few enough not to flood a small NATS server.
PUBLISH_BATCH = 64
# A refused upload's leftovers are removed in the background, each step given up after this.
CLEANUP_PATIENCE_S = 300.0
CLEANUP_STEP_S = 60.0

_rollbacks: set[asyncio.Task] = set()


@dataclass(frozen=True)
class Collaborators:
    """What ingest's use cases work with: the real stores and publisher in the service,
    in-memory fakes in unit tests."""

    bucket: Bucket
    jobs: JobStore
    publisher: Publisher
    settings: Settings


class Unavailable(Exception):
    """NATS or S3 did not answer; the upload is rolled back."""


def new_job_id() -> str:
    return f"j_{secrets.token_hex(16)}"


async def _rollback(io: Collaborators, job_id: str, stored: asyncio.Task) -> None:
    """Remove what a refused upload left, in the background: the client has its 503 already.

    A stalled S3 may still complete the source's upload after the client was answered, so
    the upload is waited for (never cancelled: its thread would write on regardless) before
    the job's keys are deleted; every step gives up after ``CLEANUP_PATIENCE_S``."""
    await asyncio.wait([stored], timeout=CLEANUP_PATIENCE_S)
    if stored.done() and not stored.cancelled():
        stored.exception()  # its failure is why we are here: retrieved, not logged again
    deadline = asyncio.get_running_loop().time() + CLEANUP_PATIENCE_S
    delay = 1.0
    while True:
        try:
            async with asyncio.timeout(CLEANUP_STEP_S):
                await io.bucket.delete_prefix(Keys.job(job_id))
            break
        except Exception:
            if asyncio.get_running_loop().time() + delay > deadline:
                log.warning("could not remove the stored source of refused job %s", job_id)
                break
            await asyncio.sleep(delay)
            delay = min(delay * 2, 30.0)
    try:
        async with asyncio.timeout(CLEANUP_STEP_S):
            await io.jobs.update_job(job_id, canceled=True, status="canceled")
    except Exception:
        log.warning("could not mark refused job %s canceled", job_id)


def _roll_back_later(io: Collaborators, job_id: str, stored: asyncio.Task) -> None:
    task = asyncio.create_task(_rollback(io, job_id, stored))
    _rollbacks.add(task)  # the loop keeps only weak references to tasks
    task.add_done_callback(_rollbacks.discard)


async def _store_upload(
    io: Collaborators, job: JobRecord, source: Path, original: Path | None
) -> None:
    """The job's source, and the upload as received when the job keeps it."""
    await io.bucket.put_file(job.source_key, str(source))
    if job.intake.original_key and original:
        await io.bucket.put_file(job.intake.original_key, str(original))


async def accept_job(
    io: Collaborators,
    source: Path,
    *,
    file_name: str,
    page_count: int,
    options: JobOptions,
    intake: IntakeReport | None = None,
    original: Path | None = None,
) -> JobRecord:
    """Store ``source`` and record the job; ``original`` (the upload as received) is kept
    too when active content was stripped from it."""
    job_id = new_job_id()
    intake = intake or IntakeReport()
    if original and intake.removed:
        intake = intake.model_copy(update={"original_key": Keys.original(job_id)})
    job = JobRecord(
        job_id=job_id,
        file_name=file_name,
        page_count=page_count,
        source_key=Keys.source(job_id),
        options=options,
        intake=intake,
        status="running",
        created_at=now(),
    )
    stored = asyncio.create_task(_store_upload(io, job, source, original))
    try:
        async with asyncio.timeout(io.settings.intake_timeout_s):
            await asyncio.shield(stored)
            await io.jobs.create_job(job)
            await _fan_out(io, job)
    except BaseException as exc:  # a cancelled request leaves the same leftovers
        _roll_back_later(io, job_id, stored)
        if isinstance(exc, Exception):
            raise Unavailable(f"{type(exc).__name__}: {exc}") from exc
        raise
    return job


async def _fan_out(io: Collaborators, job: JobRecord) -> None:
    accepted = JobAccepted(
        job_id=job.job_id,
        file_name=job.file_name,
        page_count=job.page_count,
        source_key=job.source_key,
        options=job.options,
        intake=job.intake,
        created_at=job.created_at,
    )
    await io.publisher.publish(subjects.JOB_ACCEPTED, accepted, dedup_id=job.job_id)
    pages = range(1, job.page_count + 1)
    for start in range(0, job.page_count, PUBLISH_BATCH):
        await asyncio.gather(
            *(
                io.publisher.publish(
                    subjects.PAGE_EXTRACT,
                    ExtractPage(
                        job_id=job.job_id,
                        page_number=n,
                        source_key=job.source_key,
                        options=job.options,
                    ),
                    dedup_id=msg_id(job.job_id, n),
                )
                for n in pages[start : start + PUBLISH_BATCH]
            )
        )


async def job_status(jobs: JobStore, job: JobRecord, stall_after_s: float) -> dict:
    """The job record with per-stage page counts, and whether it has stopped moving."""
    states = await jobs.page_states(job.job_id)
    counts = dict.fromkeys(("queued", "extracted", "covered", "verified", "failed", "skipped"), 0)
    for state in states.values():
        counts[state.stage] += 1
    counts["queued"] += job.page_count - len(states)
    terminal = counts["verified"] + counts["failed"] + counts["skipped"]
    last_change = max((s.updated_at for s in states.values()), default=job.created_at)
    idle_s = (now() - last_change).total_seconds()
    stalled = job.status in ("running", "accepted") and idle_s > stall_after_s
    body = job.model_dump(mode="json")
    body.update(
        pages=counts,
        pages_terminal=terminal,
        stalled=stalled,
        idle_seconds=round(idle_s, 1),
    )
    if stalled:
        body["detail"] = (
            f"No page has moved for {idle_s:.0f}s: no worker may be running for a stage "
            "(start one with `sheetflow worker <stage>`)."
        )
    return body
