"""Layout from word boxes alone: rows, chunks, numbered notes, prose blocks, schedule rows.

Works the same on PDF words and OCR words. Geometry is in PDF points; tolerances are
relative to the text height so they hold for 6 pt notes and 24 pt sheet numbers alike.
"""

import re
from dataclasses import dataclass, field
from functools import cached_property
from itertools import pairwise
from statistics import median

from shared.models import BBox, TextLayer, Word

# A gap wider than this many text heights splits a row into separate chunks (columns).
CHUNK_GAP = 1.0
# Lines further apart than this many text heights belong to different blocks.
BLOCK_GAP = 0.8
# Left edges within this many points count as aligned.
ALIGN_PTS = 4.0
NOTE_NUMBER = re.compile(r"^\d{1,3}[.)]$")
# Table cells: left edges, centres or right edges within this many text heights (or
# ALIGN_PTS) line up; OCR boxes jitter by a few pixels.
ALIGN_HEIGHTS = 0.3
# Cells of one row are within this share of each other's text height.
HEIGHT_TOLERANCE = 0.35
# A cell holds at most this many words, and a table's cells this many at the median:
# longer reads as prose set in columns.
MAX_CELL_WORDS = 8
MAX_MEDIAN_CELL_WORDS = 4
# A new table starts from cells at most this many text heights apart (further apart they
# are separate regions of the sheet: a sheet index beside a column of notes).
MAX_CELL_GAP = 15.0
# A table ends where the next row is more than this many text heights below its last.
TABLE_ROW_GAP = 2.5
# Rows a table needs: two aligned rows are as often a plan's room names over their
# numbers as they are a table.
MIN_TABLE_ROWS = 3


def union_bbox(boxes: list[BBox]) -> BBox:
    """The smallest box holding every box."""
    return (
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    )


@dataclass(eq=False)
class Chunk:
    """Words that sit together on one row with word-sized gaps between them (never mutated:
    its geometry is cached)."""

    words: list[Word]

    @cached_property
    def text(self) -> str:
        return " ".join(w.text for w in self.words)

    @cached_property
    def bbox(self) -> BBox:
        return union_bbox([w.bbox for w in self.words])

    @cached_property
    def height(self) -> float:
        return median(w.bbox[3] - w.bbox[1] for w in self.words)

    @property
    def numbered(self) -> bool:
        """Starts with a note number ("1.", "12)") followed by a body."""
        return len(self.words) > 1 and bool(NOTE_NUMBER.match(self.words[0].text))

    @property
    def body_x0(self) -> float:
        """Left edge of the text after the note number (hanging indents align here)."""
        return self.words[1].bbox[0] if self.numbered else self.bbox[0]


def _center_y(box: BBox) -> float:
    return (box[1] + box[3]) / 2


def rows_of_chunks(words: list[Word]) -> list[list[Chunk]]:
    """Group words into rows (top to bottom) of chunks (left to right). A note number that
    PyMuPDF reports as its own line ("1.") is rejoined with the body to its right."""
    rows: list[list[Word]] = []
    for word in sorted(words, key=lambda w: (_center_y(w.bbox), w.bbox[0])):
        height = word.bbox[3] - word.bbox[1]
        if rows:
            last = rows[-1]
            row_center = median(_center_y(w.bbox) for w in last)
            row_height = median(w.bbox[3] - w.bbox[1] for w in last)
            if abs(_center_y(word.bbox) - row_center) <= 0.5 * min(height, row_height):
                last.append(word)
                continue
        rows.append([word])
    return [_rejoin_numbers(_split_row(row)) for row in rows]


def _split_row(row: list[Word]) -> list[list[Word]]:
    row = sorted(row, key=lambda w: w.bbox[0])
    groups = [[row[0]]]
    for word in row[1:]:
        prev = groups[-1][-1]
        height = min(word.bbox[3] - word.bbox[1], prev.bbox[3] - prev.bbox[1])
        if word.bbox[0] - prev.bbox[2] > CHUNK_GAP * height:
            groups.append([word])
        else:
            groups[-1].append(word)
    return groups


