"""Report's use cases: record terminal pages and, once every page of a job is terminal,
write its report and announce it, once."""

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta

from services.report.assemble import FailedPage, JobInfo, PageOutcome, build_report
from services.report.cells import ask_for_cells, with_cells_read
from services.report.facts import page_facts
from services.report.html import render_report_html
from services.report.projects import update_register
from services.report.review import apply_review, corrected_pages
from services.report.revisions.register import revised_events
from services.report.store import CellWaits, TerminalPages
from shared.contracts import subjects
from shared.contracts.interfaces import Bucket, ObjectMissing, Publisher
from shared.contracts.messages import (
    CellRead,
    PageFailed,
    PageVerified,
    RegisterUpdated,
    ReportReady,
)
from shared.contracts.models import VerifiedPage
from shared.contracts.register import RegisterOutcome, SheetOutcome
from shared.contracts.report import ReadySummary, Report
from shared.infra.broker import describe, is_outage, msg_id
from shared.infra.jobs import JobRecord, JobStore, now
from shared.infra.review_store import review_records
from shared.infra.settings import Settings
from shared.infra.storage import Keys
from shared.revisions.delta import SheetDelta
from shared.sheet.reconcile import reconcile
from shared.sheet.sheet_set import SheetSet

log = logging.getLogger("sheetflow.report")

# How often abandoned intakes are looked for, and how long past the intake's own limit an
# intake must be before it is taken for abandoned (clocks of two hosts may differ).
SUPERVISE_EVERY_S = 10.0
INTAKE_GRACE_S = 10.0
# Pages failed at once when an abandoned intake is finished.
FAIL_BATCH = 64
CANCELED_JOB = "the job was canceled: its sheets did not join the project's register"
INTAKE_ABANDONED = (
    "the upload's intake did not finish (the ingest service stopped before every page was "
    "queued); upload the file again"
)


@dataclass(frozen=True)
class Collaborators:
    """What report's use cases work with: the real stores and publisher in the service,
    in-memory fakes in unit tests. ``finishing`` holds one lock per job being finished in
    this process (two last pages of a job may arrive at once)."""

    bucket: Bucket
    jobs: JobStore
    terminal: TerminalPages
    cell_waits: CellWaits
    publisher: Publisher
    settings: Settings
    finishing: dict[str, asyncio.Lock]


async def on_verified(io: Collaborators, event: PageVerified) -> None:
    terminal = await io.terminal.add(event.job_id, event.page_number, "verified")
    await maybe_finish(io, event.job_id, terminal)


async def on_cell_read(io: Collaborators, event: CellRead) -> None:
    """A page read again in its template cell: the job's report may now be written."""
    await maybe_finish(io, event.job_id, await io.terminal.all(event.job_id))


async def on_failed(io: Collaborators, event: PageFailed) -> None:
    if await io.jobs.get_job(event.job_id) is None:
        return  # a refused upload's page: its job was removed, nothing of it is kept
    failed = FailedPage(
        page_number=event.page_number,
        stage=event.stage,
        reason=event.reason,
        deliveries=event.deliveries,
    )
    await io.bucket.put_json(Keys.failed(event.job_id, event.page_number), failed)
    await io.jobs.mark_page(
        event.job_id, event.page_number, "skipped" if event.stage == "canceled" else "failed"
    )
    terminal = await io.terminal.add(event.job_id, event.page_number, "failed")
    await maybe_finish(io, event.job_id, terminal)


async def maybe_finish(io: Collaborators, job_id: str, terminal: dict[int, str]) -> None:
    """Once every page is terminal: write the report (once) and announce it (once)."""
    job = await io.jobs.get_job(job_id)
    if job is None:
        log.info("page of job %s, whose record was removed (a refused upload)", job_id)
        return
    if job.announced or not all(n in terminal for n in range(1, job.page_count + 1)):
        return
    async with _finishing(io, job_id):
        job = await io.jobs.get_job(job_id)
        if job and not job.finished_at:
            terminal = await io.terminal.all(job_id)
            outcomes = await _outcomes(io, job, terminal)
            # The set's template first re-reads what a page missed; the answers' events
            # call here again.
            wait_s = io.settings.report_cell_wait_s
            if await ask_for_cells(io.bucket, io.publisher, io.cell_waits, job, outcomes, wait_s):
                return
            job = await write_report(io, job, terminal, outcomes)
            await io.cell_waits.done(job_id)
        if job and not job.announced:
            # Announced only once the report can be fetched; a crash before this line
            # leaves announced false, so the redelivered event announces it.
            await announce(io, job)


