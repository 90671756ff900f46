"""Coverage's use cases: one page's trip up the coverage ladder, with its state kept in the
job state store.

Every step is idempotent: the merged page is rebuilt from stored rung results
in a fixed order, requests and events carry de-duplication ids, and a page that
already left the ladder only re-announces its stored result.
"""

import asyncio
import time
from dataclasses import dataclass, field
from typing import TypeVar

from pydantic import BaseModel

from services.coverage.covered import covered_page, merge_results
from services.coverage.ladder import LadderPolicy, LadderRung, LadderState, next_rung
from services.coverage.metric import measure_coverage, uncovered_units
from services.coverage.store import LadderStore
from shared.contracts import subjects
from shared.contracts.interfaces import Bucket, Publisher
from shared.contracts.messages import (
    FallbackPage,
    PageCovered,
    PageExtracted,
    PageStructured,
    StructurePage,
)
from shared.contracts.models import CoveredPage, ExtractionResult, PageObject
from shared.infra.broker import msg_id
from shared.infra.jobs import JobStore, record_progress
from shared.infra.settings import Settings
from shared.infra.storage import Keys
from shared.pagetext import TextLayer
from shared.sheet.header import SheetHeader
from shared.sheet.identity import decide_identity

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Collaborators:
    """What coverage's use cases work with: the real stores and publisher in the service,
    in-memory fakes in unit tests."""

    bucket: Bucket
    jobs: JobStore
    ladders: LadderStore
    publisher: Publisher
    settings: Settings


class LadderNotStarted(RuntimeError):
    """A rung answer arrived before the page's ladder state exists (retried)."""


@dataclass
class _Reads:
    """The stored documents one message's handling reads, each fetched and parsed once
    (measuring, asking and finishing a page all read its text layer and results)."""

    bucket: Bucket
    loaded: dict[str, object] = field(default_factory=dict)

    async def get(self, key: str, model: type[M]) -> M:
        if key not in self.loaded:
            self.loaded[key] = await self.bucket.get_model(key, model)
        found = self.loaded[key]
        assert isinstance(found, model)
        return found


async def on_extracted(io: Collaborators, event: PageExtracted) -> None:
    """Rung 1's result: measure it and start the page's ladder (once), then climb."""
    reads = _Reads(io.bucket)
    state = await io.ladders.load(event.job_id, event.page_number)
    if state is None:
        text_layer, extracted = await asyncio.gather(
            reads.get(event.text_key, TextLayer), reads.get(event.result_key, ExtractionResult)
        )
        coverage = await asyncio.to_thread(measure_coverage, text_layer, extracted.objects)
        state = LadderState(
            job_id=event.job_id,
            page_number=event.page_number,
            extracted_key=event.result_key,
            text_key=event.text_key,
            source_key=event.source_key,
            has_text_layer=text_layer.has_text_layer,
            has_words=bool(text_layer.lines),
            options=event.options,
            rungs_applied=[extracted.rung],
            coverage_before=coverage,
            coverage=coverage,
        )
        await io.ladders.save(state)
    await advance(io, state, reads)


async def on_structured(io: Collaborators, event: PageStructured) -> None:
    """A rung 2 or 3 answer: merge it (once) and measure again, then climb on."""
    reads = _Reads(io.bucket)
    state = await io.ladders.load(event.job_id, event.page_number)
    if state is None:
        raise LadderNotStarted(f"no ladder state for page {event.page_number} of {event.job_id}")
    if not state.done and event.rung not in state.result_keys:
        state = state.answered(event.rung, event.result_key, state.coverage)
        text_layer, objects = await _merged_page(reads, state)
        coverage = await asyncio.to_thread(measure_coverage, text_layer, objects)
        state = state.model_copy(update={"coverage": coverage})
        await io.ladders.save(state)
    await advance(io, state, reads)


async def advance(io: Collaborators, state: LadderState, reads: _Reads) -> None:
    """Ask for the next rung, or leave the ladder with the merged page."""
    policy = LadderPolicy.resolve(io.settings, state.options)
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
            await _ask(io, reads, state, rung)
            return
    await _finish(io, reads, state, policy.floor)


async def _results(reads: _Reads, state: LadderState) -> list[ExtractionResult]:
    keys = [state.extracted_key] + [
        state.result_keys[r] for r in state.rungs_applied[1:] if r in state.result_keys
    ]
    return list(await asyncio.gather(*(reads.get(k, ExtractionResult) for k in keys)))


async def _merged_page(reads: _Reads, state: LadderState) -> tuple[TextLayer, list[PageObject]]:
    """The page's words and the objects of every rung answered so far, merged."""
    text_layer, results = await asyncio.gather(
        reads.get(state.text_key, TextLayer), _results(reads, state)
    )
    objects, _ = merge_results(results)
    return text_layer, objects


async def _known_sheet(reads: _Reads, state: LadderState) -> SheetHeader:
    """What is known of the sheet so far (rung 1's header, completed from its reading): the
    hint a structuring model gets."""
    extracted = await reads.get(state.extracted_key, ExtractionResult)
    return decide_identity(extracted.reading, header=extracted.sheet)


async def _ask(io: Collaborators, reads: _Reads, state: LadderState, rung: LadderRung) -> None:
    if state.pending != rung:
        state = state.asked(rung)
        await io.ladders.save(state)
    dedup_id = msg_id(state.job_id, state.page_number, rung)
    if rung == "text_structuring":
        structure = StructurePage(
            job_id=state.job_id,
            page_number=state.page_number,
            text_key=state.text_key,
            sheet=await _known_sheet(reads, state),
            options=state.options,
        )
        await io.publisher.publish(subjects.PAGE_STRUCTURE, structure, dedup_id=dedup_id)
        return
    text_layer, objects = await _merged_page(reads, state)
    fallback = FallbackPage(
        job_id=state.job_id,
        page_number=state.page_number,
        text_key=state.text_key,
        lines=await asyncio.to_thread(uncovered_units, text_layer, objects),
        options=state.options,
    )
    await io.publisher.publish(subjects.PAGE_FALLBACK, fallback, dedup_id=dedup_id)


async def _finish(io: Collaborators, reads: _Reads, state: LadderState, floor: float) -> None:
    started = time.perf_counter()
    covered_key = Keys.covered(state.job_id, state.page_number)
    if state.done and await io.bucket.exists(covered_key):
        covered = await io.bucket.get_model(covered_key, CoveredPage)
    else:
        results = await _results(reads, state)
        covered = covered_page(state, results, floor)
        covered.timings_ms["coverage"] = (time.perf_counter() - started) * 1000
        await io.bucket.put_json(covered_key, covered)
        await io.ladders.save(state.finished())
    event = PageCovered(
        job_id=state.job_id,
        page_number=state.page_number,
        covered_key=covered_key,
        text_key=state.text_key,
        source_key=state.source_key,
        coverage=covered.coverage,
        rungs=covered.rungs,
        sheet=covered.sheet,
        options=state.options,
    )
    await record_progress(io.jobs, io.publisher, state.job_id, state.page_number, "covered")
    await io.publisher.publish(
        subjects.PAGE_COVERED, event, dedup_id=msg_id(state.job_id, state.page_number)
    )
