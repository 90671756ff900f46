"""The title block read as what it is: a grid of ruled cells, each holding a label (small
text at its edge, in any orientation, or a cell of its own beside its value) and a value
(the rest of the cell, all its lines).

A value never crosses a cell's walls, so a neighbour's text is never glued to it, and a
value printed on several lines of one cell is one value. Cells are found from the page's
ruled lines (``View.cell``); text that no rule boxes in forms no cell (the reader's
unruled rules read it).
"""

from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache

from shared.pagetext import Box
from shared.sheet.labels import Field, label_fields, match_label
from shared.sheet.tokens import is_labelled_value, is_sheet_id
from shared.sheet.view import OCR_SIZE_RATIO, Run, View, read_by_ocr

# A label is printed smaller than its value: at most this share of the value's size.
LABEL_SHARE = 0.85
# ... and a label not known to the vocabulary is small print: at most this size (points).
LABEL_MAX = 10.0
# A label runs to at most this many words.
MAX_LABEL_WORDS = 6
# A turned label stands in the outer part of its cell: this share of its width from a wall.
TURNED_EDGE = 0.3
# A cell of one line that is only a label gives its value to the cell beside (or below) it
# when that cell's walls meet its own within this many points (a thick wall drawn as its
# two edges, as a page turned on its sheet draws it, parts them by 3-4 pt).
WALL_SLACK = 4.0


@dataclass(frozen=True)
class Cell:
    """One ruled cell of the title block, in the view's frame: its label (None where it
    prints none, or where its label names no known field: ``field`` None) and its value."""

    box: Box
    label: str | None
    label_ids: tuple[int, ...]
    field: Field | None
    value: str
    value_ids: tuple[int, ...]
    value_size: float


def read_cells(view: View) -> list[Cell]:
    """The ruled cells of the view that hold text, each with its label and value; a label
    ruled off in a cell of its own is joined to the value in the cell beside it."""
    grouped: dict[Box, list[Run]] = defaultdict(list)
    for run in view.runs:
        walls = view.cell(run.box.centre)
        if walls is not None:
            grouped[walls].append(run)
    cells = _one_cell_each(view, grouped)
    return _paired(view, cells)


def _cell(view: View, box: Box, runs: list[Run]) -> Cell | None:
    aligned = sorted((r for r in runs if r.line_id >= 0), key=lambda r: (r.box.y0, r.box.x0))
    across = [r for r in runs if r.line_id < 0]
    if aligned and across and _is_label(view, aligned):
        return None  # its value runs across this view: the cell is read in its own
    turned = [r for r in across if _at_edge(r.box, box)]
    if aligned and turned:
        # A label turned 90° in a narrow strip at the cell's side labels the whole cell.
        ids = tuple(sorted(i for r in turned for i in r.ids))
        return _made(view, box, ids, aligned)
    if not aligned:
        return _made(view, box, (), sorted(runs, key=lambda r: (r.box.y0, r.box.x0)))
    top, rest = aligned[0], aligned[1:]
    words = [view.words[i].text for i in top.ids]
    found = cell_label(words)
    if found is not None and _whole_label(found, words, top, rest):
        field, n = found
        label_ids, inline = top.ids[:n], top.ids[n:]
        return _made(view, box, label_ids, _own_field(view, rest), inline, field)
    largest = max((r.size for r in rest), default=0.0)
    small = top.size <= LABEL_SHARE * largest and top.size <= LABEL_MAX
    above = top.box.y1 <= min(r.box.y0 for r in rest) if rest else False
    if above and small and _label_like(top.text) and view.in_zone(box):
        # Small text at the top edge over larger text: a label of a field not known.
        return _made(view, box, top.ids, _own_field(view, rest), (), None)
    if (under := _label_under(view, aligned)) is not None:
        field, bottom = under
        return _made(view, box, bottom.ids, aligned[:-1], (), field)
    return _made(view, box, (), aligned)


def _label_under(view: View, aligned: list[Run]) -> tuple[Field, Run] | None:
    """A known label alone on a cell's last line, printed smaller than the lines above it:
    a template that prints each field's label under its value."""
    if len(aligned) < 2:
        return None
    bottom = aligned[-1]
    words = [view.words[i].text for i in bottom.ids]
    found = cell_label(words)
    largest = max(r.size for r in aligned[:-1])
    if found is None or found[1] != len(words) or bottom.size > LABEL_SHARE * largest:
        return None
    return found[0], bottom


