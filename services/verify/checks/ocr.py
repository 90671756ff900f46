"""The OCR check as a check: a sample of the page's claims read from its render
(``services.verify.ocr_check``), basis ``ocr``; a font read alike on another page of the job
is not read again but cited (``services.verify.fonts``)."""

import asyncio
import logging
from collections.abc import Sequence

from services.verify.checks.base import CheckResult, Finding, PageEvidence
from services.verify.fonts import FontLedger
from services.verify.ocr_check import (
    Claim,
    Reading,
    agreed_fonts,
    candidates,
    choose,
    cited_verdicts,
    read_claims,
    reading_verdicts,
    render_claims,
)
from shared.contracts.interfaces import Ocr
from shared.contracts.models import PageObject
from shared.pdf.sources import PDF_LOCK, open_pdf

log = logging.getLogger("sheetflow.verify")


def read_lines(page: PageEvidence, claims: Sequence[Claim], engine: Ocr) -> list[Reading]:
    """The claims' lines rendered from the page and read in one batched call (CPU-bound);
    none when the page does not render."""
    if not claims or page.pdf is None:
        return []
    number = page.covered.page_number
    tolerances = page.tolerances.ocr
    with PDF_LOCK:
        try:
            doc = open_pdf(page.pdf)
            pdf_page = doc[0 if doc.page_count == 1 else number - 1]
            crops = render_claims(pdf_page.get_displaylist(), claims, tolerances)
        except Exception as exc:  # MuPDF raises many kinds on broken content
            log.warning("page %d: no OCR check, the page did not render (%s)", number, exc)
            return []
    return read_claims(engine, claims, crops, tolerances)


class OcrCheck:
    """Basis ``ocr``: on a text page, with an engine and ``verify_ocr_check`` on."""

    def __init__(self, engine: Ocr | None, fonts: FontLedger | None = None) -> None:
        self.engine = engine
        self.fonts = fonts or FontLedger(None)

    def applies(self, page: PageEvidence, objects: list[PageObject], spoken: bool) -> bool:
        return (
            self.engine is not None
            and page.settings.verify_ocr_check
            and bool(page.pdf)
            and page.text_layer.has_text_layer
        )

    async def run(self, page: PageEvidence, objects: list[PageObject]) -> CheckResult:
        """The title block's number and title are read on every page; of the objects, one
        line per font not yet read alike on a page of the job (waiting for a page that is
        reading one now), and one object per font read alike elsewhere cites that reading."""
        engine = self.engine
        if engine is None:
            return CheckResult()
        settings, tolerances = page.settings, page.tolerances.ocr
        job, number = page.covered.job_id, page.covered.page_number
        found = candidates(objects, page.text_layer, page.covered.reading, tolerances)
        if not (found.title or found.objects):
            return CheckResult()
        max_objects, per_font = settings.verify_ocr_max_objects, settings.verify_ocr_lines_per_font
        checked, claimed, waiting = await self.fonts.claim(job, number, found.fonts)
        readings: list[Reading] = []
        try:
            first = choose(
                found.objects, found.title, max_objects, per_font, checked=checked, skip=waiting
            )
            claims = found.title + first.read
            readings = await asyncio.to_thread(read_lines, page, claims, engine)
            cited = list(first.cited)
            if waiting:
                more = await self.fonts.wait(job, waiting)
                taken = {c.claim_id for c in first.read} | {c.claim_id for c, _ in first.cited}
                second = choose(
                    [c for c in found.objects if c.claim_id not in taken],
                    claims,
                    max_objects - len(first.read),
                    per_font,
                    checked=more,
                    skip=set(checked),
                    at_least_one=not (first.read or first.cited),
                )
                cited += second.cited
                readings += await asyncio.to_thread(read_lines, page, second.read, engine)
        finally:
            agreed = agreed_fonts(readings, page.text_layer, number)
            await self.fonts.settle(job, claimed, agreed)
            if read_here := sorted(set(agreed) & claimed):
                log.info("page %d: read font objects %s alike for the job", number, read_here)
        verdicts, problems, identity_read = reading_verdicts(objects, readings)
        verdicts = cited_verdicts(objects, cited) | verdicts
        return CheckResult(
            findings={oid: Finding(v) for oid, v in verdicts.items()},
            problems=problems,
            page_judged=identity_read,
            lines_read=len(readings),
            title_block_read=identity_read,
        )
