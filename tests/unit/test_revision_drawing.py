"""The drawing's delta on pages drawn with PyMuPDF and rendered as extract renders them: the
same sheet re-plotted (shifted and scaled a little), rendered at another size, or re-encoded
as a skewed JPEG raster gives no changed region; a wall added, a line removed and a door
moved are found where they are, each as one region; a word rewritten is the text delta's
alone; a linework-only change makes the sheet changed, and a change in the title block alone
is said so."""

import math

import cv2
import numpy
import pymupdf
import pytest

from shared.pagetext import Box, TextLayer, laid_out
from shared.revisions import PageImage, SheetDelta, sheet_delta
from shared.revisions.drawing import drawing_delta
from shared.sheet.reading import SheetReading

WIDTH, HEIGHT = 1224.0, 792.0  # 17x11 in
TITLE_BLOCK = Box(1000, 640, 1200, 770)


def base_sheet(doc: pymupdf.Document) -> pymupdf.Page:
    """A small plan: a border, a title block, a grid of walls, a door, a hatched room, notes."""
    page = doc.new_page(width=WIDTH, height=HEIGHT)
    shape = page.new_shape()
    shape.draw_rect(pymupdf.Rect(20, 20, WIDTH - 20, HEIGHT - 20))
    shape.draw_rect(pymupdf.Rect(*TITLE_BLOCK))
    for n in range(6):
        shape.draw_line((100 + 140 * n, 100), (100 + 140 * n, 560))
        shape.draw_line((100, 100 + 90 * n), (800, 100 + 90 * n))
    shape.finish(color=(0, 0, 0), width=1.0)
    for n in range(30):  # hatching
        shape.draw_line((240 + 4 * n, 190), (240 + 4 * n + 40, 280))
    shape.finish(color=(0, 0, 0), width=0.3)
    door(shape, 520, 370)
    shape.commit()
    for n, note in enumerate(["1. VERIFY ALL DIMENSIONS", "2. SEE STRUCTURAL", "3. NEW WALLS"]):
        page.insert_text((860, 120 + 16 * n), note, fontsize=9)
    page.insert_text((1010, 700), "SHEET A-101", fontsize=12)
    page.insert_text((1010, 730), "REV 1", fontsize=10)
    return page


def door(shape: pymupdf.Shape, x: float, y: float) -> None:
    shape.draw_line((x, y), (x, y - 40))
    shape.draw_polyline(
        [(x + 40 * math.sin(a), y - 40 * math.cos(a)) for a in (i * math.pi / 16 for i in range(9))]
    )
    shape.finish(color=(0, 0, 0), width=0.8)


def pdf_of(edit=None) -> bytes:
    doc = pymupdf.open()
    page = base_sheet(doc)
    if edit is not None:
        edit(page)
    return doc.tobytes()


def stored(pdf: bytes, long_side: int = 2048) -> tuple[PageImage, TextLayer]:
    """What extract keeps of page 1: its image (long side ``long_side`` px) and its words."""
    with pymupdf.open(stream=pdf, filetype="pdf") as doc:
        page = doc[0]
        zoom = long_side / max(page.rect.width, page.rect.height)
        png = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), alpha=False).tobytes("png")
        words = [
            {"text": w[4], "bbox": tuple(w[:4]), "size": w[3] - w[1]}
            for w in page.get_text("words")
        ]
        layer = laid_out(
            page_number=1,
            width=page.rect.width,
            height=page.rect.height,
            words=words,
            has_text_layer=True,
        )
        return PageImage(png, page.rect.width, page.rect.height), layer


def compared(before: bytes, after: bytes, long_side: int = 2048) -> SheetDelta:
    """The two versions' delta, as the register takes it (the new sheet's title block read)."""
    old_image, old_layer = stored(before)
    new_image, new_layer = stored(after, long_side)
    return sheet_delta(
        old_layer,
        new_layer,
        images=(old_image, new_image),
        after_reading=SheetReading(region=TITLE_BLOCK),
    )


def replotted(pdf: bytes, scale: float, dx: float, dy: float) -> bytes:
    """The page's whole content drawn again through a transform (a re-plot)."""
    doc = pymupdf.open(stream=pdf, filetype="pdf")
    page = doc[0]
    # PDF space is y-up: the page's own content is mapped by the new matrix first.
    data = b"q %.4f 0 0 %.4f %.3f %.3f cm\n" % (scale, scale, dx, -dy)
    data += b"\n".join(doc.xref_stream(x) for x in page.get_contents()) + b"\nQ\n"
    xref = doc.get_new_xref()
    doc.update_object(xref, "<<>>")
    doc.update_stream(xref, data)
    page.set_contents(xref)
    return doc.tobytes()


