"""Where a scanned sheet names itself, read closer: found from the page's own reading in the
frame its text runs in (the heading in the largest print, the edge strip where small print
gathers); a title block too small to read in the page image is read closer and its sheet
number joins the page's OCR words."""

import numpy
import pymupdf
import pytest

from services.extract.reading.page import read_page
from services.extract.reading.textlayer import ocr_text_layer
from services.extract.reading.title_ocr import (
    apart_from,
    closer_regions,
    cut_short,
    read_already,
    title_regions,
    to_page,
    to_upright,
    with_closer_title,
)
from services.extract.rung1 import extract_rung1
from shared.infra.settings import Settings
from shared.ocr.engine import TURNS, page_raster
from shared.pagetext import Box, Word
from shared.sheet import read_title_block
from tests.support.corpus import manifest, needs_corpus, pdf_bytes
from tests.support.renderings import turned

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


def _word(text: str, bbox: tuple, size: float, direction=(1.0, 0.0)) -> Word:
    return Word(text=text, bbox=Box(*bbox), size=size, dir=direction, origin="ocr")


@pytest.mark.parametrize("turn", TURNS)
def test_upright_and_page_boxes_turn_back_and_forth(turn):
    """A box of the displayed page, turned upright and back, is the same box; upright, a
    portrait page whose content is turned a quarter is landscape."""
    box = Box(100.0, 200.0, 300.0, 260.0)
    upright = to_upright(box, turn, W, H)
    assert to_page(upright, turn, W, H) == box
    if turn in (90, 270):
        assert upright.width == box.height and upright.height == box.width


def test_the_heading_and_the_edge_strip_with_small_print_come_first():
    """Upright (text turned 270: reading bottom to top), the heading in the largest print
    with what lies under it is read closer first, then the edge strip where small print
    gathers (here the upright bottom, which is the page's right edge)."""
    # A portrait page; upright it is H wide, W tall. Heading: large words reading upwards.
    heading = _word("NERRADSCALI", (300, 900, 380, 1500), 80, (0.0, -1.0))
    small = [
        _word("LOT", (H - 100, 300 + 40 * i, H - 90, 330 + 40 * i), 10, (0.0, -1.0))
        for i in range(20)
    ]
    layer = ocr_text_layer([heading, *small], 1, H, W)
    first, strip = closer_regions(layer, 270)
    # Under the heading upright is to its right on the page: the region reaches there.
    assert first.x0 < 300 and first.x1 >= 380 + 5 * 80 and first.y0 < 900 < 1500 < first.y1
    assert strip.x0 > 0.7 * H and strip.x1 == H


def test_a_line_read_already_is_not_read_again():
    """A line the page's reading covers with words of its print size was read; one it does
    not cover, or covers with words of another size (lines merged), was not."""
    words = [_word("SHEET", (100, 100, 160, 112), 12), _word("A-101", (165, 100, 230, 112), 12)]
    covered = read_already(words)
    assert covered(numpy.array([[100, 100], [230, 100], [230, 112], [100, 112]], float))
    assert not covered(numpy.array([[100, 200], [230, 200], [230, 212], [100, 212]], float))
    assert not covered(numpy.array([[100, 100], [230, 100], [230, 140], [100, 140]], float))


def test_a_title_region_that_cut_a_line_short_is_grown_along_the_titles_lines():
    """A word of the closer reading at an end of the region along the title's lines (across
    a turned title block: down the page) is a line the region cut: the region grows six
    print sizes that way; words clear of its ends leave it as it is."""
    title = [_word("FRAMING", (107, 1155, 120, 1190), 13.0, direction=(0.0, 1.0))]
    region = Box(81.0, 1129.0, 146.0, 1216.0)
    cut = [_word("ATION", (123, 1129.5, 133, 1178), 10.0, direction=(0.0, 1.0))]
    assert cut_short(region, title, cut) == Box(81.0, 1051.0, 146.0, 1294.0)
    whole = [_word("PLAN", (100, 1140, 111, 1160), 11.0, direction=(0.0, 1.0))]
    assert cut_short(region, title, whole) is None
    flat = [_word("NOTES", (100, 100, 150, 112), 12.0)]
    assert cut_short(Box(76.0, 76.0, 219.0, 136.0), flat, flat) is None


