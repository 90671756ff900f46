"""Sheet identity from the page's own words: the one reader of the title block.

Extract (offline header), coverage (a header the extraction missed) and verify (identity
check) all read the title block here, from the page-text model, so no two stages can
disagree about what a sheet's title block says.
"""

from typing import TYPE_CHECKING

from shared.pagetext import TextLayer
from shared.sheet.reader import Considered, Reading, read_title_block
from shared.sheet.tokens import designator, discipline_for, is_sheet_id, sheet_key

if TYPE_CHECKING:
    from shared.models import SheetHeader

__all__ = [
    "Considered",
    "Reading",
    "designator",
    "discipline_for",
    "is_sheet_id",
    "read_title_block",
    "recover_sheet_identity",
    "sheet_key",
    "title_block_sheet_number",
    "title_block_sheet_title",
]


def title_block_sheet_number(text_layer: TextLayer) -> str | None:
    """The sheet number the title block prints, as printed, or None."""
    return read_title_block(text_layer).number


def title_block_sheet_title(text_layer: TextLayer) -> str | None:
    """The sheet title the title block prints, or None."""
    return read_title_block(text_layer).title


def recover_sheet_identity(text_layer: TextLayer) -> "SheetHeader | None":
    """Sheet number, title and discipline from the title block; None when it shows none."""
    from shared.models import SheetHeader  # shared.models holds pages' SheetReading

    reading = read_title_block(text_layer)
    if not reading.number and not reading.title:
        return None
    return SheetHeader(
        sheet_number=reading.number,
        sheet_title=reading.title,
        discipline=discipline_for(reading.number),
        sheet_number_source="text_layer" if reading.number else None,
    )
