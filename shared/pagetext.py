"""The page's text, modelled once: one normaliser, one digit-run function, and one rule that
groups words into lines and lines into blocks.

Extract reads a page into words (``shared.models.Word``); ``layout`` groups them, and the
groups are stored with the words in ``text.json``. Coverage counts the same lines the
fallback rung emits, verify checks claims against the words objects cite, and the title-block
reader looks at the same lines: no stage can read the page differently from another.

Geometry is in displayed page coordinates (the page's rotation already applied, y down, PDF
points). A word's ``dir`` is the unit vector its text runs along; lines are grouped in the
frame of that direction, so vertical and diagonal text forms lines as horizontal text does.
"""

import math
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shared.models import BBox, Word

# --- one normaliser -----------------------------------------------------------------------

# Unicode hyphens, dashes and the minus sign: printed as such, compared as "-".
DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"
_DASH_TABLE = str.maketrans(dict.fromkeys(DASHES, "-"))
_ALNUM_RUN = re.compile(r"[^\W_]+")
_DIGIT_RUN = re.compile(r"\d+")
# A number grouped in thousands ("1,200", "12,500,000") and a decimal ("3.50", "12.0"),
# standing alone or before a unit ("3.50m"), never inside a token ("A101.10", "W1,200").
_GROUPED = re.compile(r"(?<![\w,])\d{1,3}(?:,\d{3})+(?![\d,])")
_DECIMAL = re.compile(r"(?<![\w.])(\d+)\.(\d+)(?![\d.])")


def fold_dashes(text: str) -> str:
    """The text with every Unicode dash and the minus sign made an ASCII hyphen."""
    return text.translate(_DASH_TABLE)


def normalize(text: str) -> str:
    """The form texts are compared in: compatibility-folded, case-folded runs of letters and
    digits joined by single spaces (``8' - 0" O.C.`` → ``8 0 o c``)."""
    return " ".join(_ALNUM_RUN.findall(unicodedata.normalize("NFKC", text).casefold()))


def squash(text: str) -> str:
    """``normalize`` without the spaces: where words break never decides a match."""
    return normalize(text).replace(" ", "")


def digit_runs(text: str) -> list[str]:
    """The runs of digits in a text, in order (``12'-6 1/2"`` → 12, 6, 1, 2): what a misread
    changes."""
    return _DIGIT_RUN.findall(unicodedata.normalize("NFKC", text))


def plain_numbers(text: str) -> str:
    """The text with its numbers spelled plainly: thousands without their commas ("1,200" →
    "1200") and decimals without trailing zeros ("3.50" → "3.5", "12.0" → "12"), so a value
    written either way is the same number."""
    text = _GROUPED.sub(lambda m: m.group().replace(",", ""), unicodedata.normalize("NFKC", text))
    return _DECIMAL.sub(_plain_decimal, text)


def _plain_decimal(match: re.Match[str]) -> str:
    whole, fraction = match.group(1), match.group(2).rstrip("0")
    return f"{whole}.{fraction}" if fraction else whole


def number_key(run: str) -> str:
    """A digit-run as the number it is ("02" is 2), without converting unbounded digits."""
    return run.lstrip("0") or "0"


def numbers_printed(text: str) -> set[str]:
    """Every number a text prints (``number_key`` of each digit-run), as printed and as
    spelled plainly: what may vouch for a value anywhere in it."""
    return {number_key(r) for r in digit_runs(text) + digit_runs(plain_numbers(text))}


def mask_digits(text: str) -> str:
    """The text with each digit-run replaced by "#": its layout, whatever the numbers."""
    return _DIGIT_RUN.sub("#", text)


def alnum_count(text: str) -> int:
    """Letters and digits in a text: punctuation and whitespace carry no content."""
    return sum(map(str.isalnum, text))


# --- the unit of coverage -----------------------------------------------------------------

