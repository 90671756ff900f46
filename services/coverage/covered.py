"""The covered page: every rung's result merged in ladder order, its sheet identity completed
from the title block when the extraction left it out."""

from functools import reduce

from services.coverage.ladder import LadderState
from services.coverage.merge import merge_header, merge_objects
from shared.models import (
    CoveredPage,
    ExtractionResult,
    GuardCounts,
    ModelFailure,
    PageObject,
    SheetHeader,
    merge_usage,
)
from shared.pagetext import TextLayer
from shared.sheet import discipline_for, recover_sheet_identity
from shared.sheet.index import read_drawing_index
from shared.sheet.references import references


def merge_results(results: list[ExtractionResult]) -> tuple[list[PageObject], SheetHeader]:
    """The objects and header of rung results merged in order, the first one's kept whole."""
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


def covered_page(
    state: LadderState,
    results: list[ExtractionResult],
    text_layer: TextLayer,
    floor: float,
) -> CoveredPage:
    """The merged page once it leaves the ladder, from its rung results in ladder order.

    Degraded when any rung was cut off or failed (its reason kept, named by rung);
    ``rung_status`` says how each rung ended, and the guard counts are summed. The drawing
    index and the cross-references the page prints travel with it to the set step.
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
        model_failures=[
            ModelFailure(stage=_stage(r), reason=r.model_failure)
            for r in results
            if r.model_failure
        ],
        # Read here, where the page's words are at hand, for the set step the report runs.
        drawing_index=read_drawing_index(text_layer),
        references=list(references(text_layer)),
    )


def _stage(result: ExtractionResult) -> str:
    """The stage a rung's model call belongs to: rung 1 is extract's, later rungs their own."""
    return "extract" if result.rung in ("vision", "offline") else result.rung