def _rejoin_numbers(groups: list[list[Word]]) -> list[Chunk]:
    out: list[list[Word]] = []
    for group in groups:
        prev = out[-1] if out else None
        if prev and len(prev) == 1 and NOTE_NUMBER.match(prev[0].text):
            prev.extend(group)
        else:
            out.append(list(group))
    return [Chunk(words) for words in out]


@dataclass
class ReadingOrder:
    """Which word may follow which: the text layer's own order and row by row, left to
    right. The page carries text in these orders, so joining chunks only along them keeps
    every ``source_text`` a run of the page's words (what the text oracle confirms)."""

    successors: dict[int, set[int]]

    @classmethod
    def of(cls, words: list[Word], rows: list[list[Chunk]]) -> "ReadingOrder":
        """The orders of ``words`` (the text layer's) and of ``rows`` (its chunks)."""
        successors: dict[int, set[int]] = {}
        by_rows = [w for row in rows for chunk in row for w in chunk.words]
        for order in (words, by_rows):
            # Punctuation-only words ("-", "|") are skipped: they carry nothing to match.
            meaningful = [w for w in order if _meaningful(w)]
            for before, after in pairwise(meaningful):
                successors.setdefault(id(before), set()).add(id(after))
        return cls(successors)

    def follows(self, before: Chunk, after: Chunk) -> bool:
        """True when ``after``'s first word comes right after ``before``'s last one."""
        last = next((w for w in reversed(before.words) if _meaningful(w)), None)
        first = next((w for w in after.words if _meaningful(w)), None)
        if last is None or first is None:
            return True
        return id(first) in self.successors.get(id(last), ())


def _meaningful(word: Word) -> bool:
    return any(ch.isalnum() for ch in word.text)


@dataclass
class Block:
    """Chunks stacked into one paragraph or one numbered note."""

    chunks: list[Chunk] = field(default_factory=list)

    @property
    def text(self) -> str:
        return " ".join(c.text for c in self.chunks)

    @property
    def bbox(self) -> BBox:
        return union_bbox([c.bbox for c in self.chunks])

    @property
    def numbered(self) -> bool:
        return self.chunks[0].numbered

    def accepts(self, chunk: Chunk) -> bool:
        """True when ``chunk`` continues this block: just below its last line, left-aligned
        (or centred) with it, the same text size, and not the start of a new note."""
        last = self.chunks[-1]
        if chunk.numbered or chunk.bbox[1] < last.bbox[1] + 0.5 * last.height:
            return False
        if chunk.bbox[1] - last.bbox[3] > BLOCK_GAP * max(last.height, chunk.height):
            return False
        if abs(chunk.height - last.height) > 0.25 * max(chunk.height, last.height):
            return False
        first = self.chunks[0]
        left = chunk.bbox[0]
        aligned = abs(left - first.body_x0) <= ALIGN_PTS or abs(left - first.bbox[0]) <= ALIGN_PTS
        centre_shift = (chunk.bbox[0] + chunk.bbox[2]) - (last.bbox[0] + last.bbox[2])
        centred = abs(centre_shift) <= 2 * ALIGN_PTS
        return aligned or centred


def build_blocks(rows: list[list[Chunk]], order: ReadingOrder | None = None) -> list[Block]:
    """Stack chunks into blocks in reading order: a numbered note with its wrapped lines,
    a run of prose, or a lone chunk. With ``order``, a line joins a block only when the
    page reads it right after the block's last line (never a column of a table)."""
    blocks: list[Block] = []
    open_blocks: list[Block] = []  # blocks whose last line is near enough to continue
    for row in rows:
        top = min(c.bbox[1] for c in row)
        open_blocks = [
            b for b in open_blocks if top - b.chunks[-1].bbox[3] <= 2 * b.chunks[-1].height
        ]
        for chunk in row:
            target = next(
                (
                    b
                    for b in reversed(open_blocks)
                    if b.accepts(chunk) and (order is None or order.follows(b.chunks[-1], chunk))
                ),
                None,
            )
            if target is None:
                target = Block([chunk])
                blocks.append(target)
                open_blocks.append(target)
            else:
                target.chunks.append(chunk)
    return blocks


