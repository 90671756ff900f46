"""A title block drawn as outlines on a page whose text layer holds its other words: found
from the page image (an inked edge strip the text layer has no words in), OCR'd as one
region, and the sheet's number and title read from its OCR words; never looked at where the
title block has words of its own."""

from dataclasses import dataclass, field

import pymupdf
import pytest

from services.extract.reading.page import Readers, read_page
from services.extract.reading.title_ocr import text_turn, wordless_title_block
from services.extract.rung1 import extract_rung1
from shared.contracts.interfaces import Raster
from shared.infra.settings import Settings
from shared.pagetext import Box, Word
from tests.support.fakes import InlinePageReader, ScriptedOcr

W, H = 17 * 72, 11 * 72
STRIP = W - 160  # the title strip's inner wall
SETTINGS = Settings(_env_file=None)


def _title_block(page: pymupdf.Page, number: str, title: str) -> None:
    """A right title strip: ruled cells, each a small label over its value."""
    page.draw_line((STRIP, 20), (STRIP, H - 20), width=1.5)
    for y in (H - 200, H - 120, H - 60):
        page.draw_line((STRIP, y), (W - 20, y), width=1)
    page.insert_text((STRIP + 8, H - 185), "DRAWING TITLE", fontsize=6)
    page.insert_text((STRIP + 8, H - 160), title, fontsize=11)
    page.insert_text((STRIP + 8, H - 105), "SHEET NUMBER", fontsize=6)
    page.insert_text((STRIP + 8, H - 78), number, fontsize=20)
    page.insert_text((STRIP + 8, H - 45), 'SCALE: 1/4" = 1\'-0"', fontsize=7)


def _notes(page: pymupdf.Page) -> None:
    page.draw_rect(pymupdf.Rect(20, 20, W - 20, H - 20), width=1.5)
    page.insert_text((60, 80), "GENERAL NOTES", fontsize=16)
    for i, note in enumerate(
        [
            "1. VERIFY ALL DIMENSIONS IN THE FIELD BEFORE WORK BEGINS.",
            "2. ALL WORK TO COMPLY WITH THE BUILDING CODE IN FORCE.",
            "3. DO NOT SCALE THE DRAWINGS.",
        ]
    ):
        page.insert_text((60, 120 + 22 * i), note, fontsize=10)


def outlined_title_block_sheet(number: str, title: str) -> bytes:
    """An 11x17 sheet whose notes are text and whose title block is drawn as outlines (its
    lettering paths: ``get_svg_image(text_as_path=True)`` of the block alone, laid over)."""
    block = pymupdf.open()
    _title_block(block.new_page(width=W, height=H), number, title)
    svg = block[0].get_svg_image(text_as_path=True)
    with pymupdf.open("svg", stream=svg.encode()) as drawn:
        outlined = pymupdf.open("pdf", drawn.convert_to_pdf())
    doc = pymupdf.open()
    page = doc.new_page(width=W, height=H)
    _notes(page)
    page.show_pdf_page(page.rect, outlined, 0)
    return doc.tobytes()


def text_title_block_sheet(number: str, title: str) -> bytes:
    """The same sheet with its title block set in text."""
    doc = pymupdf.open()
    page = doc.new_page(width=W, height=H)
    _notes(page)
    _title_block(page, number, title)
    return doc.tobytes()


@dataclass
class RegionOcr(ScriptedOcr):
    """OCR that reads ``region_words`` from any region it is given, and counts the regions
    (a page's own OCR is the scripted one's)."""

    region_words: list[Word] = field(default_factory=list)
    regions: list[Box] = field(default_factory=list)

    def ocr_raster(self, raster: Raster, turn: int = 0, *, detection_zoom=None, skip=None):
        height, width = raster.pixels.shape
        x1, y1 = raster.x0 + width / raster.zoom, raster.y0 + height / raster.zoom
        self.regions.append(Box(raster.x0, raster.y0, x1, y1))
        return list(self.region_words)


def _ocr_word(
    text: str, box: tuple[float, float, float, float], size: float, confidence: float = 0.99
) -> Word:
    return Word(text=text, bbox=Box(*box), size=size, origin="ocr", confidence=confidence)


# What OCR reads in the outlined strip (its words where the sheet prints them).
STRIP_WORDS = [
    _ocr_word("DRAWING", (STRIP + 8, H - 191, STRIP + 40, H - 185), 6),
    _ocr_word("TITLE", (STRIP + 42, H - 191, STRIP + 62, H - 185), 6),
    _ocr_word("FLOOR", (STRIP + 8, H - 170, STRIP + 45, H - 159), 11),
    _ocr_word("PLAN", (STRIP + 48, H - 170, STRIP + 78, H - 159), 11),
    _ocr_word("SHEET", (STRIP + 8, H - 111, STRIP + 30, H - 105), 6),
    _ocr_word("NUMBER", (STRIP + 32, H - 111, STRIP + 60, H - 105), 6),
    _ocr_word("A-101", (STRIP + 8, H - 96, STRIP + 62, H - 76), 20),
]


def _fake_readers(ocr: RegionOcr) -> Readers:
    return Readers(pages=InlinePageReader(), ocr=ocr)


