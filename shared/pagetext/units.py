"""The page as sheetflow reads it, for models and people: units in reading order, each with a
short id that maps to its words.

A unit is one line of the reading: a title-block field (``LABEL: value``, as the sheet
reader finds it), a table row (its cells separated, the header row first), a block (a
numbered note whole, with its wrapped lines; a label; a paragraph). The title-block fields,
tables and blocks are those the offline extractor makes objects of, so a model that returns
one object per unit returns what the offline reader finds. Units of one title block or one
table stay together; groups follow each other top to bottom, then left to right.

Every unit is written ``L17 text``: a reply cites the ids its claims come from, and the ids'
words become the claim's evidence (``carried_by``) where they carry it. Units are built from
the layer's lines, so words the page does not show (kept out of its lines) never reach them.
"""

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal

from rapidfuzz.distance import Indel

from shared.pagetext.evidence import claim_tokens
from shared.pagetext.geometry import Box
from shared.pagetext.lines import NOTE_NUMBER
from shared.pagetext.model import TextLayer, join_words
from shared.pagetext.normalize import squash
from shared.pagetext.tables import cells_of, find_tables
from shared.pagetext.tolerances import EVIDENCE, EvidenceTolerances

UnitKind = Literal["field", "header", "row", "note", "block"]

ID_PREFIX = "L"
CELL_SEPARATOR = " | "
# An id as a reply cites it: "L17", "l17", "[L17]", 17.
_UNIT_ID = re.compile(rf"^\[?{ID_PREFIX}?(\d+)\]?$", re.IGNORECASE)


@dataclass(frozen=True)
class TitleField:
    """A title-block field: its label as printed, its value, and the words of both."""

    label: str
    value: str
    word_ids: tuple[int, ...]


@dataclass(frozen=True)
class Unit:
    """One line of the page's reading."""

    id: str  # "L17"
    kind: UnitKind
    text: str  # as shown: "LABEL: value", cells separated by CELL_SEPARATOR, or the words
    word_ids: tuple[int, ...]
    box: Box  # union of its words' boxes, displayed page coordinates
    group: int  # units of one table or one title block share their group

    @property
    def line(self) -> str:
        return f"{self.id} {self.text}"


@dataclass(frozen=True)
class PageUnits:
    """A page's units in reading order."""

    units: list[Unit] = field(default_factory=list)

    @cached_property
    def by_id(self) -> dict[str, Unit]:
        return {u.id: u for u in self.units}

    def unit(self, cited: object) -> Unit | None:
        """The unit an id names as a reply cites it ("L17", "[l17]"), or None."""
        match = _UNIT_ID.match(str(cited).strip())
        return self.by_id.get(f"{ID_PREFIX}{int(match.group(1))}") if match else None

    def words_of(self, cited: Iterable[object]) -> list[int]:
        """The word ids of the cited units, in reading order, each once (ids naming no unit
        name no words)."""
        named = {unit.id: unit for name in cited if (unit := self.unit(name)) is not None}
        ids: list[int] = []
        for unit in sorted(named.values(), key=lambda u: int(u.id[len(ID_PREFIX) :])):
            ids += [i for i in unit.word_ids if i not in ids]
        return ids

    def render(self, max_chars: int, units: Sequence[Unit] | None = None) -> str:
        """``units`` (default: all), one ``L17 text`` line each, in reading order, cut before
        the first unit that would pass ``max_chars``; a last line says how many units (and
        characters) were left out."""
        chosen = self.units if units is None else list(units)
        lines: list[str] = []
        used = 0
        for n, unit in enumerate(chosen):
            line = unit.line
            if used + len(line) + 1 > max_chars:
                rest = chosen[n:]
                left = sum(len(u.line) + 1 for u in rest)
                lines.append(cut_note(len(rest), left))
                break
            lines.append(line)
            used += len(line) + 1
        return "\n".join(lines)


def cut_note(units: int, chars: int) -> str:
    """The line that says what a cap left out."""
    return f"[… {units} more unit{'s' if units != 1 else ''} ({chars} characters) left out]"


