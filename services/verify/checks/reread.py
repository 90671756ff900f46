"""A page the extraction found nothing on, that its text layer, drawings or ink contradict,
read again by OCR from its image (basis ocr): what it shows is said, so a declared-blank page
is never just "content missing" when its text can be read."""

import asyncio
import logging

from services.verify.checks.base import CheckResult, PageEvidence
from shared.contracts.interfaces import Ocr
from shared.contracts.models import PageObject
from shared.ocr.engine import RECOGNITION_DPI, render_area, text_area

log = logging.getLogger("sheetflow.verify")

# Words of the reading quoted in the problem, at most.
QUOTED_WORDS = 12


def read_again(page: PageEvidence, engine: Ocr) -> list[str]:
    """The words OCR reads on the page: lines found on its image, read from a sharp render of
    the area holding them (CPU-bound)."""
    png, pdf, layer = page.png, page.pdf, page.text_layer
    if png is None or pdf is None or layer.width <= 0:
        return []
    lines = engine.find_lines(png, _zoom(png, layer.width))
    if not lines:
        return []
    raster = render_area(pdf, page.covered.page_number, text_area(lines), RECOGNITION_DPI)
    turn = engine.page_turn(raster, lines)
    return [w.text for w in engine.read_lines(raster, lines, turn)]


def _zoom(png: bytes, width: float) -> float:
    """The page image's pixels per point (its width over the page's)."""
    # A PNG's width is the big-endian integer at bytes 16-19 of its header.
    return int.from_bytes(png[16:20], "big") / width


class RereadCheck:
    """Runs on a page with no objects that a witness contradicts, with an OCR engine."""

    def __init__(self, engine: Ocr | None) -> None:
        self.engine = engine

    def applies(self, page: PageEvidence, objects: list[PageObject], spoken: bool) -> bool:
        return self.engine is not None and not objects and bool(page.emptiness.contradiction)

    async def run(self, page: PageEvidence, objects: list[PageObject]) -> CheckResult:
        contradiction = page.emptiness.contradiction
        if self.engine is None or contradiction is None:
            return CheckResult()
        try:
            words = await asyncio.to_thread(read_again, page, self.engine)
        except Exception as exc:  # MuPDF and the OCR runtime raise many kinds on a bad page
            log.warning("page %d: not read again by OCR (%s)", page.covered.page_number, exc)
            return CheckResult()
        if not words:
            return CheckResult(reason=f"{contradiction} Read again by OCR, it shows no text.")
        quoted = " ".join(words[:QUOTED_WORDS]) + (" …" if len(words) > QUOTED_WORDS else "")
        missing = (
            f"{contradiction.rstrip('.')}: read again by OCR, it shows {len(words)} words "
            f'("{quoted}"), which the extraction missed.'
        )
        return CheckResult(problems=[("content_missing", missing)], speaks_for_page=True)
