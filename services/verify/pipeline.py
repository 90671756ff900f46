"""Verify one covered page: oracle, page-level checks, blank detection, then the judge."""

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pymupdf

from services.verify.blank import Emptiness, page_emptiness
from services.verify.crops import (
    ImageChoice,
    JudgeImage,
    choose_images,
    render_crop_jpeg,
    render_evidence_jpeg,
)
from services.verify.judge import (
    BLANK_CLAIM_ID,
    JudgeOutcome,
    judge_blank_claim,
    judge_page,
    merge_judge,
    select_scope,
    text_excerpt,
)
from services.verify.ocr_check import apply_readings, read_claims, render_claims, sample_claims
from services.verify.oracle import check_content, check_identity, check_object
from services.verify.verdict import page_verdict
from shared.contracts.interfaces import ModelClient
from shared.contracts.models import (
    CoveredPage,
    EvidenceCrop,
    HiddenText,
    ModelFailure,
    ObjectVerification,
    PageObject,
    Usage,
    VerifiedPage,
    merge_usage,
)
from shared.infra.settings import Settings
from shared.infra.storage import Keys
from shared.ocr.engine import OcrEngine
from shared.pagetext import Box, PageWords, TextLayer, page_reading
from shared.pdf.sources import PDF_LOCK, open_pdf
from shared.sheet.fields import read_units
from shared.sheet.identity import claimed_number
from shared.sheet.reading import SheetReading

log = logging.getLogger("sheetflow.verify")

BLANK_REASON = "blank: no text layer, objects, vector drawing or ink on its image"
NO_IMAGE_REASON = "nothing was extracted, and no page image is there to tell whether it is blank"
# Objects the extraction cut from the page's own words: checking them against those words
# cannot fail.
SELF_READ_RUNGS = frozenset({"offline", "fallback"})
SELF_READ_OBJECT = "cut from the page's own words: checking it against them proves nothing"
SELF_READ_REASON = "its objects are the page's own text; nothing independent read it"
HIDDEN_SAMPLE_CHARS = 300
# Evidence crops for people on one page, at most: the report stays a size a browser opens.
EVIDENCE_MAX_CROPS = 20


@dataclass
class VerifyOutput:
    verified: VerifiedPage
    crops: dict[str, bytes] = field(default_factory=dict)  # key under jobs/{id}/ -> JPEG


@dataclass
class OracleFindings:
    """What the deterministic checks found on a page, before any model is asked."""

    objects: list[PageObject]  # copies of the covered objects, with the oracle's verification
    evidence: dict[str, Box]  # object_id -> where its claim sits (oracle match, else its bbox)
    spans: dict[str, tuple[int, int]]  # object_id -> (first, last + 1) of its cited word ids
    page_problems: list[tuple[str, str]]  # (kind, sentence)
    emptiness: Emptiness
    page: PageWords | None  # the text layer's words, to align a judge's reading; None without


def check_page(
    covered: CoveredPage,
    text_layer: TextLayer,
    png: bytes | None,
) -> OracleFindings:
    """The deterministic part of verification (CPU-bound: run it off the event loop).

    On a text-bearing page every object with a ``source_text`` gets the oracle's
    verdict; graphical claims get ``not_judged``. Page-level: sheet identity against the
    title block (as the page's reading, made once in extract, states it), content missing,
    and whether the page is blank.
    """
    # Shallow copies: verify only sets each copy's verification, never edits what it shares.
    objects = [o.model_copy() for o in covered.objects]
    evidence: dict[str, Box] = {}
    spans: dict[str, tuple[int, int]] = {}
    problems: list[tuple[str, str]] = []
    if text_layer.words:
        for obj in objects:
            obj.verification = _text_check(obj, text_layer)
            if obj.verification.evidence_bbox is not None:
                evidence[obj.object_id] = obj.verification.evidence_bbox
                spans[obj.object_id] = (min(obj.evidence), max(obj.evidence) + 1)
    if text_layer.has_text_layer:
        sheet = covered.sheet
        printed = covered.reading.sheet_number if covered.reading else None
        extracted = claimed_number(sheet)
        if sentence := check_identity(extracted, printed):
            problems.append(("identity_wrong", sentence))
    for obj in objects:
        if obj.object_id not in evidence and obj.bbox is not None:
            evidence[obj.object_id] = obj.bbox  # located by extraction, not confirmed by it
    if sentence := check_content(covered):
        problems.append(("content_missing", sentence))
    emptiness = page_emptiness(text_layer, objects, png)
    page = PageWords(text_layer) if text_layer.has_text_layer else None
    return OracleFindings(objects, evidence, spans, problems, emptiness, page)


