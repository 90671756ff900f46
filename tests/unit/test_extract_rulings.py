"""The ruled lines of a page's drawing, and the title-block cells they make."""

import numpy
import pymupdf

from services.extract.reading.rulings import image_rules, off_lettering
from services.extract.reading.textlayer import read_text_layer
from shared.contracts.interfaces import Raster
from shared.ocr.engine import render_area
from shared.pagetext import Box, Word
from shared.sheet import read_title_block

W, H = 36 * 72, 24 * 72


def _rules(page: pymupdf.Page) -> list[Box]:
    return read_text_layer(page, 1, 0).rules


def test_long_strokes_boxes_and_bars_are_rules_short_strokes_and_curves_are_not():
    """A line drawn in two touching pieces is one rule; a stroked box gives its four edges,
    a filled thin bar its axis; lettering-sized strokes, diagonals and curves give none;
    a line running past the paper is cut at its edge."""
    doc = pymupdf.open()
    page = doc.new_page(width=W, height=H)
    page.draw_line((100, 100), (400, 100))
    page.draw_line((400, 100), (700, 100))
    page.draw_rect(pymupdf.Rect(1000, 1000, 1200, 1100))
    page.draw_rect(pymupdf.Rect(100, 500, 900, 502), color=None, fill=(0, 0, 0))
    page.draw_line((100, 700), (110, 700))  # a stroke of a letter
    page.draw_line((100, 800), (400, 900))  # a diagonal
    page.draw_circle((600, 600), 80)
    page.draw_line((2000, 300), (W + 500, 300))
    rules = set(_rules(page))
    assert (100, 100, 700, 100) in rules
    assert {(1000, 1000, 1200, 1000), (1000, 1100, 1200, 1100)} <= rules
    assert {(1000, 1000, 1000, 1100), (1200, 1000, 1200, 1100)} <= rules
    assert (100, 501, 900, 501) in rules
    assert (2000, 300, W, 300) in rules
    assert len(rules) == 7


def test_pieces_smaller_than_a_wall_drawn_apart_make_no_rule():
    """Hatching or lettering outlines drawn as many tiny paths along one line are not a
    wall, however far they run; a wall drawn as separate paths, each a wall long, is one."""
    doc = pymupdf.open()
    page = doc.new_page(width=W, height=H)
    for x in range(100, 700, 6):
        page.draw_line((x, 300), (x + 5, 300))  # each its own path, 5 pt long
    page.draw_line((100, 600), (400, 600))
    page.draw_line((400, 600), (700, 600))
    assert set(_rules(page)) == {(100, 600, 700, 600)}


def test_rules_are_in_the_displayed_frame():
    """On paper stored with /Rotate, rules are turned as the words are."""
    doc = pymupdf.open()
    page = doc.new_page(width=H, height=W)
    page.draw_line((100, 200), (100, 900))
    page.set_rotation(90)
    [(x0, y0, x1, y1)] = _rules(page)
    assert y0 == y1 and x1 - x0 == 700


def test_a_ruled_cell_holds_the_title_beside_the_number():
    """With the drawing's rules, the title printed far up-left of the number in the number's
    own box is found; without them, nothing near the number reads as its title. The walls
    found in the sheet's image (``image_rules``, as a scan has them) do the same."""
    doc = pymupdf.open()
    page = doc.new_page(width=W, height=H)
    page.draw_rect(pymupdf.Rect(36, 36, W - 36, H - 36), width=2)
    box = pymupdf.Rect(W - 400, H - 200, W - 36, H - 36)
    page.draw_rect(box, width=1)
    page.insert_text((box.x0 + 10, box.y0 + 40), "GROUND FLOOR PLAN", fontsize=20)
    page.insert_text((box.x1 - 90, box.y1 - 15), "P-3", fontsize=40)
    page.insert_text((200, 200), "GENERAL NOTES", fontsize=12)
    ruled = read_text_layer(page, 1, min_chars=1)
    unruled = ruled.model_copy(update={"rules": []})
    assert read_title_block(unruled).title is None
    reading = read_title_block(ruled)
    assert (reading.number, reading.title) == ("P-3", "GROUND FLOOR PLAN")
    image = render_area(doc.tobytes(), 1, Box(0, 0, W, H), 100)
    pictured = read_title_block(unruled.model_copy(update={"rules": image_rules(image)}))
    assert (pictured.number, pictured.title) == ("P-3", "GROUND FLOOR PLAN")


