"""Rung 3: low-confidence stubs of the page's text, so no text-bearing page is dark.

The stubs cite exactly the units the coverage metric counts (``shared.pagetext.coverage_units``),
so merging them lifts the page to full coverage: one stub per run of uncovered lines within a
block, and when that is more stubs than allowed, neighbouring runs share a stub rather than
any line being left out.
"""

import math
import time
from itertools import chain

from services.extract.clock import elapsed_ms
from services.extract.guard import apply_grounding_guard
from shared.contracts.models import ExtractionResult, PageObject
from shared.infra.settings import Settings
from shared.pagetext import Box, TextLayer, coverage_units, join_words


def _runs(layer: TextLayer, wanted: set[int]) -> list[list[int]]:
    """Runs of wanted lines that follow each other within one block, in reading order."""
    runs: list[list[int]] = []
    for block in layer.blocks:
        run: list[int] = []
        for line_id in block:
            if line_id in wanted:
                run.append(line_id)
            elif run:
                runs.append(run)
                run = []
        if run:
            runs.append(run)
    return runs


def fallback_stubs(
    layer: TextLayer, max_objects: int, lines: list[int] | None = None
) -> list[PageObject]:
    """Stubs citing ``lines`` (line ids; default: every coverage unit of the page), at most
    ``max_objects``, each a ``general_note`` whose ``source_text`` is its words verbatim."""
    wanted = set(coverage_units(layer.line_texts) if lines is None else lines)
    runs = _runs(layer, wanted)
    per_stub = max(1, math.ceil(len(runs) / max(1, max_objects)))
    groups = [
        list(chain.from_iterable(runs[i : i + per_stub])) for i in range(0, len(runs), per_stub)
    ]
    page = layer.page_number
    stubs = []
    for i, group in enumerate(groups, start=1):
        evidence = [w for line_id in group for w in layer.lines[line_id]]
        box = Box.union(layer.words[w].bbox for w in evidence)
        stubs.append(
            PageObject(
                object_id=f"p{page}-f{i}",
                object_type="general_note",
                source_text=join_words(layer.words, evidence),
                bbox=box,
                evidence=evidence,
                evidence_bbox=box,
                page_number=page,
                confidence="low",
                grounding="text_layer_fallback",
                rung="fallback",
            )
        )
    return stubs


def fallback_result(
    text_layer: TextLayer,
    settings: Settings,
    *,
    lines: list[int] | None = None,
    job_id: str,
    worker_id: str | None = None,
) -> ExtractionResult:
    """Rung 3: low-confidence stubs citing ``lines`` (default: every coverage unit), at most
    ``settings.fallback_max_objects``. CPU-bound on dense pages: call it through
    ``asyncio.to_thread`` from a handler."""
    started = time.perf_counter()
    stubs = fallback_stubs(text_layer, settings.fallback_max_objects, lines)
    kept, counts = apply_grounding_guard(stubs, text_layer)
    return ExtractionResult(
        job_id=job_id,
        page_number=text_layer.page_number,
        rung="fallback",
        status="ok",
        has_text_layer=text_layer.has_text_layer,
        objects=kept,
        guard=counts,
        worker_id=worker_id,
        elapsed_ms=elapsed_ms(started),
    )
