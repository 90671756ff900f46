"""What ingest stores as a job's source: active content stripped (or refused on request),
damaged files named, a file with no readable page refused. No servers: plain files."""

from pathlib import Path

import pymupdf
import pytest

from services.ingest.active_content import has_active_content, strip_active_content
from services.ingest.app import STATUS
from services.ingest.refusals import Refusal
from services.ingest.source import prepare_source
from services.ingest.validation import inspect_pdf
from tests.support.active import acted_set, active_content_left, scripted_set
from tests.support.pdfs import add_notes_page, make_pdf

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "drawing-set.pdf"


def write(tmp_path: Path, pdf: bytes, name: str = "upload.pdf") -> Path:
    path = tmp_path / name
    path.write_bytes(pdf)
    return path


def test_document_scripts_open_action_and_embedded_file_are_stripped(tmp_path):
    """A JavaScript name tree (two scripts), a script OpenAction and an embedded file are
    removed from the stored source, each named with its count; the sheet's text stays."""
    upload = write(tmp_path, scripted_set())
    source = prepare_source(upload, refuse_active_content=False)
    assert source.intake.removed == {
        "document_javascript": 2,
        "open_action": 1,
        "embedded_files": 1,
    }
    assert source.path != upload
    stored = source.path.read_bytes()
    assert active_content_left(stored) == []
    with pymupdf.open(stream=stored) as doc:
        assert "GENERAL NOTES" in doc[0].get_text()


def test_page_link_launch_and_attachment_actions_are_stripped(tmp_path):
    """A page-open script, a link running a script, a launch action and an attached file
    are removed and named; the page keeps its text."""
    source = prepare_source(write(tmp_path, acted_set()), refuse_active_content=False)
    assert source.intake.removed == {
        "additional_actions": 1,
        "link_actions": 2,
        "attached_files": 1,
    }
    stored = source.path.read_bytes()
    assert active_content_left(stored) == []
    with pymupdf.open(stream=stored) as doc:
        assert "DO NOT SCALE DRAWINGS." in doc[0].get_text()


def test_an_orphaned_script_is_removed_too():
    """A script no part of the document points to (left by an earlier revision) is named as
    another script and removed."""
    doc = pymupdf.open()
    add_notes_page(doc)
    orphan = doc.get_new_xref()
    doc.update_object(orphan, "<</S/JavaScript/JS(app.alert(1))>>")
    assert strip_active_content(doc) == {"other_scripts": 1}
    assert active_content_left(doc.tobytes(garbage=2)) == []


def test_a_plain_pdf_is_stored_as_uploaded(tmp_path):
    """Without active content the upload itself is the source, byte for byte, and nothing
    is recorded as removed."""
    upload = write(tmp_path, make_pdf(add_notes_page))
    with pymupdf.open(upload) as doc:
        assert not has_active_content(doc)
    source = prepare_source(upload, refuse_active_content=False)
    assert source.path == upload
    assert source.intake.removed == {} and not source.intake.repaired


@pytest.mark.parametrize("build", [scripted_set, acted_set])
def test_refusal_stays_available_on_request(tmp_path, build):
    """With refusal asked for, active content is a 422 naming what the file carries."""
    with pytest.raises(Refusal) as refused:
        prepare_source(write(tmp_path, build()), refuse_active_content=True)
    assert STATUS[refused.value.kind] == 422 and refused.value.error == "active_content"
    assert "SHEETFLOW_ACTIVE_CONTENT" in refused.value.detail


def test_a_file_with_no_readable_page_is_refused_as_corrupt(tmp_path):
    """The first 5000 bytes of the sample set: every page is damaged, so the upload is a
    422 corrupt_pdf that says the file looks truncated."""
    upload = write(tmp_path, EXAMPLE.read_bytes()[:5000])
    with pytest.raises(Refusal) as refused:
        prepare_source(upload, refuse_active_content=False)
    assert STATUS[refused.value.kind] == 422 and refused.value.error == "corrupt_pdf"
    assert "truncated" in refused.value.detail


def test_a_truncated_file_with_readable_pages_is_accepted_and_named_repaired(tmp_path):
    """A cut that loses only the last pages is accepted; the intake says the file was
    repaired and which pages it lost."""
    full = pymupdf.open(EXAMPLE)
    upload = write(tmp_path, EXAMPLE.read_bytes()[:60000])
    source = prepare_source(upload, refuse_active_content=False)
    assert source.intake.repaired
    lost = source.intake.damaged_pages
    assert lost and len(lost) < full.page_count
    assert source.path == upload  # a damaged file is stored as received, for extract to judge


def test_a_pdf_without_its_header_is_read_and_other_content_is_not_a_pdf(tmp_path):
    """A file MuPDF reads as a PDF with a page is accepted though its header is missing
    (writers that drop it exist); HTML or plain text without a header is not a PDF."""
    pdf = make_pdf(add_notes_page)
    headless = pdf[pdf.index(b"\n") + 1 :]
    assert b"%PDF-" not in headless[:1024]
    assert inspect_pdf(write(tmp_path, headless), max_pages=10).page_count == 1
    for other in (b"<html><body>GENERAL NOTES</body></html>", b"GENERAL NOTES\n" * 50):
        with pytest.raises(Refusal) as refused:
            inspect_pdf(write(tmp_path, other, "other.pdf"), max_pages=10)
        assert refused.value.error == "not_a_pdf"
