"""The set as a whole, reconciled (by the report service, once every page is terminal):
stored in ``report.json`` under ``set``, counted in ``summary.set`` and ``report.ready``.

A drawing index (sheet list) read from a cover or index sheet is checked against the
sheets the set holds; each finding names its pages and where it came from.
"""

from typing import Literal

from pydantic import BaseModel, Field


class IndexEntry(BaseModel):
    """One row of a drawing index: a sheet number and title as the index prints them."""

    sheet_number: str
    sheet_title: str | None = None
    index_page: int = Field(description="the page the index is printed on")


Basis = Literal["set_template", "scheme", "bookmark", "drawing_index"]


class Correction(BaseModel):
    """A page identity the set decided otherwise than the page alone (its title block as
    the set's template, the numbering scheme, a bookmark, the drawing index), always a
    number the page prints."""

    page_number: int
    was: str | None = Field(description="the number read from the page alone, if any")
    now: str
    sheet_title: str | None = None
    basis: Basis = Field(
        "drawing_index", description="what decided it: the page's sheet_number_source"
    )
    source: str = Field(
        examples=["drawing index on page 1 lists SITE, which page 12 prints in its title block"]
    )


class ExtraSheet(BaseModel):
    """A sheet in the set that the drawing index does not list."""

    page_number: int
    sheet_number: str


class DuplicateNumber(BaseModel):
    """A sheet number that more than one page carries."""

    sheet_number: str
    page_numbers: list[int]


class TitleMismatch(BaseModel):
    """A sheet whose title differs from the index's (case, spacing and punctuation aside)."""

    page_number: int
    sheet_number: str
    sheet_title: str
    index_title: str


class Reference(BaseModel):
    """A cross-reference printed on a sheet ("2/S301", "SEE SHEET A-501") to a sheet that is
    not in the set."""

    page_number: int
    target: str = Field(description="the sheet number referred to, as printed")
    text: str = Field(description="the line the reference is printed in")
    occurrences: int = 1


class SheetSet(BaseModel):
    """``report.json``'s ``set``: the drawing index and what reconciling it found."""

    index_pages: list[int] = []
    index: list[IndexEntry] = []
    confirmed_pages: list[int] = Field([], description="pages whose sheet number the index lists")
    corrections: list[Correction] = []
    missing: list[IndexEntry] = Field([], description="listed in the index, not in the set")
    not_in_index: list[ExtraSheet] = []
    duplicates: list[DuplicateNumber] = []
    title_mismatches: list[TitleMismatch] = []
    unnumbered_pages: list[int] = Field([], description="pages with no sheet number")
    unresolved_references: list[Reference] = Field(
        [], description="references to a sheet of a discipline the set holds, not in the set"
    )
    external_references: list[Reference] = Field(
        [], description="references to sheets of disciplines the set does not hold at all"
    )

    def summary(self) -> "SetSummary":
        """The set's findings as counts."""
        return SetSummary(
            has_index=bool(self.index),
            index_entries=len(self.index),
            confirmed=len(self.confirmed_pages),
            corrected=len(self.corrections),
            missing=len(self.missing),
            not_in_index=len(self.not_in_index),
            duplicates=len(self.duplicates),
            title_mismatches=len(self.title_mismatches),
            unnumbered_pages=len(self.unnumbered_pages),
            unresolved_references=len(self.unresolved_references),
        )


class SetSummary(BaseModel):
    """``summary.set`` (and ``report.ready``'s): the set's findings counted."""

    has_index: bool = Field(False, description="a drawing index was read from the set")
    index_entries: int = Field(0, description="sheets the drawing index lists")
    confirmed: int = Field(0, description="pages whose sheet number the index lists")
    corrected: int = Field(
        0,
        description="pages whose number the set decided (template, scheme, bookmark, index; "
        "the page prints it)",
    )
    missing: int = Field(0, description="sheets the index lists that no page carries")
    not_in_index: int = Field(0, description="numbered pages the index does not list")
    duplicates: int = Field(0, description="sheet numbers carried by more than one page")
    title_mismatches: int = Field(
        0, description="sheets whose title differs from the index's beyond case and punctuation"
    )
    unnumbered_pages: int = Field(0, description="verified pages without a sheet number")
    unresolved_references: int = Field(
        0,
        description="(page, sheet) references to a sheet the set does not hold, of a "
        "discipline it does",
    )