def cell_label(words: list[str]) -> tuple[Field, int] | None:
    """The field a line's first words label and how many words the label takes: the
    reader's labels first, then the vocabulary's in every language, the whole line or the
    words before a colon."""
    return _cell_label(tuple(words))


@lru_cache(maxsize=16384)
def _cell_label(words: tuple[str, ...]) -> tuple[Field, int] | None:
    found = match_label(words)
    if found is not None and found[0] is not Field.OTHER:
        return found
    ends = [k + 1 for k, w in enumerate(words[:MAX_LABEL_WORDS]) if w.endswith(":")]
    for n in (len(words), *ends) if len(words) <= MAX_LABEL_WORDS else ends:
        fields = label_fields(" ".join(words[:n]))
        if fields:
            return _field_of(fields), n
    return found


def _field_of(fields: frozenset[str]) -> Field:
    if "title" in fields:
        return Field.TITLE
    if "number" in fields:
        return Field.NUMBER
    return Field.OTHER


def _either(label: str, value: str) -> Field | None:
    """A label of both the number and the title ("Plano", "Drawing": practice prints either
    under it): the field its value's shape names. A lone sheet-number token is no title."""
    fields = label_fields(label) or frozenset({_field_of_legacy(label)})
    if "title" not in fields:
        return None
    lone = " " not in value and is_sheet_id(value)
    if lone or ("number" in fields and is_labelled_value(value) and " " not in value):
        return Field.NUMBER
    return Field.TITLE


def _field_of_legacy(label: str) -> str:
    found = match_label(label.split())
    return found[0].value if found else ""


def _label_like(text: str) -> bool:
    """Whether small print could be a label the vocabulary does not know: a few words, most
    of it letters (a dimension or a tag in a drawing's table is none)."""
    letters = sum(ch.isalpha() for ch in text)
    return (
        len(text.split()) <= MAX_LABEL_WORDS
        and letters >= 3
        and letters >= 0.7 * len(text.replace(" ", ""))
    )


def _own_field(view: View, rest: list[Run]) -> list[Run]:
    """The lines of a cell that belong to its label: those above the next label (a box that
    holds several fields one under another, unruled)."""
    for k, run in enumerate(rest):
        words = [view.words[i].text for i in run.ids]
        found = cell_label(words)
        if found is None:
            continue
        above = max((r.size for r in rest[:k]), default=0.0)
        size = run.size * (OCR_SIZE_RATIO if read_by_ocr(run) else 1.0)
        smaller = found[0] is Field.OTHER and size <= LABEL_SHARE * above
        colon = any(w.endswith(":") for w in words[: found[1] + 3])
        if found[1] == len(words) or colon or smaller:
            return rest[:k]
    return rest


def _whole_label(found: tuple[Field, int], words: list[str], top: Run, rest: list[Run]) -> bool:
    """Whether a line that opens with a label's words is the cell's label: the label alone,
    or before a colon, or printed smaller than the text under it."""
    field, n = found
    if n == len(words) or any(w.endswith(":") for w in words[: n + 2]):
        return True
    largest = max((r.size for r in rest), default=0.0)
    return field is not Field.OTHER and top.size <= LABEL_SHARE * largest


def _is_label(view: View, runs: list[Run]) -> bool:
    words = [view.words[i].text for r in runs for i in r.ids]
    found = cell_label(words)
    return found is not None and found[1] == len(words)


def _at_edge(word: Box, cell: Box) -> bool:
    reach = TURNED_EDGE * cell.width
    return word.x1 <= cell.x0 + reach or word.x0 >= cell.x1 - reach


def _made(
    view: View,
    box: Box,
    label_ids: tuple[int, ...],
    runs: list[Run],
    inline: tuple[int, ...] = (),
    field: Field | None = None,
) -> Cell:
    value_ids = inline + tuple(i for r in runs for i in r.ids)
    label = " ".join(view.words[i].text for i in label_ids) or None
    if label is not None and field is None:
        found = cell_label(label.split())
        whole = found is not None and (found[1] == len(label.split()) or found[0] is Field.OTHER)
        field = found[0] if found and whole else None
    value = " ".join(" ".join(view.words[i].text for i in value_ids).split())
    if label is not None and field in (Field.NUMBER, Field.TITLE):
        field = _either(label, value) or field
    sizes = [r.size for r in runs] or ([view.run_of(inline).size] if inline else [])
    return Cell(
        box=box,
        label=label,
        label_ids=label_ids,
        field=field,
        value=value,
        value_ids=value_ids,
        value_size=max(sizes, default=0.0),
    )