def test_a_title_read_closer_replaces_the_words_of_its_box_and_adds_lines_the_page_missed():
    """A title in small print in the page image is read again closer (rendered with a
    margin of two print sizes): its reading replaces the page's words whose centres lie in
    the title's box; around it, only the lines the page's reading did not read are read
    and added (a title's other lines the page image merged or lost); what the page read
    around the title stays the page reading's."""
    words = [
        _word("SHEET", (100, 80, 140, 90), 10),
        _word("CENERAL", (100, 100, 150, 112), 12),
        _word("NOTES", (155, 100, 195, 112), 12),
        _word("A1", (100, 140, 130, 170), 30),
    ]
    layer = ocr_text_layer(words, 1, W, H)
    assert title_regions(layer, [1, 2], zoom=3.0) is None  # 36 px tall: read well already
    region, core = title_regions(layer, [1, 2], zoom=1.0) or (None, None)
    assert region == Box(76.0, 76.0, 219.0, 136.0) and core == Box(94.0, 94.0, 201.0, 118.0)
    # Of the lines found in the region, those reaching into the core are read, and those
    # the page's words do not cover.
    apart = apart_from(core, layer.words)
    assert apart(numpy.array([[100, 80], [140, 80], [140, 90], [100, 90]], float))
    assert not apart(numpy.array([[100, 100], [196, 100], [196, 112], [100, 112]], float))
    assert not apart(numpy.array([[100, 120], [196, 120], [196, 132], [100, 132]], float))
    closer = [
        _word("GENERAL", (101, 100, 151, 112), 12),
        _word("NOTES", (156, 100, 196, 112), 12),
        _word("AND", (101, 120, 130, 132), 12),
        _word("PLANS", (135, 120, 170, 132), 12),
    ]
    merged = with_closer_title(layer.words, closer, core)
    assert [w.text for w in merged] == ["SHEET", "A1", "GENERAL", "NOTES", "AND", "PLANS"]
    # A closer word outside the title's box that the page's reading covers is not added
    # twice, nor a piece of a title word found on a line of its own beside the box.
    again = with_closer_title(layer.words, [_word("SHEFT", (101, 80, 141, 90), 10)], core)
    assert [w.text for w in again] == ["SHEET", "A1"]
    below = _word("PLANS", (170, 111, 200, 123), 12)  # its centre in the box, its foot past it
    piece = _word("ANS", (172, 114, 198, 126), 12)  # read again on a line of its own
    merged = with_closer_title([*layer.words, below], [*closer, piece], core)
    assert [w.text for w in merged] == ["SHEET", "A1", "GENERAL", "NOTES", "AND", "PLANS"]
    # A piece of a line the closer reading found again in a box of its own is dropped.
    again = [*closer, _word("ES", (180, 99, 198, 113), 12)]
    assert [w.text for w in with_closer_title(layer.words, again, core)][2:4] == [
        "GENERAL",
        "NOTES",
    ]
    assert len(with_closer_title(layer.words, again, core)) == 6


def test_a_title_in_large_print_is_read_closer_where_ocr_was_unsure_of_a_word():
    """Large print is read well in the page image, unless OCR was unsure of a word of it
    (two lines read as one tall "POF", 0.84): then it is read again closer too."""
    sure = [_word("ROOF", (100, 100, 160, 125), 25), _word("PLAN", (165, 100, 220, 125), 25)]
    layer = ocr_text_layer([w.model_copy(update={"confidence": 0.99}) for w in sure], 1, W, H)
    assert title_regions(layer, [0, 1], zoom=2.0) is None
    unsure = [sure[0].model_copy(update={"text": "POF", "confidence": 0.84}), sure[1]]
    layer = ocr_text_layer(unsure, 1, W, H)
    assert title_regions(layer, [0, 1], zoom=2.0) is not None


@pytest.mark.slow
async def test_a_small_number_on_a_scan_is_read_closer(readers):
    """The page image alone gives no sheet number; the closer reading of the title block
    finds it, and its words join the page's (marked OCR)."""
    pdf = scanned_sheet("E-501")
    page = read_page(pdf, 1, SETTINGS)
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


# A corpus sheet whose text is drawn as outlines (OCR only): 11x17, its sheet number boxed
# in the lower right of a right strip.
OUTLINED = ("measurex__kirkland-sample-plans.pdf", 1, "A1")