def self_read(obj: PageObject) -> bool:
    """Whether the object was cut from the page's own words (offline and fallback rungs):
    checking it against them cannot fail, so it is no verdict."""
    return obj.rung in SELF_READ_RUNGS


def _text_check(obj: PageObject, text_layer: TextLayer) -> ObjectVerification:
    """The oracle's verdict on the object, or, for an object cut from the words it cites,
    ``not_judged`` (located, with the reason) unless the oracle refutes it: an extraction
    that broke its own construction is a problem whoever finds it."""
    verification = check_object(obj, text_layer.words)
    if not self_read(obj) or verification.verdict == "refuted":
        return verification
    return ObjectVerification(
        verdict="not_judged", evidence_bbox=verification.evidence_bbox, reason=SELF_READ_OBJECT
    )


def hidden_text(text_layer: TextLayer) -> HiddenText | None:
    """What the page's text layer holds and the page does not show, for the report."""
    hidden = text_layer.hidden_words
    if not hidden:
        return None
    sample = " ".join(w.text for w in hidden)
    if len(sample) > HIDDEN_SAMPLE_CHARS:
        sample = sample[:HIDDEN_SAMPLE_CHARS].rsplit(" ", 1)[0] + " …"
    kinds = Counter(w.hidden for w in hidden if w.hidden)
    return HiddenText(count=len(hidden), kinds=dict(sorted(kinds.items())), sample=sample)


def _choose_images(
    scope: list[PageObject],
    evidence: dict[str, Box],
    page_number: int,
    pdf: bytes | None,
    png: bytes | None,
    settings: Settings,
) -> ImageChoice:
    def choose(render: Callable[[Box], bytes] | None, located: dict[str, Box]) -> ImageChoice:
        return choose_images(
            scope,
            located,
            page_number=page_number,
            page_png=png,
            render=render,
            hi_dpi=settings.verify_hi_dpi_crops,
            max_images=settings.verify_max_images,
        )

    if not (pdf and settings.verify_hi_dpi_crops):
        return choose(None, evidence)
    with PDF_LOCK:
        try:
            doc = open_pdf(pdf)
        except pymupdf.FileDataError as exc:
            log.warning(
                "page %d: cannot open the PDF for crops (%s); using the page image",
                page_number,
                exc,
            )
            return choose(None, evidence)
        # The source document, or a one-page PDF of just this page.
        page = doc[0 if doc.page_count == 1 else page_number - 1]
        on_page = {k: b for k, b in evidence.items() if not (pymupdf.Rect(b) & page.rect).is_empty}

        def render(bbox: Box) -> bytes:
            return render_crop_jpeg(
                page,
                bbox,
                settings.verify_crop_dpi,
                settings.verify_crop_margin_pts,
                max_pixels=settings.page_image_max_pixels,
            )

        return choose(render, on_page)


def _evidence_crops(
    objects: list[PageObject],
    evidence: dict[str, Box],
    page_number: int,
    pdf: bytes | None,
    settings: Settings,
) -> list[tuple[EvidenceCrop, bytes]]:
    """For people reading the report: a small image around each refuted object's evidence
    (at most ``EVIDENCE_MAX_CROPS`` a page), rendered from the PDF; none without it."""
    refuted = [
        (
            obj.object_id,
            (obj.verification and obj.verification.evidence_bbox) or evidence.get(obj.object_id),
        )
        for obj in objects
        if obj.verification and obj.verification.verdict == "refuted"
    ]
    located = [(oid, bbox) for oid, bbox in refuted if bbox][:EVIDENCE_MAX_CROPS]
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


def _apply_judge(
    objects: list[PageObject], outcome: JudgeOutcome, page: PageWords | None
) -> list[dict[str, Any]]:
    def reading_on_page(reading: str) -> str | None:
        return page_reading(reading, page)

    disagreements = []
    for obj in objects:
        if judged := outcome.verdicts.get(obj.object_id):
            obj.verification, disagreement = merge_judge(obj, judged, reading_on_page)
            if disagreement:
                disagreements.append(disagreement)
    return disagreements


