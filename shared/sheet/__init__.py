"""Sheet identity from the page's own words: the one reader of the title block.

Extract reads each page once (``shared.sheet.reading.read_sheet``) into a stored
``SheetReading``; coverage, verify and the report work from that reading, so no two stages
can disagree about what a sheet's title block says.
"""

from shared.sheet.reader import Considered, Reading, read_title_block
from shared.sheet.tokens import designator, discipline_for, is_sheet_id, sheet_key

__all__ = [
    "Considered",
    "Reading",
    "designator",
    "discipline_for",
    "is_sheet_id",
    "read_title_block",
    "sheet_key",
]
