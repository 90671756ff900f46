"""A scanned set whose sheets print their number in one cell of one title block, one sheet
printing it close after its label: at the page image's resolution OCR reads that label and
value as one word ("NO.A-103") and the sheet's own reading finds no number, where the set's
other sheets show exactly where it sits (issue 36: the set's template re-reads the cell)."""

import pymupdf

from shared.pagetext import Box, Word

W, H = 17 * 72, 11 * 72
STRIP = W - 200  # the title strip's inner wall
SCAN_DPI = 100
# Where each sheet's number starts after its label (points from the strip's wall): the
# last sheet's sits close after the label's end.
APART, CLOSE = 68.0, 46.0
NUMBERS = ("A-101", "A-102", "A-103")


def _sheet(page: pymupdf.Page, number: str, at: float) -> None:
    page.draw_rect(pymupdf.Rect(20, 20, W - 20, H - 20), width=1.5)
    page.insert_text((60, 80), "GENERAL NOTES", fontsize=16)
    note = "1. VERIFY ALL DIMENSIONS IN THE FIELD BEFORE WORK BEGINS."
    page.insert_text((60, 120), note, fontsize=10)
    page.draw_line((STRIP, 20), (STRIP, H - 20), width=1.5)
    for y in (H - 200, H - 110):
        page.draw_line((STRIP, y), (W - 20, y), width=1)
    page.insert_text((STRIP + 8, H - 185), "DRAWING TITLE", fontsize=6)
    page.insert_text((STRIP + 8, H - 160), "FLOOR PLAN", fontsize=11)
    page.insert_text((STRIP + 8, H - 95), "SHEET NO.", fontsize=7)
    page.insert_text((STRIP + at, H - 95), number, fontsize=14)


def glued_number_scan(close: int = 1) -> bytes:
    """The set (``NUMBERS``, the last ``close`` printed close after their label) scanned at
    ``SCAN_DPI`` in grey, each page an image only."""
    drawn = pymupdf.open()
    for k, number in enumerate(NUMBERS):
        at = CLOSE if k >= len(NUMBERS) - close else APART
        _sheet(drawn.new_page(width=W, height=H), number, at)
    scan = pymupdf.open()
    for page in drawn.pages():
        pixels = page.get_pixmap(dpi=SCAN_DPI, colorspace=pymupdf.csGRAY)
        target = scan.new_page(width=W, height=H)
        target.insert_image(target.rect, stream=pixels.tobytes("jpeg", jpg_quality=60))
    return scan.tobytes()


def ocr_word(text: str, box: tuple[float, float, float, float], size: float) -> Word:
    return Word(text=text, bbox=Box(*box), size=size, origin="ocr", confidence=0.9)


# The same sheet as OCR words, for tests with a scripted OCR: the page's own words (notes,
# and in the number's cell the label and value read as one glued word, so its reading finds
# no number there) ...
PAGE_WORDS = [
    ocr_word("GENERAL", (60.0, 60.0, 160.0, 76.0), 16),
    ocr_word("NOTES", (170.0, 60.0, 240.0, 76.0), 16),
    ocr_word("SHEETNO.A-103", (1060.0, 742.0, 1160.0, 758.0), 16),
]
# ... and the cell read closer: the label and the value apart.
CELL_WORDS = [
    ocr_word("SHEET", (1070.0, 722.0, 1100.0, 730.0), 8),
    ocr_word("NO.", (1103.0, 722.0, 1118.0, 730.0), 8),
    ocr_word("A-103", (1100.0, 740.0, 1160.0, 760.0), 20),
]
