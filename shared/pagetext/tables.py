"""Tables from the page-text model's lines: schedules, sheet indexes, abbreviation lists.

A cell is one line of the model (or a line and its wrapped continuation); a row is cells
side by side; a table is rows whose cells line up in columns. Geometry is in each line's own
text frame (``FramedLine.box``: x along, y across), so a schedule set sideways on a rotated
sheet is a table too. Tolerances (``TableTolerances``, passed per call) are relative to the
text height so they hold for 6 pt notes and 24 pt titles.
"""

import bisect
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from functools import cached_property
from itertools import pairwise
from statistics import median

from shared.pagetext.geometry import direction_key, frame_of
from shared.pagetext.layout import next_meaningful, reads_on
from shared.pagetext.lines import FramedLine, framed_line
from shared.pagetext.model import TextLayer
from shared.pagetext.rows import rows
from shared.pagetext.tolerances import TABLES, TableTolerances

# A cell of a table: one line of the model, in its frame.
Cell = FramedLine
# Whether the text layer reads one cell right after another.
Follows = Callable[[Cell, Cell], bool]


def cells_of(layer: TextLayer) -> dict[int, list[Cell]]:
    """Every line of the page as a cell, grouped by text direction."""
    groups: dict[int, list[Cell]] = {}
    for line_id, word_ids in enumerate(layer.lines):
        key = direction_key(layer.words[word_ids[0]].dir)
        cell = framed_line(layer.words, word_ids, frame_of(key), line_id)
        groups.setdefault(key, []).append(cell)
    return groups


def physical_rows(cells: list[Cell]) -> list[list[Cell]]:
    """Cells grouped into rows (across the frame), each row along the frame."""
    return rows(cells, lambda c: c.box, height=lambda c: c.height)


def _similar_height(a: float, b: float, tolerances: TableTolerances) -> bool:
    return abs(a - b) <= tolerances.height_tolerance * max(a, b)


def _cell_like(cell: Cell, tolerances: TableTolerances) -> bool:
    """Short enough to be a table cell, and not a numbered note (notes set in columns align
    just like a table, but their lines are prose)."""
    return not cell.numbered and len(cell.ids) <= tolerances.max_cell_words


@dataclass(eq=False)
class TableRow:
    """One row of a table: its cells in reading order, each with its column (a cell that
    wraps onto the next line adds a second cell in the same column)."""

    cells: list[Cell]
    columns: list[int]

    @property
    def text(self) -> str:
        return " ".join(c.text for c in self.cells)

    @property
    def word_ids(self) -> list[int]:
        return [i for c in self.cells for i in c.ids]

    @property
    def bottom(self) -> float:
        return max(c.box.y1 for c in self.cells)

    def by_column(self) -> dict[int, list[Cell]]:
        """The row's cells by column, left to right."""
        out: dict[int, list[Cell]] = {}
        for cell, column in sorted(zip(self.cells, self.columns, strict=True), key=lambda p: p[1]):
            out.setdefault(column, []).append(cell)
        return out


class Column:
    """Every cell seen in one column, as sorted left edges, centres and right edges: a new
    cell lines up with the column when any of its three is near one of the column's."""

    def __init__(self, cell: Cell):
        self.lefts: list[float] = []
        self.centres: list[float] = []
        self.rights: list[float] = []
        self.add(cell)

    def add(self, cell: Cell) -> None:
        box = cell.box
        bisect.insort(self.lefts, box.x0)
        bisect.insort(self.centres, (box.x0 + box.x1) / 2)
        bisect.insort(self.rights, box.x1)

    def lines_up(self, cell: Cell, tolerance: float) -> bool:
        box = cell.box
        return (
            _near(self.lefts, box.x0, tolerance)
            or _near(self.centres, (box.x0 + box.x1) / 2, tolerance)
            or _near(self.rights, box.x1, tolerance)
        )


