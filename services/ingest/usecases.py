"""Ingest's use cases, one per route: turn an upload into a job (inspect it, store the source,
record the job, fan out its pages), tell a job's progress, cancel it, hand out its report and
page images, and say whether the servers answer. What they refuse is a ``Refusal``."""

import asyncio
import logging
import re
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from nats.errors import TimeoutError as NatsTimeoutError
from pydantic import ValidationError

from services.ingest.refusals import Refusal, RefusalKind, disk_full, not_found, unavailable
from services.ingest.responses import JobCanceling, JobStatusBody
from services.ingest.roles import Caller
from services.ingest.sheetlog import SheetLog, SheetOrder, sheet_log
from services.ingest.source import PreparedSource
from services.ingest.upload import ReceivedUpload
from services.ingest.validation import AcceptedPdf, safe_file_name
from shared.contracts import subjects
from shared.contracts.interfaces import Bucket, ObjectMissing, Publisher
from shared.contracts.links import job_links
from shared.contracts.messages import ExtractPage, JobAccepted, JobOptions
from shared.contracts.models import IntakeReport
from shared.contracts.report import Report
from shared.infra.broker import msg_id
from shared.infra.full_disk import is_disk_full
from shared.infra.jobs import JobRecord, JobStore, now
from shared.infra.settings import Settings
from shared.infra.storage import Keys

log = logging.getLogger("sheetflow.ingest")
T = TypeVar("T")

# Page messages are published this many at a time: enough to keep the 202 under a
# second for a 500-page set, few enough not to flood a small NATS server.
PUBLISH_BATCH = 64
# A refused upload's leftovers are removed in the background, each step given up after this.
CLEANUP_PATIENCE_S = 300.0
CLEANUP_STEP_S = 60.0
# How long a route waits on the job store (NATS) before it answers 503.
JOB_READ_TIMEOUT_S = 3.0
STATUS_READ_TIMEOUT_S = 4.0
# Readiness: each server's round trip is given this long, and its answer kept this long.
READY_TIMEOUT_S = 2.0
READY_CACHE_S = 1.0
JOB_ID_RE = re.compile(r"j_[0-9a-f]{32}")


class Inspector(Protocol):
    """Checks an upload and prepares its source (``services.ingest.inspection.Inspectors``)."""

    async def inspect(self, path: Path) -> tuple[AcceptedPdf, PreparedSource]: ...


class PdfWork(Protocol):
    """Runs a function of ``services.ingest.setpdf`` (``services.ingest.downloads``): it
    opens PDFs, and MuPDF holds the GIL while it works."""

    async def run(self, fn: Callable[..., T], *args: Any) -> T: ...


class Servers(Protocol):
    """Whether NATS and S3 answer a round trip in time (``shared.infra.service.Connections``)."""

    async def nats_answers(self, timeout_s: float) -> bool: ...

    async def s3_answers(self, timeout_s: float) -> bool: ...

    async def nats_writes(self, timeout_s: float) -> bool: ...

    async def s3_writes(self, timeout_s: float) -> bool: ...


@dataclass
class LastCheck:
    """The servers' last answers to readiness, kept for ``READY_CACHE_S`` so a burst of probes
    costs one round trip to each; the lock makes concurrent probes share it."""

    nats: bool = False
    s3: bool = False
    nats_writes: bool = False
    s3_writes: bool = False
    at: float = float("-inf")
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


@dataclass(frozen=True)
class Collaborators:
    """What ingest's use cases work with (built by ``services.ingest.bootstrap``): the real
    stores, publisher and inspectors in the service, in-memory fakes in unit tests.
    ``rollbacks`` holds the background clean-ups of refused uploads (the loop keeps only weak
    references to tasks); ``worker_id`` names this process in its readiness."""

    bucket: Bucket
    jobs: JobStore
    publisher: Publisher
    settings: Settings
    inspector: Inspector
    servers: Servers
    worker_id: str
    pdf_work: PdfWork
    rollbacks: set[asyncio.Task] = field(default_factory=set)
    last_check: LastCheck = field(default_factory=LastCheck)


@dataclass(frozen=True)
class Readiness:
    nats: bool  # answers a round trip
    s3: bool
    instance: str
    nats_writes: bool = True  # stores a write (a full disk leaves a server answering)
    s3_writes: bool = True

    @property
    def ready(self) -> bool:
        return self.nats and self.s3 and self.nats_writes and self.s3_writes

    @property
    def detail(self) -> str:
        """What is wrong, store by store, in a sentence."""
        said = [
            "NATS does not answer" if not self.nats else "",
            "S3 does not answer" if not self.s3 else "",
            "NATS JetStream answers but stores nothing (is its disk full?)"
            if self.nats and not self.nats_writes
            else "",
            "S3 answers but stores nothing (is its disk full?)"
            if self.s3 and not self.s3_writes
            else "",
        ]
        return "; ".join(s for s in said if s) + "."


