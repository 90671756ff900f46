"""OCR of pages without a text layer, on small synthetic scans (the engine of the session's
page readers loads once; each test reads a letter page or a part of one)."""

import itertools
from types import SimpleNamespace

import numpy
import pymupdf
import pytest

from services.extract.reading import page as page_reading
from services.extract.reading.page import Readers
from services.extract.reading.render import encode_png, render_page, render_zoom
from services.extract.rung1 import extract_rung1
from shared.infra.settings import Settings
from shared.ocr.engine import (
    RECOGNITION_DPI,
    OcrEngine,
    _Line,
    _words,
    page_raster,
    render_area,
    text_area,
)
from shared.pagetext import Word
from tests.support.pdfs import add_scanned_page, make_pdf, scanned_pdf

ARCH_E = (48 * 72, 36 * 72)
SMALL_LINES = ["ELECTRICAL CONTRACTOR SHALL VERIFY", "CIRCUIT 12 PANEL LP-2"]


def _page_image(pdf: bytes, max_px: int = 1000) -> tuple[bytes, float]:
    """The page image extract makes (``max_px`` on the long side) and its pixels per point."""
    page = pymupdf.open(stream=pdf, filetype="pdf")[0]
    return encode_png(render_page(page, max_px, 16_000_000)), render_zoom(page, max_px, 16_000_000)


@pytest.fixture
def ocr(readers: Readers) -> OcrEngine:
    """The session's engine: the real one, whose models load once."""
    assert isinstance(readers.ocr, OcrEngine)
    return readers.ocr


def _page_ocr(ocr: OcrEngine, pdf: bytes, max_px: int = 1000) -> list[Word]:
    """What extract does on a scanned page (in this process): lines found on the page image,
    read from a render of the area holding them at ``RECOGNITION_DPI``."""
    lines = ocr.find_lines(*_page_image(pdf, max_px))
    if not lines:
        return []
    return ocr.read_lines(render_area(pdf, 1, text_area(lines), RECOGNITION_DPI), lines)


def _texts(words: list[Word]) -> list[str]:
    return [w.text for w in words]


def _inside(bbox, area) -> bool:
    return area[0] <= bbox[0] and area[1] <= bbox[1] and bbox[2] <= area[2] and bbox[3] <= area[3]


async def test_scanned_page_is_read_by_ocr_with_bboxes_in_points(readers):
    """An image-only page is OCRed offline: notes found, grounded "ocr", boxes in points."""
    # a 1000 px image keeps the 18 pt text ~23 px tall: plenty for OCR, and quicker
    settings = Settings(_env_file=None, page_image_max_px=1000)
    out = await extract_rung1(
        scanned_pdf(), 1, settings, None, readers=readers, worker_id="w", job_id="j"
    )
    assert out.text_layer.source == "ocr" and not out.result.has_text_layer
    texts = [o.source_text for o in out.result.objects]
    assert "1. VERIFY ALL DIMENSIONS" in texts
    note = out.result.objects[texts.index("1. VERIFY ALL DIMENSIONS")]
    assert note.object_type == "general_note" and note.grounding == "ocr"
    # drawn at x=60 pt on a baseline at y=130 pt (18 pt text) in a 612 x 792 page
    assert note.bbox and 50 < note.bbox[0] < 70 and 105 < note.bbox[1] < 135


def test_words_are_placed_along_their_line(ocr):
    """Each word of a line gets its own box, in order along the line, on the line's band,
    running left to right; its size is about the line's height."""
    words = _page_ocr(ocr, scanned_pdf())
    line = [w for w in words if 110 < (w.bbox[1] + w.bbox[3]) / 2 < 130]
    assert _texts(line) == ["1.", "VERIFY", "ALL", "DIMENSIONS"]
    starts = [w.bbox[0] for w in line]
    assert starts == sorted(starts) and 50 < starts[0] < 70
    assert all(a.bbox[2] <= b.bbox[0] + 2 for a, b in itertools.pairwise(line))
    # "DIMENSIONS" (10 capitals at 18 pt) is about 120 pt long
    assert 90 < line[-1].bbox[2] - line[-1].bbox[0] < 150
    assert all(w.dir == (1.0, 0.0) and w.origin == "ocr" and 14 < w.size < 40 for w in line)


def test_small_text_is_read_from_a_sharper_render_than_the_page_image(ocr):
    """6 pt text is about 8 px tall on a 1000 px page image; read from the 300 DPI render of
    where it was found, every word comes out right."""
    pdf = make_pdf(lambda doc: add_scanned_page(doc, SMALL_LINES, fontsize=6, dpi=300))
    assert _texts(_page_ocr(ocr, pdf)) == " ".join(SMALL_LINES).split()