def _similar_height(a: float, b: float) -> bool:
    return abs(a - b) <= HEIGHT_TOLERANCE * max(a, b)


def _aligned(a: BBox, b: BBox, tolerance: float) -> bool:
    """Left edges, centres or right edges line up (cells may be set any of the three ways)."""
    return (
        abs(a[0] - b[0]) <= tolerance
        or abs((a[0] + a[2]) - (b[0] + b[2])) <= 2 * tolerance
        or abs(a[2] - b[2]) <= tolerance
    )


def _cell_like(chunk: Chunk) -> bool:
    """Short enough to be a table cell, and not a numbered note (notes set in columns
    align just like a table, but their lines are prose)."""
    return not chunk.numbered and len(chunk.words) <= MAX_CELL_WORDS


@dataclass(eq=False)
class TableRow:
    """One row of a table or list: its chunks in reading order, each with its column (a
    cell that wraps onto the next line adds a second chunk in the same column)."""

    chunks: list[Chunk]
    columns: list[int]

    @property
    def text(self) -> str:
        return " ".join(c.text for c in self.chunks)

    @property
    def bbox(self) -> BBox:
        return union_bbox([c.bbox for c in self.chunks])

    def cells(self) -> dict[int, list[Chunk]]:
        """The row's chunks by column, left to right."""
        cells: dict[int, list[Chunk]] = {}
        for chunk, column in sorted(zip(self.chunks, self.columns), key=lambda p: p[1]):
            cells.setdefault(column, []).append(chunk)
        return cells


@dataclass(eq=False)
class Table:
    """Rows whose cells line up in two or more columns: a schedule, a sheet index, an
    abbreviation list, a legend."""

    columns: list[list[Chunk]]  # every cell seen in each column, left to right
    rows: list[TableRow]

    @property
    def height(self) -> float:
        return median(c.height for row in self.rows for c in row.chunks)

    @property
    def bottom(self) -> float:
        return self.rows[-1].bbox[3]

    def column_of(self, chunk: Chunk) -> int | None:
        """The first column (left to right) ``chunk`` lines up with, if any."""
        if not _cell_like(chunk) or not _similar_height(chunk.height, self.height):
            return None
        tolerance = max(ALIGN_PTS, ALIGN_HEIGHTS * self.height)
        for j, cells in enumerate(self.columns):
            if any(_aligned(chunk.bbox, cell.bbox, tolerance) for cell in cells):
                return j
        return None

    def add(self, row: TableRow) -> None:
        for chunk, column in zip(row.chunks, row.columns):
            self.columns[column].append(chunk)
        self.rows.append(row)

    def match(self, chunks: list[Chunk]) -> TableRow | None:
        """The run of ``chunks`` (one physical row, left to right) that continues this
        table: cells in at least two of its columns, every chunk between them a cell too."""
        hits: list[tuple[int, int]] = []  # (index in chunks, column), columns increasing
        for i, chunk in enumerate(chunks):
            column = self.column_of(chunk)
            if column is not None and (not hits or column > hits[-1][1]):
                hits.append((i, column))
        if len(hits) < 2:
            return None
        first, last = hits[0][0], hits[-1][0]
        run = chunks[first : last + 1]
        if not all(_cell_like(c) and _similar_height(c.height, self.height) for c in run):
            return None
        by_index = dict(hits)
        columns: list[int] = []
        for i in range(first, last + 1):
            # A chunk between aligned cells belongs to the cell on its left.
            columns.append(by_index[i] if i in by_index else columns[-1])
        return TableRow(run, columns)

    def continue_last_row(self, chunk: Chunk, order: ReadingOrder) -> bool:
        """Add ``chunk`` to the last row when it continues one of its cells (a wrapped line
        just below the cell, read right after the row); True when it did."""
        column = self.column_of(chunk)
        last = self.rows[-1]
        cell = last.cells().get(column) if column is not None else None
        if not cell:
            return False
        above = cell[-1]
        below = chunk.bbox[1] >= above.bbox[1] + 0.5 * above.height
        near = chunk.bbox[1] - above.bbox[3] <= BLOCK_GAP * max(above.height, chunk.height)
        if not (below and near and order.follows(last.chunks[-1], chunk)):
            return False
        last.chunks.append(chunk)
        last.columns.append(column)
        self.columns[column].append(chunk)
        return True

    @property
    def accepted(self) -> bool:
        """MIN_TABLE_ROWS rows or more, two columns each used by two rows or more, short
        cells."""
        uses: dict[int, int] = {}
        for row in self.rows:
            for column in set(row.columns):
                uses[column] = uses.get(column, 0) + 1
        words = [len(c.words) for row in self.rows for c in row.chunks]
        return (
            len(self.rows) >= MIN_TABLE_ROWS
            and sum(1 for n in uses.values() if n >= 2) >= 2
            and median(words) <= MAX_MEDIAN_CELL_WORDS
        )


