"""A page's ``SheetHeader`` as its ``SheetReading`` states it: the one place a reading becomes
the header extract stores and coverage completes."""

from shared.models import SheetHeader
from shared.sheet.reading import SheetReading


def sheet_header(reading: SheetReading | None) -> SheetHeader:
    """The number, title and title-block fields a reading found (the number sourced
    ``text_layer``, or ``ocr`` when OCR words stood in for it); discipline is the set's to
    say, not one page's."""
    if reading is None:
        return SheetHeader()
    fields = {name: value.text for name, value in reading.fields.items()}
    return SheetHeader(
        sheet_number=reading.sheet_number,
        sheet_title=reading.sheet_title,
        sheet_number_source=("ocr" if reading.ocr else "text_layer") if reading.number else None,
        revision=fields.get("revision"),
        issue_date=fields.get("issue_date"),
        project_number=fields.get("project_number"),
        project_name=fields.get("project_name"),
        scale=fields.get("scale"),
    )