def _near(values: list[float], value: float, tolerance: float) -> bool:
    i = bisect.bisect_left(values, value - tolerance)
    return i < len(values) and values[i] <= value + tolerance


@dataclass(eq=False)
class Table:
    """Rows whose cells line up in two or more columns."""

    columns: list[Column]  # left to right
    rows: list[TableRow]
    tolerances: TableTolerances = field(default=TABLES, repr=False)

    @cached_property
    def height(self) -> float:
        return median(c.height for c in self.rows[0].cells)

    @property
    def bottom(self) -> float:
        return self.rows[-1].bottom

    def column_of(self, cell: Cell) -> int | None:
        """The first column (left to right) ``cell`` lines up with, if any."""
        t = self.tolerances
        if not _cell_like(cell, t) or not _similar_height(cell.height, self.height, t):
            return None
        tolerance = max(t.align_pts, t.align_heights * self.height)
        for j, column in enumerate(self.columns):
            if column.lines_up(cell, tolerance):
                return j
        return None

    def add(self, row: TableRow) -> None:
        for cell, column in zip(row.cells, row.columns, strict=True):
            self.columns[column].add(cell)
        self.rows.append(row)

    def match(self, cells: list[Cell]) -> TableRow | None:
        """The run of ``cells`` (one physical row, left to right) that continues this table:
        cells in at least two of its columns, every cell between them a cell too."""
        hits: list[tuple[int, int]] = []  # (index in cells, column), columns increasing
        for i, cell in enumerate(cells):
            column = self.column_of(cell)
            if column is not None and (not hits or column > hits[-1][1]):
                hits.append((i, column))
        if len(hits) < 2:
            return None
        first, last = hits[0][0], hits[-1][0]
        run = cells[first : last + 1]
        t = self.tolerances
        if not all(_cell_like(c, t) and _similar_height(c.height, self.height, t) for c in run):
            return None
        by_index = dict(hits)
        columns: list[int] = []
        for i in range(first, last + 1):
            # A cell between aligned cells belongs to the column on its left.
            columns.append(by_index[i] if i in by_index else columns[-1])
        return TableRow(run, columns)

    def continue_last_row(self, cell: Cell, follows: Follows) -> bool:
        """Add ``cell`` to the last row when it continues one of its cells (a wrapped line
        just below the cell, read right after it); True when it did."""
        column = self.column_of(cell)
        if column is None:
            return False
        last = self.rows[-1]
        above = last.by_column().get(column)
        if not above:
            return False
        prev = above[-1]
        below = cell.box.y0 >= prev.box.y0 + 0.5 * prev.height
        near = cell.box.y0 - prev.box.y1 <= self.tolerances.wrap_gap * max(prev.height, cell.height)
        if not (below and near and follows(prev, cell)):
            return False
        last.cells.append(cell)
        last.columns.append(column)
        self.columns[column].add(cell)
        return True

    @property
    def accepted(self) -> bool:
        """``min_table_rows`` rows or more, two columns each used by two rows or more, short
        cells; or a header of ``min_two_row_columns`` columns over one row of values."""
        t = self.tolerances
        words = [len(c.ids) for row in self.rows for c in row.cells]
        if median(words) > t.max_median_cell_words:
            return False
        if len(self.rows) == 2:
            header, values = self.rows
            return (
                len(set(header.columns)) >= t.min_two_row_columns
                and set(values.columns) == set(header.columns)
                and is_header(self.rows)
            )
        uses: dict[int, int] = {}
        for row in self.rows:
            for column in set(row.columns):
                uses[column] = uses.get(column, 0) + 1
        return len(self.rows) >= t.min_table_rows and sum(1 for n in uses.values() if n >= 2) >= 2


def is_header(rows: list[TableRow]) -> bool:
    """The first row names the columns: it has no digits while rows below do (an
    abbreviation list has none anywhere, and its first row is an entry)."""

    def has_digits(row: TableRow) -> bool:
        return any(ch.isdigit() for ch in row.text)

    return not has_digits(rows[0]) and any(has_digits(row) for row in rows[1:])


