"""Sheet identity precedence, decided in one place (``shared.sheet.identity``): a test per
source, and the order between them."""

import ast
from pathlib import Path
from typing import Literal

from shared.sheet.header import SheetHeader
from shared.sheet.identity import claimed_number, decide_identity, read_from_page
from shared.sheet.reading import FieldReading, SheetReading
from shared.sheet.sheet_set import Correction

SetBasis = Literal["set_template", "scheme", "bookmark", "drawing_index"]

READING = SheetReading(
    number=FieldReading(text="A-101", word_ids=[7]),
    title=FieldReading(text="FLOOR PLAN", word_ids=[8, 9]),
    fields={"revision": FieldReading(text="C", word_ids=[12]), "scale": FieldReading(text="1:50")},
)


def _set(basis: SetBasis, now: str = "A-102", title: str | None = "INDEX TITLE") -> Correction:
    return Correction(
        page_number=3, was="A-101", now=now, sheet_title=title, basis=basis, source="x"
    )


def test_the_reading_alone_gives_the_printed_identity_and_fields():
    """Source 1, the page's reading: number, title and the title block's fields, sourced text_layer."""
    sheet = decide_identity(READING)
    assert (sheet.sheet_number, sheet.sheet_title, sheet.sheet_number_source) == (
        "A-101",
        "FLOOR PLAN",
        "text_layer",
    )
    assert (sheet.revision, sheet.scale) == ("C", "1:50")


def test_an_ocr_reading_is_sourced_ocr():
    sheet = decide_identity(READING.model_copy(update={"ocr": True}))
    assert sheet.sheet_number_source == "ocr" and read_from_page(sheet)


def test_a_header_without_a_number_takes_the_readings_identity_and_fields():
    """Source 2 without a number: the reading's identity, the extraction's fields kept."""
    sheet = decide_identity(READING, header=SheetHeader(scale="1/4in"))
    assert (sheet.sheet_number, sheet.sheet_title, sheet.sheet_number_source) == (
        "A-101",
        "FLOOR PLAN",
        "text_layer",
    )
    assert (sheet.revision, sheet.scale) == ("C", "1/4in")


def test_an_extracted_number_keeps_its_title_and_gains_only_the_fields():
    """Source 2, a model's number: it stands; the title block's other fields fill in."""
    extracted = SheetHeader(sheet_number="A101", scale="1/4in")
    sheet = decide_identity(READING, header=extracted)
    assert (sheet.sheet_number, sheet.sheet_title, sheet.sheet_number_source) == (
        "A101",
        None,
        "extraction",
    )
    assert (sheet.revision, sheet.scale) == ("C", "1/4in")
    assert claimed_number(sheet) == "A101" and not read_from_page(sheet)


def test_no_reading_leaves_the_header_as_extracted():
    assert decide_identity(None, header=SheetHeader(sheet_title="X")) == SheetHeader(
        sheet_title="X"
    )


def test_the_set_decides_the_number_over_the_page_and_the_model():
    """Source 3, the set's template, scheme or bookmark: its number and the title it read with it."""
    sheet = decide_identity(
        READING, header=SheetHeader(sheet_number="A101"), set_choice=_set("set_template")
    )
    assert (sheet.sheet_number, sheet.sheet_title, sheet.sheet_number_source) == (
        "A-102",
        "INDEX TITLE",
        "set_template",
    )
    assert claimed_number(sheet) == "A-102"


def test_the_drawing_index_gives_its_title_only_where_the_page_has_none():
    """Source 3, the drawing index: the page's own printed title wins over the index's."""
    with_title = decide_identity(READING, set_choice=_set("drawing_index"))
    assert (with_title.sheet_number, with_title.sheet_title) == ("A-102", "FLOOR PLAN")
    untitled = READING.model_copy(update={"title": None})
    assert decide_identity(untitled, set_choice=_set("drawing_index")).sheet_title == "INDEX TITLE"


def test_a_person_wins_over_every_other_source():
    """Source 4, a person: over the set's decision too; a new number brings its discipline."""
    sheet = decide_identity(
        READING,
        header=SheetHeader(sheet_number="A101"),
        set_choice=_set("scheme"),
        person={"sheet_number": "S-201", "sheet_title": "FOUNDATION PLAN"},
    )
    assert (sheet.sheet_number, sheet.sheet_title, sheet.sheet_number_source) == (
        "S-201",
        "FOUNDATION PLAN",
        "person",
    )
    assert sheet.discipline == "structural"


def test_a_person_may_set_the_discipline_with_the_number():
    sheet = decide_identity(READING, person={"sheet_number": "S-201", "discipline": "civil"})
    assert sheet.discipline == "civil"


def test_a_person_correcting_the_title_alone_keeps_the_numbers_source():
    sheet = decide_identity(READING, person={"sheet_title": "LEVEL 1 FLOOR PLAN"})
    assert (sheet.sheet_number, sheet.sheet_title, sheet.sheet_number_source) == (
        "A-101",
        "LEVEL 1 FLOOR PLAN",
        "text_layer",
    )


def test_deciding_again_from_a_decided_header_changes_nothing():
    """Later stages pass the page's header as it stands: the function is idempotent in it."""
    for header in (None, SheetHeader(), SheetHeader(sheet_number="A101", scale="1/4in")):
        once = decide_identity(READING, header=header)
        assert decide_identity(READING, header=once) == once
        assert decide_identity(None, header=once) == once


def _compares_a_source(tree: ast.AST) -> bool:
    def names_a_source(node: ast.AST) -> bool:
        return isinstance(node, ast.Attribute) and node.attr in ("sheet_number_source", "basis")

    return any(
        isinstance(node, ast.Compare) and any(map(names_a_source, [node.left, *node.comparators]))
        for node in ast.walk(tree)
    )


def test_no_module_but_identity_weighs_the_sources():
    """Precedence lives in one place: no other module of the code compares a number's source."""
    root = Path(__file__).resolve().parents[2]
    weighing = [
        str(path.relative_to(root))
        for folder in ("services", "shared", "sheetflow")
        for path in (root / folder).rglob("*.py")
        if _compares_a_source(ast.parse(path.read_text()))
    ]
    assert weighing == ["shared/sheet/identity.py"]
