"""The one rule that groups a page's words into lines and lines into blocks, and the one
way a text layer is built: ``laid_out``.

Lines are grouped in the frame of their words' direction (``dir``), so vertical and
diagonal text forms lines as horizontal text does.
"""

from collections.abc import Sequence
from typing import Any

from pydantic import TypeAdapter

from shared.pagetext.geometry import Box, Frame, direction_key, frame_of
from shared.pagetext.lines import NOTE_NUMBER, FramedLine, framed_line
from shared.pagetext.model import TextLayer, Word
from shared.pagetext.normalize import alnum_count
from shared.pagetext.rows import rows
from shared.pagetext.tolerances import LAYOUT, LayoutTolerances

_WORDS = TypeAdapter(list[Word])


def laid_out(
    *,
    words: Sequence[Word | dict[str, Any]],
    tolerances: LayoutTolerances = LAYOUT,
    **fields: Any,
) -> TextLayer:
    """A text layer of ``words`` (models or their fields) with its lines and blocks: the
    words numbered in their order, then grouped by ``layout`` (OCR words, ``source="ocr"``,
    without the reading-order condition) with ``tolerances``. ``fields`` are the layer's
    other fields."""
    checked = _WORDS.validate_python(words)
    numbered = [w if w.id == i else w.model_copy(update={"id": i}) for i, w in enumerate(checked)]
    ordered = fields.get("source", "pdf") != "ocr"
    lines, blocks = layout(numbered, ordered=ordered, tolerances=tolerances)
    return TextLayer(words=numbered, lines=lines, blocks=blocks, **fields)


def layout(
    words: Sequence[Word], *, ordered: bool = True, tolerances: LayoutTolerances = LAYOUT
) -> tuple[list[list[int]], list[list[int]]]:
    """Group a page's words (ids their index) into lines and lines into blocks, in reading
    order.

    A line is words of one direction on one baseline, of similar size, no further apart than
    ``tolerances.line_gap`` text heights (a note number "1." joins its body whatever the
    gap). A block is lines stacked directly under each other, of one size, left-aligned (or
    hanging from a note number) or centred, and read in that order by the text layer itself
    (word ids are the layer's own order), so two columns of a table or two neighbouring
    labels never join.
    Words the page does not show (``hidden``) are in no line. Returns (lines as word ids,
    blocks as line ids); blocks are ordered top to bottom, then
    left to right, and line ids follow that order. ``ordered`` False (OCR words, whose order
    is the reader's, not the page's) drops the reading-order condition.
    """
    by_direction: dict[int, list[Word]] = {}
    for word in words:
        if word.hidden is not None:
            continue  # the page does not show it: no line reads it
        by_direction.setdefault(direction_key(word.dir), []).append(word)
    next_word = next_meaningful(words) if ordered else None
    blocks: list[tuple[tuple[float, float], list[FramedLine]]] = []
    for key, group in by_direction.items():
        lines = _lines(words, group, frame_of(key), tolerances)
        for block in _blocks(lines, words, next_word, tolerances):
            blocks.append((_reading_key(block, words), block))
    blocks.sort(key=lambda item: item[0])
    line_ids: list[list[int]] = []
    block_ids: list[list[int]] = []
    for _, block in blocks:
        ids = []
        for line in block:
            ids.append(len(line_ids))
            line_ids.append(list(line.ids))
        block_ids.append(ids)
    return line_ids, block_ids


def _reading_key(block: list[FramedLine], words: Sequence[Word]) -> tuple[float, float]:
    first = words[block[0].ids[0]].bbox
    top = min(words[i].bbox.y0 for line in block for i in line.ids)
    return (round(top, 1), first.x0)


def next_meaningful(words: Sequence[Word]) -> dict[int, int]:
    """Each word id -> the id of the next word in the layer's order that carries letters or
    digits (punctuation-only words such as "-" or "|" carry nothing to follow); words the
    page does not show are passed over."""
    following: dict[int, int] = {}
    previous: int | None = None
    for word in words:
        if word.hidden is None and alnum_count(word.text):
            if previous is not None:
                following[previous] = word.id
            previous = word.id
    return following