def _runs(cells: list[Cell], tolerances: TableTolerances) -> list[list[Cell]]:
    """Maximal runs of cell-like cells of one row, neighbours no further apart than
    ``max_cell_gap`` text heights: the rows a new table may start from."""
    runs: list[list[Cell]] = []
    run: list[Cell] = []
    max_gap = tolerances.max_cell_gap
    for cell in cells:
        if not _cell_like(cell, tolerances):
            if len(run) >= 2:
                runs.append(run)
            run = []
            continue
        if run:
            prev = run[-1]
            near = cell.box.x0 - prev.box.x1 <= max_gap * min(prev.height, cell.height)
            if not (near and _similar_height(prev.height, cell.height, tolerances)):
                if len(run) >= 2:
                    runs.append(run)
                run = []
        run.append(cell)
    if len(run) >= 2:
        runs.append(run)
    return [part for run in runs for part in _split_at_gutters(run, tolerances)]


def _split_at_gutters(run: list[Cell], tolerances: TableTolerances) -> list[list[Cell]]:
    """A run cut where its cells stand much further apart than elsewhere in it: two tables
    side by side (a schedule beside a legend) start as two tables, not one whose rows join
    entries of both."""
    if len(run) < 2 * 2:
        return [run]
    gaps = [b.box.x0 - a.box.x1 for a, b in pairwise(run)]
    typical = median(gaps)
    height = median(c.height for c in run)
    parts, start = [], 0
    for i, gap in enumerate(gaps, start=1):
        if (
            gap > max(tolerances.gutter_heights * height, tolerances.gutter_ratio * typical)
            and min(i - start, len(run) - i) >= 2
        ):
            parts.append(run[start:i])
            start = i
    return [*parts, run[start:]]


def find_tables(
    layer: TextLayer,
    cells: dict[int, list[Cell]] | None = None,
    skip: AbstractSet[int] = frozenset(),
    tolerances: TableTolerances = TABLES,
) -> list[Table]:
    """Tables: cells in two or more aligned columns over consecutive rows, found region by
    region (a sheet index beside a column of notes is still a table; the notes are not part
    of it), in every text direction. ``cells`` are ``cells_of(layer)`` when already made;
    lines in ``skip`` (already used) take no part."""
    follows = _follows(layer)
    tables: list[Table] = []
    for region in (cells or cells_of(layer)).values():
        cell_rows = physical_rows([c for c in region if c.line_id not in skip])
        tables += _tables_of(cell_rows, follows, tolerances)
    return tables


def _tables_of(
    cell_rows: list[list[Cell]], follows: Follows, tolerances: TableTolerances
) -> list[Table]:
    done: list[Table] = []
    open_tables: list[Table] = []
    for row in cell_rows:
        top = min(c.box.y0 for c in row)
        ending = tolerances.table_row_gap
        for table in [t for t in open_tables if top - t.bottom > ending * t.height]:
            open_tables.remove(table)
            done.append(table)
        free = list(row)
        for table in open_tables:
            if matched := table.match(free):
                table.add(matched)
                free = [c for c in free if c not in matched.cells]
        free = [c for c in free if not any(t.continue_last_row(c, follows) for t in open_tables)]
        for run in _runs(free, tolerances):
            first = TableRow(run, list(range(len(run))))
            open_tables.append(Table([Column(c) for c in run], [first], tolerances))
    return [t for t in done + open_tables if t.accepted]


def _follows(layer: TextLayer) -> Follows:
    """Whether the text layer reads one cell right after another (OCR words have no order
    of the page's own: any may follow)."""
    following = next_meaningful(layer.words)
    words = layer.words

    def follows(before: Cell, after: Cell) -> bool:
        if layer.source == "ocr":
            return True
        return reads_on(following, words, before.ids, after.ids)

    return follows
