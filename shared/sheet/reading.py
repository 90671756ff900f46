"""A page's ``SheetReading``: everything the page says about its own identity, read once (in
extract) and stored with the page, so that no later stage reads the title block again.

It keeps the chosen number and title with their word ids, every candidate the reader
considered (so the set step can decide across the set, and a reviewer can see why one won),
the title block's other fields, the title-block region, the drawing-index rows and the
cross-references the page prints, and the file's own hints for the page (its page label and
the bookmarks that point at it).
"""

from collections.abc import Iterable
from typing import Any, Self

from pydantic import BaseModel, Field

from shared.pagetext import Box, TextLayer
from shared.sheet.fields import (
    Value,
    cell_fields,
    heading_fields,
    read_fields,
    unlabelled_date,
)
from shared.sheet.index import read_drawing_index
from shared.sheet.labels import sheet_count
from shared.sheet.reader import UNDER_HEADING, Reading, read_title_block
from shared.sheet.references import references

# The title block's fields beyond number and title, by the names report.json uses.
FIELD_NAMES = ("revision", "issue_date", "project_number", "project_name", "scale")


class FieldReading(BaseModel):
    """One value the title block prints, as printed, with the words it came from."""

    text: str
    word_ids: list[int] = []
    confidence: float | None = Field(
        None,
        description="read by OCR: the least confidence of its words' lines (0-1); absent "
        "for the text layer's words",
        exclude_if=lambda confidence: confidence is None,
    )

    @classmethod
    def of(cls, text: str, word_ids: Iterable[int], layer: TextLayer, **more: Any) -> Self:
        """The value and its words, with OCR's confidence where OCR read them (``more``:
        a subclass's own fields)."""
        ids = list(word_ids)
        return cls(text=text, word_ids=ids, confidence=least_confidence(ids, layer), **more)


def least_confidence(word_ids: Iterable[int], layer: TextLayer) -> float | None:
    """The least OCR confidence of the words; None where none was read by OCR."""
    read = [
        c
        for i in word_ids
        if 0 <= i < len(layer.words) and (c := layer.words[i].confidence) is not None
    ]
    return min(read) if read else None


class PlacedGuess(FieldReading):
    """A title OCR's words gave by size alone, which the page does not take (as often wrong
    as right), and where it is printed: sheets of a set that print theirs at one place
    vouch for it (``shared.sheet.decide``)."""

    box: Box


class Candidate(BaseModel):
    """A text the reader considered for the sheet number, and why it won or lost."""

    text: str = Field(description="as printed")
    word_ids: list[int] = []
    box: Box | None = Field(None, description="in the displayed page's frame, PDF points")
    size: float = Field(0.0, description="font size in points")
    field: str | None = Field(None, description="the field of the label it belongs to, if any")
    label: str | None = Field(None, description="that label as printed")
    evidence: int = Field(0, description="strength of what vouches for it (higher wins)")
    score: float = 0.0
    chosen: bool = False
    why: str = Field("", description="why it won or lost")
    of: str | None = Field(
        None, description="the count printed after it, where it states a position ('3 OF 10')"
    )
    title: FieldReading | None = Field(None, description="the title that goes with it")


class CellReading(BaseModel):
    """One ruled cell of the title block: its label and its value as printed, with their
    words, so that no later stage reads the labels again."""

    box: Box = Field(description="in the displayed page's frame, PDF points")
    label: str | None = Field(None, description="the cell's label as printed, if it has one")
    field: str | None = Field(
        None, description="the field its label names (number, title, other), where known"
    )
    label_ids: list[int] = []
    value: str = Field("", description="the rest of the cell, all its lines, as printed")
    value_ids: list[int] = []
    value_confidence: float | None = Field(
        None,
        description="read by OCR: the least confidence of its value's words (0-1)",
        exclude_if=lambda confidence: confidence is None,
    )