def reads_on(
    next_word: dict[int, int], words: Sequence[Word], before: Sequence[int], after: Sequence[int]
) -> bool:
    """Whether the text layer reads the words ``after`` right after the words ``before``
    (ids into ``words``; punctuation-only words are skipped)."""
    last = next((i for i in reversed(before) if alnum_count(words[i].text)), None)
    first = next((i for i in after if alnum_count(words[i].text)), None)
    return last is None or first is None or next_word.get(last) == first


def _lines(
    words: Sequence[Word], group: list[Word], frame: Frame, tolerances: LayoutTolerances
) -> list[FramedLine]:
    """The lines of words of one direction: rows across its frame, cut at gaps."""
    boxes = {w.id: w.bbox.in_frame(frame) for w in group}
    lines = []
    for row in rows(group, lambda w: boxes[w.id], settle=True):
        for line in _rejoin_note_numbers(_split_row(row, boxes, tolerances)):
            ids = [w.id for w in line]
            lines.append(framed_line(words, ids, frame, boxes=[boxes[i] for i in ids]))
    return lines


def _split_row(
    row: list[Word], boxes: dict[int, Box], tolerances: LayoutTolerances
) -> list[list[Word]]:
    """A row of words (in order along it) cut where a gap or a change of size parts them."""
    gap, size_ratio = tolerances.line_gap, tolerances.line_size_ratio
    groups = [[row[0]]]
    for word in row[1:]:
        box, prev = boxes[word.id], boxes[groups[-1][-1].id]
        low, high = sorted((max(box.height, 1e-6), max(prev.height, 1e-6)))
        if box.x0 - prev.x1 > gap * low or high / low > size_ratio:
            groups.append([word])
        else:
            groups[-1].append(word)
    return groups


def _rejoin_note_numbers(groups: list[list[Word]]) -> list[list[Word]]:
    out: list[list[Word]] = []
    for group in groups:
        prev = out[-1] if out else None
        if prev and len(prev) == 1 and NOTE_NUMBER.match(prev[0].text):
            prev.extend(group)
        else:
            out.append(list(group))
    return out


def _continues(
    block: list[FramedLine],
    line: FramedLine,
    words: Sequence[Word],
    next_word: dict[int, int] | None,
    tolerances: LayoutTolerances,
) -> bool:
    """Whether ``line`` is the next line of ``block``: just below its last line, the same
    size, aligned or centred with it, not a new note, and read right after it."""
    last, box = block[-1], line.box
    above = last.box
    if box.y0 < above.y0 + 0.5 * last.height:
        return False
    if box.y0 - above.y1 > tolerances.block_gap * max(last.height, line.height):
        return False
    size_tolerance = tolerances.block_size_tolerance * max(line.height, last.height)
    if abs(line.height - last.height) > size_tolerance:
        return False
    first, align = block[0], tolerances.align_pts
    aligned = abs(box.x0 - first.body) <= align or abs(box.x0 - first.box.x0) <= align
    centred = abs((box.x0 + box.x1) - (above.x0 + above.x1)) <= 2 * align
    if not (aligned or centred):
        return False
    return next_word is None or reads_on(next_word, words, last.ids, line.ids)


def _blocks(
    lines: list[FramedLine],
    words: Sequence[Word],
    next_word: dict[int, int] | None,
    tolerances: LayoutTolerances,
) -> list[list[FramedLine]]:
    blocks: list[list[FramedLine]] = []
    open_blocks: list[list[FramedLine]] = []  # blocks whose last line may still continue
    for line in sorted(lines, key=lambda ln: (ln.box.y0, ln.box.x0)):
        x0, top, x1, _ = line.box
        # Lines come in order down the frame: a block out of reach now stays out of reach.
        open_blocks = [b for b in open_blocks if top - (last := b[-1]).box.y1 <= 2 * last.height]
        target = None
        if not line.numbered:
            # Aligned or centred lines overlap along the frame: others need no closer look.
            target = next(
                (
                    b
                    for b in reversed(open_blocks)
                    if b[-1].box.x1 >= x0
                    and b[-1].box.x0 <= x1
                    and _continues(b, line, words, next_word, tolerances)
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
