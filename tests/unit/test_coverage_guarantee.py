"""The promise, page by page: a text-bearing page never leaves coverage dark while fallback is on."""

from pathlib import Path

import pymupdf
import pytest

from services.coverage.ladder import next_rung
from services.coverage.merge import merge_objects
from services.coverage.metric import measure_coverage
from services.extract.offline.fallback import fallback_stubs
from services.extract.reading.textlayer import read_text_layer
from shared.contracts.models import PageObject
from tests.support import pdfs

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "drawing-set.pdf"
FLOOR = 0.6

SETS = {
    "example": EXAMPLE.read_bytes(),
    "support": pdfs.drawing_set_pdf(),
    "notes": pdfs.notes_pdf(),
    "schedule": pdfs.schedule_pdf(),
}


def text_pages():
    for name, pdf in SETS.items():
        with pymupdf.open(stream=pdf, filetype="pdf") as doc:
            for i, page in enumerate(doc):
                layer = read_text_layer(page, i + 1, 20)
                if layer.has_text_layer:
                    yield pytest.param(layer, id=f"{name}-p{i + 1}")


@pytest.mark.parametrize("text_layer", list(text_pages()))
def test_empty_vision_reply_still_ends_covered(text_layer):
    """Vision found nothing and no model can structure: the ladder's fallback alone covers the page."""
    objects: list[PageObject] = []
    coverage = measure_coverage(text_layer, objects)
    rung = next_rung(
        has_text_layer=True,
        has_words=True,
        coverage=coverage,
        floor=FLOOR,
        rungs_applied=["vision"],
        text_retry_enabled=True,
        fallback_enabled=True,
        model_configured=False,
    )
    if coverage.ratio < FLOOR:
        assert rung == "fallback"
        objects = merge_objects(objects, fallback_stubs(text_layer, 200))
    assert objects, "a text-bearing page left with zero objects"
    assert measure_coverage(text_layer, objects).ratio >= FLOOR


def _gapped_page() -> bytes:
    """Lines of words set apart by wide gaps (a legend typed with tabs): each gap cuts a line
    of the page-text model in two."""
    doc = pymupdf.open()
    page = doc.new_page(width=792, height=612)
    for row in range(12):
        y = 60 + row * 16
        for col, word in enumerate(("EXISTING", "WALL", "TO", "REMAIN", f"TYPE {row}", "U.N.O.")):
            page.insert_text((40 + col * 90, y), word, fontsize=9)
    return doc.tobytes()


def _tags_page() -> bytes:
    """A sheet of nothing but short tags (no line long enough to be a coverage line)."""
    doc = pymupdf.open()
    page = doc.new_page(width=792, height=612)
    for i in range(30):
        page.insert_text((40 + (i % 6) * 120, 60 + (i // 6) * 40), f"W{i + 1}", fontsize=9)
    return doc.tobytes()


@pytest.mark.parametrize("pdf", [_gapped_page(), _tags_page()], ids=["gapped", "tags"])
def test_fallback_lifts_any_text_page_to_full_coverage(pdf):
    """Fallback stubs cite exactly the units the metric counts: a page of gapped lines, or of
    short tags only, goes from nothing to full coverage in one rung."""
    with pymupdf.open(stream=pdf, filetype="pdf") as doc:
        layer = read_text_layer(doc[0], 1, 20)
    assert layer.has_text_layer
    before = measure_coverage(layer, [])
    assert before.total_lines > 0 and before.ratio == 0.0
    stubs = fallback_stubs(layer, 200)
    assert stubs
    assert measure_coverage(layer, merge_objects([], stubs)).ratio == 1.0


def test_stubs_over_the_cap_still_cite_every_unit():
    """With fewer stubs allowed than runs of lines, runs share stubs; no line is left out."""
    with pymupdf.open(stream=_gapped_page(), filetype="pdf") as doc:
        layer = read_text_layer(doc[0], 1, 20)
    stubs = fallback_stubs(layer, 5)
    assert len(stubs) <= 5
    assert measure_coverage(layer, stubs).ratio == 1.0
