"""A page the file lost is a named failed page, never a blank one: the damage check and
extract's refusal of such a page. No servers: the sample set, cut short."""

from pathlib import Path

import pymupdf
import pytest

from services.extract.pipeline import PageUnreadable, extract_rung1
from shared.damage import DAMAGED, damaged_pages, page_damage
from shared.settings import Settings

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "drawing-set.pdf"


def cut(length: int) -> bytes:
    """The sample set's first ``length`` bytes: a truncated download."""
    return EXAMPLE.read_bytes()[:length]


def test_page_damage_names_lost_pages_and_lost_drawing_instructions():
    """Cut to 5000 bytes, page 1 lost most of its content streams and every later page its
    page object; the intact set has no damaged page."""
    pymupdf.TOOLS.mupdf_display_errors(False)
    with pymupdf.open(stream=cut(5000)) as doc:
        reasons = [page_damage(doc, i) for i in range(doc.page_count)]
        assert damaged_pages(doc) == list(range(1, doc.page_count + 1))
    assert all(r and r.startswith(DAMAGED) for r in reasons)
    assert "content streams are missing" in reasons[0]
    assert all("page object is missing" in r for r in reasons[1:])
    with pymupdf.open(EXAMPLE) as intact:
        assert damaged_pages(intact) == []
        assert all(page_damage(intact, i) is None for i in range(intact.page_count))


async def test_extract_fails_a_lost_page_with_the_reason_instead_of_reading_it_blank():
    """Every page of the cut set is refused by rung 1 as damaged: none comes out as an
    empty page that verify would skip as blank."""
    pdf = cut(5000)
    settings = Settings(_env_file=None)
    with pymupdf.open(stream=pdf) as doc:
        pages = doc.page_count
    for number in range(1, pages + 1):
        with pytest.raises(PageUnreadable) as refused:
            await extract_rung1(pdf, number, settings, None, worker_id="t", job_id="j")
        assert refused.value.reason.startswith(DAMAGED)


async def test_an_intact_page_of_a_repaired_file_is_still_read():
    """Cut where only the last pages are lost, the first page is read as usual."""
    pdf = cut(60000)
    out = await extract_rung1(pdf, 1, Settings(_env_file=None), None, worker_id="t", job_id="j")
    assert out.result.status == "ok" and out.text_layer.has_text_layer