def _holds_label(view: View, cell: Cell) -> bool:
    """Whether a cell's text has a line that is a label, or opens with one (a box of
    fields). A word that names some other field, opening a line printed as large as the
    rest with no colon, is the value's own ("PHASE 1" under a title, "Bestand und
    Abbruch")."""
    lines = [run for i in cell.value_ids if (run := view.run_of_word.get(i)) and run.ids[0] == i]
    largest = max((run.size for run in lines), default=0.0)
    for run in lines:
        words = [view.words[j].text for j in run.ids]
        found = cell_label(words)
        if found is None:
            continue
        field, n = found
        colon = any(w.endswith(":") for w in words[: n + 2])
        smaller = run.size <= LABEL_SHARE * largest
        if field is not Field.OTHER or n == len(words) or colon or smaller:
            return True
    return False


def _paired(view: View, cells: list[Cell]) -> list[Cell]:
    """A cell that holds only a label, and the unlabelled cell right of it (or under it)
    that holds its value, as one cell."""
    taken: set[int] = set()
    out: list[Cell] = []
    holds_label: dict[int, bool] = {}

    def holds(j: int) -> bool:
        if j not in holds_label:
            holds_label[j] = _holds_label(view, cells[j])
        return holds_label[j]

    for k, cell in enumerate(cells):
        if k in taken or cell.label is None or cell.value:
            continue
        free = [
            j
            for j, other in enumerate(cells)
            if j not in taken and j != k and other.label is None and other.value
        ]
        under = [j for j in free if _under(cell.box, cells[j].box)]
        if under and any(_under(cells[under[0]].box, cells[j].box) for j in free):
            continue  # a column's header over its values: a table, no field
        partner = next((j for j in free if _beside(cell.box, cells[j].box) and not holds(j)), None)
        if partner is None:
            partner = next((j for j in under if not holds(j)), None)
        if partner is None:
            continue
        value = cells[partner]
        taken |= {k, partner}
        out.append(
            Cell(
                box=Box.union((cell.box, value.box)),
                label=cell.label,
                label_ids=cell.label_ids,
                field=cell.field,
                value=value.value,
                value_ids=value.value_ids,
                value_size=value.value_size,
            )
        )
    return out + [c for k, c in enumerate(cells) if k not in taken]


def _one_cell_each(view: View, grouped: dict[Box, list[Run]]) -> list[Cell]:
    """The cells the runs grouped by their walls make, a cell seen from either edge of a
    thick wall drawn as two (walls within ``WALL_SLACK`` of each other) as one, unless each
    side holds a label: two labelled cells whose parting wall was not found stay two."""
    corners: dict[tuple[int, int], list[Box]] = defaultdict(list)
    runs_of: dict[Box, list[Run]] = {}
    cells: dict[Box, Cell | None] = {}
    for walls, runs in grouped.items():
        gx, gy = int(walls.x0 // WALL_SLACK), int(walls.y0 // WALL_SLACK)
        near = (b for dx in (-1, 0, 1) for dy in (-1, 0, 1) for b in corners[gx + dx, gy + dy])
        own = _cell(view, walls, runs)
        labelled = _has_label(own)
        same = next(
            (b for b in near if _same_walls(b, walls) and not (labelled and _has_label(cells[b]))),
            None,
        )
        if same is None:
            corners[gx, gy].append(walls)
            runs_of[walls], cells[walls] = list(runs), own
        else:
            runs_of[same] += runs
            cells[same] = _cell(view, same, runs_of[same])
    return [cell for cell in cells.values() if cell is not None]


def _has_label(cell: Cell | None) -> bool:
    return cell is not None and cell.label is not None


def _same_walls(a: Box, b: Box) -> bool:
    return all(abs(p - q) <= WALL_SLACK for p, q in zip(a, b, strict=True))


def _beside(left: Box, right: Box) -> bool:
    return (
        abs(left.x1 - right.x0) <= WALL_SLACK
        and abs(left.y0 - right.y0) <= WALL_SLACK
        and abs(left.y1 - right.y1) <= WALL_SLACK
    )


def _under(top: Box, below: Box) -> bool:
    return (
        abs(top.y1 - below.y0) <= WALL_SLACK
        and abs(top.x0 - below.x0) <= WALL_SLACK
        and abs(top.x1 - below.x1) <= WALL_SLACK
    )
