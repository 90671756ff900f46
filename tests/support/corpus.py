"""The real drawing sets in ``../shared/corpus/`` (never copied into the project), and the
offline domain pipeline run on one of their pages in process, as the services chain it."""

import asyncio
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from services.coverage.ladder import next_rung
from services.coverage.merge import merge_objects
from services.coverage.metric import measure_coverage, uncovered_units
from services.extract.offline.fallback import fallback_result
from services.extract.reading.page import Readers
from services.extract.rung1 import extract_rung1
from services.verify.checks.registry import EVERY, Registered, run_checks
from services.verify.checks.text_layer import TextLayerCheck
from services.verify.pipeline import gather_evidence
from services.verify.verdict import page_verdict
from shared.contracts.models import CoveredPage, PageObject, PageVerdict
from shared.infra.settings import Settings
from shared.pagetext import TextLayer
from shared.sheet.identity import decide_identity

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
MANIFEST = CORPUS / "manifest.json"

needs_corpus = pytest.mark.skipif(
    not MANIFEST.exists(), reason=f"the real drawing sets are not at {CORPUS}"
)


@cache
def manifest() -> list[dict]:
    return json.loads(MANIFEST.read_text())["files"]


@cache
def pdf_bytes(file: str) -> bytes:
    return (CORPUS / "pdfs" / file).read_bytes()


def corpus_pages(*, text_layer_only: bool = False) -> list[tuple[str, int]]:
    """(file, page number) of every labelled corpus page (those the manifest says carry a
    usable text layer, with ``text_layer_only``)."""
    if not MANIFEST.exists():
        return []
    return [
        (entry["file"], sheet["page"])
        for entry in manifest()
        if not text_layer_only or entry["text_layer_usable"] is not False
        for sheet in entry["sheets"]
    ]


@dataclass
class OfflinePage:
    layer: TextLayer
    covered: CoveredPage
    objects: list[PageObject]  # with the text layer's verdicts
    verdict: PageVerdict


def offline_page(file: str, page_number: int, settings: Settings, readers: Readers) -> OfflinePage:
    """One page through rung 1 (offline), the coverage ladder (fallback while below the
    floor), sheet identity and the text-layer check: what the services do, without the wire."""
    out = asyncio.run(
        extract_rung1(
            pdf_bytes(file), page_number, settings, None, readers=readers, worker_id="t", job_id="t"
        )
    )
    layer, result = out.text_layer, out.result
    objects, rungs = result.objects, [result.rung]
    before = coverage = measure_coverage(layer, objects)
    floor = settings.extract_coverage_floor
    rung = next_rung(
        has_text_layer=layer.has_text_layer,
        has_words=bool(layer.lines),
        coverage=coverage,
        floor=floor,
        rungs_applied=rungs,
        text_retry_enabled=False,
        fallback_enabled=True,
        model_configured=False,
    )
    if rung == "fallback":
        stubs = fallback_result(
            layer, settings, lines=uncovered_units(layer, objects), job_id="t"
        ).objects
        objects, rungs = merge_objects(objects, stubs), [*rungs, "fallback"]
        coverage = measure_coverage(layer, objects)
    covered = CoveredPage(
        job_id="t",
        page_number=page_number,
        has_text_layer=layer.has_text_layer,
        sheet=decide_identity(result.reading, header=result.sheet),
        objects=objects,
        coverage_before=before,
        coverage=coverage,
        floor=floor,
        below_floor=bool(layer.lines) and coverage.ratio < floor,
        rungs=rungs,
        reading=result.reading,
    )
    evidence = gather_evidence(covered, layer, None, out.png, settings)
    objects = [o.model_copy() for o in covered.objects]
    only_text_layer = (Registered(TextLayerCheck(), replaces=EVERY),)
    checked = asyncio.run(run_checks(only_text_layer, evidence, objects))
    return OfflinePage(layer, covered, objects, page_verdict(objects, checked.problems))
