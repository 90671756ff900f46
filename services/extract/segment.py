"""Layout from word boxes alone: rows, chunks, numbered notes, prose blocks, schedule rows.

Works the same on PDF words and OCR words. Geometry is in PDF points; tolerances are
relative to the text height so they hold for 6 pt notes and 24 pt sheet numbers alike.
"""

import re
from dataclasses import dataclass, field
from functools import cached_property
from statistics import median

from shared.models import BBox, TextLayer, Word

# A gap wider than this many text heights splits a row into separate chunks (columns).
CHUNK_GAP = 1.0
# Lines further apart than this many text heights belong to different blocks.
BLOCK_GAP = 0.8
# Left edges within this many points count as aligned.
ALIGN_PTS = 4.0
NOTE_NUMBER = re.compile(r"^\d{1,3}[.)]$")


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


def build_blocks(rows: list[list[Chunk]]) -> list[Block]:
    """Stack chunks into blocks in reading order: a numbered note with its wrapped lines,
    a run of prose, or a lone chunk."""
    blocks: list[Block] = []
    open_blocks: list[Block] = []  # blocks whose last line is near enough to continue
    for row in rows:
        top = min(c.bbox[1] for c in row)
        open_blocks = [
            b for b in open_blocks if top - b.chunks[-1].bbox[3] <= 2 * b.chunks[-1].height
        ]
        for chunk in row:
            target = next((b for b in reversed(open_blocks) if b.accepts(chunk)), None)
            if target is None:
                target = Block([chunk])
                blocks.append(target)
                open_blocks.append(target)
            else:
                target.chunks.append(chunk)
    return blocks


def _overlaps(a: BBox, b: BBox) -> bool:
    return min(a[2], b[2]) - max(a[0], b[0]) > 0


def _aligned_rows(upper: list[Chunk], lower: list[Chunk]) -> bool:
    """Two rows of a table share at least two columns (cells overlapping horizontally)."""
    shared = sum(1 for c in lower if any(_overlaps(c.bbox, u.bbox) for u in upper))
    return shared >= 2


def _table_row(row: list[Chunk]) -> bool:
    """Three or more short cells, not a line across columns of numbered notes (a notes
    sheet set in columns aligns just like a table, but its lines are prose)."""
    if len(row) < 3 or sum(1 for c in row if c.numbered) > 1:
        return False
    return median(len(c.words) for c in row) <= 3


def find_tables(rows: list[list[Chunk]]) -> list[list[list[Chunk]]]:
    """Runs of two or more consecutive rows of three or more short cells in aligned
    columns: schedules and tables. Each table is a list of rows of cells."""
    tables: list[list[list[Chunk]]] = []
    run: list[list[Chunk]] = []
    for row in rows:
        is_row = _table_row(row)
        if is_row and run and _aligned_rows(run[-1], row) and _close_below(run[-1], row):
            run.append(row)
            continue
        if len(run) >= 2:
            tables.append(run)
        run = [row] if is_row else []
    if len(run) >= 2:
        tables.append(run)
    return tables


def _close_below(upper: list[Chunk], lower: list[Chunk]) -> bool:
    top = min(c.bbox[1] for c in lower)
    bottom = max(c.bbox[3] for c in upper)
    height = max(c.height for c in upper + lower)
    return top - bottom <= 2.5 * height


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
    tables = find_tables(rows)
    table_cells = {id(c) for table in tables for row in table for c in row}
    segments: list[tuple[float, float, Segment]] = []
    for table in tables:
        for row in table:
            text = " ".join(c.text for c in row)
            box = union_bbox([c.bbox for c in row])
            segments.append((box[1], box[0], Segment(text, box, "row")))
    rest = [[c for c in row if id(c) not in table_cells] for row in rows]
    for block in build_blocks([row for row in rest if row]):
        box = block.bbox
        kind = "note" if block.numbered else "prose"
        segments.append((box[1], box[0], Segment(block.text, box, kind)))
    segments.sort(key=lambda s: (s[0], s[1]))
    return [s for _, _, s in segments if not is_noise(s.text)]
