"""Title-block layouts: where each field's cell sits and how its label is printed.

A block is a ruled table of cells. A cell holds a field's label (at its top-left corner,
turned 90° in a narrow column at its left edge, or in a cell of its own to the left of the
value, as Japanese and Chinese blocks print it) and its value; some cells print no label
(GOST's designation and title cells). Special cells hold the firm's panel (name, address,
registration number, e-mail), a stage banner, the revision table, notes, signatures.
"""

import random
from collections.abc import Callable
from dataclasses import dataclass, field

import pymupdf

from tests.support.titleblocks.draw import Ink, Style, fit

# How a field's label is printed: at the cell's top-left, turned 90° at its left edge, in a
# cell of its own to the left, or not at all.
LabelMode = str
MM = 72 / 25.4


@dataclass
class Cell:
    """What a cell prints: its label (None: no label) and its value's lines."""

    label: str | None
    lines: list[str]
    size: float = 0.0  # the value's largest size (0: the style's value size)


@dataclass
class Block:
    """A title block's content: field kind → cell, plus the special panels."""

    cells: dict[str, Cell]
    firm: list[str]  # firm name, address, registration, e-mail (the firm panel's lines)
    banner: str | None
    revisions: list[tuple[str, str, str]]  # earlier revisions: mark, date, description
    revision_labels: tuple[str, str, str]
    notes: list[str]
    signatures: list[tuple[str, str]]  # (label, initials)
    extra: dict[str, Cell] = field(default_factory=dict)


Row = tuple[float, list[tuple[float, str]]]


def grid(ink: Ink, r: pymupdf.Rect, rows: list[Row], block: Block, style: Style, mode: str):
    """Rows of cells filling ``r``, each row (height weight, [(width weight, kind)])."""
    total = sum(h for h, _ in rows)
    y = r.y0
    for h, cells in rows:
        height = r.height * h / total
        across = sum(w for w, _ in cells)
        x = r.x0
        for w, kind in cells:
            width = r.width * w / across
            cell = pymupdf.Rect(x, y, x + width, y + height)
            ink.rect(cell, style.rule)
            fill(ink, cell, kind, block, style, mode)
            x += width
        y += height
    ink.rect(r, style.frame)


def fill(ink: Ink, r: pymupdf.Rect, kind: str, block: Block, style: Style, mode: str) -> None:
    special: dict[str, Callable[[Ink, pymupdf.Rect, Block, Style], None]] = {
        "firm": _firm,
        "banner": _banner,
        "revisions": _revisions,
        "notes": _notes,
        "signatures": _signatures,
        "keyplan": _keyplan,
    }
    if kind in special:
        special[kind](ink, r, block, style)
    elif (cell := block.cells.get(kind) or block.extra.get(kind)) is not None:
        field_cell(ink, r, cell, style, mode)


def label_text(label: str, style: Style) -> str:
    text = label.upper() if style.upper else label
    return f"{text}:" if style.colon and not text.endswith(":") else text


def field_cell(ink: Ink, r: pymupdf.Rect, cell: Cell, style: Style, mode: str) -> None:
    """A labelled value: the label as ``mode`` prints it, the value in the rest."""
    pad = 2.0
    value = pymupdf.Rect(r.x0 + pad, r.y0 + pad, r.x1 - pad, r.y1 - pad)
    if cell.label is not None and mode == "top":
        label = label_text(cell.label, style)
        ls = fit([label], style.label_font, style.label_size, r.width - 2 * pad, r.height / 3)
        ink.text(r.x0 + pad, r.y0 + pad + ls, label, ls, style.label_font)
        value.y0 += ls + 1.5
    elif cell.label is not None and mode == "turned":
        label = label_text(cell.label, style)
        ls = fit([label], style.label_font, style.label_size, r.height - 2 * pad, 99)
        ink.text(r.x0 + pad + ls, r.y1 - pad, label, ls, style.label_font, turn=90)
        value.x0 += ls * 1.6 + pad
    elif cell.label is not None and mode == "side":
        split = r.x0 + min(r.width * 0.32, 60.0)
        ink.line((split, r.y0), (split, r.y1), style.rule)
        label = label_text(cell.label, style)
        ls = fit([label], style.label_font, style.label_size + 1.5, split - r.x0 - 2 * pad, 99)
        ink.text(r.x0 + pad, (r.y0 + r.y1) / 2 + ls / 3, label, ls, style.label_font)
        value.x0 = split + pad
    _value(ink, value, cell, style)


