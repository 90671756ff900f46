"""Sheet identity from the page's own words: sheet number, title and discipline.

Sheet numbers come in many shapes (National CAD Standard `A101`, `S-201`,
`FP-101`, `A-101A`; dotted `A1.01`, `M2.3`, `E0.1`; agency plan references
`PR-12-3`), so a token is tested against several shapes and several
exclusions rather than one regex. Where it sits matters as much as its shape:
the title block's value (next to a SHEET NUMBER / DWG. NO. label, or the
largest sheet-id text near the right/bottom edge) names this sheet, while the
same shape in the drawing body (`2/S301`, "SEE S301") names another one.
"""

import bisect
import re
import statistics
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property

from shared.models import BBox, SheetHeader, TextLayer, Word
from shared.pagetext import fold_dashes

# Shapes a sheet number takes; each is matched against the whole token.
_SHEET_ID_SHAPES = tuple(
    re.compile(pattern)
    for pattern in (
        # NCS / UDS: designator (1-3 letters) + sheet type + sequence: A101, S-201, ID-201, A-101A
        r"[A-Z]{1,3}-?\d{2,4}[A-Za-z]?",
        # dotted sequences: A1.01, M2.3, E0.1, A-1.1, S2.1.3
        r"[A-Z]{1,3}-?\d{1,3}(?:\.\d{1,3}){1,2}[A-Za-z]?",
        # one-digit sheets small sets use: A1, C-2, E1A
        r"[A-Z]{1,3}-?\d[A-Za-z]?",
        # agency / plan-reference codes with hyphenated groups: PR-12-3, C-2-01
        r"[A-Z]{1,4}-?\d{1,4}(?:-\d{1,4}[A-Za-z]?){1,2}",
        # spelled-out designators: ARCH-101, ELEC-2
        r"[A-Z]{4}-\d{1,4}[A-Za-z]?",
    )
)
# A bare sheet count ("SHEET NO. 3") is accepted only right next to a label.
_NUMERIC_SHEET = re.compile(r"\d{1,3}[A-Za-z]?")
# Digit-X-digit is a member or lumber size (W12X26, HSS6X6X1/4, L4X4, 2X6), never a sheet.
_MEMBER_MARK = re.compile(r"\d\s*[xX×]\s*\d")
_STRIP = "()[]{},;:.'\""

_NUMBER_LABEL_HEADS = ("SHEET", "SHT", "DRAWING", "DWG", "PLANREF", "PLANREFERENCE")
_NUMBER_LABEL_TAILS = ("NUMBER", "NO", "NUM", "NBR", "#", "ID")
_NUMBER_LABELS = frozenset(h + t for h in _NUMBER_LABEL_HEADS for t in _NUMBER_LABEL_TAILS)
# "SHEET" alone labels a title-block cell, but only as a run of its own at the page's edge:
# inside prose ("SEE SHEET S-501") it introduces a reference.
_BARE_NUMBER_LABELS = frozenset(("SHEET", "SHT", "DRAWING", "DWG"))
_TITLE_LABELS = frozenset(h + t for h in ("SHEET", "DRAWING", "DWG") for t in ("TITLE", "NAME"))
_BARE_TITLE_LABELS = frozenset(("TITLE",))
_LABEL_MAX_WORDS = 4
_LABEL_PUNCT = str.maketrans("", "", ".:-_ ")
# First words of the other title-block fields, which end a title read below its label.
_FIELD_LABELS = frozenset(
    "SCALE DATE DRAWN CHECKED APPROVED PROJECT JOB REV REVISION ISSUE ISSUED SEAL CLIENT OWNER".split()
)

# Where a title block sits, as shares of the page: its right strip or bottom band.
_EDGE_RIGHT = 0.65
_EDGE_BOTTOM = 0.8
# The edge rule wants text clearly larger than the page's ordinary text.
_EDGE_MIN_SIZE_RATIO = 1.5

_DISCIPLINES = {
    "G": "general",
    "H": "hazardous materials",
    "V": "survey",
    "B": "geotechnical",
    "W": "civil works",
    "C": "civil",
    "L": "landscape",
    "S": "structural",
    "A": "architectural",
    "I": "interiors",
    "Q": "equipment",
    "F": "fire protection",
    "P": "plumbing",
    "D": "process",
    "M": "mechanical",
    "E": "electrical",
    "T": "telecommunications",
    "R": "resource",
    "X": "other",
    "Z": "contractor/shop drawings",
    "O": "operations",
}
# Two-letter and spelled-out designators whose meaning is not just their first letter's.
_DESIGNATORS = {
    "FP": "fire protection",
    "FA": "fire alarm",
    "ID": "interiors",
    "LS": "life safety",
    "CS": "general",
    "SK": None,  # sketch: any discipline
    "PR": None,  # plan reference: an agency's numbering, not a discipline
    "ARCH": "architectural",
    "STR": "structural",
    "STRUCT": "structural",
    "MECH": "mechanical",
    "ELEC": "electrical",
    "PLMB": "plumbing",
    "PLUMB": "plumbing",
    "CIV": "civil",
    "LAND": "landscape",
}


