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


async def test_extract_fails_a_lost_page_with_the_reason_instead_of_reading_it_blank(readers):
    """Every page of the cut set is refused by rung 1 as damaged: none comes out as an
    empty page that verify would skip as blank."""
    pdf = cut(5000)
    settings = Settings(_env_file=None)
    with pymupdf.open(stream=pdf) as doc:
        pages = doc.page_count
    for number in range(1, pages + 1):
        with pytest.raises(PageUnreadable) as refused:
            await extract_rung1(
                pdf, number, settings, None, readers=readers, worker_id="t", job_id="j"
            )
        assert refused.value.reason.startswith(DAMAGED)


async def test_an_intact_page_of_a_repaired_file_is_still_read(readers):
    """Cut where only the last pages are lost, the first page is read as usual."""
    pdf = cut(60000)
    out = await extract_rung1(
        pdf, 1, Settings(_env_file=None), None, readers=readers, worker_id="t", job_id="j"
    )
    assert out.result.status == "ok" and out.text_layer.has_text_layer


def _contents_behind_a_reference() -> bytes:
    """A page whose ``/Contents`` is a reference to an array of two streams, as Adobe PDF
    Library and MicroStation write them: valid, and nothing is missing."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 72), "SHEET NO. C-101")
    page.insert_text((72, 144), "GENERAL NOTES")
    first, second = doc.get_new_xref(), doc.get_new_xref()
    stream = doc.page_xref(0)
    contents = page.get_contents()
    body = b"".join(doc.xref_stream(x) for x in contents)
    half = body.index(b"BT", 1) if b"BT" in body[1:] else len(body) // 2
    for xref, part in ((first, body[:half]), (second, body[half:])):
        doc.update_object(xref, "<<>>")
        doc.update_stream(xref, part)
    array = doc.get_new_xref()
    doc.update_object(array, f"[{first} 0 R {second} 0 R]")
    doc.xref_set_key(stream, "Contents", f"{array} 0 R")
    return doc.tobytes(garbage=0)


def test_contents_behind_a_reference_to_an_array_is_not_damage():
    """The array behind the reference is resolved to its streams: the page is not damaged
    and extract reads its text."""
    pdf = _contents_behind_a_reference()
    with pymupdf.open(stream=pdf) as doc:
        kind, value = doc.xref_get_key(doc.page_xref(0), "Contents")
        assert kind == "xref" and not doc.xref_is_stream(int(value.split()[0]))
        assert page_damage(doc, 0) is None
        assert "C-101" in doc.load_page(0).get_text()
    with pymupdf.open(stream=pdf) as doc:
        # The same page with one stream of its array gone is damaged, by name.
        array = int(doc.xref_get_key(doc.page_xref(0), "Contents")[1].split()[0])
        doc.update_object(array, f"[{doc.xref_length() + 5} 0 R]")
        assert "content streams are missing" in (page_damage(doc, 0) or "")