def test_an_outlined_title_strip_is_found_and_a_worded_one_is_not():
    """The inked right strip with no words is the title block drawn as outlines; the same
    strip set in text is not (it was read)."""
    outlined = read_page(outlined_title_block_sheet("A-101", "FLOOR PLAN"), 1, SETTINGS)
    layer = outlined.text_layer
    assert layer.has_text_layer and text_turn(layer.words) == 0
    region = wordless_title_block(layer, outlined.png, outlined.zoom, 0)
    assert region is not None
    assert region.x0 == pytest.approx(STRIP, abs=3) and region.x1 == W
    worded = read_page(text_title_block_sheet("A-101", "FLOOR PLAN"), 1, SETTINGS)
    assert wordless_title_block(worded.text_layer, worded.png, worded.zoom, 0) is None


def test_a_blank_margin_is_no_title_block():
    """A sheet of notes alone, its edges blank, has no outlined title block to read."""
    doc = pymupdf.open()
    _notes(doc.new_page(width=W, height=H))
    page = read_page(doc.tobytes(), 1, SETTINGS)
    assert wordless_title_block(page.text_layer, page.png, page.zoom, 0) is None


async def test_the_outlined_title_block_is_ocrd_once_and_names_the_sheet():
    """The page's reading lacks a number; the outlined strip, and only it, is OCR'd; the
    number and title come from its OCR words, added to the page's text layer."""
    ocr = RegionOcr(region_words=STRIP_WORDS)
    pdf = outlined_title_block_sheet("A-101", "FLOOR PLAN")
    out = await extract_rung1(
        pdf, 1, SETTINGS, None, readers=_fake_readers(ocr), worker_id="t", job_id="t"
    )
    assert len(ocr.regions) == 1 and ocr.regions[0].x0 > W / 2
    sheet = out.result.sheet
    assert (sheet.sheet_number, sheet.sheet_title) == ("A-101", "FLOOR PLAN")
    assert out.text_layer.has_text_layer and out.text_layer.source == "pdf"
    reading = out.result.reading
    assert reading is not None and reading.number is not None
    assert all(out.text_layer.words[i].origin == "ocr" for i in reading.number.word_ids)


async def test_a_title_block_with_words_is_never_ocrd():
    """A sheet whose title block is set in text is read from its words alone: no OCR."""
    ocr = RegionOcr(region_words=STRIP_WORDS)
    pdf = text_title_block_sheet("A-101", "FLOOR PLAN")
    out = await extract_rung1(
        pdf, 1, SETTINGS, None, readers=_fake_readers(ocr), worker_id="t", job_id="t"
    )
    assert ocr.regions == []
    assert out.result.sheet.sheet_number == "A-101"


async def test_ocr_that_adds_nothing_to_the_identity_leaves_the_page_as_it_was():
    """OCR of the strip that reads no number or title is not kept: the page's words stay its
    text layer's own."""
    ocr = RegionOcr(region_words=[_ocr_word("NORTH", (STRIP + 8, H - 60, STRIP + 50, H - 50), 8)])
    pdf = outlined_title_block_sheet("A-101", "FLOOR PLAN")
    out = await extract_rung1(
        pdf, 1, SETTINGS, None, readers=_fake_readers(ocr), worker_id="t", job_id="t"
    )
    assert len(ocr.regions) == 1
    assert all(w.origin == "pdf" for w in out.text_layer.words)
    assert out.result.sheet.sheet_number is None


@pytest.mark.slow
async def test_an_outlined_title_block_reads_its_number_with_the_real_ocr(readers):
    """With the OCR engine a worker runs, the outlined title block's number is read."""
    pdf = outlined_title_block_sheet("A-101", "FLOOR PLAN")
    out = await extract_rung1(pdf, 1, SETTINGS, None, readers=readers, worker_id="t", job_id="t")
    assert out.result.sheet.sheet_number == "A-101"
    assert out.result.sheet.sheet_title == "FLOOR PLAN"


@pytest.mark.parametrize(
    ("printed", "read", "guess", "reason"),
    [
        (("FLOOR", 8, 45), ("FIOOR", 0.80), "FIOOR PLAN", "OCR was unsure of 'FIOOR' (0.80)"),
        (("PLAN", 52, 70), ("()", 0.995), "FLOOR ()", "OCR read '()', brackets whose content"),
    ],
)
async def test_a_title_ocr_was_unsure_of_is_a_guess_not_the_sheets_title(
    printed, read, guess, reason
):
    """OCR read a letter of the title unsurely ("FIOOR", 0.80), or read brackets with
    nothing in them however sure of them ("(一)", one stroke like a rule, read "()"): the
    number stands, and the title is withheld as the page's guess (the set takes it only
    where its other sheets print theirs at its place), its reason naming the word."""
    word, x0, x1 = printed
    text, confidence = read
    at = (STRIP + x0, H - 170, STRIP + x1, H - 159)
    words = [
        _ocr_word(text, at, 11, confidence=confidence) if w.text == word else w for w in STRIP_WORDS
    ]
    pdf = outlined_title_block_sheet("A-101", "FLOOR PLAN")
    readers = _fake_readers(RegionOcr(region_words=words))
    out = await extract_rung1(pdf, 1, SETTINGS, None, readers=readers, worker_id="t", job_id="t")
    reading = out.result.reading
    assert reading is not None and reading.title is None
    assert (out.result.sheet.sheet_number, out.result.sheet.sheet_title) == ("A-101", None)
    assert reading.title_guess is not None and reading.title_guess.text == guess
    assert reason in reading.title_reason