def page_units(layer: TextLayer, fields: Sequence[TitleField] = ()) -> PageUnits:
    """The page's units: the title block's ``fields`` (``shared.sheet.fields`` reads them;
    this package reads no title block), then the tables' rows and the remaining blocks,
    every group placed by its top-left corner; ids ``L1``, ``L2``… in that order."""
    used = field_lines(layer, fields)
    cells = cells_of(layer)
    groups: list[list[tuple[UnitKind, str, tuple[int, ...]]]] = []
    if fields:
        groups.append([("field", f"{f.label}: {f.value}", f.word_ids) for f in fields])
    for table in find_tables(layer, cells, skip=used):
        rows: list[tuple[UnitKind, str, tuple[int, ...]]] = []
        for n, row in enumerate(table.rows):
            by_column = row.by_column()
            text = CELL_SEPARATOR.join(" ".join(c.text for c in cs) for cs in by_column.values())
            ids = tuple(i for cs in by_column.values() for c in cs for i in c.ids)
            rows.append(("header" if n == 0 else "row", text, ids))
        groups.append(rows)
        used.update(c.line_id for row in table.rows for c in row.cells)
    for rest in field_rest(layer, fields):
        groups.append([("block", join_words(layer.words, rest), rest)])
    for run in free_runs(layer, used):
        ids = tuple(w for line_id in run for w in layer.lines[line_id])
        kind: UnitKind = "note" if starts_note(layer, run[0]) else "block"
        groups.append([(kind, join_words(layer.words, ids), ids)])

    def corner(group: list[tuple[UnitKind, str, tuple[int, ...]]]) -> tuple[float, float]:
        box = Box.union(layer.words[i].bbox for _, _, ids in group for i in ids)
        return (round(box.y0), box.x0)

    units: list[Unit] = []
    for g, group in enumerate(sorted(groups, key=corner)):
        for kind, text, ids in group:
            box = Box.union(layer.words[i].bbox for i in ids)
            units.append(Unit(f"{ID_PREFIX}{len(units) + 1}", kind, text, ids, box, g))
    return PageUnits(units)


def field_lines(layer: TextLayer, fields: Sequence[TitleField]) -> set[int]:
    """The lines the fields' words are on: no table row or block reads them again."""
    return {layer.line_of_word[i] for f in fields for i in f.word_ids} - {-1}


def field_rest(layer: TextLayer, fields: Sequence[TitleField]) -> list[tuple[int, ...]]:
    """The words of the fields' lines that no field holds ("SITE PLAN" after a number that
    a dash joins to it), each line's as one block of its own."""
    taken = {i for f in fields for i in f.word_ids}
    rests = (
        tuple(i for i in layer.lines[line_id] if i not in taken)
        for line_id in sorted(field_lines(layer, fields))
    )
    return [rest for rest in rests if rest]


def free_runs(layer: TextLayer, used: set[int]) -> list[list[int]]:
    """The layer's blocks as runs of line ids, each block cut where a used line (a field's,
    a table's) interrupts it."""
    runs: list[list[int]] = []
    for block in layer.blocks:
        run: list[int] = []
        for line_id in [*block, None]:
            if line_id is not None and line_id not in used:
                run.append(line_id)
            elif run:
                runs.append(run)
                run = []
    return runs


def starts_note(layer: TextLayer, line_id: int) -> bool:
    """The line opens a numbered note: a note number followed by more words."""
    line = layer.lines[line_id]
    return len(line) > 1 and bool(NOTE_NUMBER.match(layer.words[line[0]].text))


def carried_by(
    claim: str,
    layer: TextLayer,
    ids: Sequence[int],
    tolerances: EvidenceTolerances = EVIDENCE,
) -> list[int] | None:
    """The words among ``ids`` (cited by a reply) that carry ``claim``: all of them when
    their letters are the claim's (as ``evidence.align`` compares them), else the run of
    them the claim is printed as word for word; None when they do not carry it (the claim
    is then aligned on the whole page)."""
    tokens = claim_tokens(claim)
    # (position among ids, token) of the cited words that carry letters or digits; words of
    # punctuation alone ("-", "=") are kept in the evidence but never compared.
    words = [(n, t) for n, t in enumerate(squash(layer.words[i].text) for i in ids) if t]
    if not tokens or not words:
        return None
    cited = [t for _, t in words]
    letters = "".join(ch for t in tokens for ch in t if ch.isalpha())
    if len(letters) >= tolerances.min_fuzzy_letters:
        theirs = "".join(ch for t in cited for ch in t if ch.isalpha())
        if Indel.normalized_similarity(letters, theirs) >= tolerances.letter_match:
            return list(ids)
    elif cited == tokens:
        return list(ids)
    n = len(tokens)
    for start in range(len(cited) - n + 1):
        if cited[start : start + n] == tokens:
            return list(ids[words[start][0] : words[start + n - 1][0] + 1])
    return None