def rastered(pdf: bytes, dpi: int, angle: float) -> bytes:
    """The page as a scan: rendered, skewed by ``angle`` degrees, JPEG-encoded, placed on an
    empty page of the same size."""
    with pymupdf.open(stream=pdf, filetype="pdf") as doc:
        pixmap = doc[0].get_pixmap(dpi=dpi, alpha=False)
    image = numpy.frombuffer(pixmap.samples, numpy.uint8).reshape(pixmap.h, pixmap.w, 3)
    turn = cv2.getRotationMatrix2D((pixmap.w / 2, pixmap.h / 2), angle, 1.0)
    turned = cv2.warpAffine(image, turn, (pixmap.w, pixmap.h), borderValue=(255, 255, 255))
    jpeg = cv2.imencode(".jpg", turned, [cv2.IMWRITE_JPEG_QUALITY, 70])[1].tobytes()
    out = pymupdf.open()
    page = out.new_page(width=WIDTH, height=HEIGHT)
    page.insert_image(page.rect, stream=jpeg)
    return out.tobytes()


@pytest.mark.parametrize(
    "again",
    [
        pytest.param(lambda pdf: pdf, id="the same file"),
        pytest.param(lambda pdf: replotted(pdf, 1.0, 4, -3), id="shifted 4,-3 pt"),
        pytest.param(lambda pdf: replotted(pdf, 0.985, 12, 8), id="scaled 98.5%"),
        pytest.param(lambda pdf: rastered(pdf, 150, 0.0), id="a 150 dpi JPEG"),
        pytest.param(lambda pdf: rastered(pdf, 120, 0.5), id="a skewed 120 dpi scan"),
    ],
)
def test_a_re_plot_or_re_encoding_of_an_unchanged_sheet_has_no_changed_region(again):
    pdf = pdf_of()
    delta = compared(pdf, again(pdf))
    assert delta.graphics == []


def test_a_rendering_at_another_size_has_no_changed_region():
    pdf = pdf_of()
    assert compared(pdf, pdf, long_side=3000).graphics == []


def wall(page: pymupdf.Page) -> None:
    shape = page.new_shape()
    for offset in (0, 6):
        shape.draw_line((600, 470 + offset), (760, 470 + offset))
    shape.finish(color=(0, 0, 0), width=1.2)
    shape.commit()


def test_a_wall_added_is_one_region_where_it_is_and_the_sheet_is_changed():
    delta = compared(pdf_of(), pdf_of(wall))
    [region] = delta.graphics
    assert region.kind == "added" and not region.title_block
    assert region.after_bbox.overlaps(Box(600, 470, 760, 476))
    assert region.after_bbox.width < 200 and region.share < 0.01
    assert delta.changes == [] and not delta.is_unchanged() and not delta.title_block_only
    assert SheetDelta.from_json(delta.to_json()) == delta


def test_a_wall_drawn_through_hatching_is_found():
    def through(page: pymupdf.Page) -> None:
        shape = page.new_shape()
        shape.draw_line((230, 235), (330, 235))
        shape.finish(color=(0, 0, 0), width=1.0)
        shape.commit()

    [region] = compared(pdf_of(), pdf_of(through)).graphics
    assert region.after_bbox.overlaps(Box(230, 233, 330, 237))


def test_a_door_moved_is_found_where_it_was_and_where_it_went():
    def moved(page: pymupdf.Page) -> None:
        # The old door painted out where it stood, and drawn again elsewhere.
        page.draw_rect(pymupdf.Rect(515, 325, 565, 375), color=(1, 1, 1), fill=(1, 1, 1))
        shape = page.new_shape()
        door(shape, 660, 280)
        shape.commit()

    regions = compared(pdf_of(), pdf_of(moved)).graphics
    assert any(
        r.kind == "removed" and r.after_bbox.overlaps(Box(520, 330, 560, 370)) for r in regions
    )
    assert any(
        r.kind == "added" and r.after_bbox.overlaps(Box(660, 240, 700, 280)) for r in regions
    )


def test_a_word_rewritten_is_the_text_deltas_not_a_region():
    def rewritten(page: pymupdf.Page) -> None:
        page.add_redact_annot(pymupdf.Rect(858, 128, 1000, 140))
        page.apply_redactions(images=0, graphics=0)
        page.insert_text((860, 136), "2. SEE ARCHITECTURAL", fontsize=9)

    delta = compared(pdf_of(), pdf_of(rewritten))
    assert delta.graphics == [] and len(delta.changes) == 1


def test_linework_in_the_title_block_alone_is_title_block_only():
    def stamp(page: pymupdf.Page) -> None:
        page.draw_rect(pymupdf.Rect(1120, 690, 1180, 740), color=(0, 0, 0), width=1.0)

    delta = compared(pdf_of(), pdf_of(stamp))
    [region] = delta.graphics
    assert region.title_block and delta.title_block_only and not delta.is_unchanged()


def test_without_images_the_delta_is_the_texts_alone():
    _, layer = stored(pdf_of())
    _, walled = stored(pdf_of(wall))
    delta = sheet_delta(layer, walled)
    assert delta.graphics == [] and delta.is_unchanged()
    image, _ = stored(pdf_of())
    assert drawing_delta(image, image).regions == []
