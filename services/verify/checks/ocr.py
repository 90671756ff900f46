"""The OCR check as a check: a sample of the page's claims read from its render
(``services.verify.ocr_check``), basis ``ocr``."""

import asyncio
import logging

from services.extract.ocr import OcrEngine
from services.verify.checks.base import CheckResult, Finding, PageEvidence
from services.verify.ocr_check import read_claims, reading_verdicts, render_claims, sample_claims
from shared.models import PageObject
from shared.sources import PDF_LOCK, open_pdf

log = logging.getLogger("sheetflow.verify")


def read_sample(page: PageEvidence, objects: list[PageObject], engine: OcrEngine) -> CheckResult:
    """The OCR check on a sample of the page's claims: the read objects' verdicts, the
    page-level problems, and whether the title block's number was confirmed. CPU-bound."""
    settings = page.settings
    covered = page.covered
    claims = sample_claims(
        objects,
        page.text_layer,
        covered.reading,
        settings.verify_ocr_max_objects,
        settings.verify_ocr_lines_per_font,
        page.tolerances.ocr,
    )
    if not claims or page.pdf is None:
        return CheckResult()
    with PDF_LOCK:
        try:
            doc = open_pdf(page.pdf)
            pdf_page = doc[0 if doc.page_count == 1 else covered.page_number - 1]
            crops = render_claims(pdf_page.get_displaylist(), claims, page.tolerances.ocr)
        except Exception as exc:  # MuPDF raises many kinds on broken content
            log.warning(
                "page %d: no OCR check, the page did not render (%s)", covered.page_number, exc
            )
            return CheckResult()
    verdicts, problems, identity_read = reading_verdicts(
        objects, read_claims(engine, claims, crops, page.tolerances.ocr)
    )
    return CheckResult(
        findings={oid: Finding(v) for oid, v in verdicts.items()},
        problems=problems,
        page_judged=identity_read,
    )


class OcrCheck:
    """Basis ``ocr``: on a text page, with an engine and ``verify_ocr_check`` on."""

    def __init__(self, engine: OcrEngine | None) -> None:
        self.engine = engine

    def applies(self, page: PageEvidence, objects: list[PageObject], spoken: bool) -> bool:
        return (
            self.engine is not None
            and page.settings.verify_ocr_check
            and bool(page.pdf)
            and page.text_layer.has_text_layer
        )

    async def run(self, page: PageEvidence, objects: list[PageObject]) -> CheckResult:
        if self.engine is None:
            return CheckResult()
        return await asyncio.to_thread(read_sample, page, objects, self.engine)