def test_vertical_text_reading_upwards_is_read_with_its_direction(ocr):
    """Lines printed bottom to top (how sheets print vertical text) are read the right way
    round, running up the page, in the column where they were printed."""
    pdf = make_pdf(lambda doc: add_scanned_page(doc, ["SEE SHEET A101"], rotate=90))
    words = _page_ocr(ocr, pdf)
    assert _texts(words) == ["SEE", "SHEET", "A101"]
    assert all(w.dir == (0.0, -1.0) for w in words)
    # the line starts at y=700 pt and runs up; its letters stand left of x=60 pt
    assert words[0].bbox[3] > words[1].bbox[3] > words[2].bbox[3]
    assert all(35 < w.bbox[0] and w.bbox[2] < 70 and w.bbox[3] < 710 for w in words)


def test_words_on_a_rotated_page_are_in_the_displayed_frame(ocr):
    """On a page with /Rotate 90 the scan's lines show running down the page: they are read
    top to bottom, and their boxes sit where the displayed page shows them."""
    doc = pymupdf.open()
    page = add_scanned_page(doc)
    page.set_rotation(90)
    matrix = page.rotation_matrix
    pdf = doc.tobytes()
    words = _page_ocr(ocr, pdf)
    assert "DIMENSIONS" in _texts(words)
    assert all(w.dir == (0.0, 1.0) for w in words)
    # "GENERAL NOTES" was drawn from (60, 100) on the unrotated page, 18 pt tall
    drawn = pymupdf.Rect(60, 84, 200, 104) * matrix
    general = words[_texts(words).index("GENERAL")]
    assert drawn.x0 - 8 < general.bbox[0] and general.bbox[2] < drawn.x1 + 8
    assert abs(general.bbox[1] - drawn.y0) < 10


def test_a_clip_is_read_at_the_given_resolution_in_page_coordinates(ocr):
    """``ocr_clip`` reads only the words inside the clip, at the DPI asked for, with boxes
    in page points."""
    pdf = make_pdf(lambda doc: add_scanned_page(doc, SMALL_LINES, fontsize=6, dpi=300))
    clip = (40, 100, 300, 120)  # the second line only (baseline at y=110)
    words = ocr.ocr_clip(pdf, 1, clip, dpi=300)
    assert _texts(words) == SMALL_LINES[1].split()
    assert all(_inside(w.bbox, (38, 98, 302, 122)) for w in words)
    assert 55 < words[0].bbox[0] < 66


@pytest.mark.parametrize("clip", [(0, 0, 612, 60), (700, 700, 800, 800)])
def test_a_clip_without_text_reads_nothing(clip, ocr):
    """A blank part of the page, or one outside it, gives no words rather than noise."""
    assert ocr.ocr_clip(scanned_pdf(), 1, clip, dpi=200) == []


def test_a_blank_scan_reads_nothing(ocr):
    """A page whose picture is empty has no lines to read."""
    assert _page_ocr(ocr, make_pdf(lambda doc: add_scanned_page(doc, []))) == []


def test_lines_are_read_from_the_page_image_when_it_is_all_there_is(ocr):
    """When the sharper render is out of reach, the lines are read from the page image
    itself, in the same page coordinates."""
    png, zoom = _page_image(scanned_pdf())
    lines = ocr.find_lines(png, zoom)
    words = ocr.read_lines(page_raster(png, zoom), lines)
    assert "DIMENSIONS" in _texts(words)
    general = words[_texts(words).index("GENERAL")]
    assert 50 < general.bbox[0] < 70 and 75 < general.bbox[1] < 100


async def test_a_scan_whose_sharp_render_is_over_the_memory_limit_is_read_from_its_image(
    monkeypatch, readers
):
    """A 48 x 36 in scan with text in opposite corners needs a 100 MB render of its text
    area at 300 DPI; past a 64 MB limit its lines are read from the page image instead,
    and the page still has its words."""
    width, height = ARCH_E

    def corners(doc: pymupdf.Document) -> None:
        scratch = pymupdf.open()
        src = scratch.new_page(width=width, height=height)
        src.insert_text((72, 100), "GENERAL NOTES", fontsize=48)
        src.insert_text((width - 600, height - 72), "SHEET E101", fontsize=48)
        page = doc.new_page(width=width, height=height)
        page.insert_image(page.rect, stream=src.get_pixmap(dpi=50, alpha=False).tobytes("png"))

    read_from_image = []

    def spy(png: bytes, zoom: float):
        read_from_image.append(zoom)
        return page_raster(png, zoom)

    monkeypatch.setattr(page_reading, "page_raster", spy)
    settings = Settings(_env_file=None, page_render_max_mb=64)
    out = await extract_rung1(
        make_pdf(corners), 1, settings, None, readers=readers, worker_id="w", job_id="j"
    )
    assert read_from_image and out.text_layer.source == "ocr"
    assert {"GENERAL", "NOTES", "SHEET", "E101"} <= set(_texts(out.text_layer.words))


def test_a_line_without_word_layout_is_split_at_its_spaces():
    """When RapidOCR gives no word layout for a line, its words are still separate, placed
    along the line by their characters."""
    line = _Line(numpy.array([10.0, 20.0]), numpy.array([120.0, 0.0]), numpy.array([0.0, 10.0]))
    words = _words(line, "AB CDE", None)
    assert [(w.text, w.bbox) for w in words] == [
        ("AB", (10.0, 20.0, 50.0, 30.0)),
        ("CDE", (70.0, 20.0, 130.0, 30.0)),
    ]


