"""The sample drawing set the README's main command (and the report) runs on."""

import importlib.util
from pathlib import Path

import pymupdf
import pytest

SCRIPT = Path(__file__).parents[2] / "examples" / "make_examples.py"


@pytest.fixture(scope="module")
def make_examples():
    spec = importlib.util.spec_from_file_location("make_examples", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def drawing_set(make_examples, tmp_path_factory) -> tuple[Path, pymupdf.Document]:
    path = make_examples.main(tmp_path_factory.mktemp("examples") / "set.pdf")
    return path, pymupdf.open(path)


def title_block_text(page: pymupdf.Page, tb: pymupdf.Rect) -> str:
    return page.get_text("text", clip=tb)


def test_output_is_deterministic_and_small(make_examples, drawing_set, tmp_path):
    """Two runs write identical bytes, and the file stays under 1 MB."""
    path, _ = drawing_set
    again = make_examples.main(tmp_path / "again.pdf")
    assert path.read_bytes() == again.read_bytes()
    assert path.stat().st_size < 1_000_000


def test_sheets_have_title_blocks_with_their_numbers(make_examples, drawing_set):
    """Every drawn sheet is 36x24 in and its title block names the project, sheet number and date."""
    _, doc = drawing_set
    assert len(doc) == 6
    for page in doc:
        assert (page.rect.width, page.rect.height) == (2592, 1728)
    for page, number in zip(doc, ["G001", "A101", "A601", "S001"], strict=False):
        block = title_block_text(page, make_examples.TITLE_BLOCK)
        for expected in ("SHEET NUMBER", number, "SHEET TITLE", "05.29.26", "25177", "SCALE"):
            assert expected in block


def test_plan_and_schedule_content(drawing_set):
    """The plan carries room tags, dimensions, door tags and a detail reference; A601 a door table."""
    _, doc = drawing_set
    plan = doc[1].get_text()
    for expected in ("OFFICE", "101", "CONF.", "102", "12'-6\"", "101A", "S301"):
        assert expected in plan
    assert len(doc[1].get_drawings()) > 20
    schedule = doc[2].get_text()
    for expected in ("MARK", "WIDTH", "HEIGHT", "TYPE", "106A", "6'-0\""):
        assert expected in schedule


def test_structural_notes_number_is_a_separate_run(drawing_set):
    """S001's notes 1..15 have their numbers as runs apart from their bodies, the 2X6 note included."""
    _, doc = drawing_set
    page = doc[3]
    spans = [
        span["text"].strip()
        for block in page.get_text("dict")["blocks"]
        for line in block.get("lines", [])
        for span in line["spans"]
    ]
    for n in range(1, 16):
        assert f"{n}." in spans
    assert "(5) 2X6 STUD PACK AT EACH END OF HEADER" in page.get_text()


def test_scanned_sheet_has_no_text_layer_and_blank_page_is_empty(drawing_set):
    """Page 5 is only an image (no text layer); page 6 has no text, drawing or image."""
    _, doc = drawing_set
    scanned, blank = doc[4], doc[5]
    assert scanned.get_text().strip() == ""
    (image,) = scanned.get_images()
    assert image[2] >= 2400  # wide enough for OCR-size text
    assert blank.get_text().strip() == ""
    assert blank.get_drawings() == [] and blank.get_images() == []


def test_committed_sample_exists():
    """The generated set is left in examples/ for the README's main command."""
    committed = SCRIPT.with_name("drawing-set.pdf")
    assert committed.exists()
    assert len(pymupdf.open(committed)) == 6