def _near(found: list[Box], want: tuple[float, float, float, float], slack: float) -> bool:
    return any(all(abs(a - b) <= slack for a, b in zip(rule, want, strict=True)) for rule in found)


def test_a_page_image_has_the_rules_its_drawing_has():
    """A page read from its pixels (a scan, a raster) gets the walls its drawing shows, in
    page points: thin lines, a box's edges, a short wall between two long ones; a letter's
    strokes, a filled block and a diagonal give none."""
    doc = pymupdf.open()
    page = doc.new_page(width=W, height=H)
    page.draw_line((100, 100), (700, 100), width=0.5)
    page.draw_rect(pymupdf.Rect(1000, 1000, 1200, 1100), width=1)
    page.draw_line((1100, 1000), (1100, 1100), width=0.5)  # a wall within the box
    page.draw_line((1000, 1050), (1100, 1050), width=0.5)
    page.draw_line((1050, 1050), (1050, 1062), width=0.5)  # 12 pt, meets no rule at its end
    page.draw_rect(pymupdf.Rect(300, 400, 500, 480), color=None, fill=(0, 0, 0))
    page.draw_line((100, 800), (400, 900), width=1)
    page.insert_text((1300, 300), "TITLE 4711 HILL", fontsize=30)
    raster = render_area(doc.tobytes(), 1, Box(0, 0, W, H), 150)
    rules = image_rules(raster)
    slack = 2.0
    assert _near(rules, (100, 100, 700, 100), slack)
    for edge in ((1000, 1000, 1200, 1000), (1000, 1100, 1200, 1100)):
        assert _near(rules, edge, slack)
    for edge in ((1000, 1000, 1000, 1100), (1200, 1000, 1200, 1100), (1100, 1000, 1100, 1100)):
        assert _near(rules, edge, slack)
    assert _near(rules, (1000, 1050, 1100, 1050), slack)
    assert len(rules) == 7


def test_a_faint_line_is_a_wall_on_white_and_on_grey_paper():
    """A thin line a JPEG left light grey is a wall on white paper, and the same contrast on
    a scan's grey paper too; the paper itself, however grey, is none."""
    pixels = numpy.full((400, 400), 255, numpy.uint8)
    pixels[100, 20:380] = 185  # light grey, as a 150 dpi JPEG keeps a hairline
    pixels[20:380, 300] = 185
    grey = (pixels.astype(int) - 60).astype(numpy.uint8)  # the same sheet on grey paper
    for sheet in (pixels, grey):
        rules = image_rules(Raster(sheet, zoom=4.0, x0=0.0, y0=0.0))
        assert _near(rules, (5, 25, 95, 25), 1.0)
        assert _near(rules, (75, 5, 75, 95), 1.0)
        assert len(rules) == 2


def test_a_stroke_of_the_lettering_is_no_wall():
    """The long bars of 平 and 面 found as ink pieces on a page image lie within the word OCR
    read there, and are no walls (one would cut the title "2階平面図 / 詳細図" apart); the
    cell's walls, and a rule that runs through a word and on past it, stay."""
    title = Word(text="2階平面図", bbox=Box(27.7, 1238.6, 75.7, 1254.3), size=14.4, origin="ocr")
    strokes = [Box(45.8, 1247.5, 74.6, 1247.5), Box(46.3, 1243.0, 74.6, 1243.0)]
    walls = [Box(28.0, 1170.0, 202.0, 1170.0), Box(28.0, 1170.0, 28.0, 1328.0)]
    through = Box(10.0, 1246.0, 300.0, 1246.0)
    assert off_lettering([*strokes, *walls, through], [title]) == [*walls, through]


def test_a_wall_ocr_read_as_an_unsure_glyph_stays_a_wall():
    """OCR read the wall between two small cells, with a letter beside it, as "0" at 0.6:
    a word it was unsure of says nothing of what lies within it, and the wall stays (lost,
    the two cells were one, and the number's label and the revision's ran together)."""
    wall = Box(2092.0, 1638.0, 2092.0, 1665.0)
    misread = Word(text="0", bbox=Box(2079.0, 1636.0, 2105.0, 1667.0), size=29.0, origin="ocr")
    assert off_lettering([wall], [misread.model_copy(update={"confidence": 0.605})]) == [wall]
    assert off_lettering([wall], [misread.model_copy(update={"confidence": 0.99})]) == []