def _value(ink: Ink, r: pymupdf.Rect, cell: Cell, style: Style) -> None:
    if not cell.lines or r.width <= 4 or r.height <= 3:
        return
    size = fit(cell.lines, style.value_font, cell.size or style.value_size, r.width, r.height)
    lead = size * 1.2
    y = r.y0 + (r.height - lead * len(cell.lines)) / 2 + size
    for line in cell.lines:
        ink.text(r.x0, y, line, size, style.value_font)
        y += lead


def _firm(ink: Ink, r: pymupdf.Rect, block: Block, style: Style) -> None:
    if not block.firm:
        return
    pad = 3.0
    name, rest = block.firm[0], block.firm[1:]
    size = fit([name], style.value_font, style.value_size * 1.4, r.width - 2 * pad, r.height / 2)
    y = r.y0 + pad + size
    ink.text(r.x0 + pad, y, name, size, style.value_font)
    small = fit(rest, style.label_font, style.label_size + 0.5, r.width - 2 * pad, r.height - size)
    for line in rest:
        y += small * 1.3
        ink.text(r.x0 + pad, y, line, small, style.label_font)


def _banner(ink: Ink, r: pymupdf.Rect, block: Block, style: Style) -> None:
    if not block.banner:
        return
    size = fit(
        [block.banner],
        "hebo" if style.value_font != "cjk" else "cjk",
        28,
        r.width - 6,
        r.height - 4,
    )
    font = "hebo" if style.value_font != "cjk" else "cjk"
    ink.text(r.x0 + 3, (r.y0 + r.y1) / 2 + size / 3, block.banner, size, font)


def _revisions(ink: Ink, r: pymupdf.Rect, block: Block, style: Style) -> None:
    rows = max(len(block.revisions) + 1, 4)
    height = r.height / rows
    cols = (0.15, 0.3, 0.55)
    size = min(style.label_size + 0.5, height * 0.7)
    for i, row in enumerate([block.revision_labels, *block.revisions]):
        y = r.y1 - height * (i + 1)
        ink.line((r.x0, y), (r.x1, y), style.rule)
        x = r.x0
        for text, w in zip(row, cols, strict=True):
            ink.text(x + 2, y + height * 0.7, text, size, style.label_font)
            x += r.width * w
            if x < r.x1 - 1:
                ink.line((x, y), (x, y + height), style.rule)


def _notes(ink: Ink, r: pymupdf.Rect, block: Block, style: Style) -> None:
    size = style.label_size + 0.5
    y = r.y0 + 4 + size
    for n, note in enumerate(block.notes, start=1):
        ink.text(r.x0 + 3, y, f"{n}. {note}", size, style.label_font)
        y += size * 1.5
        if y > r.y1:
            break


def _signatures(ink: Ink, r: pymupdf.Rect, block: Block, style: Style) -> None:
    if not block.signatures:
        return
    width = r.width / len(block.signatures)
    for i, (label, initials) in enumerate(block.signatures):
        cell = pymupdf.Rect(r.x0 + i * width, r.y0, r.x0 + (i + 1) * width, r.y1)
        ink.rect(cell, style.rule)
        field_cell(ink, cell, Cell(label, [initials]), style, "top")


def _keyplan(ink: Ink, r: pymupdf.Rect, block: Block, style: Style) -> None:
    inner = pymupdf.Rect(
        r.x0 + r.width * 0.2, r.y0 + r.height * 0.2, r.x1 - r.width * 0.2, r.y1 - r.height * 0.2
    )
    ink.rect(inner, 0.5)
    half = pymupdf.Rect(inner.x0, inner.y0, (inner.x0 + inner.x1) / 2, inner.y1)
    ink.rect(half, 0.3, fill=(0.7, 0.7, 0.7))


# --- the layouts -----------------------------------------------------------------------------

# Each: (ink, the drawing frame, the block's content, style, rng) → the block's rectangle.
Layout = Callable[[Ink, pymupdf.Rect, Block, Style, random.Random], pymupdf.Rect]


