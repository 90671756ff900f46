"""The covered page: every rung's result merged in ladder order, its sheet identity decided
from the rungs' header and the page's ``SheetReading`` (read once, in extract) by
``shared.sheet.identity``."""

from functools import reduce

from services.coverage.ladder import LadderState
from services.coverage.merge import merge_objects
from shared.contracts.models import (
    CoveredPage,
    ExtractionResult,
    GuardCounts,
    ModelFailure,
    PageObject,
    merge_usage,
)
from shared.sheet.header import SheetHeader
from shared.sheet.identity import decide_identity, merge_header


def merge_results(results: list[ExtractionResult]) -> tuple[list[PageObject], SheetHeader]:
    """The objects and header of rung results merged in order, the first one's kept whole."""
    objects, header = list(results[0].objects), results[0].sheet
    for later in results[1:]:
        objects = merge_objects(objects, later.objects)
        header = merge_header(header, later.sheet)
    return objects, header


def covered_page(
    state: LadderState,
    results: list[ExtractionResult],
    floor: float,
) -> CoveredPage:
    """The merged page once it leaves the ladder, from its rung results in ladder order.

    Degraded when any rung was cut off or failed (its reason kept, named by rung);
    ``rung_status`` says how each rung ended, and the guard counts are summed. Rung 1's
    reading, with the drawing index and the cross-references the page prints, travels with
    it to the set step.
    """
    objects, header = merge_results(results)
    first = results[0]
    reading = first.reading
    troubled = [r for r in results if r.status != "ok"]
    return CoveredPage(
        job_id=state.job_id,
        page_number=state.page_number,
        has_text_layer=state.has_text_layer,
        degraded=bool(troubled),
        extraction_status=first.status,
        extraction_reason="; ".join(f"{r.rung}: {r.reason}" for r in troubled) or None,
        sheet=decide_identity(reading, header=header),
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
        model_failures=[
            ModelFailure(stage=_stage(r), reason=r.model_failure)
            for r in results
            if r.model_failure
        ],
        drawing_index=reading.index_rows if reading else [],
        references=reading.references if reading else [],
        reading=reading,
        unresolved_items=[item for r in results for item in r.unresolved_items],
    )


def _stage(result: ExtractionResult) -> str:
    """The stage a rung's model call belongs to: rung 1 is extract's, later rungs their own."""
    return "extract" if result.rung in ("vision", "offline") else result.rung
