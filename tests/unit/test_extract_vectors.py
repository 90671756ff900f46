"""The boxes of a page's vector paths, read from MuPDF's structured text, and the widening
MuPDF gives a stroke's box taken back."""

import pymupdf

from services.extract.reading import vectors
from services.extract.reading.textlayer import read_text_layer
from services.extract.reading.vectors import vector_boxes
from services.extract.reading.visibility import PageRender
from shared.pagetext import Box

W, H = 800, 600
# Drawn in a coordinate system 20 times smaller than the page's, as CAD plots draw: a line
# 12 units wide is 0.6 pt on paper, but MuPDF widens its box by 6 pt either way.
CAD_SCALE = 0.05
CAD_CONTENT = (
    b"q 0.05 0 0 0.05 0 0 cm 12 w "
    b"2000 2000 m 10000 2000 l S "  # a line at y = 100 pt, x 100..500
    b"2000 6000 8000 200 re S "  # a rectangle x 100..500, y 300..310 pt
    b"Q"
)


def _boxes(page: pymupdf.Page, stroked: bool = False) -> list[Box]:
    """The page's vector boxes (only its stroked ones when ``stroked``)."""
    display = page.get_displaylist()
    pixmap = display.get_pixmap(matrix=pymupdf.Matrix(2, 2), alpha=False)
    found = vector_boxes(display, PageRender(pixmap, 2.0))[1]
    boxes = found.boxes[found.stroked] if stroked else found.boxes
    return [Box(*box) for box in boxes.tolist()]


def _cad_page() -> pymupdf.Page:
    doc = pymupdf.open()
    page = doc.new_page(width=W, height=H)
    page.draw_line((0, 0), (1, 1))  # gives the page a content stream to replace
    doc.update_stream(page.get_contents()[0], CAD_CONTENT)
    return doc[0]


def test_the_struct_layout_is_checked_and_the_xml_print_reads_the_same():
    """The ``ctypes`` walk is trusted on this build, and MuPDF's XML print (read where it is
    not) gives the same boxes and flags."""
    doc = pymupdf.open()
    page = doc.new_page(width=W, height=H)
    page.draw_line((50, 50), (400, 50), width=2)
    page.draw_rect(pymupdf.Rect(100, 100, 300, 200))
    page.draw_rect(pymupdf.Rect(100, 300, 500, 302), color=None, fill=(0, 0, 0))
    page.draw_circle((600, 400), 50)
    textpage = page.get_displaylist().get_textpage(flags=pymupdf.TEXT_COLLECT_VECTORS)
    assert vectors._layout_matches()
    walked, printed = vectors._walked(textpage), vectors._printed(textpage)
    assert len(walked) >= 4
    assert [w[4] for w in walked] == [p[4] for p in printed]
    for a, b in zip(walked, printed, strict=True):
        assert max(abs(p - q) for p, q in zip(a[:4], b[:4], strict=True)) < 0.01


def test_a_line_drawn_at_a_small_scale_stands_where_it_is_drawn():
    """MuPDF widens the line's box by 6 pt either way; the render shows ink along its middle,
    so it is a line again, at y = 500 on the displayed page (100 pt up from the bottom)."""
    lines = [b for b in _boxes(_cad_page()) if b.x1 - b.x0 > 300 and b.y0 > 400]
    [line] = lines
    assert abs(line.y0 - 500) < 0.5 and abs(line.y1 - 500) < 0.5
    assert abs(line.x0 - 100) < 1 and abs(line.x1 - 500) < 1


def test_a_rectangle_as_thick_as_a_widened_line_keeps_its_two_edges():
    """The 10 pt rectangle's box is as thick as a widened line's could be; the render shows
    ink at its edges, so its walls are its edges, the page's widening taken back."""
    page = _cad_page()
    rules = read_text_layer(page, 1, 0).rules
    across = sorted(r.y0 for r in rules if r.y0 == r.y1 and r.x1 - r.x0 > 300)
    assert len(across) == 3
    low, high, line = across
    assert abs(low - 290) < 1 and abs(high - 300) < 1 and abs(line - 500) < 0.5


def test_a_path_of_several_lines_shows_its_own_widening():
    """Two lines in one path, widened alike: both come back as lines where they are drawn."""
    doc = pymupdf.open()
    page = doc.new_page(width=W, height=H)
    shape = page.new_shape()
    shape.draw_line((100, 100), (400, 100))
    shape.draw_line((100, 200), (400, 200))
    shape.finish(width=2.5)
    shape.commit()
    found = sorted(_boxes(page, stroked=True))
    assert [(round(b.y0, 1), round(b.y1, 1)) for b in found] == [(100, 100), (200, 200)]
    assert all(abs(b.x0 - 100) < 0.1 and abs(b.x1 - 400) < 0.1 for b in found)


def test_a_widened_line_not_flagged_a_rectangle_is_a_line_again():
    """A drawing read back from SVG can come with its straight lines unflagged and widened in
    its own units (a 1.3 pt line in a 31 pt box): the render shows ink along the box's middle,
    so it is the line where it is drawn."""
    doc = pymupdf.open()
    page = doc.new_page(width=W, height=H)
    page.draw_line((100, 100), (100, 500), width=1.3)
    display = page.get_displaylist()
    render = PageRender(display.get_pixmap(matrix=pymupdf.Matrix(2, 2), alpha=False), 2.0)
    widened = (84.4, 84.4, 115.6, 515.6, vectors._STROKED)  # stroked, no rectangle flag
    [line] = vectors._unwidened([widened], render, 0.0).boxes.tolist()
    x0, y0, x1, y1 = line
    assert abs(x0 - 100) < 0.5 and abs(x1 - 100) < 0.5
    assert abs(y0 - 100) < 0.5 and abs(y1 - 500) < 0.5


def test_pieces_are_unwidened_by_their_own_path_and_fills_keep_their_box():
    """One path of two lines 2 pt thick and a fill (each line shrunk by its path's 1 pt, the
    fill kept whole), a lone thin line (its own half-thickness), and a path MuPDF never ended
    (left out)."""
    blank = pymupdf.open().new_page(width=W, height=H).get_displaylist()
    render = PageRender(blank.get_pixmap(alpha=False), 1.0)
    s, r, c = vectors._STROKED, vectors._RECTANGLE, vectors._CONTINUES
    raw = [
        (100.0, 99.0, 400.0, 101.0, s | r | c),
        (100.0, 50.0, 300.0, 80.0, c),  # a fill in the same path
        (100.0, 199.0, 400.0, 201.0, s | r),
        (10.0, 10.0, 10.5, 300.0, s | r),
        (500.0, 500.0, 600.0, 501.0, s | r | c),  # the path goes on past the last piece
    ]
    found = vectors._unwidened(raw, render, 0.0)
    assert found.boxes.tolist() == [
        [101.0, 100.0, 399.0, 100.0],
        [100.0, 50.0, 300.0, 80.0],
        [101.0, 200.0, 399.0, 200.0],
        [10.25, 10.25, 10.25, 299.75],
    ]
    assert found.stroked.tolist() == [True, False, True, True]