def right_strip(ink: Ink, frame: pymupdf.Rect, block: Block, style: Style, rng: random.Random):
    """A strip down the right edge, its labels turned 90° at each cell's left edge."""
    r = pymupdf.Rect(
        frame.x1 - frame.width * rng.uniform(0.085, 0.11), frame.y0, frame.x1, frame.y1
    )
    head: list[Row] = [(5.0, [(1, "notes")]), (2.0, [(1, "revisions")]), (1.6, [(1, "firm")])]
    middle: list[Row] = [(0.7, [(1, "client")]), (0.9, [(1, "project")])]
    if rng.random() < 0.5:
        middle.reverse()
    tail: list[Row] = [
        (0.8, [(1, "banner")]),
        (1.4, [(1, "title")]),
        (0.6, [(1, "signatures")]),
        (0.55, [(1, "date"), (1, "scale")]),
        (0.55, [(1, "project_number"), (1, "counter")]),
        (1.0, [(2, "number"), (1, "revision")]),
    ]
    if rng.random() < 0.3:  # number above the title
        tail[1], tail[5] = tail[5], tail[1]
    grid(ink, r, head + middle + tail, block, style, "turned")
    return r


def bottom_right(ink: Ink, frame: pymupdf.Rect, block: Block, style: Style, rng: random.Random):
    """A box in the bottom-right corner, labels at each cell's top-left."""
    w, h = frame.width * rng.uniform(0.3, 0.4), frame.height * rng.uniform(0.15, 0.21)
    r = pymupdf.Rect(frame.x1 - w, frame.y1 - h, frame.x1, frame.y1)
    rows: list[Row] = [
        (1.2, [(1.2, "firm"), (1.5, "project"), (1.0, "client")]),
        (1.3, [(3.0, "title"), (1.3, "banner")]),
        (0.6, [(1, "signatures"), (0.5, "date"), (0.5, "scale")]),
        (1.0, [(1.0, "project_number"), (0.8, "counter"), (0.5, "revision"), (1.6, "number")]),
    ]
    if rng.random() < 0.4:
        rows[3][1].reverse()
    grid(ink, r, rows, block, style, "top")
    return r


def left_strip(ink: Ink, frame: pymupdf.Rect, block: Block, style: Style, rng: random.Random):
    """A strip down the left edge of a portrait sheet, labels at each cell's top-left."""
    r = pymupdf.Rect(frame.x0, frame.y0, frame.x0 + frame.width * rng.uniform(0.14, 0.18), frame.y1)
    rows: list[Row] = [
        (1.4, [(1, "firm")]),
        (0.7, [(1, "client")]),
        (0.8, [(1, "project")]),
        (3.5, [(1, "notes")]),
        (1.6, [(1, "revisions")]),
        (0.7, [(1, "banner")]),
        (1.2, [(1, "title")]),
        (0.5, [(1, "date"), (1, "scale")]),
        (0.5, [(1, "project_number"), (1, "revision")]),
        (0.5, [(1, "counter"), (1, "file")]),
        (1.0, [(1, "number")]),
    ]
    grid(ink, r, rows, block, style, "top")
    return r


def iso7200(ink: Ink, frame: pymupdf.Rect, block: Block, style: Style, rng: random.Random):
    """ISO 7200's title block, 180 mm wide, bottom right: its data fields in three rows."""
    h = rng.uniform(27, 36) * MM
    r = pymupdf.Rect(frame.x1 - 180 * MM, frame.y1 - h, frame.x1, frame.y1)
    rows: list[Row] = [
        (0.9, [(1, "dept"), (1, "techref"), (1, "doctype"), (1, "docstatus")]),
        (1.4, [(1.2, "owner"), (0.7, "created"), (0.7, "approved"), (2.4, "title")]),
        (1.1, [(2.0, "number"), (0.5, "revision"), (0.9, "date"), (0.4, "lang"), (0.6, "counter")]),
    ]
    grid(ink, r, rows, block, style, "top")
    above = pymupdf.Rect(r.x0, r.y0 - h * 0.45, r.x1, r.y0)
    grid(
        ink,
        above,
        [(1, [(1.4, "project"), (1, "scale"), (1, "project_number"), (1.2, "banner")])],
        block,
        style,
        "top",
    )
    return pymupdf.Rect(r.x0, above.y0, r.x1, r.y1)


def japanese(ink: Ink, frame: pymupdf.Rect, block: Block, style: Style, rng: random.Random):
    """表題欄: a box bottom right, each label in its own cell left of its value."""
    w, h = rng.uniform(150, 180) * MM, rng.uniform(55, 75) * MM
    r = pymupdf.Rect(frame.x1 - w, frame.y1 - h, frame.x1, frame.y1)
    rows: list[Row] = [
        (0.7, [(1, "banner")]),
        (0.9, [(1, "project")]),
        (1.4, [(1, "title")]),
        (0.8, [(1, "scale"), (1, "date")]),
        (1.0, [(1.4, "number"), (0.8, "revision"), (0.8, "project_number")]),
        (1.3, [(1, "firm")]),
        (0.8, [(1, "signatures")]),
    ]
    grid(ink, r, rows, block, style, "side")
    return r