# A line shorter than this (whitespace folded) is a tag or a tick, not text a page is
# measured by.
MIN_LINE_CHARS = 12
# A line made only of numbers, feet/inch marks, fractions and an elevation or top-of prefix
# is a dimension tick: it says nothing an object must carry.
_TICK_PREFIX = re.compile(r"^(?:(?:EL(?:EV)?|[TB]\.\s?O\.(?:\s?[A-Z]{1,3}\.?)?)\.?\s*:?\s*)+", re.I)
_TICK_BODY = re.compile(r"^[\d\s'\"′″‘’“”\-/.,+±=@()xX]*$")


def is_dimension_tick(text: str) -> bool:
    """True for a line of only dimensions/elevations (``15"``, ``8' - 0"``, ``EL. 100'-6"``)."""
    body = _TICK_PREFIX.sub("", fold_dashes(" ".join(text.split())), count=1)
    return bool(_TICK_BODY.match(body))


def is_meaningful(text: str) -> bool:
    """Whether a line is one the page's coverage is measured by: long enough, not a tick."""
    folded = " ".join(text.split())
    return (
        len(folded) >= MIN_LINE_CHARS and not is_dimension_tick(folded) and bool(normalize(folded))
    )


def is_content(text: str) -> bool:
    """Whether a line carries anything at all (a short tag counts; a lone mark does not)."""
    return alnum_count(text) > 0 and not is_dimension_tick(text)


def coverage_units(line_texts: Sequence[str]) -> list[int]:
    """The lines a page's coverage is measured by, and the fallback rung cites: its
    meaningful lines, or, on a page of nothing but short tags, every line with content (so
    a sheet of tags is never dark either)."""
    units = [i for i, text in enumerate(line_texts) if is_meaningful(text)]
    return units or [i for i, text in enumerate(line_texts) if is_content(text)]


# --- layout: words → lines → blocks -------------------------------------------------------

# A gap wider than this many text heights splits a row into separate lines (columns, labels).
LINE_GAP = 1.0
# Words whose heights differ by more than this factor are not one line (a sheet number set
# beside its small label).
LINE_SIZE_RATIO = 1.6
# Lines further apart than this many text heights belong to different blocks.
BLOCK_GAP = 0.8
# Stacked lines of one block share their size within this share.
BLOCK_SIZE_TOLERANCE = 0.25
# Left edges within this many points count as aligned.
ALIGN_PTS = 4.0
# "1." / "12)" / "A." / "A.2." opening a note: rejoined with its body, and it starts a new
# block.
NOTE_NUMBER = re.compile(r"^(?:\d{1,3}|[A-Z])(?:\.\d{1,3})*[.)]$")
# Directions within this angle (degrees) are one direction.
_ANGLE_STEP = 5.0


@dataclass(frozen=True)
class Frame:
    """Coordinates along a text direction and across it (across grows to the next line)."""

    dx: float
    dy: float

    def box(self, bbox: "BBox") -> tuple[float, float, float, float]:
        """(along0, across0, along1, across1) of a displayed box: exact for axis-aligned
        text, the enclosing box for diagonal text."""
        x0, y0, x1, y1 = bbox
        dx, dy = self.dx, self.dy
        if dx == 1.0 and dy == 0.0:  # most text: the frame is the page's
            return x0, y0, x1, y1
        # Each coordinate is linear in x and in y: its extremes are at the box's extremes.
        along = (
            min(x0 * dx, x1 * dx) + min(y0 * dy, y1 * dy),
            max(x0 * dx, x1 * dx) + max(y0 * dy, y1 * dy),
        )
        across = (
            min(-x0 * dy, -x1 * dy) + min(y0 * dx, y1 * dx),
            max(-x0 * dy, -x1 * dy) + max(y0 * dx, y1 * dx),
        )
        return along[0], across[0], along[1], across[1]


def direction_key(direction: tuple[float, float]) -> int:
    """Directions within _ANGLE_STEP degrees of each other share a key."""
    angle = math.degrees(math.atan2(direction[1], direction[0]))
    return round(angle / _ANGLE_STEP) % round(360 / _ANGLE_STEP)