@dataclass(frozen=True)
class _Run:
    """Words side by side on one baseline: a phrase, a label, a value."""

    words: tuple[Word, ...]

    @cached_property
    def bbox(self) -> BBox:
        return _union(w.bbox for w in self.words)

    @property
    def text(self) -> str:
        return " ".join(w.text for w in self.words)


def clean_token(text: str) -> str:
    """A token without the brackets and punctuation around it, dashes made ASCII."""
    return fold_dashes(text).strip(_STRIP)


def is_sheet_id(token: str) -> bool:
    """True for a sheet number's shape that is not a date, member mark, scale or reference."""
    token = clean_token(token)
    if any(c in token for c in "/=#@:'\"") or _MEMBER_MARK.search(token):
        return False
    return any(shape.fullmatch(token) for shape in _SHEET_ID_SHAPES)


def discipline_for(sheet_number: str | None) -> str | None:
    """The discipline a sheet number's designator names (National CAD Standard), in words."""
    if not sheet_number:
        return None
    designator = re.match(r"[A-Z]*", clean_token(sheet_number).upper()).group()
    if designator in _DESIGNATORS:
        return _DESIGNATORS[designator]
    if 1 <= len(designator) <= 2:
        # NCS: a discipline letter, then an optional modifier (AD demolition, EP power …).
        return _DISCIPLINES.get(designator[0])
    return None


def title_block_sheet_number(text_layer: TextLayer) -> str | None:
    """The sheet number the title block shows, or None.

    Only a value next to a sheet-number label, or the largest sheet-id text
    near the right/bottom edge, counts: a reference in the drawing body never does.
    """
    return _labelled_number(_runs(text_layer), text_layer) or _edge_number(text_layer)


def title_block_sheet_title(text_layer: TextLayer) -> str | None:
    """The title next to (right of or below) a SHEET TITLE / DRAWING TITLE label, or None."""
    return _labelled_title(_runs(text_layer), text_layer)


def recover_sheet_identity(text_layer: TextLayer) -> SheetHeader | None:
    """Sheet number, title and discipline from the title block; None when none is found."""
    runs = _runs(text_layer)
    number = _labelled_number(runs, text_layer) or _edge_number(text_layer)
    title = _labelled_title(runs, text_layer)
    if not number and not title:
        return None
    return SheetHeader(
        sheet_number=number,
        sheet_title=title,
        discipline=discipline_for(number),
        sheet_number_source="text_layer" if number else None,
    )


# --- layout -----------------------------------------------------------------


def _union(boxes: Iterable[BBox]) -> BBox:
    x0s, y0s, x1s, y1s = zip(*boxes, strict=True)
    return min(x0s), min(y0s), max(x1s), max(y1s)


def _height(bbox: BBox) -> float:
    return bbox[3] - bbox[1]


def _same_line(a: BBox, b: BBox) -> bool:
    overlap = min(a[3], b[3]) - max(a[1], b[1])
    return overlap >= 0.5 * min(_height(a), _height(b))


def _runs(text_layer: TextLayer) -> list[_Run]:
    """The page-text model's lines, as runs of words."""
    words = text_layer.words
    return [_Run(tuple(words[i] for i in line)) for line in text_layer.lines]


def _label_key(words: Sequence[Word]) -> str:
    return "".join(w.text for w in words).upper().translate(_LABEL_PUNCT)


def _label_hits(
    runs: list[_Run], labels: frozenset[str]
) -> Iterator[tuple[_Run, tuple[Word, ...]]]:
    """(label run, words after it in its run) for every label phrase found."""
    for run in runs:
        for start in range(len(run.words)):
            for end in range(start + 1, min(start + _LABEL_MAX_WORDS, len(run.words)) + 1):
                if _label_key(run.words[start:end]) in labels:
                    yield _Run(run.words[start:end]), run.words[end:]
                    break


def _number_labels(runs: list[_Run], text_layer: TextLayer) -> Iterator[_Run]:
    """Sheet-number label phrases anywhere, and bare SHEET/DWG cells in the title-block zones."""
    yield from (label for label, _ in _label_hits(runs, _NUMBER_LABELS))
    for run in runs:
        if _label_key(run.words) in _BARE_NUMBER_LABELS and _near_edge(run.bbox, text_layer):
            yield run


def _near_edge(bbox: BBox, text_layer: TextLayer) -> bool:
    """Whether a box's centre lies in the title-block zones: the right strip or bottom band."""
    cx, cy = (bbox[0] + bbox[2]) / 2, (bbox[1] + bbox[3]) / 2
    return cx >= _EDGE_RIGHT * text_layer.width or cy >= _EDGE_BOTTOM * text_layer.height


def _edge_score(bbox: BBox, text_layer: TextLayer) -> float:
    """How close to the right or bottom edge a box sits (1.0 = on it)."""
    cx, cy = (bbox[0] + bbox[2]) / 2, (bbox[1] + bbox[3]) / 2
    return max(cx / text_layer.width, cy / text_layer.height) if text_layer.width else 0.0