def _runs(chunks: list[Chunk]) -> list[list[Chunk]]:
    """Maximal runs of cell-like chunks of one row, neighbours no further apart than
    MAX_CELL_GAP text heights: the rows a new table may start from."""
    runs: list[list[Chunk]] = []
    run: list[Chunk] = []
    for chunk in chunks:
        if not _cell_like(chunk):
            if len(run) >= 2:
                runs.append(run)
            run = []
            continue
        if run:
            prev = run[-1]
            near = chunk.bbox[0] - prev.bbox[2] <= MAX_CELL_GAP * min(prev.height, chunk.height)
            if not (near and _similar_height(prev.height, chunk.height)):
                if len(run) >= 2:
                    runs.append(run)
                run = []
        run.append(chunk)
    if len(run) >= 2:
        runs.append(run)
    return runs


def find_tables(rows: list[list[Chunk]], order: ReadingOrder | None = None) -> list[Table]:
    """Tables and lists: cells in two or more aligned columns over MIN_TABLE_ROWS or more
    consecutive rows, found region by region (a sheet index beside a column of notes is
    still a table; the notes are not part of it). With ``order``, a cell wrapped onto a
    line of its own stays in its row."""
    done: list[Table] = []
    open_tables: list[Table] = []
    for row in rows:
        top = min(c.bbox[1] for c in row)
        for table in [t for t in open_tables if top - t.bottom > TABLE_ROW_GAP * t.height]:
            open_tables.remove(table)
            done.append(table)
        free = list(row)
        for table in open_tables:
            if matched := table.match(free):
                table.add(matched)
                free = [c for c in free if c not in matched.chunks]
        if order is not None:
            free = [c for c in free if not any(t.continue_last_row(c, order) for t in open_tables)]
        for run in _runs(free):
            open_tables.append(Table([[c] for c in run], [TableRow(run, list(range(len(run))))]))
    return [t for t in done + open_tables if t.accepted]


@dataclass
class Segment:
    """A note-sized block of the page's text, verbatim, with where it sits."""

    text: str
    bbox: BBox
    kind: str  # "note", "row" or "prose"


def is_noise(text: str) -> bool:
    """Short or letter-free text (dimension ticks like 8'-0", grid numbers, stray marks)."""
    alnum = [ch for ch in text if ch.isalnum()]
    return len(alnum) < 4 or not any(ch.isalpha() for ch in alnum)


def segment_text(text_layer: TextLayer) -> list[Segment]:
    """Cut the page's text into note-sized segments in reading order: numbered notes with
    their wrapped lines, one segment per table row, merged prose runs; noise skipped."""
    rows = rows_of_chunks(text_layer.words)
    order = ReadingOrder.of(text_layer.words, rows)
    tables = find_tables(rows, order)
    table_cells = {id(c) for table in tables for row in table.rows for c in row.chunks}
    segments: list[tuple[float, float, Segment]] = []
    for table in tables:
        for row in table.rows:
            box = row.bbox
            segments.append((box[1], box[0], Segment(row.text, box, "row")))
    rest = [[c for c in row if id(c) not in table_cells] for row in rows]
    for block in build_blocks([row for row in rest if row], order):
        box = block.bbox
        kind = "note" if block.numbered else "prose"
        segments.append((box[1], box[0], Segment(block.text, box, kind)))
    segments.sort(key=lambda s: (s[0], s[1]))
    return [s for _, _, s in segments if not is_noise(s.text)]