def frame_of(key: int) -> Frame:
    """The frame of a direction key."""
    angle = math.radians(key * _ANGLE_STEP)
    # Snap cos/sin of right angles to exact values so axis-aligned frames stay exact.
    return Frame(round(math.cos(angle), 12), round(math.sin(angle), 12))


@dataclass
class _Placed:
    """A word in its direction's frame."""

    id: int
    text: str
    a0: float
    c0: float
    a1: float
    c1: float

    @property
    def height(self) -> float:
        return self.c1 - self.c0

    @property
    def centre(self) -> float:
        return (self.c0 + self.c1) / 2


class _Line:
    """Words of one line in their frame, with the geometry blocks are built from (computed
    once: a line never changes after it is formed)."""

    __slots__ = ("a0", "a1", "body_a0", "c0", "c1", "height", "numbered", "words")

    def __init__(self, words: list[_Placed]):
        self.words = words
        self.a0 = words[0].a0
        self.a1 = max(w.a1 for w in words)
        self.c0 = min(w.c0 for w in words)
        self.c1 = max(w.c1 for w in words)
        self.height = _median([w.height for w in words])
        self.numbered = len(words) > 1 and bool(NOTE_NUMBER.match(words[0].text))
        # Where the text after a note number starts (hanging indents align here).
        self.body_a0 = words[1].a0 if self.numbered else self.a0


def _median(values: list[float]) -> float:
    """The median (statistics.median's answer, without its generality: this runs per line)."""
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def layout(
    words: Sequence["Word"], *, ordered: bool = True
) -> tuple[list[list[int]], list[list[int]]]:
    """Group a page's words into lines and lines into blocks, in reading order.

    A line is words of one direction on one baseline, of similar size, no further apart than
    LINE_GAP text heights (a note number "1." joins its body whatever the gap). A block is
    lines stacked directly under each other, of one size, left-aligned (or hanging from a
    note number) or centred, and read in that order by the text layer itself (word ids are
    the layer's own order), so two columns of a table or two neighbouring labels never join.
    Returns (lines as word ids, blocks as line ids); blocks are ordered top to bottom, then
    left to right, and line ids follow that order. ``ordered`` False (OCR words, whose order
    is the reader's, not the page's) drops the reading-order condition.
    """
    by_direction: dict[int, list[Word]] = {}
    for word in words:
        by_direction.setdefault(direction_key(word.dir), []).append(word)
    next_word = next_meaningful(words) if ordered else None
    blocks: list[tuple[tuple[float, float], list[_Line]]] = []
    for key, group in by_direction.items():
        frame = frame_of(key)
        placed = [_Placed(w.id, w.text, *frame.box(w.bbox)) for w in group]
        lines = _lines(placed)
        for block in _blocks(lines, next_word):
            blocks.append((_reading_key(block, words), block))
    blocks.sort(key=lambda item: item[0])
    line_ids: list[list[int]] = []
    block_ids: list[list[int]] = []
    for _, block in blocks:
        ids = []
        for line in block:
            ids.append(len(line_ids))
            line_ids.append([w.id for w in line.words])
        block_ids.append(ids)
    return line_ids, block_ids


def _reading_key(block: list[_Line], words: Sequence["Word"]) -> tuple[float, float]:
    first = words[block[0].words[0].id].bbox
    top = min(words[w.id].bbox[1] for line in block for w in line.words)
    return (round(top, 1), first[0])


def next_meaningful(words: Sequence["Word"]) -> dict[int, int]:
    """Each word id -> the id of the next word in the layer's order that carries letters or
    digits (punctuation-only words such as "-" or "|" carry nothing to follow)."""
    following: dict[int, int] = {}
    previous: int | None = None
    for word in words:
        if alnum_count(word.text):
            if previous is not None:
                following[previous] = word.id
            previous = word.id
    return following


def reads_on(next_word: dict[int, int], before: Sequence, after: Sequence) -> bool:
    """Whether the text layer reads the words ``after`` right after the words ``before``
    (anything with ``id`` and ``text``; punctuation-only words are skipped)."""
    last = next((w.id for w in reversed(before) if alnum_count(w.text)), None)
    first = next((w.id for w in after if alnum_count(w.text)), None)
    return last is None or first is None or next_word.get(last) == first


