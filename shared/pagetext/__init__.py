"""The page's text, modelled once: words (``model``), their geometry (``geometry``), one
normaliser and one digit-run function (``normalize``), one rule that groups words into lines
and lines into blocks (``layout``, on one rows rule, ``rows``, and one framed line,
``lines``), the tables those lines form (``tables``), where a claim sits among the words
(``evidence``) and the page as models read it, units with ids (``units``).

Extract reads a page into words and lays them out (``laid_out``); the groups are stored with
the words in ``text.json``. Coverage counts the same lines the fallback rung emits, verify
checks claims against the words objects cite, and the title-block reader looks at the same
lines: no stage can read the page differently from another.

Geometry is in displayed page coordinates (the page's rotation already applied, y down, PDF
points). A word's ``dir`` is the unit vector its text runs along; lines are grouped in the
frame of that direction, so vertical and diagonal text forms lines as horizontal text does.

Each module imports only modules listed before it here: tolerances, geometry, model,
normalize, lines, rows, layout, tables, evidence, units; none imports a module of ``shared``
outside the package. What the layout and tables weigh are settings objects with today's
values as defaults, passed per call (``tolerances``).
"""

from shared.pagetext.evidence import Alignment, PageWords, align, claim_tokens, page_reading
from shared.pagetext.geometry import Box, Frame, Point, direction_key, frame_of
from shared.pagetext.layout import laid_out, layout, next_meaningful, reads_on
from shared.pagetext.lines import NOTE_NUMBER, FramedLine, framed_line
from shared.pagetext.model import HiddenKind, TextLayer, Word, WordOrigin, join_words
from shared.pagetext.normalize import (
    alnum_count,
    coverage_units,
    digit_runs,
    fold_dashes,
    is_content,
    is_dimension_tick,
    is_meaningful,
    mask_digits,
    normalize,
    number_key,
    numbers_printed,
    plain_numbers,
    squash,
)
from shared.pagetext.rows import rows
from shared.pagetext.tables import Cell, Table, TableRow, cells_of, find_tables, is_header
from shared.pagetext.tolerances import EvidenceTolerances, LayoutTolerances, TableTolerances

__all__ = [
    "NOTE_NUMBER",
    "Alignment",
    "Box",
    "Cell",
    "EvidenceTolerances",
    "Frame",
    "FramedLine",
    "HiddenKind",
    "LayoutTolerances",
    "PageWords",
    "Point",
    "Table",
    "TableRow",
    "TableTolerances",
    "TextLayer",
    "Word",
    "WordOrigin",
    "align",
    "alnum_count",
    "cells_of",
    "claim_tokens",
    "coverage_units",
    "digit_runs",
    "direction_key",
    "find_tables",
    "fold_dashes",
    "frame_of",
    "framed_line",
    "is_content",
    "is_dimension_tick",
    "is_header",
    "is_meaningful",
    "join_words",
    "laid_out",
    "layout",
    "mask_digits",
    "next_meaningful",
    "normalize",
    "number_key",
    "numbers_printed",
    "page_reading",
    "plain_numbers",
    "reads_on",
    "rows",
    "squash",
]
