"""A page the file lost is a named failed page, never a blank one: the damage check and
extract's refusal of such a page. No servers: the sample set, cut short."""

from pathlib import Path

import pymupdf
import pytest

from services.extract.reading.page import PageUnreadable
from services.extract.rung1 import extract_rung1
from shared.infra.settings import Settings
from shared.pdf.damage import DAMAGED, damaged_pages, page_damage
from tests.support.corpus import manifest, needs_corpus, pdf_bytes

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
    assert "content streams are missing" in (reasons[0] or "")
    assert all("page object is missing" in (r or "") for r in reasons[1:])
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


def _page_with_contents(contents: str) -> bytes:
    """A one-page file whose page's ``/Contents`` is ``contents``, where ``{text}`` stands
    for a stream that writes a line of text: the file is written whole (MuPDF reads it as
    written, with no repair), only the page's entry names what it names."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 72), "SHEET NO. C-101")
    text = page.get_contents()[0]
    wrapper = doc.get_new_xref()
    doc.update_object(wrapper, contents.format(text=f"{text} 0 R", missing="9999 0 R"))
    doc.xref_set_key(doc.page_xref(0), "Contents", f"{wrapper} 0 R")
    return doc.tobytes(garbage=0, use_objstms=1)


def test_an_array_behind_a_reference_in_an_object_stream_is_held():
    """An array of streams behind a reference, kept in an object stream: its streams are
    followed as MuPDF follows them, and the page is not damaged."""
    with pymupdf.open(stream=_page_with_contents("[{text}]")) as doc:
        assert not doc.is_repaired and "C-101" in doc[0].get_text()
        assert page_damage(doc, 0) is None


def test_what_mupdf_does_not_read_as_a_stream_is_missing():
    """An array inside the array is no stream to MuPDF (the page reads empty): it is named
    missing, as a reference to an object the file does not hold is."""
    with pymupdf.open(stream=_page_with_contents("[[{text}]]")) as doc:
        assert doc[0].get_text() == ""
        assert "1 of its 1 content streams are missing" in (page_damage(doc, 0) or "")


def test_a_reference_to_an_object_the_file_does_not_hold_is_damage():
    """A content stream the file does not hold is missing, however it is named."""
    with pymupdf.open(stream=_page_with_contents("[{text} {missing}]")) as doc:
        assert page_damage(doc, 0) == f"{DAMAGED} (1 of its 2 content streams are missing)"
    with pymupdf.open(stream=_page_with_contents("[{missing}]")) as doc:
        assert "1 of its 1 content streams are missing" in (page_damage(doc, 0) or "")


async def test_extract_checks_a_file_read_as_written_only_where_a_page_reads_empty(readers):
    """A page that shows its text is read, though one of its streams is missing; a page that
    reads empty because its only stream is missing is failed as damaged, not taken for a
    blank one."""
    settings = Settings(_env_file=None)
    shown = _page_with_contents("[{text} {missing}]")
    out = await extract_rung1(shown, 1, settings, None, readers=readers, worker_id="t", job_id="j")
    assert "C-101" in " ".join(w.text for w in out.text_layer.words)
    lost = _page_with_contents("[{missing}]")
    with pytest.raises(PageUnreadable) as refused:
        await extract_rung1(lost, 1, settings, None, readers=readers, worker_id="t", job_id="j")
    assert refused.value.reason.startswith(DAMAGED)


def test_an_empty_page_the_file_says_is_empty_is_not_damaged():
    """A page with no /Contents, or an empty array, is blank by the file's own word."""
    doc = pymupdf.open()
    doc.new_page()
    with pymupdf.open(stream=doc.tobytes()) as blank:
        assert page_damage(blank, 0) is None
    with pymupdf.open(stream=_page_with_contents("[]")) as empty:
        assert page_damage(empty, 0) is None


def _contents_behind_references(pdf: bytes) -> bool:
    """Whether every page's /Contents is a reference to an array of streams."""
    with pymupdf.open(stream=pdf) as doc:
        keys = [doc.xref_get_key(doc.page_xref(i), "Contents") for i in range(doc.page_count)]
        return all(
            kind == "xref" and not doc.xref_is_stream(int(value.split()[0])) for kind, value in keys
        )


@pytest.mark.slow
@needs_corpus
async def test_every_page_of_the_real_sets_written_with_contents_behind_references_is_read(
    readers,
):
    """The corpus's sets whose pages each hold a reference to an array of content streams
    (MicroStation, Adobe PDF Library output): extract reads every page, none is damaged."""
    settings = Settings(_env_file=None)
    sets = [pdf_bytes(e["file"]) for e in manifest()]
    sets = [pdf for pdf in sets if _contents_behind_references(pdf)]
    assert sets, "the corpus holds such a set"
    for pdf in sets:
        with pymupdf.open(stream=pdf) as doc:
            pages = doc.page_count
        for number in range(1, pages + 1):
            out = await extract_rung1(
                pdf, number, settings, None, readers=readers, worker_id="t", job_id="j"
            )
            assert out.result.status != "failed" and out.text_layer.words