def _lines(placed: list[_Placed]) -> list[_Line]:
    rows: list[list[_Placed]] = []
    row_centre = row_height = 0.0
    for word in sorted(placed, key=lambda w: (w.centre, w.a0)):
        if rows and abs(word.centre - row_centre) <= 0.5 * min(word.height, row_height):
            rows[-1].append(word)
            n = len(rows[-1])
            row_centre += (word.centre - row_centre) / n
            row_height += (word.height - row_height) / n
            continue
        rows.append([word])
        row_centre, row_height = word.centre, word.height
    lines: list[_Line] = []
    for row in rows:
        lines.extend(_rejoin_note_numbers(_split_row(row)))
    return lines


def _split_row(row: list[_Placed]) -> list[list[_Placed]]:
    row.sort(key=lambda w: w.a0)
    groups = [[row[0]]]
    for word in row[1:]:
        prev = groups[-1][-1]
        low, high = sorted((max(word.height, 1e-6), max(prev.height, 1e-6)))
        if word.a0 - prev.a1 > LINE_GAP * low or high / low > LINE_SIZE_RATIO:
            groups.append([word])
        else:
            groups[-1].append(word)
    return groups


def _rejoin_note_numbers(groups: list[list[_Placed]]) -> list[_Line]:
    out: list[list[_Placed]] = []
    for group in groups:
        prev = out[-1] if out else None
        if prev and len(prev) == 1 and NOTE_NUMBER.match(prev[0].text):
            prev.extend(group)
        else:
            out.append(list(group))
    return [_Line(words) for words in out]


def _continues(block: list[_Line], line: _Line, next_word: dict[int, int] | None) -> bool:
    """Whether ``line`` is the next line of ``block``: just below its last line, the same
    size, aligned or centred with it, not a new note, and read right after it."""
    last = block[-1]
    if line.c0 < last.c0 + 0.5 * last.height:
        return False
    if line.c0 - last.c1 > BLOCK_GAP * max(last.height, line.height):
        return False
    if abs(line.height - last.height) > BLOCK_SIZE_TOLERANCE * max(line.height, last.height):
        return False
    first = block[0]
    aligned = abs(line.a0 - first.body_a0) <= ALIGN_PTS or abs(line.a0 - first.a0) <= ALIGN_PTS
    centred = abs((line.a0 + line.a1) - (last.a0 + last.a1)) <= 2 * ALIGN_PTS
    if not (aligned or centred):
        return False
    return next_word is None or reads_on(next_word, last.words, line.words)


def _blocks(lines: list[_Line], next_word: dict[int, int] | None) -> list[list[_Line]]:
    blocks: list[list[_Line]] = []
    open_blocks: list[list[_Line]] = []  # blocks whose last line is near enough to continue
    for line in sorted(lines, key=lambda ln: (ln.c0, ln.a0)):
        # Lines come in order down the frame: a block out of reach now stays out of reach.
        open_blocks = [b for b in open_blocks if line.c0 - b[-1].c1 <= 2 * b[-1].height]
        target = None
        if not line.numbered:
            # Aligned or centred lines overlap along the frame: others need no closer look.
            target = next(
                (
                    b
                    for b in reversed(open_blocks)
                    if b[-1].a1 >= line.a0
                    and b[-1].a0 <= line.a1
                    and _continues(b, line, next_word)
                ),
                None,
            )
        if target is None:
            target = [line]
            blocks.append(target)
            open_blocks.append(target)
        else:
            target.append(line)
    return blocks


# --- evidence -----------------------------------------------------------------------------


def union_bbox(boxes: Iterable["BBox"]) -> "BBox":
    """The smallest box holding every box."""
    x0s, y0s, x1s, y1s = zip(*boxes, strict=True)
    return min(x0s), min(y0s), max(x1s), max(y1s)


def join_words(words: Sequence["Word"], ids: Iterable[int]) -> str:
    """The cited words' text, in the order cited, joined by spaces."""
    return " ".join(words[i].text for i in ids)
