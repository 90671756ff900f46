"""A scanned sheet whose title block is too small to read in the page image: extract reads
the title block again, closer, and its sheet number joins the page's OCR words."""

import pymupdf
import pytest

from services.extract.ocr import page_raster
from services.extract.pipeline import _read_page, extract_rung1
from services.extract.textlayer import ocr_text_layer
from services.extract.title_ocr import title_block_regions
from shared.settings import Settings
from shared.sheet import read_title_block

W, H = 36 * 72, 24 * 72
SETTINGS = Settings(_env_file=None)


def scanned_sheet(number: str) -> bytes:
    """A 36 x 24 in sheet scanned at 120 dpi: notes, and a right strip whose sheet number is
    printed in 9 pt under a 6 pt label (7 px high in the 2048 px page image)."""
    src = pymupdf.open()
    page = src.new_page(width=W, height=H)
    page.draw_rect(pymupdf.Rect(36, 36, W - 36, H - 36), width=2)
    page.insert_text((200, 300), "GENERAL NOTES", fontsize=30)
    page.insert_text((200, 350), "1. VERIFY ALL DIMENSIONS IN THE FIELD.", fontsize=24)
    x = W - 300
    page.draw_line((x, 36), (x, H - 36), width=2)
    page.insert_text((x + 20, H - 120), "SHEET NO.", fontsize=6)
    page.insert_text((x + 20, H - 100), number, fontsize=9)
    scan = page.get_pixmap(dpi=120, colorspace=pymupdf.csGRAY)
    doc = pymupdf.open()
    doc.new_page(width=W, height=H).insert_image(
        pymupdf.Rect(0, 0, W, H), stream=scan.tobytes("jpeg")
    )
    return doc.tobytes()


def test_title_block_regions_follow_the_sheet_frame():
    """The regions are the lower right strip and the bottom band of the sheet: of its ruled
    frame where one was read (a frame inside larger paper), else of the page."""
    right, bottom = title_block_regions(ocr_text_layer([], 1, W, H))
    assert right[0] > 0.75 * W and right[1] > 0.5 * H and right[2:] == (W, H)
    assert bottom[1] > 0.8 * H and bottom[2] == right[0] and bottom[3] == H
    framed = ocr_text_layer([], 1, W, H, rules=[(36, 900, 1200, 900), (1200, 900, 1200, H - 36)])
    right, _ = title_block_regions(framed)
    assert right[2] == 1200 and right[3] == H - 36


@pytest.mark.slow
async def test_a_small_number_on_a_scan_is_read_closer(readers):
    """The page image alone gives no sheet number; the closer reading of the title block
    finds it, and its words replace the coarse ones there (marked OCR)."""
    pdf = scanned_sheet("E-501")
    page = _read_page(pdf, 1, SETTINGS)
    lines = readers.ocr.find_lines(page.png, page.zoom)
    coarse = ocr_text_layer(
        readers.ocr.read_lines(page_raster(page.png, page.zoom), lines), 1, W, H
    )
    assert read_title_block(coarse).number is None
    out = await extract_rung1(pdf, 1, SETTINGS, None, readers=readers, worker_id="t", job_id="t")
    reading = read_title_block(out.text_layer)
    assert reading.number == "E-501"
    assert all(out.text_layer.words[i].origin == "ocr" for i in reading.number_words)
    assert out.result.sheet.sheet_number == "E-501"