@contextlib.asynccontextmanager
async def _finishing(io: Collaborators, job_id: str) -> AsyncIterator[None]:
    """One finisher of a job at a time in this process; its lock let go however the
    finishing ends (an outage's exception included)."""
    try:
        async with io.finishing.setdefault(job_id, asyncio.Lock()):
            yield
    finally:
        io.finishing.pop(job_id, None)


async def _outcome(
    io: Collaborators, job_id: str, page_number: int, kind: str
) -> PageOutcome | None:
    try:
        if kind == "verified":
            return await io.bucket.get_model(Keys.verified(job_id, page_number), VerifiedPage)
        return await io.bucket.get_model(Keys.failed(job_id, page_number), FailedPage)
    except ObjectMissing:
        return None  # the report names it failed with "no outcome recorded"


async def _thumbnail(io: Collaborators, job_id: str, page_number: int) -> bytes | None:
    try:
        return await io.bucket.get_bytes(Keys.thumbnail(job_id, page_number))
    except ObjectMissing:
        return None  # a page that failed before rendering: the report shows a placeholder


async def _evidence(
    io: Collaborators, job_id: str, outcomes: list[PageOutcome | None]
) -> dict[str, bytes]:
    """The evidence crops the verified pages name (key under jobs/{id}/ → JPEG)."""
    keys = [c.key for o in outcomes if isinstance(o, VerifiedPage) for c in o.evidence_crops]

    async def load(key: str) -> bytes | None:
        try:
            return await io.bucket.get_bytes(Keys.job(job_id) + key)
        except ObjectMissing:
            return None  # the report shows the problem without its picture

    crops = await asyncio.gather(*(load(k) for k in keys))
    return {key: jpeg for key, jpeg in zip(keys, crops, strict=True) if jpeg}


async def with_register_changes(
    io: Collaborators, job: JobRecord, report: Report
) -> tuple[Report, dict[str, tuple[SheetDelta, bytes | None]]]:
    """A job of a project: the report with what its sheets did to the project's register,
    and the deltas and overlays of the sheets it revised. The register failing for a reason
    of its own is said in the report, never made the pages' failure (their message would be
    redelivered until a page failed for it); NATS or S3 trouble is waited out as for any
    write."""
    if not job.options.project:
        return report, {}
    if report.status == "canceled":
        # Not an issue of the set: what was read before the cancel replaces nothing.
        return report.model_copy(update={"changes_error": CANCELED_JOB}), {}
    try:
        changes = await update_register(io.bucket, io.jobs.state, job, report)
    except Exception as exc:
        if is_outage(exc):
            raise
        log.exception("the register of %s could not take job %s", job.options.project, job.job_id)
        return report.model_copy(update={"changes_error": describe(exc)}), {}
    return report.model_copy(update={"changes": changes}), await _revisions(io, changes)


async def _revisions(
    io: Collaborators, changes: RegisterOutcome
) -> dict[str, tuple[SheetDelta, bytes | None]]:
    """The delta and overlay of each sheet the job revised, by delta key."""

    async def load(sheet: SheetOutcome) -> tuple[SheetDelta, bytes | None]:
        delta = SheetDelta.from_json(json.loads(await io.bucket.get_bytes(sheet.delta_key or "")))
        try:
            overlay = await io.bucket.get_bytes(sheet.overlay_key) if sheet.overlay_key else None
        except ObjectMissing:
            overlay = None  # the Changes section lists the delta without its picture
        return delta, overlay

    revised = [s for s in changes.sheets if s.outcome == "revised" and s.delta_key]
    found = await asyncio.gather(*(load(s) for s in revised))
    return {s.delta_key or "": f for s, f in zip(revised, found, strict=True)}


