"""A line of the page in the frame of its text direction: what the layout groups into
blocks, the table reader into cells, and the title block and drawing index read."""

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from shared.pagetext.geometry import Box, Frame
from shared.pagetext.model import Word, join_words

# "1." / "12)" / "A." / "A.2." opening a note: rejoined with its body, and it starts a new
# block.
NOTE_NUMBER = re.compile(r"^(?:\d{1,3}|[A-Z])(?:\.\d{1,3})*[.)]$")


@dataclass(eq=False, slots=True)
class FramedLine:
    """Words of one line (or a single word) in the frame of a text direction."""

    ids: tuple[int, ...]  # word ids, along the line
    box: Box  # in the frame: x along the text, y across it
    height: float  # the median of the words' heights in the frame: the line's text height
    numbered: bool  # opens with a note number ("1.", "A.2)") followed by more words
    body: float  # where the text after that note number starts along the frame (else x0)
    line_id: int  # its id in TextLayer.lines; -1 for a word read on its own
    frame: Frame
    words: Sequence[Word] = field(repr=False)  # the page's words the ids point into
    # Text and size are made when first asked for: the layout forms thousands of lines and
    # reads neither.
    _text: str | None = field(default=None, repr=False)
    _size: float | None = field(default=None, repr=False)

    @property
    def text(self) -> str:
        """The words joined by spaces."""
        if self._text is None:
            self._text = join_words(self.words, self.ids)
        return self._text

    @property
    def size(self) -> float:
        """The median of the words' font sizes (a word without one: its height)."""
        if self._size is None:
            words, frame = self.words, self.frame
            sizes = [words[i].size or words[i].bbox.in_frame(frame).height for i in self.ids]
            self._size = median(sizes)
        return self._size


def framed_line(
    words: Sequence[Word],
    ids: Sequence[int],
    frame: Frame,
    line_id: int = -1,
    boxes: Sequence[Box] | None = None,
) -> FramedLine:
    """Words of the page (``ids`` into ``words``, in order along the line) in ``frame``;
    ``boxes`` are their boxes in it when the caller has them."""
    if boxes is None:
        boxes = [words[i].bbox.in_frame(frame) for i in ids]
    numbered = len(ids) > 1 and bool(NOTE_NUMBER.match(words[ids[0]].text))
    box = Box.union(boxes)
    return FramedLine(
        ids=tuple(ids),
        box=box,
        height=median([b.y1 - b.y0 for b in boxes]),
        numbered=numbered,
        body=boxes[1].x0 if numbered else box.x0,
        line_id=line_id,
        frame=frame,
        words=words,
    )


def median(values: list[float]) -> float:
    """The median (statistics.median's answer, without its generality: this runs per line)."""
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2