@dataclass
class _Judgement:
    """What the judge step adds to the oracle's findings."""

    usage: dict[str, Usage]
    problems: list[tuple[str, str]] = field(default_factory=list)  # (kind, sentence)
    page_judged: bool = False  # a definite page-level verdict (a blank claim confirmed)
    skipped: str | None = None
    reason: str | None = None
    crops: dict[str, bytes] = field(default_factory=dict)
    disagreements: list[dict[str, Any]] = field(default_factory=list)
    model_failure: str | None = None  # the judge call itself failed (the server, not the reply)


def _excerpt(text_layer: TextLayer, claims: list[list[int]], settings: Settings) -> str:
    if not text_layer.has_text_layer:
        return ""
    return text_excerpt(read_units(text_layer), claims, settings.verify_text_max_chars)


async def _judge_objects(
    findings: OracleFindings,
    covered: CoveredPage,
    text_layer: TextLayer,
    pdf: bytes | None,
    png: bytes | None,
    settings: Settings,
    llm: ModelClient,
) -> _Judgement:
    objects = findings.objects
    scope = select_scope(objects, settings.verify_max_objects)
    choice = await asyncio.to_thread(
        _choose_images, scope, findings.evidence, covered.page_number, pdf, png, settings
    )
    located = [o.evidence for o in scope if o.object_id in findings.spans]
    outcome = await judge_page(
        llm,
        settings.llm_verify_model or "",
        scope,
        await asyncio.to_thread(_excerpt, text_layer, located, settings),
        choice.images,
    )
    return _Judgement(
        usage=outcome.usage,
        skipped=outcome.skipped,
        reason=outcome.reason,
        crops=choice.crops,
        disagreements=_apply_judge(objects, outcome, findings.page),
        model_failure=outcome.reason if outcome.call_failed else None,
    )


async def _judge_emptiness(
    contradiction: str,
    text_layer: TextLayer,
    png: bytes | None,
    settings: Settings,
    llm: ModelClient,
) -> _Judgement:
    """The judge decides a page declared empty that a witness contradicts."""
    images = [JudgeImage("the full page", png, "image/png")] if png else []
    outcome = await judge_blank_claim(
        llm,
        settings.llm_verify_model or "",
        contradiction,
        _excerpt(text_layer, [], settings),
        images,
    )
    step = _Judgement(
        usage=outcome.usage,
        skipped=outcome.skipped,
        reason=outcome.reason,
        model_failure=outcome.reason if outcome.call_failed else None,
    )
    claim = outcome.verdicts.get(BLANK_CLAIM_ID)
    if claim is None:
        return step
    if claim.verdict == "refuted":
        found = f" {claim.problem}" if claim.problem else ""
        missed = f"{contradiction} The judge finds content the extraction missed.{found}"
        step.problems.append(("content_missing", missed))
    elif claim.verdict == "confirmed":
        step.page_judged = True
    else:
        step.reason = f"the judge could not tell whether the page holds content: {contradiction}"
    return step


def _without_judge(emptiness: Emptiness, text_layer: TextLayer) -> _Judgement:
    """What stands in for the judge: a contradicted empty page is content_missing, unless
    its image's ink is the only witness (nothing can say whether that is content)."""
    step = _Judgement(usage={})
    if emptiness.ink_only:
        step.reason = f"{emptiness.contradiction} No text layer or judge can say what it is."
    elif emptiness.contradiction:
        missing = f"{emptiness.contradiction.rstrip('.')}: its content is missing."
        step.problems.append(("content_missing", missing))
    elif not text_layer.has_text_layer:
        step.reason = "the page has no text layer to check objects against, and no judge"
    return step


def ocr_check(
    objects: list[PageObject],
    text_layer: TextLayer,
    reading: SheetReading | None,
    page_number: int,
    pdf: bytes,
    settings: Settings,
    engine: OcrEngine,
) -> tuple[list[tuple[str, str]], bool]:
    """The OCR check on a sample of the page's claims (``services.verify.ocr_check``): sets
    the read objects' verifications; returns the page-level problems and whether the title
    block's number was confirmed. CPU-bound: run it off the event loop."""
    claims = sample_claims(
        objects,
        text_layer,
        reading,
        settings.verify_ocr_max_objects,
        settings.verify_ocr_lines_per_font,
    )
    if not claims:
        return [], False
    with PDF_LOCK:
        try:
            doc = open_pdf(pdf)
            page = doc[0 if doc.page_count == 1 else page_number - 1]
            crops = render_claims(page.get_displaylist(), claims)
        except Exception as exc:  # MuPDF raises many kinds on broken content
            log.warning("page %d: no OCR check, the page did not render (%s)", page_number, exc)
            return [], False
    return apply_readings(objects, read_claims(engine, claims, crops))