def reconcile_set(pages: list[VerifiedPage]) -> SheetSet:
    """The set's reconciliation from the verified pages' readings alone (each page's title
    block, drawing index and references were read once, in extract)."""
    return reconcile([page_facts(p) for p in pages])


async def _outcomes(
    io: Collaborators, job: JobRecord, terminal: dict[int, str]
) -> list[PageOutcome | None]:
    pages = range(1, job.page_count + 1)
    return list(await asyncio.gather(*(_outcome(io, job.job_id, n, terminal[n]) for n in pages)))


async def write_report(
    io: Collaborators,
    job: JobRecord,
    terminal: dict[int, str],
    outcomes: list[PageOutcome | None] | None = None,
) -> JobRecord | None:
    """Write the job's report from its terminal pages (``outcomes``, loaded when not given),
    each page read again in its template cell carrying what was read there."""
    pages = range(1, job.page_count + 1)
    if outcomes is None:
        outcomes = await _outcomes(io, job, terminal)
    outcomes = await with_cells_read(io.bucket, job.job_id, outcomes)
    thumbnails = await asyncio.gather(*(_thumbnail(io, job.job_id, n) for n in pages))
    info = JobInfo(
        job_id=job.job_id,
        file_name=job.file_name,
        page_count=job.page_count,
        created_at=job.created_at,
        canceled=job.canceled,
        intake=job.intake,
        coverage_floor=(
            job.options.coverage_floor
            if job.options.coverage_floor is not None
            else io.settings.extract_coverage_floor
        ),
    )
    verified = [o for o in outcomes if isinstance(o, VerifiedPage)]
    records = await review_records(io.bucket, job.job_id)
    # The set step reads the pages as a person corrected them; the report shows the review
    # as a layer over the pipeline's results (services.report.review).
    sheet_set = await asyncio.to_thread(reconcile_set, corrected_pages(verified, records))
    finished_at = job.finished_at or now()
    report = build_report(
        info, [o for o in outcomes if o is not None], finished_at=finished_at, sheet_set=sheet_set
    )
    report = apply_review(report, records)
    report, revisions = await with_register_changes(io, job, report)
    evidence = await _evidence(io, job.job_id, outcomes)
    html = await asyncio.to_thread(
        render_report_html,
        report,
        {n: t for n, t in zip(pages, thumbnails, strict=True) if t},
        evidence,
        revisions,
    )
    json_key, html_key = Keys.report(job.job_id, "json"), Keys.report(job.job_id, "html")
    await io.bucket.put_json(json_key, report)
    await io.bucket.put_bytes(html_key, html.encode(), "text/html; charset=utf-8")
    finished = await io.jobs.update_job(
        job.job_id,
        status=report.status,
        finished_at=finished_at,
        report_key=json_key,
        report_revision=report.revision,
    )
    log.info(
        "report for %s: %s, %s pages, revision %s",
        job.job_id,
        report.status,
        job.page_count,
        report.revision,
    )
    return finished


async def announce(io: Collaborators, job: JobRecord) -> None:
    """Publish report.ready from the stored report; de-duplicated by job id. A job of a
    project first says what it did to the project's register (once: a report rebuilt after
    a review changes nothing there)."""
    report = await io.bucket.get_model(Keys.report(job.job_id, "json"), Report)
    if report.changes is not None and job.announced_revision == 0:
        await announce_changes(io, report.changes)
    ready = ReportReady(
        job_id=job.job_id,
        file_name=job.file_name,
        page_count=job.page_count,
        status=report.status,
        summary=ReadySummary.of(report),
        report_key=Keys.report(job.job_id, "json"),
        html_key=Keys.report(job.job_id, "html"),
        revision=report.revision,
    )
    await io.publisher.publish(
        subjects.REPORT_READY, ready, dedup_id=msg_id(job.job_id, report.revision)
    )
    await io.jobs.update_job(job.job_id, announced=True, announced_revision=report.revision)


