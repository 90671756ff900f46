"""What changed on a sheet between two versions: a delta of the page's text units, and (given
the two page images) the changed regions of its drawing (``shared.revisions.drawing``).

The units are the page's (``shared.pagetext.units.page_units``): table rows and whole notes;
the title block's fields are named by the sheets' readings (``read_units``' ``LABEL: value``
fields would read the title block again, a quarter more of the delta's cost); the remaining
blocks are compared line by line (a drawing's block is a cluster of labels that a moved detail
may join or leave, a line is not). Units are matched by content first (place only decides
among equal texts and pairs what content leaves unpaired), so a drawing moved on the sheet
diffs cleanly:

1. the same text (letters and digits, case and spacing folded) pairs as unchanged, repeated
   texts as multisets, each copy with its nearest copy on the other sheet;
2. the same words in another order pair as unchanged;
3. a unit whose words are exactly those of several units on the other sheet, printed near
   each other (a line split or joined), is unchanged;
4. units with one key pair as changed: a title-block field by its label, a table row by its
   first cell, a note by its text without its number; then units of one kind printed in one
   place (a revision mark rewritten); then units of one kind whose texts are similar (a
   short text only near where it was);
5. what is left was removed (before) or added (after);
6. changes whose every word gained or lost is printed at the same place on the other sheet,
   or moved between them to places the other sheet leaves empty, are no change: the words
   stayed, the units holding them were found otherwise.

A false alarm costs as much as a miss: steps 1 to 3 and 6 keep reflowed text out of the delta.

The drawing's regions are compared apart from the words (each version's words are masked
there), aligned first where the texts place the old sheet; a sheet whose drawing changed is
changed even where no word did.
"""

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from statistics import median
from typing import Any, Literal

import numpy
from rapidfuzz.distance import Indel
from rapidfuzz.process import cdist

from shared.pagetext import NOTE_NUMBER, Box, TextLayer, normalize
from shared.pagetext.units import CELL_SEPARATOR, page_units
from shared.revisions.drawing import PageImage, Region, drawing_delta, points_affine
from shared.sheet.fields import read_fields
from shared.sheet.reading import SheetReading

ChangeKind = Literal["added", "removed", "changed"]
UnitKind = Literal["title_field", "row", "note", "line"]

# Two texts of one kind at least this similar (Indel, on the normalised text) are one unit
# changed, not one removed and another added.
SIMILAR = 0.7
# A table row keeps its first cell: with it, a lower similarity still makes one row changed.
SIMILAR_KEYED_ROW = 0.4
# A text this short (letters and digits) pairs by similarity only near where it was: "A1"
# and "A2" far apart are two tags, not one changed.
SHORT_CHARS = 8
# "Near": within this share of the page's diagonal, where the new sheet puts the old text.
NEAR_SHARE = 0.05
# Two units' (or words') boxes covering this share of the smaller one are printed in one
# place.
IN_PLACE_OVERLAP = 0.5
# The pieces of a split line fit in the whole line's box grown by this many text heights;
# a unit's pieces are sought from this many of its largest candidates.
PIECE_SLACK_LINES = 3.0
MAX_PIECE_SEEDS = 5
# The title-block region a reader found counts only when it is a block, not most of the sheet.
MAX_REGION_SHARE = 0.2
# The old sheet's placement on the new one is read from at least this many texts printed
# once on both, from pairs of them at least this far apart (PDF points); a scale this close
# to 1 is 1 (the same drawing, not a rescaled one).
MIN_PLACING_TEXTS = 3
MIN_PLACING_GAP = 72.0
SAME_SCALE = 0.002
# A line this many of its heights (or fewer) under a note's last line continues the note.
CONTINUED_LINES = 1.5
# Identical texts paired nearest-first up to this many candidate pairs; beyond, in order.
MAX_NEAREST_PAIRS = 250_000


