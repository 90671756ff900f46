"""A line of the page in the frame of its text direction: what the layout groups into
blocks, the table reader into cells, and the title block and drawing index read."""

import re
from collections.abc import Sequence
from dataclasses import dataclass

from shared.pagetext.geometry import Box, Frame
from shared.pagetext.model import Word, join_words

# "1." / "12)" / "A." / "A.2." opening a note: rejoined with its body, and it starts a new
# block.
NOTE_NUMBER = re.compile(r"^(?:\d{1,3}|[A-Z])(?:\.\d{1,3})*[.)]$")


@dataclass(frozen=True, eq=False, slots=True)
class FramedLine:
    """Words of one line (or a single word) in the frame of a text direction."""

    ids: tuple[int, ...]  # word ids, along the line
    text: str  # the words joined by spaces
    box: Box  # in the frame: x along the text, y across it
    height: float  # the median of the words' heights in the frame: the line's text height
    size: float  # the median of the words' font sizes (a word without one: its height)
    numbered: bool  # opens with a note number ("1.", "A.2)") followed by more words
    body: float  # where the text after that note number starts along the frame (else x0)
    line_id: int = -1  # its id in TextLayer.lines; -1 for a word read on its own


def framed_line(
    words: Sequence[Word], ids: Sequence[int], frame: Frame, line_id: int = -1
) -> FramedLine:
    """Words of the page (``ids`` into ``words``, in order along the line) in ``frame``."""
    boxes = [words[i].bbox.in_frame(frame) for i in ids]
    numbered = len(ids) > 1 and bool(NOTE_NUMBER.match(words[ids[0]].text))
    box = Box.union(boxes)
    return FramedLine(
        ids=tuple(ids),
        text=join_words(words, ids),
        box=box,
        height=median([b.y1 - b.y0 for b in boxes]),
        size=median([words[i].size or b.y1 - b.y0 for i, b in zip(ids, boxes, strict=True)]),
        numbered=numbered,
        body=boxes[1].x0 if numbered else box.x0,
        line_id=line_id,
    )


def median(values: list[float]) -> float:
    """The median (statistics.median's answer, without its generality: this runs per line)."""
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2