def new_job_id() -> str:
    return f"j_{secrets.token_hex(16)}"


async def _rollback(io: Collaborators, job_id: str, stored: asyncio.Task | None) -> None:
    """Remove what a refused upload left, in the background: the client has its 503 already.

    The job's record goes first (a page already queued is then skipped, not worked on, and
    nothing of it is written), then its stored keys, and last its intake marker, so that
    report's supervision finishes the removal if this process stops half-way. A stalled S3 may still
    complete the source's upload after the client was answered, so the upload is waited for
    (never cancelled: its thread would write on regardless); every step gives up after
    ``CLEANUP_PATIENCE_S``."""
    if stored is not None:
        await asyncio.wait([stored], timeout=CLEANUP_PATIENCE_S)
    if stored is not None and stored.done() and not stored.cancelled():
        stored.exception()  # its failure is why we are here: retrieved, not logged again
    deadline = asyncio.get_running_loop().time() + CLEANUP_PATIENCE_S
    steps = (
        ("remove the record of", lambda: io.jobs.delete_job(job_id)),
        ("remove the stored source of", lambda: io.bucket.delete_prefix(Keys.job(job_id))),
        ("clear the intake of", lambda: io.jobs.intake_finished(job_id)),
    )
    for what, step in steps:
        if not await _patiently(step, deadline):
            log.warning("could not %s refused job %s; report's supervision will", what, job_id)
            return


async def _patiently(step: Callable[[], Awaitable[object]], deadline: float) -> bool:
    """Run ``step`` until it succeeds, backing off, each try bounded; False past ``deadline``."""
    loop = asyncio.get_running_loop()
    delay = 1.0
    while True:
        try:
            async with asyncio.timeout(CLEANUP_STEP_S):
                await step()
            return True
        except Exception:
            if loop.time() + delay > deadline:
                return False
            await asyncio.sleep(delay)
            delay = min(delay * 2, 30.0)


def _roll_back_later(io: Collaborators, job_id: str, stored: asyncio.Task | None) -> None:
    task = asyncio.create_task(_rollback(io, job_id, stored))
    io.rollbacks.add(task)
    task.add_done_callback(io.rollbacks.discard)


async def _store_upload(
    io: Collaborators, job: JobRecord, source: Path, original: Path | None
) -> None:
    """The job's source, and the upload as received when the job keeps it."""
    await io.bucket.put_file(job.source_key, str(source))
    if job.intake.original_key and original:
        await io.bucket.put_file(job.intake.original_key, str(original))


async def accept_upload(
    io: Collaborators,
    upload: ReceivedUpload,
    *,
    submitted_by: str | None = None,
    project: str | None = None,
) -> JobRecord:
    """The job for a received upload: its options read, the file inspected and its source
    (active content stripped) stored, the job recorded and its pages announced. ``project``
    (the route's) joins the job to that project, as ``options.project`` does."""
    options = job_options(upload.options, project)
    accepted, source = await io.inspector.inspect(upload.path)
    return await accept_job(
        io,
        source.path,
        file_name=safe_file_name(upload.file_name),
        page_count=accepted.page_count,
        options=options,
        intake=source.intake,
        original=upload.path if io.settings.keep_original_upload else None,
        submitted_by=submitted_by,
    )


def job_options(given: bytes | None, project: str | None) -> JobOptions:
    """The upload's ``options`` field read, with the route's project."""
    try:
        options = JobOptions.model_validate_json(given) if given else JobOptions()
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"])
        raise Refusal(
            RefusalKind.INVALID,
            "bad_options",
            f"The 'options' field is not valid: {f'{where}: ' if where else ''}{error['msg']}.",
        ) from exc
    if project is None or options.project == project:
        return options
    if options.project is not None:
        raise Refusal(
            RefusalKind.INVALID,
            "project_mismatch",
            f"The route names project {project!r} and options.project {options.project!r}.",
        )
    return options.model_copy(update={"project": project})


