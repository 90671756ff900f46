"""What the page-text model's layout, tables and evidence weigh: frozen settings objects with
today's values as defaults, passed per call (``laid_out(..., tolerances=...)``,
``find_tables(..., tolerances=...)``, ``align(..., tolerances=...)``), so a test or a caller
tunes one without editing a module. Distances are in text heights where they should hold for
6 pt notes and 24 pt titles alike, in points where a page's own grid sets them. A new
tolerance is one field here, read where it is used.
"""

from pydantic import BaseModel, ConfigDict, Field


class LayoutTolerances(BaseModel):
    """How words group into lines and lines into blocks (``shared.pagetext.layout``)."""

    model_config = ConfigDict(frozen=True)

    line_gap: float = Field(
        1.0,
        gt=0,
        description="a gap wider than this many text heights splits a row into separate "
        "lines (columns, labels)",
    )
    line_size_ratio: float = Field(
        1.6,
        ge=1,
        description="words whose heights differ by more than this factor are not one line (a "
        "sheet number set beside its small label)",
    )
    block_gap: float = Field(
        0.8, ge=0, description="lines further apart than this many text heights are two blocks"
    )
    block_size_tolerance: float = Field(
        0.25, ge=0, description="stacked lines of one block share their size within this share"
    )
    align_pts: float = Field(
        4.0, ge=0, description="left edges within this many points count as aligned"
    )


class TableTolerances(BaseModel):
    """How lines line up into tables (``shared.pagetext.tables``): schedules, sheet indexes,
    abbreviation lists."""

    model_config = ConfigDict(frozen=True)

    align_heights: float = Field(
        0.3,
        ge=0,
        description="cells whose left edges, centres or right edges are within this many "
        "text heights (or align_pts) line up: OCR boxes jitter by a few pixels",
    )
    align_pts: float = Field(
        4.0, ge=0, description="cells within this many points line up, however small the text"
    )
    height_tolerance: float = Field(
        0.35, ge=0, description="cells of one row are within this share of each other's height"
    )
    max_cell_words: int = Field(
        8, ge=1, description="words a cell holds at most: a longer line is prose, not a cell"
    )
    max_median_cell_words: int = Field(
        4,
        ge=1,
        description="words a table's cells hold at the median, at most: more reads as prose "
        "set in columns",
    )
    max_cell_gap: float = Field(
        15.0,
        gt=0,
        description="a new table starts from cells at most this many text heights apart "
        "(further apart they are separate regions of the sheet: an index beside notes)",
    )
    gutter_heights: float = Field(
        4.0,
        gt=0,
        description="in a row a table may start from, a gap this many text heights wide (and "
        "gutter_ratio times the row's typical gap) parts two tables side by side",
    )
    gutter_ratio: float = Field(
        3.0, gt=0, description="see gutter_heights: times the row's typical gap"
    )
    table_row_gap: float = Field(
        2.5,
        gt=0,
        description="a table ends where its next row is more than this many text heights "
        "below its last",
    )
    wrap_gap: float = Field(
        0.8,
        ge=0,
        description="a wrapped cell continues no further than this many text heights below "
        "the cell",
    )
    min_table_rows: int = Field(
        3,
        ge=2,
        description="rows a table needs: two aligned rows are as often a plan's room names "
        "over their numbers as a table",
    )
    min_two_row_columns: int = Field(
        3,
        ge=2,
        description="a header row over one row of values is a table with this many columns "
        "(a title block's PROJECT No. | DRAWING No. | REVISION over its values)",
    )


class EvidenceTolerances(BaseModel):
    """How a claim is found among the page's words (``shared.pagetext.evidence``) and
    whether cited words carry it (``shared.pagetext.units.carried_by``)."""

    model_config = ConfigDict(frozen=True)

    letter_match: float = Field(
        0.85,
        ge=0,
        le=1,
        description="letters-only similarity at or above which a window of words is the "
        "claim's place on the page",
    )
    min_fuzzy_letters: int = Field(
        4,
        ge=1,
        description="below this many letters a claim (a tag, a dimension) is too short to "
        "locate fuzzily: it appears exactly, or the page does not carry it",
    )
    max_diagonals: int = Field(
        8, ge=1, description="best-supported candidate places scored per claim"
    )


LAYOUT = LayoutTolerances()
TABLES = TableTolerances()
EVIDENCE = EvidenceTolerances()