@needs_corpus
@pytest.mark.slow
async def test_a_title_in_small_close_lines_is_read_again_closer(readers):
    """The outlined sheet's title, four short lines of small print stacked tighter than the
    page image's boxes are tall, reads as printed once its box is read again closer."""
    file, page_number, number = OUTLINED
    out = await extract_rung1(
        pdf_bytes(file), page_number, SETTINGS, None, readers=readers, worker_id="t", job_id="t"
    )
    sheet = out.result.sheet
    assert (sheet.sheet_number, sheet.sheet_title) == (number, "SITE PLAN AND GENERAL NOTES")


@needs_corpus
@pytest.mark.slow
async def test_a_turned_title_block_reads_its_stacked_title_lines_upright(readers):
    """The same set fed sideways (its content turned 90°, the title block's text running down
    the page): the four lines of sheet 2's title, stacked tighter than the page image's
    boxes are tall, are found with the title's region turned upright (found as they run, the
    detector merges them) and read whole."""
    file, _, _ = OUTLINED
    [printed] = [s for e in manifest() if e["file"] == file for s in e["sheets"] if s["page"] == 2]
    pdf = turned(pdf_bytes(file), 90)
    out = await extract_rung1(pdf, 2, SETTINGS, None, readers=readers, worker_id="t", job_id="t")
    sheet = out.result.sheet
    assert (sheet.sheet_number, sheet.sheet_title) == (
        printed["sheet_number"],
        printed["sheet_title"],
    )


def _turned_inside_a_portrait_page(pdf: bytes, page_number: int) -> bytes:
    """The page scanned sideways (at 200 dpi) onto a portrait page (``/Rotate 0``): its
    title strip now along an edge it never sits on, its text running down the page."""
    src = pymupdf.open(stream=pdf)
    shown = src[page_number - 1].rect
    scan = src[page_number - 1].get_pixmap(dpi=200, colorspace=pymupdf.csGRAY)
    doc = pymupdf.open()
    page = doc.new_page(width=shown.height, height=shown.width)
    page.insert_image(page.rect, stream=scan.tobytes("png"), rotate=90)
    assert page.rotation == 0
    return doc.tobytes()


def _rasterised_in_tiles(pdf: bytes, page_number: int, across: int, down: int) -> bytes:
    """The page as a mosaic of image tiles (how a plotter driver or Ghostscript sends a
    raster sheet): each piece rendered at 200 dpi and placed as an image of its own."""
    src = pymupdf.open(stream=pdf)
    shown = src[page_number - 1].rect
    doc = pymupdf.open()
    page = doc.new_page(width=shown.width, height=shown.height)
    w, h = shown.width / across, shown.height / down
    for i in range(across):
        for j in range(down):
            clip = pymupdf.Rect(i * w, j * h, (i + 1) * w, (j + 1) * h)
            piece = src[page_number - 1].get_pixmap(dpi=200, clip=clip, colorspace=pymupdf.csGRAY)
            page.insert_image(clip, stream=piece.tobytes("png"))
    return doc.tobytes()


@needs_corpus
@pytest.mark.slow
async def test_a_sheet_turned_inside_a_portrait_page_reads_its_number(readers):
    """The same sheet number is read from a corpus sheet turned a quarter inside a portrait
    page as from the sheet itself, and its words run down the displayed page."""
    file, page_number, number = OUTLINED
    pdf = _turned_inside_a_portrait_page(pdf_bytes(file), page_number)
    out = await extract_rung1(pdf, 1, SETTINGS, None, readers=readers, worker_id="t", job_id="t")
    assert out.result.sheet.sheet_number == number
    down = [w for w in out.text_layer.words if abs(w.dir[1]) > 0.9]
    assert len(down) > 0.8 * len(out.text_layer.words)


@needs_corpus
@pytest.mark.slow
async def test_a_sheet_rasterised_in_tiles_reads_its_number(readers):
    """A corpus sheet sent as a mosaic of image tiles reads the same sheet number."""
    file, page_number, number = OUTLINED
    pdf = _rasterised_in_tiles(pdf_bytes(file), page_number, across=6, down=5)
    assert len(pymupdf.open(stream=pdf)[0].get_images()) == 30
    out = await extract_rung1(pdf, 1, SETTINGS, None, readers=readers, worker_id="t", job_id="t")
    assert out.result.sheet.sheet_number == number
