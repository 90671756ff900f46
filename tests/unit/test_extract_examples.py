"""The offline path on whole drawing sets: the text oracle refutes none of its objects."""

from pathlib import Path

import pymupdf
import pytest

from services.coverage.metric import measure_coverage
from services.extract.rung1 import extract_rung1
from services.verify.oracle import check_object
from shared.infra.settings import Settings
from tests.support.pdfs import drawing_set_pdf

EXAMPLE = Path(__file__).parents[2] / "examples" / "drawing-set.pdf"
SETS = {"examples": EXAMPLE.read_bytes(), "support": drawing_set_pdf()}
PAGES = [
    (name, n)
    for name, pdf in SETS.items()
    for n in range(1, pymupdf.open(stream=pdf).page_count + 1)
]


@pytest.mark.parametrize(("set_name", "page_number"), PAGES)
async def test_offline_objects_are_confirmed_by_the_text_oracle(set_name, page_number, readers):
    """Every offline object with a source_text is confirmed by verify's text oracle (OCR words
    alone only ever make it uncertain), and every page with words stays covered."""
    out = await extract_rung1(
        SETS[set_name],
        page_number,
        Settings(_env_file=None),
        None,
        readers=readers,
        worker_id="w",
        job_id="j",
    )
    layer = out.text_layer
    verdicts = {o.source_text: check_object(o, layer.words) for o in out.result.objects}
    expected = "confirmed" if layer.has_text_layer else "uncertain"
    assert {text: v.verdict for text, v in verdicts.items() if v.verdict != expected} == {}
    if layer.words:
        assert measure_coverage(layer, out.result.objects).ratio >= 0.95


async def test_cover_sheet_index_and_abbreviations_are_one_object_per_row(readers):
    """The cover sheet's sheet index and abbreviation list come out row by row, cells in
    attributes."""
    out = await extract_rung1(
        SETS["examples"],
        1,
        Settings(_env_file=None),
        None,
        readers=readers,
        worker_id="w",
        job_id="j",
    )
    rows = {
        o.source_text: o.attributes for o in out.result.objects if o.object_type == "schedule_row"
    }
    assert rows["G001 COVER SHEET AND INDEX"] == {"col1": "G001", "col2": "COVER SHEET AND INDEX"}
    assert rows["A601 DOOR SCHEDULE"] == {"col1": "A601", "col2": "DOOR SCHEDULE"}
    assert rows["U.N.O. UNLESS NOTED OTHERWISE"] == {
        "col1": "U.N.O.",
        "col2": "UNLESS NOTED OTHERWISE",
    }
    assert len(rows) == 5 + 8