@dataclass(frozen=True)
class UnitChange:
    """One unit added, removed or changed, with its text and box on each sheet (displayed
    page coordinates, PDF points; None on the sheet that lacks it)."""

    kind: ChangeKind
    unit_kind: str  # title_field, row, note, line
    before: str | None
    after: str | None
    before_bbox: Box | None
    after_bbox: Box | None
    # The title-block field: its label as printed (upper-cased) for a LABEL: value unit, else
    # the field the sheet's reading names for these words (revision, issue_date, ...).
    field: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "unit_kind": self.unit_kind,
            "before": self.before,
            "after": self.after,
            "before_bbox": list(self.before_bbox) if self.before_bbox else None,
            "after_bbox": list(self.after_bbox) if self.after_bbox else None,
            "field": self.field,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "UnitChange":
        def box(value: Sequence[float] | None) -> Box | None:
            return Box(*value) if value is not None else None

        return cls(
            kind=data["kind"],
            unit_kind=data["unit_kind"],
            before=data.get("before"),
            after=data.get("after"),
            before_bbox=box(data.get("before_bbox")),
            after_bbox=box(data.get("after_bbox")),
            field=data.get("field"),
        )


@dataclass(frozen=True)
class Placement:
    """Where the previous sheet's drawing sits on the new sheet: a point (x, y) of the old
    sheet is at (scale·x + dx, scale·y + dy) on the new one (PDF points), as the texts
    printed once on both sheets place it."""

    scale: float = 1.0
    dx: float = 0.0
    dy: float = 0.0

    def box(self, box: Box) -> Box:
        """A box of the old sheet, on the new one."""
        s = self.scale
        return Box(
            s * box.x0 + self.dx, s * box.y0 + self.dy, s * box.x1 + self.dx, s * box.y1 + self.dy
        )


