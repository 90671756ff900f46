"""A page's ``SheetHeader``, its identity as every stage stores it, and the one place a
``SheetReading`` becomes the header extract stores and coverage completes."""

from typing import Literal

from pydantic import BaseModel, Field

from shared.sheet.reading import SheetReading


class SheetHeader(BaseModel):
    sheet_number: str | None = None
    sheet_title: str | None = None
    discipline: str | None = None
    drawing_type: str | None = None
    level: str | None = None
    scale: str | None = None
    sheet_number_source: (
        Literal[
            "extraction",
            "text_layer",
            "ocr",
            "drawing_index",
            "title_block",
            "set_template",
            "scheme",
            "bookmark",
            "person",
        ]
        | None
    ) = None
    revision: str | None = Field(None, description="the current revision mark, as printed")
    issue_date: str | None = Field(None, description="the sheet's date, as printed")
    project_number: str | None = Field(None, description="as the title block prints it")
    project_name: str | None = Field(None, description="as the title block prints it")


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
