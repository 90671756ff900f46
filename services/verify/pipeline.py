"""Verify one covered page: the page's evidence gathered once, then every registered check
in order (``services.verify.checks.registry``), then the page's verdict."""

import asyncio
import logging
import time
from collections import Counter
from dataclasses import dataclass, field

import pymupdf

from services.verify.blank import page_emptiness
from services.verify.checks.base import PageEvidence
from services.verify.checks.registry import Registered, registered, run_checks
from services.verify.checks.text_layer import self_read
from services.verify.crops import render_evidence_jpeg
from services.verify.fonts import FontLedger
from services.verify.oracle import locate
from services.verify.tolerances import VerifyTolerances
from services.verify.verdict import checked_share, page_verdict
from shared.contracts.interfaces import ModelClient, Ocr
from shared.contracts.models import (
    CoveredPage,
    EvidenceCrop,
    HiddenText,
    ModelFailure,
    ObjectVerification,
    PageObject,
    VerifiedPage,
    merge_usage,
)
from shared.infra.settings import Settings
from shared.infra.storage import Keys
from shared.pagetext import Box, PageWords, TextLayer
from shared.pdf.sources import PDF_LOCK, open_pdf

log = logging.getLogger("sheetflow.verify")

SELF_READ_REASON = "its objects are the page's own text; nothing independent read it"
TOLERANCES = VerifyTolerances()


@dataclass
class VerifyOutput:
    verified: VerifiedPage
    crops: dict[str, bytes] = field(default_factory=dict)  # key under jobs/{id}/ -> JPEG


def gather_evidence(
    covered: CoveredPage,
    text_layer: TextLayer,
    pdf: bytes | None,
    png: bytes | None,
    settings: Settings,
    *,
    judge_enabled: bool = True,
    tolerances: VerifyTolerances = TOLERANCES,
) -> PageEvidence:
    """What every check may read of the page (CPU-bound: run it off the event loop): where
    the text layer locates each claim (the words it cites), where each claim sits otherwise,
    the page's words, and whether the page is blank."""
    located: dict[str, Box] = {}
    if text_layer.words:
        for obj in covered.objects:
            if (box := locate(obj, text_layer.words)) is not None:
                located[obj.object_id] = box
    where = dict(located)
    for obj in covered.objects:
        if obj.object_id not in where and obj.bbox is not None:
            where[obj.object_id] = obj.bbox  # located by extraction, not confirmed by it
    return PageEvidence(
        covered=covered,
        text_layer=text_layer,
        pdf=pdf,
        png=png,
        settings=settings,
        tolerances=tolerances,
        judge_enabled=judge_enabled,
        emptiness=page_emptiness(text_layer, covered.objects, png, tolerances),
        located=located,
        where=where,
        page=PageWords(text_layer) if text_layer.has_text_layer else None,
    )


def hidden_text(text_layer: TextLayer, sample_chars: int) -> HiddenText | None:
    """What the page's text layer holds and the page does not show, for the report (a
    sample of ``sample_chars`` at most)."""
    hidden = text_layer.hidden_words
    if not hidden:
        return None
    sample = " ".join(w.text for w in hidden)
    if len(sample) > sample_chars:
        sample = sample[:sample_chars].rsplit(" ", 1)[0] + " …"
    kinds = Counter(w.hidden for w in hidden if w.hidden)
    return HiddenText(count=len(hidden), kinds=dict(sorted(kinds.items())), sample=sample)


def _evidence_crops(
    objects: list[PageObject],
    evidence: dict[str, Box],
    page_number: int,
    pdf: bytes | None,
    settings: Settings,
    max_crops: int,
) -> list[tuple[EvidenceCrop, bytes]]:
    """For people reading the report: a small image around each refuted object's evidence
    (at most ``max_crops`` a page: the report stays a size a browser opens), rendered from
    the PDF; none without it."""
    refuted = [
        (
            obj.object_id,
            (obj.verification and obj.verification.evidence_bbox) or evidence.get(obj.object_id),
        )
        for obj in objects
        if obj.verification and obj.verification.verdict == "refuted"
    ]
    located = [(oid, bbox) for oid, bbox in refuted if bbox][:max_crops]
    if not (pdf and located):
        return []
    out = []
    with PDF_LOCK:
        try:
            doc = open_pdf(pdf)
        except pymupdf.FileDataError as exc:
            log.warning("page %d: cannot open the PDF for evidence crops (%s)", page_number, exc)
            return []
        page = doc[0 if doc.page_count == 1 else page_number - 1]
        for object_id, bbox in located:
            try:
                jpeg = render_evidence_jpeg(page, bbox, settings.verify_crop_margin_pts)
            except ValueError:
                continue  # a box off the page has nothing to show
            crop = EvidenceCrop(
                object_id=object_id,
                key=Keys.evidence(page_number, object_id),
                bbox=bbox,
                page_width=page.rect.width,
                page_height=page.rect.height,
            )
            out.append((crop, jpeg))
    return out