async def accept_job(
    io: Collaborators,
    source: Path,
    *,
    file_name: str,
    page_count: int,
    options: JobOptions,
    intake: IntakeReport | None = None,
    original: Path | None = None,
    submitted_by: str | None = None,
) -> JobRecord:
    """Store ``source`` and record the job; ``original`` (the upload as received) is kept
    too when active content was stripped from it. When NATS or S3 does not answer, what was
    stored is removed in the background and the refusal says nothing was kept."""
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
        submitted_by=submitted_by,
    )
    stored: asyncio.Task | None = None
    try:
        async with asyncio.timeout(io.settings.intake_timeout_s):
            # Marked under way before anything is kept: should this process stop before every
            # page is announced, report's supervision finishes the job as failed.
            await io.jobs.intake_started(job_id)
            stored = asyncio.create_task(_store_upload(io, job, source, original))
            await asyncio.shield(stored)
            await io.jobs.create_job(job)
            await _fan_out(io, job)
            await io.jobs.intake_finished(job_id)
    except BaseException as exc:  # a cancelled request leaves the same leftovers
        _roll_back_later(io, job_id, stored)
        full = await _full_store(io, exc) if isinstance(exc, Exception) else None
        if full:
            log.warning("upload not accepted, a disk is full: %s: %s", type(exc).__name__, exc)
            raise disk_full(full) from exc
        if isinstance(exc, Exception):
            # The client gets the outcome; the log keeps the cause for whoever runs the stack.
            log.warning(
                "upload not accepted, NATS or S3 unavailable: %s: %s", type(exc).__name__, exc
            )
            raise unavailable(
                "NATS or S3 is not reachable; nothing was kept. Retry shortly."
            ) from exc
        raise
    return job


async def _full_store(io: Collaborators, exc: Exception) -> str | None:
    """Which disk ``exc`` says is full, or the store that answers but stores nothing (JetStream
    on a full disk only times out); None when neither."""
    if is_disk_full(exc):
        return "that holds sheetflow's data (S3 or NATS JetStream)"
    if not isinstance(exc, NatsTimeoutError):
        return None  # only JetStream keeps a full disk to itself (a write times out)
    found = await readiness(io)
    if found.nats and not found.nats_writes:
        return "that holds NATS JetStream's store (it answers but stores nothing)"
    if found.s3 and not found.s3_writes:
        return "that holds S3's store (it answers but stores nothing)"
    return None


async def _fan_out(io: Collaborators, job: JobRecord) -> None:
    accepted = JobAccepted(
        job_id=job.job_id,
        file_name=job.file_name,
        page_count=job.page_count,
        source_key=job.source_key,
        options=job.options,
        intake=job.intake,
        created_at=job.created_at,
        links=job_links(io.settings.public_url, job.job_id),
    )
    await io.publisher.publish(subjects.JOB_ACCEPTED, accepted, dedup_id=job.job_id)
    # Fair turns: only the job's first window of pages is queued; each page extract starts
    # queues the one a window further (services.extract.usecases.queue_next_page), so a
    # job's pages never wait in front of another job's by more than a window.
    window = io.settings.job_window_pages
    pages = range(1, min(window, job.page_count) + 1)
    for start in range(0, len(pages), PUBLISH_BATCH):
        await asyncio.gather(
            *(
                io.publisher.publish(
                    subjects.PAGE_EXTRACT,
                    ExtractPage(
                        job_id=job.job_id,
                        page_number=n,
                        source_key=job.source_key,
                        options=job.options,
                        window=window,
                        page_count=job.page_count,
                    ),
                    dedup_id=msg_id(job.job_id, n),
                )
                for n in pages[start : start + PUBLISH_BATCH]
            )
        )


async def find_job(io: Collaborators, job_id: str) -> JobRecord:
    """The job record, or a refusal: no such job, or the job store does not answer."""
    if not JOB_ID_RE.fullmatch(job_id):
        raise not_found("No job has that id.")
    try:
        job = await asyncio.wait_for(io.jobs.get_job(job_id), timeout=JOB_READ_TIMEOUT_S)
    except Exception as exc:
        raise unavailable("The job store (NATS) is not reachable; retry shortly.") from exc
    if not job:
        raise not_found("No job has that id.")
    return job


async def job_status(io: Collaborators, job_id: str) -> JobStatusBody:
    """The job record with per-stage page counts, and whether it has stopped moving.

    One read, consistent with itself: the record is read before the pages, and a page's
    stage never moves back, so a record that says finished comes with every page terminal.
    A page scan that fails is a refusal, never counts made of what it did not read."""
    job = await find_job(io, job_id)
    try:
        async with asyncio.timeout(STATUS_READ_TIMEOUT_S):
            states = await io.jobs.page_states(job.job_id)
            work = await io.jobs.page_work(job.job_id)
    except Exception as exc:
        log.warning("job status not read: %s: %s", type(exc).__name__, exc)
        raise unavailable("The job store (NATS) did not answer in time.") from exc
    counts = dict.fromkeys(("queued", "extracted", "covered", "verified", "failed", "skipped"), 0)
    for state in states.values():
        counts[state.stage] += 1
    counts["queued"] += job.page_count - len(states)
    terminal = counts["verified"] + counts["failed"] + counts["skipped"]
    # A page a worker is still working on (its heartbeat) is moving, however long it takes.
    changes = [s.updated_at for s in states.values()] + [w.updated_at for w in work.values()]
    last_change = max(changes, default=job.created_at)
    idle_s = (now() - last_change).total_seconds()
    stalled = job.status in ("running", "accepted") and idle_s > io.settings.stall_after_s
    body = job.model_dump(mode="json")
    body.update(
        pages=counts,
        pages_terminal=terminal,
        stalled=stalled,
        idle_seconds=round(idle_s, 1),
    )
    if stalled:
        body["detail"] = stall_detail(counts, idle_s)
    return JobStatusBody.model_validate(body)