def gost(ink: Ink, frame: pymupdf.Rect, block: Block, style: Style, rng: random.Random):
    """GOST 21.101 form 3, 185 x 55 mm: the change table and signatures on the left, the
    designation, object and sheet title (no labels), the stage / sheet / sheets cells and
    the organisation on the right."""
    r = pymupdf.Rect(frame.x1 - 185 * MM, frame.y1 - 55 * MM, frame.x1, frame.y1)
    left = pymupdf.Rect(r.x0, r.y0, r.x0 + 65 * MM, r.y1)
    _gost_changes(ink, left, block, style)
    right = pymupdf.Rect(left.x1, r.y0, r.x1, r.y1)
    top = pymupdf.Rect(right.x0, right.y0, right.x1, right.y0 + 15 * MM)
    grid(ink, top, [(1, [(1, "project_number")])], block, style, "none")
    obj = pymupdf.Rect(right.x0, top.y1, right.x1, top.y1 + 15 * MM)
    grid(ink, obj, [(1, [(1, "project")])], block, style, "none")
    title = pymupdf.Rect(right.x0, obj.y1, right.x0 + 70 * MM, right.y1)
    grid(ink, title, [(1, [(1, "title")])], block, style, "none")
    stage = pymupdf.Rect(title.x1, obj.y1, right.x1, obj.y1 + 15 * MM)
    heads = block.extra["gost_heads"].lines
    values = block.extra["gost_values"].lines
    x = stage.x0
    for head, value, w in zip(heads, values, (15, 15, 20), strict=True):
        _boxed(
            ink, pymupdf.Rect(x, stage.y0, x + w * MM, stage.y0 + 5 * MM), Cell(None, [head]), style
        )
        number = Cell(None, [value], style.value_size + 2)
        _boxed(ink, pymupdf.Rect(x, stage.y0 + 5 * MM, x + w * MM, stage.y1), number, style)
        x += w * MM
    org = pymupdf.Rect(title.x1, stage.y1, right.x1, right.y1)
    grid(
        ink,
        pymupdf.Rect(right.x0, title.y1, title.x1, right.y1),
        [(1, [(1, "banner")])],
        block,
        style,
        "none",
    )
    grid(ink, org, [(1, [(1, "firm")])], block, style, "none")
    ink.rect(r, style.frame)
    return r


def _boxed(ink: Ink, r: pymupdf.Rect, cell: Cell, style: Style) -> None:
    ink.rect(r, style.rule)
    field_cell(ink, r, cell, style, "none")


def _gost_changes(ink: Ink, r: pymupdf.Rect, block: Block, style: Style) -> None:
    """The change table (5 rows, its header "Изм. Кол.уч. Лист №док. Подп. Дата") and the
    signature rows (Разраб., Пров., ГИП, Н.контр., Утв.) with names and dates."""
    widths = (7, 10, 10, 10, 15, 13)
    head = block.extra["gost_change_heads"].lines
    rows: list[list[str]] = [["", "", "", "", "", ""] for _ in range(5)]
    if block.revisions:
        mark, date, _ = block.revisions[-1]
        rows[4] = [mark, "-", "", "", "", date]
    rows.append(head)
    for label, name in block.signatures:
        rows.append([label, "", name, "", "", block.extra["gost_sign_date"].lines[0]])
    height = r.height / len(rows)
    size = min(style.label_size + 0.5, height * 0.75)
    for i, row in enumerate(rows):
        y = r.y0 + i * height
        x = r.x0
        spans = list(zip(row, widths, strict=True))
        if i > 5:  # a signature row: its label spans two columns, its name two
            spans = [(row[0], 17), (row[2], 20), ("", 15), (row[5], 13)]
        for text, w in spans:
            cell = pymupdf.Rect(x, y, x + w * MM, y + height)
            ink.rect(cell, style.rule)
            ink.text(cell.x0 + 1, cell.y1 - height * 0.25, text, size, style.label_font)
            x = cell.x1
    ink.rect(r, style.frame)


LAYOUTS: dict[str, Layout] = {
    "right_strip": right_strip,
    "bottom_right": bottom_right,
    "left_strip": left_strip,
    "iso7200": iso7200,
    "japanese": japanese,
    "gost": gost,
}
