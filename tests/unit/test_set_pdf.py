"""The set as people download it: single sheets named by number, the zip, and the set
bookmarked (grouped by discipline), labelled with sheet numbers and linked (each reference a
link landing on the sheet it names, references to sheets not in the set listed), which passes
the intake check an upload does."""

import io
import zipfile
from pathlib import Path

import pymupdf
import pytest

from services.extract.reading.textlayer import read_text_layer
from services.ingest.setpdf import (
    SheetEntry,
    file_name,
    linked_set,
    outline,
    plan_links,
    render_png,
    sheet_pdf,
    sheets_zip,
    zip_names,
)
from services.ingest.source import check_and_prepare
from shared.sheet.references import references

# page: (number, title, discipline, the lines it prints); page 3 turned sideways (/Rotate 90).
SET = {
    1: ("A101", "FLOOR PLAN", "Architectural", ["SEE SHEET A-102", "DETAIL 3/S-501"]),
    2: ("S001", "GENERAL NOTES", "Structural", ["REFER TO DWG A101 FOR LAYOUT"]),
    3: ("A102", "ROOF PLAN", "Architectural", ["2/A101 SIM."]),
    4: (None, None, None, ["NOTES ONLY"]),
}


def make_set(path: Path) -> Path:
    doc = pymupdf.open()
    for n, (number, title, _, lines) in SET.items():
        page = doc.new_page(width=1224, height=792)
        for i, line in enumerate(lines):
            page.insert_text((100, 150 + 60 * i), line, fontsize=18)
        if number:
            page.insert_text((1000, 700), title or "", fontsize=14)
            page.insert_text((1000, 750), number, fontsize=30)
        if n == 3:
            page.set_rotation(90)
    doc.save(path)
    return path


@pytest.fixture
def source(tmp_path: Path) -> Path:
    return make_set(tmp_path / "set.pdf")


def entries() -> list[SheetEntry]:
    return [SheetEntry(n, number, title, d) for n, (number, title, d, _) in SET.items()]


def read(source: Path) -> tuple[dict, dict]:
    """Each page's words and the references its reading finds, as extract stores them."""
    layers, refs = {}, {}
    with pymupdf.open(source) as doc:
        for page in doc:
            layer = read_text_layer(page, page.number + 1, 20)
            layers[page.number + 1] = layer
            refs[page.number + 1] = list(references(layer))
    return layers, refs


def test_sheet_files_are_named_by_number_and_title():
    """ "A101 - FLOOR PLAN.pdf"; what a file name may not hold is replaced; a page without a
    number is named by its page; two pages sharing a name in the zip get their page."""
    assert file_name(SheetEntry(1, "A101", "FLOOR PLAN")) == "A101 - FLOOR PLAN.pdf"
    assert file_name(SheetEntry(2, "S-1/2", 'DETAILS: "TYP"')) == "S-1-2 - DETAILS- -TYP.pdf"
    assert file_name(SheetEntry(7)) == "page 7.pdf"
    names = zip_names([SheetEntry(1, "A1", "X"), SheetEntry(2, "A1", "x"), SheetEntry(3)])
    assert names == {1: "A1 - X (page 1).pdf", 2: "A1 - x (page 2).pdf", 3: "page 3.pdf"}


def test_a_sheet_pdf_is_that_page_alone(source):
    with pymupdf.open(stream=sheet_pdf(source, 3, "A102 — ROOF PLAN")) as one:
        assert one.page_count == 1
        assert "2/A101" in one[0].get_text()
        assert one[0].rotation == 90
        assert one.metadata["title"] == "A102 — ROOF PLAN"


def test_the_zip_holds_every_sheet_by_name(source):
    with zipfile.ZipFile(io.BytesIO(sheets_zip(source, entries()))) as archive:
        names = archive.namelist()
        assert names == [
            "A101 - FLOOR PLAN.pdf",
            "S001 - GENERAL NOTES.pdf",
            "A102 - ROOF PLAN.pdf",
            "page 4.pdf",
        ]
        with pymupdf.open(stream=archive.read("S001 - GENERAL NOTES.pdf")) as one:
            assert "REFER TO DWG A101" in one[0].get_text()


def test_the_outline_groups_sheets_by_discipline_and_lists_unlinked_references():
    unlinked = plan_links(entries(), {1: [("S-501", "DETAIL 3/S-501")]}, {})[1]
    assert outline(entries(), unlinked) == [
        [1, "Architectural", 1],
        [2, "A101 — FLOOR PLAN", 1],
        [2, "A102 — ROOF PLAN", 3],
        [1, "Structural", 2],
        [2, "S001 — GENERAL NOTES", 2],
        [1, "Other sheets", 4],
        [2, "Page 4", 4],
        [1, "References to sheets not in this set", 1],
        [2, "S-501 (on A101)", 1],
    ]


def test_the_linked_set_links_each_reference_to_the_page_it_names(source, tmp_path):
    """Outline, labels and links read back from the file: each link sits on the words that
    print the reference (on the sideways page too) and lands on the sheet named; the
    reference to a sheet not in the set is unlinked and listed; the file passes intake."""
    layers, refs = read(source)
    links, unlinked = plan_links(entries(), refs, layers)
    assert [(u.page_number, u.target) for u in unlinked] == [(1, "S-501")]
    data = linked_set(source, entries(), links, unlinked, "the set")
    out = tmp_path / "linked.pdf"
    out.write_bytes(data)
    with pymupdf.open(out) as doc:
        assert [p.get_label() for p in doc] == ["A101", "S001", "A102", "4"]
        toc = doc.get_toc()
        assert [2, "A102 — ROOF PLAN", 3] in toc and [1, "Structural", 2] in toc
        assert [2, "S-501 (on A101)", 1] in toc
        landed = {}
        for page in doc:
            for link in page.get_links():
                words = page.get_text("words", clip=link["from"] * page.derotation_matrix)
                landed[(page.number + 1, " ".join(w[4] for w in words))] = link["page"] + 1
        assert landed == {(1, "A-102"): 3, (2, "A101"): 1, (3, "2/A101"): 1}
    accepted, prepared = check_and_prepare(out, max_pages=100, refuse_active_content=True)
    assert accepted.page_count == 4 and prepared.intake.removed == {}


def test_a_full_resolution_render_is_larger_than_the_page_image(source):
    png = render_png(source, 1, max_px=4000, max_pixels=8_000_000)
    image = pymupdf.Pixmap(png)
    # 4000 px across would be 10.3 million pixels: the pixel bound decides.
    assert 7_900_000 < image.width * image.height <= 8_000_000
    assert round(image.width / image.height, 2) == round(1224 / 792, 2)
