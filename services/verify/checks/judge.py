"""The model judge as a check (``services.verify.judge``), basis ``judge``: over the page's
objects, or, on a page the extraction found nothing on that a witness contradicts, over the
claim that it is empty."""

import asyncio
import logging
from collections.abc import Callable

import pymupdf

from services.verify.checks.base import CheckResult, Finding, PageEvidence
from services.verify.crops import (
    ImageChoice,
    JudgeImage,
    choose_images,
    render_crop_jpeg,
)
from services.verify.judge import (
    BLANK_CLAIM_ID,
    judge_blank_claim,
    judge_finding,
    judge_page,
    select_scope,
    text_excerpt,
)
from services.verify.verdict import UNTAGGED
from shared.contracts.interfaces import ModelClient
from shared.contracts.models import PageObject
from shared.infra.settings import Settings
from shared.pagetext import Box, page_reading
from shared.pdf.sources import PDF_LOCK, open_pdf
from shared.sheet.fields import read_units

log = logging.getLogger("sheetflow.verify")


def _choose_images(
    scope: list[PageObject],
    where: dict[str, Box],
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
        return choose(None, where)
    with PDF_LOCK:
        try:
            doc = open_pdf(pdf)
        except pymupdf.FileDataError as exc:
            log.warning(
                "page %d: cannot open the PDF for crops (%s); using the page image",
                page_number,
                exc,
            )
            return choose(None, where)
        # The source document, or a one-page PDF of just this page.
        page = doc[0 if doc.page_count == 1 else page_number - 1]
        on_page = {k: b for k, b in where.items() if not (pymupdf.Rect(b) & page.rect).is_empty}

        def render(bbox: Box) -> bytes:
            return render_crop_jpeg(
                page,
                bbox,
                settings.verify_crop_dpi,
                settings.verify_crop_margin_pts,
                max_pixels=settings.page_image_max_pixels,
            )

        return choose(render, on_page)


def _excerpt(page: PageEvidence, claims: list[list[int]]) -> str:
    if not page.text_layer.has_text_layer:
        return ""
    return text_excerpt(
        read_units(page.text_layer),
        claims,
        page.settings.verify_text_max_chars,
        page.tolerances.excerpt_context_units,
    )


async def _judge_objects(
    page: PageEvidence, objects: list[PageObject], llm: ModelClient
) -> CheckResult:
    settings = page.settings
    scope = select_scope(objects, settings.verify_max_objects)
    choice = await asyncio.to_thread(
        _choose_images,
        scope,
        page.where,
        page.covered.page_number,
        page.pdf,
        page.png,
        settings,
    )
    located = [o.evidence for o in scope if o.object_id in page.located]
    outcome = await judge_page(
        llm,
        settings.llm_verify_model or "",
        scope,
        await asyncio.to_thread(_excerpt, page, located),
        choice.images,
        unresolved=page.covered.unresolved_items,
    )

    def reading_on_page(reading: str) -> str | None:
        return page_reading(reading, page.page)

    findings = {}
    for obj in objects:
        if judged := outcome.verdicts.get(obj.object_id):
            verification = judge_finding(obj, judged, reading_on_page)
            findings[obj.object_id] = Finding(verification, said=judged.as_dict())
    return CheckResult(
        findings=findings,
        problems=[(UNTAGGED, sentence) for sentence in outcome.page_problems],
        speaks_for_page=True,
        skipped=outcome.skipped,
        reason=outcome.reason,
        usage=outcome.usage,
        crops=choice.crops,
        model_failure=outcome.reason if outcome.call_failed else None,
    )


async def _judge_emptiness(page: PageEvidence, contradiction: str, llm: ModelClient) -> CheckResult:
    """The judge decides a page declared empty that a witness contradicts."""
    settings = page.settings
    png = page.png
    images = [JudgeImage("the full page", png, "image/png")] if png else []
    outcome = await judge_blank_claim(
        llm,
        settings.llm_verify_model or "",
        contradiction,
        _excerpt(page, []),
        images,
    )
    result = CheckResult(
        problems=[(UNTAGGED, sentence) for sentence in outcome.page_problems],
        speaks_for_page=True,
        skipped=outcome.skipped,
        reason=outcome.reason,
        usage=outcome.usage,
        model_failure=outcome.reason if outcome.call_failed else None,
    )
    claim = outcome.verdicts.get(BLANK_CLAIM_ID)
    if claim is None:
        return result
    if claim.verdict == "refuted":
        found = f" {claim.problem}" if claim.problem else ""
        missed = f"{contradiction} The judge finds content the extraction missed.{found}"
        result.problems.append(("content_missing", missed))
    elif claim.verdict == "confirmed":
        result.page_judged = True
    else:
        result.reason = f"the judge could not tell whether the page holds content: {contradiction}"
    return result


class JudgeCheck:
    """Basis ``judge``: with a model client, a verify model and base URL configured and the
    job's ``judge`` option on; never on a blank page or one with nothing to judge."""

    def __init__(self, llm: ModelClient | None) -> None:
        self.llm = llm

    def applies(self, page: PageEvidence, objects: list[PageObject], spoken: bool) -> bool:
        settings = page.settings
        judging = page.judge_enabled and bool(settings.llm_verify_model and settings.llm_base_url)
        emptiness = page.emptiness
        # The claim that the page is empty is the judge's to rule on where no check before
        # it has (OCR reading the page again, say).
        return (
            self.llm is not None
            and judging
            and not emptiness.blank
            and bool(objects or (emptiness.contradiction and not spoken))
        )

    async def run(self, page: PageEvidence, objects: list[PageObject]) -> CheckResult:
        if self.llm is None:
            return CheckResult()
        if contradiction := page.emptiness.contradiction:
            return await _judge_emptiness(page, contradiction, self.llm)
        return await _judge_objects(page, objects, self.llm)
