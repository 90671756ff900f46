"""One page's trip up the coverage ladder, with its state kept in the job KV.

Every step is idempotent: the merged page is rebuilt from stored rung results
in a fixed order, requests and events carry de-duplication ids, and a page that
already left the ladder only re-announces its stored result.
"""

import asyncio
import time
from functools import reduce

from services.coverage.ladder import LadderPolicy, LadderRung, LadderState, ladder_key, next_rung
from services.coverage.merge import merge_header, merge_objects
from services.coverage.metric import measure_coverage, uncovered_units
from shared import subjects
from shared.broker import msg_id
from shared.messages import FallbackPage, PageCovered, PageExtracted, PageStructured, StructurePage
from shared.models import (
    CoveredPage,
    ExtractionResult,
    GuardCounts,
    SheetHeader,
    TextLayer,
    merge_usage,
)
from shared.service import ServiceContext
from shared.storage import Keys
from shared.title_block import discipline_for, recover_sheet_identity


class LadderNotStarted(RuntimeError):
    """A rung answer arrived before the page's ladder state exists (retried)."""


async def _load(ctx: ServiceContext, job_id: str, page_number: int) -> LadderState | None:
    doc = await ctx.jobs.get_doc(ladder_key(job_id, page_number))
    return LadderState.model_validate(doc) if doc else None


async def _save(ctx: ServiceContext, state: LadderState) -> None:
    await ctx.jobs.put_doc(ladder_key(state.job_id, state.page_number), state)


async def _results(ctx: ServiceContext, state: LadderState) -> list[ExtractionResult]:
    keys = [state.extracted_key] + [
        state.result_keys[r] for r in state.rungs_applied[1:] if r in state.result_keys
    ]
    return list(await asyncio.gather(*(ctx.store.get_model(k, ExtractionResult) for k in keys)))


def merge_results(results: list[ExtractionResult]) -> tuple[list, SheetHeader]:
    objects, header = list(results[0].objects), results[0].sheet
    for later in results[1:]:
        objects = merge_objects(objects, later.objects)
        header = merge_header(header, later.sheet)
    return objects, header


def sheet_identity(header: SheetHeader, text_layer: TextLayer) -> SheetHeader:
    """The extracted header, with what is missing recovered from the title block."""
    if header.sheet_number:
        return header.model_copy(
            update={
                "sheet_number_source": header.sheet_number_source or "extraction",
                "discipline": header.discipline or discipline_for(header.sheet_number),
            }
        )
    recovered = recover_sheet_identity(text_layer)
    if not recovered:
        return header
    return merge_header(header.model_copy(update={"sheet_number_source": None}), recovered)


async def on_extracted(ctx: ServiceContext, event: PageExtracted) -> None:
    state = await _load(ctx, event.job_id, event.page_number)
    if state is None:
        text_layer, extracted = await asyncio.gather(
            ctx.store.get_model(event.text_key, TextLayer),
            ctx.store.get_model(event.result_key, ExtractionResult),
        )
        coverage = await asyncio.to_thread(measure_coverage, text_layer, extracted.objects)
        state = LadderState(
            job_id=event.job_id,
            page_number=event.page_number,
            extracted_key=event.result_key,
            text_key=event.text_key,
            has_text_layer=text_layer.has_text_layer,
            has_words=bool(text_layer.lines),
            options=event.options,
            rungs_applied=[extracted.rung],
            coverage_before=coverage,
            coverage=coverage,
        )
        await _save(ctx, state)
    await advance(ctx, state)


async def on_structured(ctx: ServiceContext, event: PageStructured) -> None:
    state = await _load(ctx, event.job_id, event.page_number)
    if state is None:
        raise LadderNotStarted(f"no ladder state for page {event.page_number} of {event.job_id}")
    if not state.done and event.rung not in state.result_keys:
        state = state.answered(event.rung, event.result_key, state.coverage)
        text_layer = await ctx.store.get_model(state.text_key, TextLayer)
        objects, _ = merge_results(await _results(ctx, state))
        coverage = await asyncio.to_thread(measure_coverage, text_layer, objects)
        state = state.model_copy(update={"coverage": coverage})
        await _save(ctx, state)
    await advance(ctx, state)


async def _known_sheet(ctx: ServiceContext, state: LadderState) -> SheetHeader:
    """What is known of the sheet so far (rung 1's header, completed from the title block):
    the hint a structuring model gets."""
    text_layer, extracted = await asyncio.gather(
        ctx.store.get_model(state.text_key, TextLayer),
        ctx.store.get_model(state.extracted_key, ExtractionResult),
    )
    return await asyncio.to_thread(sheet_identity, extracted.sheet, text_layer)


