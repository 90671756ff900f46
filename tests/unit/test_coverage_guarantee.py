"""The promise, page by page: a text-bearing page never leaves coverage dark while fallback is on."""

from pathlib import Path

import pymupdf
import pytest

from services.coverage.ladder import next_rung
from services.coverage.merge import merge_objects
from services.coverage.metric import measure_coverage
from services.extract.fallback import fallback_stubs
from services.extract.textlayer import read_text_layer
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
    objects = []
    coverage = measure_coverage(text_layer, objects)
    rung = next_rung(
        has_text_layer=True,
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