async def announce_changes(io: Collaborators, changes: RegisterOutcome) -> None:
    """``sheet.revised`` for each sheet the job gave a new version, then
    ``register.updated``; de-duplicated by project, job and sheet."""
    project, job_id = changes.project, changes.job_id
    for revised in revised_events(changes):
        dedup = msg_id(project, job_id, revised.sheet_key, "revised")
        await io.publisher.publish(subjects.SHEET_REVISED, revised, dedup_id=dedup)
    updated = RegisterUpdated(
        project=project,
        job_id=job_id,
        sequence=changes.sequence,
        added=changes.count("added"),
        revised=changes.count("revised"),
        reissued_unchanged=changes.count("reissued"),
        proposed=changes.count("proposed"),
        carried=len(changes.carried),
        sheets_current=len(changes.sheets) + len(changes.carried),
        register_key=changes.register_key,
    )
    dedup = msg_id(project, job_id, "register")
    await io.publisher.publish(subjects.REGISTER_UPDATED, updated, dedup_id=dedup)


async def supervise_intakes(io: Collaborators) -> None:
    """Finish every intake an ingest abandoned (stopped, or gave up, before every page was
    announced), once it is older than any intake may take: a job with a record has each page
    failed with the reason (its report follows as for any failed page; a page already
    announced and read stays read); what an intake without a record stored is removed."""
    abandoned_after = timedelta(seconds=io.settings.intake_timeout_s + INTAKE_GRACE_S)
    for intake in await io.jobs.intakes():
        if now() - intake.started_at < abandoned_after:
            continue
        job = await io.jobs.get_job(intake.job_id)
        if job is None:  # never recorded, or refused half-way: nothing of it is kept
            await io.bucket.delete_prefix(Keys.job(intake.job_id))
        elif not job.finished_at:
            log.warning("intake of job %s was abandoned; its pages fail", job.job_id)
            await _fail_every_page(io, job)
        await io.jobs.intake_finished(intake.job_id)


async def _fail_every_page(io: Collaborators, job: JobRecord) -> None:
    for start in range(1, job.page_count + 1, FAIL_BATCH):
        numbers = range(start, min(start + FAIL_BATCH, job.page_count + 1))
        await asyncio.gather(
            *(
                io.publisher.publish(
                    subjects.PAGE_FAILED,
                    PageFailed(
                        job_id=job.job_id, page_number=n, stage="intake", reason=INTAKE_ABANDONED
                    ),
                    dedup_id=msg_id(job.job_id, n, "intake"),
                )
                for n in numbers
            )
        )


async def supervise_cells(io: Collaborators) -> None:
    """Finish every job whose report has waited for cells read again
    (``services.report.cells``) past ``SHEETFLOW_REPORT_CELL_WAIT_S``: an answer extract
    never gave (extract down, the request or the answer lost) does not hold a report back."""
    for job_id in await io.cell_waits.waiting():
        job = await io.jobs.get_job(job_id)
        if job is None or job.finished_at:
            await io.cell_waits.done(job_id)
            continue
        since = await io.cell_waits.since(job_id)
        if now() - since >= timedelta(seconds=io.settings.report_cell_wait_s):
            await maybe_finish(io, job_id, await io.terminal.all(job_id))


async def supervise(io: Collaborators, every_s: float = SUPERVISE_EVERY_S) -> None:
    """:func:`supervise_intakes` and :func:`supervise_cells` every ``every_s`` seconds, for
    as long as the service runs; a round NATS or S3 cannot serve is tried again at the
    next."""
    while True:
        try:
            await supervise_intakes(io)
            await supervise_cells(io)
        except Exception as exc:
            log.warning("intake supervision could not finish a round: %s", exc)
        await asyncio.sleep(every_s)


async def revise(io: Collaborators, job_id: str) -> None:
    """A person corrected or reviewed something: rebuild the finished job's report with
    every review record so far (its revision is one more than their count) and announce it.
    A job not finished yet gets them in its first report."""
    async with _finishing(io, job_id):
        job = await io.jobs.get_job(job_id)
        if job is None or not job.finished_at:
            return
        revision = 1 + len(await review_records(io.bucket, job_id))
        if job.report_revision < revision:
            job = await write_report(io, job, await io.terminal.all(job_id))
        if job and job.announced_revision < job.report_revision:
            await announce(io, job)