async def _ask(ctx: ServiceContext, state: LadderState, rung: LadderRung) -> None:
    if state.pending != rung:
        state = state.asked(rung)
        await _save(ctx, state)
    request: StructurePage | FallbackPage
    if rung == "text_structuring":
        name = subjects.PAGE_STRUCTURE
        request = StructurePage(
            job_id=state.job_id,
            page_number=state.page_number,
            text_key=state.text_key,
            sheet=await _known_sheet(ctx, state),
            options=state.options,
        )
    else:
        name = subjects.PAGE_FALLBACK
        text_layer = await ctx.store.get_model(state.text_key, TextLayer)
        objects, _ = merge_results(await _results(ctx, state))
        lines = await asyncio.to_thread(uncovered_units, text_layer, objects)
        request = FallbackPage(
            job_id=state.job_id,
            page_number=state.page_number,
            text_key=state.text_key,
            lines=lines,
            options=state.options,
        )
    await ctx.publish(name, request, dedup_id=msg_id(state.job_id, state.page_number, rung))


async def advance(ctx: ServiceContext, state: LadderState) -> None:
    """Ask for the next rung, or leave the ladder with the merged page."""
    policy = LadderPolicy.resolve(ctx.settings, state.options)
    if not state.done:
        rung = next_rung(
            has_text_layer=state.has_text_layer,
            has_words=state.has_words,
            coverage=state.coverage,
            floor=policy.floor,
            rungs_applied=list(state.rungs_applied),
            text_retry_enabled=policy.text_retry_enabled,
            fallback_enabled=policy.fallback_enabled,
            model_configured=policy.model_configured,
        )
        if rung:
            await _ask(ctx, state, rung)
            return
    await finish(ctx, state, policy.floor)


def covered_page(
    state: LadderState,
    results: list[ExtractionResult],
    text_layer: TextLayer,
    floor: float,
) -> CoveredPage:
    """The merged page once it leaves the ladder, from its rung results in ladder order.

    Degraded when any rung was cut off or failed (its reason kept, named by rung);
    ``rung_status`` says how each rung ended, and the guard counts are summed.
    """
    objects, header = merge_results(results)
    first = results[0]
    troubled = [r for r in results if r.status != "ok"]
    return CoveredPage(
        job_id=state.job_id,
        page_number=state.page_number,
        has_text_layer=state.has_text_layer,
        degraded=bool(troubled),
        extraction_status=first.status,
        extraction_reason="; ".join(f"{r.rung}: {r.reason}" for r in troubled) or None,
        sheet=sheet_identity(header, text_layer),
        objects=objects,
        coverage_before=state.coverage_before,
        coverage=state.coverage,
        floor=floor,
        below_floor=state.has_words and state.coverage.ratio < floor,
        rungs=list(state.rungs_applied),
        rung_status={r.rung: r.status for r in results},
        guard=reduce(GuardCounts.add, (r.guard for r in results), GuardCounts()),
        usage=merge_usage(*(r.usage for r in results)),
        timings_ms={r.rung: r.elapsed_ms for r in results},
        worker_id=first.worker_id,
    )


async def finish(ctx: ServiceContext, state: LadderState, floor: float) -> None:
    started = time.perf_counter()
    covered_key = Keys.page(state.job_id, state.page_number, "covered.json")
    if state.done and await ctx.store.exists(covered_key):
        covered = await ctx.store.get_model(covered_key, CoveredPage)
    else:
        text_layer = await ctx.store.get_model(state.text_key, TextLayer)
        results = await _results(ctx, state)
        covered = covered_page(state, results, text_layer, floor)
        covered.timings_ms["coverage"] = (time.perf_counter() - started) * 1000
        await ctx.store.put_json(covered_key, covered)
        await _save(ctx, state.finished())
    event = PageCovered(
        job_id=state.job_id,
        page_number=state.page_number,
        covered_key=covered_key,
        text_key=state.text_key,
        coverage=covered.coverage,
        rungs=covered.rungs,
        sheet=covered.sheet,
        options=state.options,
    )
    await ctx.mark(state.job_id, state.page_number, "covered")
    await ctx.publish(
        subjects.PAGE_COVERED, event, dedup_id=msg_id(state.job_id, state.page_number)
    )
