"""OCR on a page without a text layer (one test: the engine is slow to load)."""

from services.extract.pipeline import extract_rung1
from shared.settings import Settings
from tests.support.pdfs import scanned_pdf


async def test_scanned_page_is_read_by_ocr_with_bboxes_in_points():
    """An image-only page is OCRed offline: notes found, grounded "ocr", boxes in points."""
    # a 1000 px image keeps the 18 pt text ~23 px tall: plenty for OCR, and quicker
    settings = Settings(_env_file=None, page_image_max_px=1000)
    out = await extract_rung1(scanned_pdf(), 1, settings, None, worker_id="w", job_id="j")
    assert out.text_layer.source == "ocr" and not out.result.has_text_layer
    texts = [o.source_text for o in out.result.objects]
    assert "1. VERIFY ALL DIMENSIONS" in texts
    note = out.result.objects[texts.index("1. VERIFY ALL DIMENSIONS")]
    assert note.object_type == "general_note" and note.grounding == "ocr"
    # drawn at x=60 pt on a baseline at y=130 pt (18 pt text) in a 612 x 792 page
    assert 50 < note.bbox[0] < 70 and 105 < note.bbox[1] < 135