async def verify_page(
    covered: CoveredPage,
    text_layer: TextLayer,
    pdf: bytes | None,
    png: bytes | None,
    settings: Settings,
    llm: ModelClient | None,
    *,
    judge_enabled: bool = True,
    ocr: OcrEngine | None = None,
) -> VerifyOutput:
    """Verify a covered page: every object gains a ``verification``, the page a verdict.

    ``pdf`` is the source document (or a one-page PDF of this page) for evidence
    crops; ``png`` the stored page image. The judge runs when a verify model and
    base URL are configured, ``llm`` is given and ``judge_enabled`` (the job's
    option): over the objects, or, on a page with none that a text layer, drawing or
    ink contradicts, over the claim that it is empty (without a judge, such a page is
    ``content_missing``, or unjudged with the reason when only ink speaks). A blank
    page is skipped. Given an ``ocr`` engine (and ``verify_ocr_check`` on), a sample of a
    text page's claims is read from its render first (``ocr_check``). Nothing extracted is
    rewritten.
    """
    started = time.perf_counter()
    findings = await asyncio.to_thread(check_page, covered, text_layer, png)
    objects = findings.objects
    emptiness = findings.emptiness
    ocr_problems: list[tuple[str, str]] = []
    identity_read = False
    if ocr is not None and settings.verify_ocr_check and pdf and text_layer.has_text_layer:
        ocr_problems, identity_read = await asyncio.to_thread(
            ocr_check, objects, text_layer, covered.reading, covered.page_number, pdf, settings, ocr
        )
    judging = judge_enabled and bool(settings.llm_verify_model and settings.llm_base_url)
    if emptiness.blank:
        step = _Judgement(usage={}, skipped="blank", reason=BLANK_REASON)
    elif not objects and not emptiness.contradiction:
        step = _Judgement(usage={}, reason=NO_IMAGE_REASON)
    elif llm is not None and judging and emptiness.contradiction:
        step = await _judge_emptiness(emptiness.contradiction, text_layer, png, settings, llm)
    elif llm is not None and judging:
        step = await _judge_objects(findings, covered, text_layer, pdf, png, settings, llm)
    else:
        step = _without_judge(emptiness, text_layer)
    if step.reason:
        log.info("page %d: %s", covered.page_number, step.reason)
    for obj in objects:
        if obj.verification is None:
            obj.verification = ObjectVerification(verdict="not_judged")
    only_self_read = bool(objects) and all(self_read(o) for o in objects)
    verdict = page_verdict(
        objects,
        [*findings.page_problems, *ocr_problems, *step.problems],
        skipped=step.skipped,
        page_judged=step.page_judged or identity_read,
        reason=step.reason,
    )
    verdict.blank_contradicted = emptiness.contradiction is not None
    verdict.self_read = verdict.unjudged and only_self_read
    if verdict.self_read and not step.reason:
        verdict.reason = SELF_READ_REASON
    evidence = await asyncio.to_thread(
        _evidence_crops, objects, findings.evidence, covered.page_number, pdf, settings
    )
    model_failures = list(covered.model_failures)
    if step.model_failure:
        model_failures.append(ModelFailure(stage="verify", reason=step.model_failure))
    timings = {**covered.timings_ms, "verify": round((time.perf_counter() - started) * 1000, 1)}
    verified = VerifiedPage(
        **covered.model_dump(exclude={"objects", "usage", "timings_ms", "model_failures"}),
        objects=objects,
        usage=merge_usage(covered.usage, step.usage),
        timings_ms=timings,
        verdict=verdict,
        judge_disagreements=step.disagreements,
        model_failures=model_failures,
        evidence_crops=[crop for crop, _ in evidence],
        hidden_text=hidden_text(text_layer),
    )
    crops = {**step.crops, **{crop.key: jpeg for crop, jpeg in evidence}}
    return VerifyOutput(verified=verified, crops=crops)
