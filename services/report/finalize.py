"""Record terminal pages and, once every page of a job is terminal, write its report."""

import asyncio
import logging

from services.report.assemble import FailedPage, JobInfo, PageOutcome, build_report
from services.report.html import render_report_html
from services.report.reconcile import PageFacts, correction_requests, page_facts, reconcile
from shared import subjects
from shared.jobs import JobRecord, now
from shared.messages import PageFailed, PageVerified, ReportReady
from shared.models import TextLayer, VerifiedPage
from shared.report import ReadySummary, Report
from shared.service import ServiceContext
from shared.sheet_set import SheetSet
from shared.storage import Keys, ObjectMissing
from shared.title_block import Reading, printed_alone

log = logging.getLogger("sheetflow.report")

# Pages whose words are read at once while the set is reconciled (each page's words are
# let go once its facts are taken).
SET_READ_CONCURRENCY = 8


async def on_verified(
    ctx: ServiceContext, event: PageVerified, locks: dict[str, asyncio.Lock]
) -> None:
    terminal = await ctx.jobs.add_terminal(event.job_id, event.page_number, "verified")
    await maybe_finish(ctx, event.job_id, terminal, locks)


async def on_failed(ctx: ServiceContext, event: PageFailed, locks: dict[str, asyncio.Lock]) -> None:
    failed = FailedPage(
        page_number=event.page_number,
        stage=event.stage,
        reason=event.reason,
        deliveries=event.deliveries,
    )
    await ctx.store.put_json(Keys.page(event.job_id, event.page_number, "failed.json"), failed)
    await ctx.jobs.mark_page(
        event.job_id, event.page_number, "skipped" if event.stage == "canceled" else "failed"
    )
    terminal = await ctx.jobs.add_terminal(event.job_id, event.page_number, "failed")
    await maybe_finish(ctx, event.job_id, terminal, locks)


async def maybe_finish(
    ctx: ServiceContext, job_id: str, terminal: dict[int, str], locks: dict[str, asyncio.Lock]
) -> None:
    job = await ctx.jobs.get_job(job_id)
    if job is None:
        raise RuntimeError(f"job {job_id} has no record in the job store")
    if job.announced or not all(n in terminal for n in range(1, job.page_count + 1)):
        return
    async with locks.setdefault(job_id, asyncio.Lock()):  # two last pages finishing at once
        job = await ctx.jobs.get_job(job_id)
        if job and not job.finished_at:
            job = await write_report(ctx, job, await ctx.jobs.terminal_pages(job_id))
        if job and not job.announced:
            # Announced only once the report can be fetched; a crash before this line
            # leaves announced false, so the redelivered event announces it.
            await announce(ctx, job)
    locks.pop(job_id, None)


async def _outcome(
    ctx: ServiceContext, job_id: str, page_number: int, kind: str
) -> PageOutcome | None:
    name = "verified.json" if kind == "verified" else "failed.json"
    model = VerifiedPage if kind == "verified" else FailedPage
    try:
        return await ctx.store.get_model(Keys.page(job_id, page_number, name), model)
    except ObjectMissing:
        return None  # the report names it failed with "no outcome recorded"


async def _thumbnail(ctx: ServiceContext, job_id: str, page_number: int) -> bytes | None:
    try:
        return await ctx.store.get_bytes(Keys.page(job_id, page_number, "thumb.jpg"))
    except ObjectMissing:
        return None  # a page that failed before rendering: the report shows a placeholder


async def _text_layer(ctx: ServiceContext, job_id: str, page_number: int) -> TextLayer | None:
    try:
        return await ctx.store.get_model(Keys.page(job_id, page_number, "text.json"), TextLayer)
    except ObjectMissing:
        return None  # the set is reconciled from the pages whose words are stored


async def reconcile_set(ctx: ServiceContext, job_id: str, pages: list[VerifiedPage]) -> SheetSet:
    """The set's reconciliation, read from the verified pages' words: each page's words are
    loaded, reduced to the facts the set needs, and let go; the few pages the drawing index
    may correct are read again to find the indexed number they print."""
    limit = asyncio.Semaphore(SET_READ_CONCURRENCY)

    async def facts(page: VerifiedPage) -> PageFacts | None:
        async with limit:
            layer = await _text_layer(ctx, job_id, page.page_number)
            if layer is None:
                return None
            return await asyncio.to_thread(page_facts, page.page_number, page.sheet, layer)

    async def printed(page_number: int, keys: set[str]) -> tuple[int, Reading | None]:
        async with limit:
            layer = await _text_layer(ctx, job_id, page_number)
            found = layer and await asyncio.to_thread(printed_alone, layer, keys)
            return page_number, found or None

    found = [f for f in await asyncio.gather(*(facts(p) for p in pages)) if f is not None]
    requests = correction_requests(found)
    answers = await asyncio.gather(*(printed(n, keys) for n, keys in requests.items()))
    return reconcile(found, {n: reading for n, reading in answers if reading})


async def write_report(
    ctx: ServiceContext, job: JobRecord, terminal: dict[int, str]
) -> JobRecord | None:
    pages = range(1, job.page_count + 1)
    outcomes = await asyncio.gather(*(_outcome(ctx, job.job_id, n, terminal[n]) for n in pages))
    thumbnails = await asyncio.gather(*(_thumbnail(ctx, job.job_id, n) for n in pages))
    info = JobInfo(
        job_id=job.job_id,
        file_name=job.file_name,
        page_count=job.page_count,
        created_at=job.created_at,
        canceled=job.canceled,
        coverage_floor=(
            job.options.coverage_floor
            if job.options.coverage_floor is not None
            else ctx.settings.extract_coverage_floor
        ),
    )
    verified = [o for o in outcomes if isinstance(o, VerifiedPage)]
    sheet_set = await reconcile_set(ctx, job.job_id, verified)
    finished_at = now()
    report = build_report(
        info, [o for o in outcomes if o is not None], finished_at=finished_at, sheet_set=sheet_set
    )
    html = await asyncio.to_thread(
        render_report_html, report, {n: t for n, t in zip(pages, thumbnails, strict=True) if t}
    )
    json_key, html_key = Keys.report(job.job_id, "json"), Keys.report(job.job_id, "html")
    await ctx.store.put_json(json_key, report)
    await ctx.store.put_bytes(html_key, html.encode(), "text/html; charset=utf-8")
    finished = await ctx.jobs.update_job(
        job.job_id, status=report.status, finished_at=finished_at, report_key=json_key
    )
    log.info("report for %s: %s, %s pages", job.job_id, report.status, job.page_count)
    return finished


async def announce(ctx: ServiceContext, job: JobRecord) -> None:
    """Publish report.ready from the stored report; de-duplicated by job id."""
    report = await ctx.store.get_model(Keys.report(job.job_id, "json"), Report)
    ready = ReportReady(
        job_id=job.job_id,
        file_name=job.file_name,
        page_count=job.page_count,
        status=report.status,
        summary=ReadySummary.of(report),
        report_key=Keys.report(job.job_id, "json"),
        html_key=Keys.report(job.job_id, "html"),
    )
    await ctx.publish(subjects.REPORT_READY, ready, dedup_id=job.job_id)
    await ctx.jobs.update_job(job.job_id, announced=True)
