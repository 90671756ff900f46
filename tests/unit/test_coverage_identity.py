"""Coverage completes a page's sheet from the reading extract made, never from its words."""

from services.coverage.covered import sheet_identity
from shared.sheet.header import SheetHeader
from shared.sheet.reading import FieldReading, SheetReading

READING = SheetReading(
    number=FieldReading(text="A-101", word_ids=[7]),
    title=FieldReading(text="FLOOR PLAN", word_ids=[8, 9]),
    fields={"revision": FieldReading(text="C", word_ids=[12]), "scale": FieldReading(text="1:50")},
)


def test_a_header_without_a_number_takes_the_readings_identity_and_fields():
    sheet = sheet_identity(SheetHeader(), READING)
    assert (sheet.sheet_number, sheet.sheet_title, sheet.sheet_number_source) == (
        "A-101",
        "FLOOR PLAN",
        "text_layer",
    )
    assert (sheet.revision, sheet.scale) == ("C", "1:50")


def test_an_extracted_number_keeps_its_title_and_gains_only_the_fields():
    """The extraction's own identity stands; the title block's other fields fill in."""
    extracted = SheetHeader(sheet_number="A101", scale="1/4in")
    sheet = sheet_identity(extracted, READING)
    assert (sheet.sheet_number, sheet.sheet_title, sheet.sheet_number_source) == (
        "A101",
        None,
        "extraction",
    )
    assert (sheet.revision, sheet.scale) == ("C", "1/4in")


def test_no_reading_leaves_the_header_as_extracted():
    assert sheet_identity(SheetHeader(sheet_title="X"), None) == SheetHeader(sheet_title="X")