class SheetReading(BaseModel):
    """``extracted.json``'s ``reading``: the page's identity as its own text states it."""

    number: FieldReading | None = None
    title: FieldReading | None = None
    evidence: int = Field(0, description="how the chosen number was found (higher is stronger)")
    ocr: bool = Field(False, description="read from OCR words (the page has no usable text layer)")
    fields: dict[str, FieldReading] = Field(
        default={}, description="revision, issue_date, project_number, project_name, scale"
    )
    candidates: list[Candidate] = []
    region: Box | None = Field(None, description="the title block, where one was found")
    title_reason: str = Field(
        "", description="where the title was read, or why the page reports none"
    )
    title_guess: PlacedGuess | None = Field(
        None,
        description="a title OCR's words gave by size alone, not taken unless the set's other "
        "sheets print theirs at its place",
    )
    cells: list[CellReading] = Field(
        default=[], description="the title block's ruled cells that hold text"
    )
    index_rows: list[tuple[str, str | None]] = Field(
        default=[], description="the drawing index the page prints: (sheet number, title) rows"
    )
    references: list[tuple[str, str]] = Field(
        default=[], description="cross-references the page prints: (sheet number, as printed)"
    )
    page_label: str | None = Field(None, description="the file's page label for this page")
    bookmarks: list[str] = Field(
        default=[], description="titles of the file's bookmarks that point at this page"
    )

    @property
    def sheet_number(self) -> str | None:
        return self.number.text if self.number else None

    @property
    def chosen_number(self) -> "Candidate | None":
        """The candidate the page's reader chose for its number, if any."""
        return next((c for c in self.candidates if c.chosen), None)

    @property
    def sheet_title(self) -> str | None:
        return self.title.text if self.title else None


def read_sheet(
    layer: TextLayer, page_label: str | None = None, bookmarks: list[str] | None = None
) -> SheetReading:
    """The page's ``SheetReading`` from its words (text layer, or OCR words on a scan)."""
    found = read_title_block(layer)
    place = {w: (line, n) for line in layer.lines for n, w in enumerate(line)}

    def count_after(ids: tuple[int, ...]) -> str | None:
        """The count printed after a candidate on its line ("2 OF 3" → "3"), if any."""
        line, n = place.get(ids[-1], ([], 0)) if ids else ([], 0)
        return sheet_count([layer.words[i].text for i in line[n : n + 3]])

    return SheetReading(
        number=FieldReading.of(found.number, found.number_words, layer) if found.number else None,
        title=FieldReading.of(found.title, found.title_words, layer) if found.title else None,
        evidence=found.evidence,
        ocr=layer.source == "ocr",
        fields={
            name: FieldReading(text=value.text, word_ids=list(value.word_ids))
            for name, value in _header_fields(layer, found).items()
        },
        candidates=[
            Candidate(
                text=c.text,
                word_ids=list(c.word_ids),
                box=c.box,
                size=c.size,
                field=c.field,
                label=c.label,
                evidence=c.evidence,
                score=round(c.score, 3),
                chosen=c.chosen,
                why=c.why,
                title=FieldReading(text=c.title, word_ids=list(c.title_words)) if c.title else None,
                of=count_after(c.word_ids),
            )
            for c in found.candidates
        ],
        region=found.region,
        title_reason=found.title_how,
        title_guess=_placed(found.title_guess, found.title_guess_words, layer),
        cells=[
            CellReading(
                box=c.box,
                label=c.label,
                field=c.field.value if c.field else None,
                label_ids=list(c.label_ids),
                value=c.value,
                value_ids=list(c.value_ids),
                value_confidence=least_confidence(c.value_ids, layer),
            )
            for c in found.cells
        ],
        index_rows=read_drawing_index(layer),
        references=list(references(layer)),
        page_label=page_label,
        bookmarks=bookmarks or [],
    )


def _header_fields(layer: TextLayer, found: Reading) -> dict[str, Value]:
    """The title block's labelled fields; where it labels no date, the one date its cells
    print unlabelled; on a sheet counted under its heading, what that heading prints."""
    fields = cell_fields(layer, found.cells) | read_fields(layer)
    if found.title_how == UNDER_HEADING:
        fields = heading_fields(layer, found.title_words, found.number_words) | fields
    if "issue_date" not in fields:
        unnamed = (c.value_ids for c in found.cells if c.field is None)
        if date := unlabelled_date(layer, unnamed):
            fields["issue_date"] = date
    return fields


def _placed(text: str | None, word_ids: tuple[int, ...], layer: TextLayer) -> PlacedGuess | None:
    if text is None or not word_ids:
        return None
    box = Box.union(layer.words[i].bbox for i in word_ids)
    return PlacedGuess.of(text, word_ids, layer, box=box)