@dataclass(frozen=True)
class SheetDelta:
    """The changes between two versions of a sheet, in the newer sheet's reading order, and
    how many units each way they are."""

    changes: list[UnitChange] = field(default_factory=list)
    added: int = 0
    removed: int = 0
    changed: int = 0
    unchanged: int = 0
    # Every change lies in the title block: the sheet was re-issued with only its revision,
    # date or other title-block fields changed. False when nothing changed.
    title_block_only: bool = False
    # How the old sheet's drawing sits on the new one; None when too few texts say.
    placement: Placement | None = None
    # The drawing's changed regions (linework added, removed or moved), when the two page
    # images were compared; and the affine map of points that laid the old on the new.
    graphics: list[Region] = field(default_factory=list)
    alignment: tuple[float, ...] | None = None
    # The new sheet's size (PDF points): where its boxes are.
    page_size: tuple[float, float] | None = None

    def is_unchanged(self) -> bool:
        return not self.changes and not self.graphics

    def to_json(self) -> dict[str, Any]:
        """Plain JSON, to store beside the overlay."""
        return {
            "changes": [c.to_json() for c in self.changes],
            "added": self.added,
            "removed": self.removed,
            "changed": self.changed,
            "unchanged": self.unchanged,
            "title_block_only": self.title_block_only,
            "placement": [p.scale, p.dx, p.dy] if (p := self.placement) else None,
            "graphics": [g.to_json() for g in self.graphics],
            "alignment": [round(v, 6) for v in self.alignment] if self.alignment else None,
            "page_size": list(self.page_size) if self.page_size else None,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "SheetDelta":
        return cls(
            changes=[UnitChange.from_json(c) for c in data.get("changes", [])],
            added=data.get("added", 0),
            removed=data.get("removed", 0),
            changed=data.get("changed", 0),
            unchanged=data.get("unchanged", 0),
            title_block_only=data.get("title_block_only", False),
            placement=Placement(*place) if (place := data.get("placement")) else None,
            graphics=[Region.from_json(g) for g in data.get("graphics", [])],
            alignment=tuple(align) if (align := data.get("alignment")) else None,
            page_size=(size[0], size[1]) if (size := data.get("page_size")) else None,
        )


@dataclass(eq=False)
class _Item:
    """A unit as the delta compares it."""

    kind: UnitKind
    text: str  # as shown
    tokens: list[str]  # normalised words
    box: Box
    word_ids: tuple[int, ...]
    key: str | None  # what pairs it as changed: a field's label, a row's first cell, a note's body
    field: str | None = None

    @property
    def squashed(self) -> str:
        return "".join(self.tokens)

    @property
    def norm(self) -> str:
        return " ".join(self.tokens)

    @property
    def height(self) -> float:
        return min(self.box.height, self.box.width) or 1.0


@dataclass
class _Sheet:
    """A version's text layer with each word's normalised tokens (a unit's tokens are its
    words' tokens, in order: the normaliser splits at every space)."""

    layer: TextLayer
    tokens: list[list[str]]

    @classmethod
    def of(cls, layer: TextLayer) -> "_Sheet":
        return cls(layer, [normalize(w.text).split() for w in layer.words])

    def word(self, i: int) -> str:
        """A word's text as compared: its tokens run together."""
        return "".join(self.tokens[i])

    def unit_tokens(self, word_ids: Iterable[int]) -> list[str]:
        return [t for i in word_ids for t in self.tokens[i]]


def _items(sheet: _Sheet) -> list[_Item]:
    """The layer's units as the delta compares them; units without a letter or digit (a
    dash, a rule of underscores) are left out."""
    layer = sheet.layer
    items: list[_Item] = []
    for unit in page_units(layer).units:
        if unit.kind == "block":
            for ids in _lines_of(layer, unit.word_ids):
                text = " ".join(layer.words[i].text for i in ids)
                box = Box.union(layer.words[i].bbox for i in ids)
                items.append(_Item("line", text, sheet.unit_tokens(ids), box, ids, None))
            continue
        tokens = sheet.unit_tokens(unit.word_ids)
        if unit.kind == "field":
            label = unit.text.split(":", 1)[0]
            name = " ".join(label.split()).upper()
            item = _Item("title_field", unit.text, tokens, unit.box, unit.word_ids, name, name)
        elif unit.kind == "note":
            first, _, body = unit.text.partition(" ")
            key = normalize(body) if NOTE_NUMBER.match(first) else None
            item = _Item("note", unit.text, tokens, unit.box, unit.word_ids, key)
        else:
            cells = unit.text.split(CELL_SEPARATOR)
            key = normalize(cells[0]) if len(cells) > 1 else None
            item = _Item("row", unit.text, tokens, unit.box, unit.word_ids, key or None)
        items.append(item)
    return _notes_joined([item for item in items if item.tokens])


def _notes_joined(items: list[_Item]) -> list[_Item]:
    """The items with each note's continuation joined to it: a line printed just under a
    note's last line, starting within the note's width and not with a note number of its
    own. The page's units follow the order its content stream wrote the words, so an edit
    written at the end of the stream (as Acrobat's and Bluebeam's are) leaves a note's
    lines apart; joined by place, the note is one unit on both versions."""
    notes = sorted((i for i in items if i.kind == "note"), key=lambda i: i.box.y0)
    lines = sorted((i for i in items if i.kind == "line"), key=lambda i: i.box.y0)
    joined: set[int] = set()
    for note in notes:
        while True:
            below = next((line for line in lines if _continues(note, line, joined)), None)
            if below is None:
                break
            joined.add(id(below))
            note.text = f"{note.text} {below.text}"
            note.tokens = [*note.tokens, *below.tokens]
            note.box = Box.union((note.box, below.box))
            note.word_ids = (*note.word_ids, *below.word_ids)
            first, _, body = note.text.partition(" ")
            note.key = normalize(body) if NOTE_NUMBER.match(first) else None
    return [i for i in items if id(i) not in joined]


def _continues(note: _Item, line: _Item, joined: set[int]) -> bool:
    """``line`` reads on from ``note``: it starts under the note's last line (within a line
    and a half of it), inside the note's width, and is not a note of its own."""
    if id(line) in joined:
        return False
    height = line.height
    gap = line.box.y0 - note.box.y1
    inside = note.box.x0 - height <= line.box.x0 <= note.box.x1 - height
    numbered = NOTE_NUMBER.match(line.text.split(" ", 1)[0]) is not None
    return -0.5 * height <= gap <= CONTINUED_LINES * height and inside and not numbered


def _lines_of(layer: TextLayer, word_ids: Sequence[int]) -> list[tuple[int, ...]]:
    """A block's words, line by line, in the block's order."""
    lines: dict[int, list[int]] = {}
    for i in word_ids:
        lines.setdefault(layer.line_of_word[i], []).append(i)
    return [tuple(ids) for ids in lines.values()]


@dataclass
class _Matcher:
    """The two sheets' units, paired step by step; what is left at the end is the delta's
    added and removed."""

    old: list[_Item]
    new: list[_Item]
    near: float  # "near where it was", PDF points
    placement: Placement | None = None
    unchanged: int = 0
    changed: list[tuple[_Item, _Item]] = field(default_factory=list)

    def moved(self, box: Box) -> Box:
        """An old sheet's box where the new sheet's drawing puts it."""
        return self.placement.box(box) if self.placement else box

    def distance(self, a: _Item, b: _Item) -> float:
        (ax, ay), (bx, by) = self.moved(a.box).centre, b.box.centre
        return abs(bx - ax) + abs(by - ay)

    def find_placement(self) -> None:
        """How the old sheet's drawing sits on the new one, from the texts printed once on
        each (a moved detail is outvoted by the rest): the median ratio of their distances
        apart, then the median shift."""
        olds, news = _groups(self.old, _squashed), _groups(self.new, _squashed)
        pairs = [
            (o[0].box.centre, news[k][0].box.centre)
            for k, o in olds.items()
            if len(o) == 1 and len(news.get(k, ())) == 1
        ]
        if len(pairs) < MIN_PLACING_TEXTS:
            return
        half = len(pairs) // 2
        ratios = [
            math.dist(b1, b2) / gap
            for (a1, b1), (a2, b2) in zip(pairs, pairs[half:], strict=False)
            if (gap := math.dist(a1, a2)) >= MIN_PLACING_GAP
        ]
        scale = median(ratios) if ratios else 1.0
        if abs(scale - 1.0) < SAME_SCALE:
            scale = 1.0
        self.placement = Placement(
            scale,
            median(b.x - scale * a.x for a, b in pairs),
            median(b.y - scale * a.y for a, b in pairs),
        )

    def pair_equal(self, key: Callable[[_Item], Hashable]) -> None:
        """Pair units whose keys are equal as unchanged, as multisets: as many copies on
        each sheet pair whole; otherwise each copy with the nearest on the other sheet, and
        the copies left over are the ones added or removed."""
        olds, news = _groups(self.old, key), _groups(self.new, key)
        paired: set[int] = set()
        for k, group in olds.items():
            if k not in news:
                continue
            if len(group) == len(news[k]):
                pairs = list(zip(group, news[k], strict=True))
            else:
                pairs = self._nearest_pairs(group, news[k])
            for a, b in pairs:
                paired.update((id(a), id(b)))
                self.unchanged += 1
        self._drop(paired)

    def pair_keyed(self) -> None:
        """Units with one key (a field's label, a row's first cell, a note's body) pair as
        changed: fields nearest first, rows and notes most similar first."""
        olds = _groups([i for i in self.old if i.key], lambda i: (i.kind, i.key))
        news = _groups([i for i in self.new if i.key], lambda i: (i.kind, i.key))
        paired: set[int] = set()
        for k, group in olds.items():
            if k not in news:
                continue
            if k[0] == "title_field":
                pairs = self._nearest_pairs(group, news[k])
            else:
                floor = SIMILAR_KEYED_ROW if k[0] == "row" else 0.0
                pairs = self._similar_pairs(group, news[k], floor)
            for a, b in pairs:
                paired.update((id(a), id(b)))
                self.changed.append((a, b))
        self._drop(paired)

    def pair_similar(self) -> None:
        """Units of one kind whose texts are similar pair as changed, most similar first; a
        short text only near where it was."""
        paired: set[int] = set()
        news = _groups(self.new, lambda i: i.kind)
        for kind, group in _groups(self.old, lambda i: i.kind).items():
            for a, b in self._similar_pairs(group, news.get(kind, []), SIMILAR):
                paired.update((id(a), id(b)))
                self.changed.append((a, b))
        self._drop(paired)

    def pair_in_place(self) -> None:
        """Units of one kind printed in one place (their boxes mostly overlap, the old one
        where the new sheet puts it) pair as changed, however different their texts: a
        revision mark or a tag rewritten where it stood."""
        paired: set[int] = set()
        news = _groups(self.new, lambda i: i.kind)
        for kind, group in _groups(self.old, lambda i: i.kind).items():
            candidates = [
                (-share, n, m)
                for n, a in enumerate(group)
                for m, b in enumerate(news.get(kind, []))
                if (share := self.overlap(a, b)) >= IN_PLACE_OVERLAP
            ]
            for a, b in _greedy(candidates, group, news.get(kind, [])):
                paired.update((id(a), id(b)))
                self.changed.append((a, b))
        self._drop(paired)

    def overlap(self, a: _Item, b: _Item) -> float:
        """How much of the smaller of two boxes the other covers, ``a`` where the new sheet
        puts it."""
        return _covering(self.moved(a.box), b.box)

    def pair_regrouped(self) -> None:
        """A unit whose words are exactly those of several units printed together on the
        other sheet is unchanged (a line split in two, two lines joined), both ways."""
        for whole_side in ("old", "new"):
            wholes = self.old if whole_side == "old" else self.new
            parts = self.new if whole_side == "old" else self.old
            used: set[int] = set()
            for whole in sorted(wholes, key=lambda i: -len(i.tokens)):
                pieces = _pieces_of(whole, [p for p in parts if id(p) not in used])
                if pieces:
                    used.update(id(p) for p in pieces)
                    used.add(id(whole))
                    self.unchanged += 1
            self._drop(used)

    def drop_words_kept(self, before: _Sheet, after: _Sheet) -> None:
        """Drop the changes whose words all stayed, only the units holding them drawn
        otherwise (a table's rows found anew around a detail moved beside it): each word a
        change loses or gains is printed at the same place on the other sheet, or it moved
        to (or from) a place the other sheet leaves empty, where the other changes gain (or
        lose) just those words. A word rewritten where it stood (another text in its place)
        is an edit, never a move: a change holding one stays."""
        if not (self.changed or self.old or self.new):
            return
        old_places = _WordPlaces(before, self.placement)
        new_places = _WordPlaces(after, None)
        changes: list[tuple[_Item | None, _Item | None]] = [
            *self.changed,
            *((a, None) for a in self.old),
            *((None, b) for b in self.new),
        ]
        moves: list[_Move | None] = []
        for a, b in changes:
            lost = _without(a, old_places, b, new_places)
            gained = _without(b, new_places, a, old_places)
            gone = new_places.moved_words(old_places.at(i) for i in lost)
            come = old_places.moved_words(new_places.at(i) for i in gained)
            moves.append(None if gone is None or come is None else _Move(gone, come))
        kept = _unbalanced(moves)
        self.unchanged += len(changes) - len(kept)
        self.changed = [(a, b) for n, (a, b) in enumerate(changes) if n in kept and a and b]
        self.old = [a for n, (a, b) in enumerate(changes) if n in kept and a and not b]
        self.new = [b for n, (a, b) in enumerate(changes) if n in kept and b and not a]

    def _drop(self, paired: set[int]) -> None:
        self.old = [i for i in self.old if id(i) not in paired]
        self.new = [i for i in self.new if id(i) not in paired]

    def _nearest_pairs(self, olds: list[_Item], news: list[_Item]) -> list[tuple[_Item, _Item]]:
        if len(olds) == 1 and len(news) == 1:
            return [(olds[0], news[0])]
        if len(olds) * len(news) > MAX_NEAREST_PAIRS:
            return list(zip(olds, news, strict=False))
        candidates = sorted(
            ((self.distance(a, b), n, m) for n, a in enumerate(olds) for m, b in enumerate(news)),
        )
        return _greedy(candidates, olds, news)

    def _similar_pairs(
        self, olds: list[_Item], news: list[_Item], floor: float
    ) -> list[tuple[_Item, _Item]]:
        if not olds or not news:
            return []
        scores = cdist(
            [i.norm for i in olds],
            [i.norm for i in news],
            scorer=Indel.normalized_similarity,
            score_cutoff=floor,
        )
        candidates = []
        for n, a in enumerate(olds):
            for m, b in enumerate(news):
                score = float(scores[n][m])
                if score < floor or (score == 0.0 and floor > 0.0):
                    continue
                distance = self.distance(a, b)
                short = min(len(a.squashed), len(b.squashed)) < SHORT_CHARS
                if short and floor >= SIMILAR and distance > self.near:
                    continue
                candidates.append((-score, distance, n, m))
        return _greedy(candidates, olds, news)


@dataclass(frozen=True)
class _Move:
    """The words a change loses and gains that the other sheet leaves empty where they
    stand (by text)."""

    gone: Counter[str]
    come: Counter[str]


class _WordPlaces:
    """A sheet's words (text as compared, box on the new sheet), found by place; only the
    words the page shows are found."""

    def __init__(self, sheet: _Sheet, placement: Placement | None) -> None:
        self.sheet = sheet
        boxes = numpy.array([w.bbox for w in sheet.layer.words], float).reshape(-1, 4)
        if placement is not None:
            boxes = boxes * placement.scale + (placement.dx, placement.dy) * 2
        self.boxes = boxes
        self.shown = numpy.array([i for line in sheet.layer.lines for i in line], int)

    def at(self, i: int) -> tuple[str, Box]:
        """Word ``i``: its text as compared, and its box on the new sheet."""
        return self.sheet.word(i), Box(*self.boxes[i].tolist())

    def moved_words(self, words: Iterable[tuple[str, Box]]) -> Counter[str] | None:
        """Of the words (text and box on the new sheet) with letters or digits, those this
        sheet leaves empty where they stand (moved, or removed); None when one of them has
        another text printed in its place here (rewritten)."""
        moved: Counter[str] = Counter()
        x0, y0, x1, y1 = self.boxes[self.shown].T
        for text, box in words:
            if not text:
                continue
            width = numpy.minimum(x1, box.x1) - numpy.maximum(x0, box.x0)
            height = numpy.minimum(y1, box.y1) - numpy.maximum(y0, box.y0)
            smaller = numpy.minimum((x1 - x0) * (y1 - y0), box.width * box.height)
            shared = numpy.clip(width, 0, None) * numpy.clip(height, 0, None)
            covering = shared >= IN_PLACE_OVERLAP * numpy.maximum(smaller, 1e-9)
            here = {self.sheet.word(int(self.shown[n])) for n in numpy.flatnonzero(covering)}
            if text in here:
                continue
            if here:
                return None
            moved[text] += 1
        return moved


def _unbalanced(moves: list[_Move | None]) -> set[int]:
    """The changes (by index) that stay: those with a word rewritten in place (None), and
    those whose moved words the other changes do not account for. The rest moved words as
    a whole: every word one of them lost, others gained, and the other way round."""
    candidates = {n: move for n, move in enumerate(moves) if move is not None}
    while True:
        gone = sum((m.gone for m in candidates.values()), Counter[str]())
        come = sum((m.come for m in candidates.values()), Counter[str]())
        covered = {n: m for n, m in candidates.items() if not (m.gone - come or m.come - gone)}
        if len(covered) == len(candidates):
            break
        candidates = covered
    if gone != come:
        # What is left does not balance: only the changes that moved no word are dropped.
        candidates = {n: m for n, m in candidates.items() if not (m.gone or m.come)}
    return set(range(len(moves))) - set(candidates)


def _without(
    item: _Item | None, places: _WordPlaces, other: _Item | None, other_places: _WordPlaces
) -> list[int]:
    """The words of ``item`` the other unit does not print, with the same text, at the same
    place (boxes on the new sheet): a unit drawn elsewhere keeps none of its words."""
    if item is None:
        return []
    theirs = [other_places.at(i) for i in (other.word_ids if other else ())]
    missing = []
    for i in item.word_ids:
        text, box = places.at(i)
        same = next(
            (
                n
                for n, (t, b) in enumerate(theirs)
                if t == text and _covering(box, b) >= IN_PLACE_OVERLAP
            ),
            None,
        )
        if same is None:
            missing.append(i)
        else:
            del theirs[same]
    return missing


def _differing(item: _Item, sheet: _Sheet, other: _Item, other_sheet: _Sheet) -> list[int]:
    """The words of ``item`` whose texts the other unit does not print (as a multiset)."""
    left = Counter(other_sheet.word(i) for i in other.word_ids)
    differing = []
    for i in item.word_ids:
        if left[sheet.word(i)] > 0:
            left[sheet.word(i)] -= 1
        else:
            differing.append(i)
    return differing


def _covering(a: Box, b: Box) -> float:
    """How much of the smaller of two boxes the other covers."""
    width, height = a.overlap_x(b), a.overlap_y(b)
    if width <= 0 or height <= 0:
        return 0.0
    smaller = min(a.width * a.height, b.width * b.height)
    return width * height / smaller if smaller > 0 else 0.0


def _squashed(item: _Item) -> str:
    return item.squashed


def _sorted_words(item: _Item) -> tuple[str, ...]:
    return tuple(sorted(item.tokens))


def _groups(items: Iterable[_Item], key: Callable[[_Item], Hashable]) -> dict[Any, list[_Item]]:
    groups: dict[Any, list[_Item]] = defaultdict(list)
    for item in items:
        groups[key(item)].append(item)
    return groups


def _greedy(
    candidates: Iterable[tuple[Any, ...]], olds: list[_Item], news: list[_Item]
) -> list[tuple[_Item, _Item]]:
    """Pairs taken best first from sorted (…, old index, new index) candidates, each unit
    in one pair at most."""
    taken_old: set[int] = set()
    taken_new: set[int] = set()
    pairs = []
    for *_, n, m in sorted(candidates):
        if n not in taken_old and m not in taken_new:
            taken_old.add(n)
            taken_new.add(m)
            pairs.append((olds[n], news[m]))
    return pairs


def _pieces_of(whole: _Item, parts: list[_Item]) -> list[_Item] | None:
    """Two or more of ``parts`` whose words together are exactly ``whole``'s, printed
    together (they fit in a box little larger than the whole's); or None."""
    if len(whole.tokens) < 2:
        return None
    words = Counter(whole.tokens)
    fitting = sorted(
        (p for p in parts if not Counter(p.tokens) - words), key=lambda p: -len(p.tokens)
    )
    for seed in fitting[:MAX_PIECE_SEEDS]:
        chosen, need = [seed], words - Counter(seed.tokens)
        for part in fitting:
            if not need:
                break
            if (
                part is not seed
                and not Counter(part.tokens) - need
                and _together(whole, [*chosen, part])
            ):
                chosen.append(part)
                need -= Counter(part.tokens)
        if not need and len(chosen) > 1:
            return chosen
    return None


def _together(whole: _Item, pieces: list[_Item]) -> bool:
    """The pieces fit in a box no more than a few text lines larger each way than the
    whole: wherever each version put it, one text."""
    box = Box.union(p.box for p in pieces)
    slack = PIECE_SLACK_LINES * min(p.height for p in pieces)
    return box.width <= whole.box.width + slack and box.height <= whole.box.height + slack


@dataclass(frozen=True)
class _TitleBlock:
    """Where a sheet's title block is: the words of its fields (by field name), and the
    reader's region when it is a block rather than most of the sheet."""

    words: dict[int, str]
    region: Box | None

    @classmethod
    def of(cls, layer: TextLayer, reading: SheetReading | None) -> "_TitleBlock":
        words: dict[int, str] = {}
        if reading is None:
            for name, value in read_fields(layer).items():
                words.update(dict.fromkeys(value.word_ids, name))
            return cls(words, None)
        named = {**reading.fields, "sheet_number": reading.number, "sheet_title": reading.title}
        for name, reading_field in named.items():
            if reading_field is not None:
                words.update(dict.fromkeys(reading_field.word_ids, name))
        region = reading.region
        page_area = layer.width * layer.height
        if region is not None and region.width * region.height > MAX_REGION_SHARE * page_area:
            region = None
        return cls(words, region)

    def holds(self, item: _Item) -> bool:
        if item.kind == "title_field" or any(i in self.words for i in item.word_ids):
            return True
        return self.region is not None and self.region.contains(item.box.centre)

    def field_of(self, item: _Item, changed: Sequence[int] = ()) -> str | None:
        """The field the unit is (a LABEL: value unit), else the field of the words that
        changed in it, else of any of its words."""
        named = (self.words[i] for ids in (changed, item.word_ids) for i in ids if i in self.words)
        return item.field or next(named, None)


def sheet_delta(
    before: TextLayer,
    after: TextLayer,
    *,
    before_reading: SheetReading | None = None,
    after_reading: SheetReading | None = None,
    images: tuple[PageImage, PageImage] | None = None,
) -> SheetDelta:
    """The units added, removed and changed from ``before`` to ``after`` (two versions of a
    sheet), matched by content; with the two page ``images``, the drawing's changed regions
    too. The sheets' readings (``extracted.json``), when given, say where each title block
    is; without them its fields are read again, and only when something changed."""
    text = replace(
        _text_delta(before, after, before_reading, after_reading),
        page_size=(after.width, after.height),
    )
    if images is None:
        return text
    placement = text.placement
    drawn = drawing_delta(
        images[0],
        images[1],
        words=([w.bbox for w in before.words], [w.bbox for w in after.words]),
        placement=points_affine(placement.scale, placement.dx, placement.dy) if placement else None,
        title_region=_TitleBlock.of(after, after_reading).region if after_reading else None,
    )
    graphics = drawn.regions
    title_block_only = (text.title_block_only or not text.changes) and all(
        g.title_block for g in graphics
    )
    return replace(
        text,
        graphics=graphics,
        alignment=drawn.alignment,
        title_block_only=title_block_only and not (text.is_unchanged() and not graphics),
    )


def _text_delta(
    before: TextLayer,
    after: TextLayer,
    before_reading: SheetReading | None,
    after_reading: SheetReading | None,
) -> SheetDelta:
    diagonal = (after.width**2 + after.height**2) ** 0.5
    old_sheet, new_sheet = _Sheet.of(before), _Sheet.of(after)
    matcher = _Matcher(_items(old_sheet), _items(new_sheet), near=NEAR_SHARE * diagonal)
    matcher.find_placement()
    matcher.pair_equal(_squashed)
    matcher.pair_equal(_sorted_words)
    matcher.pair_regrouped()
    matcher.pair_keyed()
    matcher.pair_in_place()
    matcher.pair_similar()
    matcher.drop_words_kept(old_sheet, new_sheet)
    if not (matcher.changed or matcher.old or matcher.new):
        return SheetDelta(unchanged=matcher.unchanged, placement=matcher.placement)

    old_block = _TitleBlock.of(before, before_reading)
    new_block = _TitleBlock.of(after, after_reading)
    changes = []
    for a, b in matcher.changed:
        lost, gained = (
            _differing(a, old_sheet, b, new_sheet),
            _differing(b, new_sheet, a, old_sheet),
        )
        field = new_block.field_of(b, gained) or old_block.field_of(a, lost)
        changes.append(UnitChange("changed", b.kind, a.text, b.text, a.box, b.box, field))
    changes += [
        UnitChange("removed", a.kind, a.text, None, a.box, None, old_block.field_of(a))
        for a in matcher.old
    ]
    changes += [
        UnitChange("added", b.kind, None, b.text, None, b.box, new_block.field_of(b))
        for b in matcher.new
    ]
    # A unit changed where it was is in the title block when either version is: the new
    # sheet's reading may not take a rewritten value for its field.
    title_block_only = all(
        [
            *(old_block.holds(a) or new_block.holds(b) for a, b in matcher.changed),
            *(old_block.holds(a) for a in matcher.old),
            *(new_block.holds(b) for b in matcher.new),
        ]
    )

    def place(change: UnitChange) -> tuple[float, float]:
        if change.after_bbox is not None:
            return (round(change.after_bbox.y0), change.after_bbox.x0)
        assert change.before_bbox is not None
        box = matcher.moved(change.before_bbox)
        return (round(box.y0), box.x0)

    return SheetDelta(
        changes=sorted(changes, key=place),
        added=len(matcher.new),
        removed=len(matcher.old),
        changed=len(matcher.changed),
        unchanged=matcher.unchanged,
        title_block_only=title_block_only,
        placement=matcher.placement,
    )
