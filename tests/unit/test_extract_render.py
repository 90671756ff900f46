"""The page image: a lossless PNG of exactly the rendered pixels, and one open document per
source that never mixes two PDFs' pages."""

import pymupdf

from services.extract.reading.render import (
    IMAGE_TOO_LARGE,
    check_page_images,
    encode_png,
    render_page,
)
from services.extract.rung1 import extract_rung1
from shared.infra.settings import Settings
from tests.support.pdfs import add_plan_page, add_schedule_page, make_pdf, notes_pdf


def test_encoded_png_holds_exactly_the_rendered_pixels():
    """The fast encoder is lossless: decoding its PNG gives back every pixel."""
    with pymupdf.open(stream=notes_pdf(), filetype="pdf") as doc:
        rendered = doc[0].get_pixmap(matrix=pymupdf.Matrix(1.5, 1.5), alpha=False)
    png = encode_png(rendered)
    decoded = pymupdf.Pixmap(png)
    assert png.startswith(b"\x89PNG")
    assert (decoded.width, decoded.height, decoded.n) == (rendered.width, rendered.height, 3)
    assert decoded.samples == rendered.samples


def test_page_png_has_the_configured_long_side():
    with pymupdf.open(stream=notes_pdf(), filetype="pdf") as doc:
        png = encode_png(render_page(doc[0], 800, 10_000_000))
    decoded = pymupdf.Pixmap(png)
    assert max(decoded.width, decoded.height) in (800, 801)


async def test_interleaved_sources_keep_their_own_pages(readers):
    """Pages of two PDFs read in turn (the open-document cache at work) each come from
    their own file, and a PDF's second read sees the same text as its first."""
    settings = Settings(_env_file=None)
    notes, plain = notes_pdf(), make_pdf(add_schedule_page, add_plan_page)
    reads = []
    for pdf, n in [(notes, 1), (plain, 2), (notes, 1), (plain, 1)]:
        out = await extract_rung1(
            pdf, n, settings, None, readers=readers, worker_id="w", job_id="j"
        )
        reads.append(out.text_layer.text)
    with (
        pymupdf.open(stream=notes, filetype="pdf") as a,
        pymupdf.open(stream=plain, filetype="pdf") as b,
    ):
        expected = [a[0], b[1], a[0], b[0]]
        for read, page in zip(reads, expected, strict=True):
            assert sorted(read.split()) == sorted(page.get_text().split())
    assert reads[0] == reads[2] and reads[0] != reads[1] != reads[3]


def page_with_image(width: int, height: int) -> pymupdf.Page:
    """A page holding a small image whose dictionary says it is ``width`` x ``height``: the
    size a decoder would be asked to allocate for."""
    doc = pymupdf.open()
    page = doc.new_page()
    pixmap = pymupdf.Pixmap(pymupdf.csGRAY, pymupdf.IRect(0, 0, 4, 4), False)
    xref = page.insert_image(pymupdf.Rect(72, 72, 144, 144), pixmap=pixmap)
    doc.xref_set_key(xref, "Width", str(width))
    doc.xref_set_key(xref, "Height", str(height))
    return page


def test_a_page_holding_a_huge_image_is_refused_by_name_without_decoding_it():
    """A 60,000 x 60,000 image is `image_too_large`, read from its dictionary alone."""
    refusal = check_page_images(page_with_image(60_000, 60_000), max_pixels=1_000_000_000)
    assert refusal is not None and refusal.startswith(IMAGE_TOO_LARGE)
    assert "60000 x 60000" in refusal and "SHEETFLOW_MAX_IMAGE_PIXELS" in refusal
    assert check_page_images(page_with_image(10_000, 10_000), max_pixels=1_000_000_000) is None
