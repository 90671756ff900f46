"""Turn an accepted PDF into a job: store the source, record the job, fan out its pages."""

import asyncio
import logging
import secrets
from pathlib import Path

from shared import subjects
from shared.broker import msg_id
from shared.jobs import JobRecord, JobStore, now
from shared.messages import ExtractPage, JobAccepted, JobOptions
from shared.service import ServiceContext
from shared.storage import Keys

log = logging.getLogger("sheetflow.ingest")

# Page messages are published this many at a time: enough to keep the 202 under a
# second for a 500-page set, few enough not to flood a small NATS server.
PUBLISH_BATCH = 64
# A refused upload's leftovers are removed in the background, each step given up after this.
CLEANUP_PATIENCE_S = 300.0
CLEANUP_STEP_S = 60.0

_rollbacks: set[asyncio.Task] = set()


class Unavailable(Exception):
    """NATS or S3 did not answer; the upload is rolled back."""


def new_job_id() -> str:
    return f"j_{secrets.token_hex(16)}"


async def _rollback(ctx: ServiceContext, job_id: str, stored: asyncio.Task) -> None:
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
                await ctx.store.delete_prefix(Keys.job(job_id))
            break
        except Exception:
            if asyncio.get_running_loop().time() + delay > deadline:
                log.warning("could not remove the stored source of refused job %s", job_id)
                break
            await asyncio.sleep(delay)
            delay = min(delay * 2, 30.0)
    try:
        async with asyncio.timeout(CLEANUP_STEP_S):
            await ctx.jobs.update_job(job_id, canceled=True, status="canceled")
    except Exception:
        log.warning("could not mark refused job %s canceled", job_id)


def _roll_back_later(ctx: ServiceContext, job_id: str, stored: asyncio.Task) -> None:
    task = asyncio.create_task(_rollback(ctx, job_id, stored))
    _rollbacks.add(task)  # the loop keeps only weak references to tasks
    task.add_done_callback(_rollbacks.discard)


async def accept_job(
    ctx: ServiceContext, source: Path, *, file_name: str, page_count: int, options: JobOptions
) -> JobRecord:
    job_id = new_job_id()
    job = JobRecord(
        job_id=job_id,
        file_name=file_name,
        page_count=page_count,
        source_key=Keys.source(job_id),
        options=options,
        status="running",
        created_at=now(),
    )
    stored = asyncio.create_task(ctx.store.put_file(job.source_key, str(source)))
    try:
        async with asyncio.timeout(ctx.settings.intake_timeout_s):
            await asyncio.shield(stored)
            await ctx.jobs.create_job(job)
            await _fan_out(ctx, job)
    except BaseException as exc:  # a cancelled request leaves the same leftovers
        _roll_back_later(ctx, job_id, stored)
        if isinstance(exc, Exception):
            raise Unavailable(f"{type(exc).__name__}: {exc}") from exc
        raise
    return job


async def _fan_out(ctx: ServiceContext, job: JobRecord) -> None:
    accepted = JobAccepted(
        job_id=job.job_id,
        file_name=job.file_name,
        page_count=job.page_count,
        source_key=job.source_key,
        options=job.options,
        created_at=job.created_at,
    )
    await ctx.publish(subjects.JOB_ACCEPTED, accepted, dedup_id=job.job_id)
    pages = range(1, job.page_count + 1)
    for start in range(0, job.page_count, PUBLISH_BATCH):
        await asyncio.gather(
            *(
                ctx.publish(
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
    counts = {
        stage: 0 for stage in ("queued", "extracted", "covered", "verified", "failed", "skipped")
    }
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