def test_words_are_what_spaces_separate_without_the_walls_read_as_bars():
    """The recogniser splits a line where its script changes and reads a cell's wall
    touching a word as "|": a page's words are what its spaces separate ("建施-00", as a
    text layer has it), without the bars at their ends ("|A.200")."""
    line = _Line(numpy.array([0.0, 0.0]), numpy.array([160.0, 0.0]), numpy.array([0.0, 10.0]))
    layout = SimpleNamespace(
        line_txt_len=16,
        words=[["建", "施"], ["-", "0", "0"], ["|", "A", ".", "2", "0", "0"]],
        word_cols=[[0, 1], [2, 3, 4], [6, 7, 8, 9, 10, 11]],
    )
    words = _words(line, "建施-00 |A.200", layout)
    assert [w.text for w in words] == ["建施-00", "A.200"]
    assert words[1].bbox.x0 > 65.0  # its box starts at the "A" (column 7), not the wall (6)


def test_a_short_word_leaning_a_little_runs_along_the_page_a_long_line_as_drawn():
    """A short box ("OF" between a heading's lines) leaning 5 degrees off the page's axis
    runs along the axis, so it joins the page's lines; a long line keeps the angle its box
    was found at, and a short box turned well off the axis keeps its own."""
    lean = numpy.radians(5)
    along = numpy.array([numpy.cos(lean), numpy.sin(lean)])
    across = numpy.array([-numpy.sin(lean), numpy.cos(lean)])
    short = _Line(numpy.array([10.0, 20.0]), 60 * along, 40 * across)
    assert {w.dir for w in _words(short, "OF", None)} == {(1.0, 0.0)}
    long = _Line(numpy.array([10.0, 20.0]), 400 * along, 40 * across)
    assert {w.dir for w in _words(long, "FINAL MAP OF", None)} == {(0.9962, 0.0872)}
    steep = numpy.radians(30)
    turned = numpy.array([numpy.cos(steep), numpy.sin(steep)])
    tag = _Line(numpy.array([10.0, 20.0]), 60 * turned, 40 * numpy.array([-turned[1], turned[0]]))
    assert {w.dir for w in _words(tag, "T1", None)} == {(0.866, 0.5)}


def _scanned_turned(rotate: int) -> bytes:
    """A scanned letter page of notes, its image placed turned ``rotate`` degrees
    counterclockwise (``insert_image``) on a page of the turned image's proportions."""
    lines = ["GENERAL NOTES FOR ALL WORK", "VERIFY ALL DIMENSIONS IN FIELD"]
    upright = pymupdf.open(stream=make_pdf(lambda doc: add_scanned_page(doc, lines)))[0]
    scan = upright.get_pixmap(dpi=150, colorspace=pymupdf.csGRAY).tobytes("png")
    width, height = upright.rect.width, upright.rect.height
    if rotate in (90, 270):
        width, height = height, width
    doc = pymupdf.open()
    page = doc.new_page(width=width, height=height)
    page.insert_image(page.rect, stream=scan, rotate=rotate)
    return doc.tobytes()


@pytest.mark.parametrize("rotate", [90, 180, 270])
def test_the_way_a_pages_text_runs_is_found_and_read(ocr, rotate):
    """A page whose text is turned (a scan placed sideways or upside down) is found turned
    so, and its lines are read that way round."""
    pdf = _scanned_turned(rotate)
    found = ocr.find_lines(*_page_image(pdf))
    raster = render_area(pdf, 1, text_area(found), RECOGNITION_DPI)
    turn = ocr.page_turn(raster, found)
    assert turn == (360 - rotate) % 360  # turns are clockwise
    words = ocr.read_lines(raster, found, turn)
    assert {"GENERAL", "DIMENSIONS"} <= set(_texts(words))


def test_a_line_reader_keeps_no_arena_and_reads_the_same(ocr):
    """An engine built for reading lines only (verify's OCR check) runs onnxruntime without
    its memory arena, which would keep its largest batch's memory for good; it reads a line
    as the page readers' engine does."""
    lines = OcrEngine(arena=False)
    lines.load_recogniser()
    sessions = {
        engine: engine._rapid()._load_rec_model().session.session.get_session_options()
        for engine in (lines, ocr)
    }
    assert not sessions[lines].enable_cpu_mem_arena and sessions[ocr].enable_cpu_mem_arena
    spot = pymupdf.open().new_page(width=200, height=40)
    spot.insert_text((10, 28), "PANEL LP-2", fontsize=20)
    pix = spot.get_pixmap(dpi=120, colorspace=pymupdf.csGRAY, alpha=False)
    crop = numpy.frombuffer(pix.samples, numpy.uint8).reshape(pix.height, pix.stride)
    crop = crop[:, : pix.width].copy()
    assert lines.read_crops([crop]) == ocr.read_crops([crop])
    assert "PANEL" in lines.read_crops([crop])[0][0]