async def verify_page(
    covered: CoveredPage,
    text_layer: TextLayer,
    pdf: bytes | None,
    png: bytes | None,
    settings: Settings,
    llm: ModelClient | None,
    *,
    judge_enabled: bool = True,
    ocr: Ocr | None = None,
    checks: tuple[Registered, ...] | None = None,
    tolerances: VerifyTolerances = TOLERANCES,
    fonts: FontLedger | None = None,
) -> VerifyOutput:
    """Verify a covered page: every object gains a ``verification``, the page a verdict.

    ``pdf`` is the source document (or a one-page PDF of this page) for evidence
    crops; ``png`` the stored page image. The ``checks`` run in order (by default the
    registered ones, made with ``llm`` and ``ocr``): the text layer's; given an ``ocr``
    engine (and ``verify_ocr_check`` on), a sample of a text page's claims read from its
    render; the judge when a verify model and base URL are configured, ``llm`` is given
    and ``judge_enabled`` (the job's option): over the objects, or, on a page with none
    that a text layer, drawing or ink contradicts, over the claim that it is empty
    (without a judge, such a page is ``content_missing``, or unjudged with the reason when
    only ink speaks). A blank page is skipped. Nothing extracted is rewritten.
    ``tolerances`` are what the checks weigh (today's values by default); ``fonts`` the
    job's fonts read alike already (none: every page reads its own).
    """
    started = time.perf_counter()
    page = await asyncio.to_thread(
        gather_evidence,
        covered,
        text_layer,
        pdf,
        png,
        settings,
        judge_enabled=judge_enabled,
        tolerances=tolerances,
    )
    # Shallow copies: verify only sets each copy's verification, never edits what it shares.
    objects = [o.model_copy() for o in covered.objects]
    checked = await run_checks(checks or registered(llm, ocr, fonts), page, objects)
    if checked.reason:
        log.info("page %d: %s", covered.page_number, checked.reason)
    for obj in objects:
        if obj.verification is None:
            obj.verification = ObjectVerification(verdict="not_judged")
    only_self_read = bool(objects) and all(self_read(o) for o in objects)
    verdict = page_verdict(
        objects,
        checked.problems,
        skipped=checked.skipped,
        page_judged=checked.page_judged,
        reason=checked.reason,
    )
    verdict.checked = checked_share(
        objects, ocr_lines=checked.lines_read, title_block_read=checked.title_block_read
    )
    verdict.blank_contradicted = page.emptiness.contradiction is not None
    verdict.self_read = verdict.unjudged and only_self_read
    if verdict.self_read and not checked.reason:
        verdict.reason = SELF_READ_REASON
    evidence = await asyncio.to_thread(
        _evidence_crops,
        objects,
        page.where,
        covered.page_number,
        pdf,
        settings,
        tolerances.evidence_max_crops,
    )
    model_failures = list(covered.model_failures)
    if checked.model_failure:
        model_failures.append(ModelFailure(stage="verify", reason=checked.model_failure))
    timings = {**covered.timings_ms, "verify": round((time.perf_counter() - started) * 1000, 1)}
    verified = VerifiedPage(
        **covered.model_dump(exclude={"objects", "usage", "timings_ms", "model_failures"}),
        objects=objects,
        usage=merge_usage(covered.usage, checked.usage),
        timings_ms=timings,
        verdict=verdict,
        judge_disagreements=checked.disagreements,
        model_failures=model_failures,
        evidence_crops=[crop for crop, _ in evidence],
        hidden_text=hidden_text(text_layer, tolerances.hidden_sample_chars),
    )
    crops = {**checked.crops, **{crop.key: jpeg for crop, jpeg in evidence}}
    return VerifyOutput(verified=verified, crops=crops)