# The stage that takes a page on from where it waits.
NEXT_STAGE = {"queued": "extract", "extracted": "coverage", "covered": "verify"}


def stall_detail(counts: dict[str, int], idle_s: float) -> str:
    """Why a job stands still: no page moved and no worker worked on one for ``idle_s``; the
    stage its earliest waiting pages need has no worker, or the report is not being made."""
    waiting = next(((n, state) for state in NEXT_STAGE if (n := counts[state])), None)
    if waiting is None:
        stage, what = "report", "every page is done but the report is not made"
    else:
        n, state = waiting
        stage = NEXT_STAGE[state]
        what = f"{n} page{'s' if n != 1 else ''} {state}, waiting for {stage}"
    return (
        f"No page has moved or been worked on for {idle_s:.0f}s ({what}): no {stage} worker "
        f"seems to be running (start one with `sheetflow worker {stage}`)."
    )


async def cancel_job(io: Collaborators, job_id: str, caller: Caller) -> JobCanceling:
    """Cancel a job: pages not yet extracted are skipped and the job ends ``canceled``. Only
    an admin cancels a job another token submitted."""
    job = await find_job(io, job_id)
    if job.submitted_by != caller.name and not caller.may("admin"):
        raise Refusal(
            RefusalKind.FORBIDDEN,
            "forbidden",
            "Only an admin token cancels a job another token submitted.",
        )
    if job.status in ("complete", "partial") or job.finished_at:
        raise Refusal(
            RefusalKind.CONFLICT, "already_finished", f"The job already finished ({job.status})."
        )
    updated = await io.jobs.update_job(job_id, canceled=True)
    return JobCanceling(job_id=job_id, canceled=bool(updated and updated.canceled))


async def report(io: Collaborators, job_id: str, ext: str) -> bytes:
    """The job's stored report (``json`` or ``html``), once the job has finished."""
    job = await find_job(io, job_id)
    if job.status not in ("complete", "partial", "canceled") or not job.finished_at:
        raise not_found(f"The report is not ready yet (job is {job.status}).", "report_not_ready")
    try:
        return await io.bucket.get_bytes(Keys.report(job.job_id, ext))
    except ObjectMissing as exc:
        raise not_found("The report is not ready yet.", "report_not_ready") from exc
    except Exception as exc:
        raise unavailable("S3 is not reachable; retry shortly.") from exc


async def sheets(io: Collaborators, job_id: str, order: SheetOrder = "page") -> SheetLog:
    """The finished job's sheet log: one row per page of its report, in page order or by
    review priority."""
    return sheet_log(Report.model_validate_json(await report(io, job_id, "json")), order)


async def page_image(io: Collaborators, job_id: str, page_number: int) -> bytes:
    """A page's rendered image, once extract has stored it."""
    job = await find_job(io, job_id)
    if not 1 <= page_number <= job.page_count:
        raise not_found(f"The job has pages 1 to {job.page_count}.")
    try:
        return await io.bucket.get_bytes(Keys.image(job_id, page_number))
    except ObjectMissing as exc:
        raise not_found("That page has not been rendered yet.") from exc


async def readiness(io: Collaborators) -> Readiness:
    """Whether NATS and S3 answer a round trip, and each stores a small write, within
    ``READY_TIMEOUT_S``, asked at most once
    per ``READY_CACHE_S``, naming this process (a launcher tells its own ingest from another
    one on the same port by it)."""
    check = io.last_check
    async with check.lock:
        loop = asyncio.get_running_loop()
        if loop.time() - check.at >= READY_CACHE_S:
            check.nats, check.s3, check.nats_writes, check.s3_writes = await asyncio.gather(
                io.servers.nats_answers(READY_TIMEOUT_S),
                io.servers.s3_answers(READY_TIMEOUT_S),
                io.servers.nats_writes(READY_TIMEOUT_S),
                io.servers.s3_writes(READY_TIMEOUT_S),
            )
            check.at = loop.time()
        return Readiness(
            nats=check.nats,
            s3=check.s3,
            instance=io.worker_id,
            nats_writes=check.nats_writes,
            s3_writes=check.s3_writes,
        )