def _gap_right(label: BBox, box: BBox) -> float | None:
    """The gap to a box right of the label on its line, None when not there or out of reach."""
    gap = box[0] - label[2]
    if _same_line(label, box) and -1.0 <= gap <= max(20 * _height(label), 144.0):
        return max(gap, 0.0)
    return None


def _gap_below(label: BBox, box: BBox) -> float | None:
    """The gap down to a box under the label's column, None when not there or out of reach."""
    width = label[2] - label[0]
    in_column = box[2] >= label[0] - width and box[0] <= label[2] + width
    gap = box[1] - label[3]
    if in_column and box[1] >= (label[1] + label[3]) / 2 and gap <= max(12 * _height(label), 72.0):
        return max(gap, 0.0)
    return None


def _labelled_number(runs: list[_Run], text_layer: TextLayer) -> str | None:
    """The best sheet-number-like word right of or below any sheet-number label."""
    candidates = sorted(
        (
            (word.bbox[1], word, token, shaped)
            for word in text_layer.words
            if (shaped := is_sheet_id(token := clean_token(word.text)))
            or _NUMERIC_SHEET.fullmatch(token)
        ),
        key=lambda c: c[0],
    )
    if not candidates:
        return None
    tops = [c[0] for c in candidates]
    tallest = max(_height(c[1].bbox) for c in candidates)
    best: tuple | None = None
    for label in _number_labels(runs, text_layer):
        lb, edge = label.bbox, _edge_score(label.bbox, text_layer)
        # Only words starting between the label's line and its reach below can qualify.
        lo = bisect.bisect_left(tops, lb[1] - tallest)
        hi = bisect.bisect_right(tops, lb[3] + max(12 * _height(lb), 72.0))
        for _, word, token, shaped in candidates[lo:hi]:
            distance = _gap_right(lb, word.bbox)
            if distance is None:
                distance = _gap_below(lb, word.bbox)
            if distance is None:
                continue
            # A sheet-id shape beats a bare count; the title block's big number beats a
            # sheet index's rows; then the label nearer the edge, then the nearer word.
            key = (shaped, round(_height(word.bbox)), edge, -distance)
            if best is None or key > best[0]:
                best = (key, token)
    return best[1] if best else None


def _edge_number(text_layer: TextLayer) -> str | None:
    """The largest clearly-big sheet-id word in the title-block zones."""
    words = text_layer.words
    if not words or not text_layer.width or not text_layer.height:
        return None
    typical = statistics.median(_height(w.bbox) for w in words)
    candidates = [
        w
        for w in words
        if is_sheet_id(w.text)
        and _height(w.bbox) >= _EDGE_MIN_SIZE_RATIO * typical
        and _near_edge(w.bbox, text_layer)
    ]
    if not candidates:
        return None
    best = max(candidates, key=lambda w: (_height(w.bbox), _edge_score(w.bbox, text_layer)))
    return clean_token(best.text)


def _labelled_title(runs: list[_Run], text_layer: TextLayer) -> str | None:
    """The title next to the title-label nearest the page's edge that has one."""
    hits = [*_label_hits(runs, _TITLE_LABELS)]
    hits += [
        (run, ())
        for run in runs
        if _label_key(run.words) in _BARE_TITLE_LABELS and _near_edge(run.bbox, text_layer)
    ]
    # Nearest the edge first: a sheet index's TITLE column header sits in the body.
    hits.sort(key=lambda hit: _edge_score(hit[0].bbox, text_layer), reverse=True)
    for label, rest in hits:
        title = " ".join(w.text for w in rest).strip(" :-") or _title_near(label, runs)
        if title:
            return title
    return None


def _title_near(label: _Run, runs: list[_Run]) -> str | None:
    """The run right of the label on its line, else up to three stacked runs below it."""
    right = [
        (gap, r)
        for r in runs
        if (gap := _gap_right(label.bbox, r.bbox)) is not None and not _is_label(r)
    ]
    if right:
        return min(right, key=lambda pair: pair[0])[1].text
    below = sorted(
        (r for r in runs if _gap_below(label.bbox, r.bbox) is not None), key=lambda r: r.bbox[1]
    )
    lines: list[_Run] = []
    for run in below:
        # Stacked title lines sit close together; the next field of the title block ends it.
        if lines and run.bbox[1] - lines[-1].bbox[3] > _height(run.bbox):
            break
        if len(lines) == 3 or _is_label(run) or is_sheet_id(run.text):
            break
        lines.append(run)
    return " ".join(r.text for r in lines) or None


def _is_label(run: _Run) -> bool:
    """Whether a run is a title-block field label (so not part of a title)."""
    first = run.words[0].text
    return (
        first.endswith(":")
        or clean_token(first).upper() in _FIELD_LABELS
        or _label_key(run.words) in _BARE_NUMBER_LABELS | _BARE_TITLE_LABELS
        or any(True for _ in _label_hits([run], _NUMBER_LABELS | _TITLE_LABELS))
    )
