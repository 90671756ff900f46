"""The generated multilingual set: drawing sheets whose title blocks are ruled tables of
labelled cells, in several layouts and languages, each sheet carrying its ground truth.

Seeded randomness picks, per set (one firm's template), the page size, fonts and sizes,
which label form each field prints (sometimes abbreviated, sometimes with a one-letter slip
as templates carry them), which optional fields and decoys are present, the numbering
scheme; and per sheet its number, its title (on one to three lines), revision, date and
scale. Decoys: project numbers, CAD file names that embed the sheet number, dates, firms'
registration numbers, e-mail addresses and phone numbers, stage banners in large type,
"n of N" counters, scale labels, room numbers and dimensions, view titles. Everything is
made at run time (nothing stored).
"""

import random
import unicodedata
from dataclasses import dataclass

import pymupdf

from tests.support.titleblocks.draw import Ink, Style
from tests.support.titleblocks.languages import LANGUAGES, Language
from tests.support.titleblocks.layouts import LAYOUTS, MM, Block, Cell

# (language, layout) of each generated set. Every language in three or more sets, every
# layout in four or more languages (the Japanese 表題欄 and GOST's form are their own
# languages' only); "two_consultant" sets mix two firms' blocks of two layouts.
PLAN: tuple[tuple[str, str], ...] = (
    ("en", "right_strip"),
    ("en", "bottom_right"),
    ("en", "iso7200"),
    ("en", "two_consultant"),
    ("de", "right_strip"),
    ("de", "bottom_right"),
    ("de", "iso7200"),
    ("de", "two_consultant"),
    ("fr", "right_strip"),
    ("fr", "left_strip"),
    ("fr", "iso7200"),
    ("es", "bottom_right"),
    ("es", "left_strip"),
    ("es", "iso7200"),
    ("it", "bottom_right"),
    ("it", "left_strip"),
    ("it", "iso7200"),
    ("pt", "right_strip"),
    ("pt", "left_strip"),
    ("pt", "bottom_right"),
    ("nl", "right_strip"),
    ("nl", "bottom_right"),
    ("nl", "two_consultant"),
    ("sv", "right_strip"),
    ("sv", "iso7200"),
    ("sv", "left_strip"),
    ("da", "bottom_right"),
    ("da", "right_strip"),
    ("da", "left_strip"),
    ("no", "bottom_right"),
    ("no", "left_strip"),
    ("no", "right_strip"),
    ("pl", "bottom_right"),
    ("pl", "left_strip"),
    ("pl", "iso7200"),
    ("cs", "bottom_right"),
    ("cs", "iso7200"),
    ("cs", "right_strip"),
    ("ru", "gost"),
    ("ru", "bottom_right"),
    ("ru", "right_strip"),
    ("ja", "japanese"),
    ("ja", "two_consultant"),
    ("ja", "left_strip"),
    ("zh", "right_strip"),
    ("zh", "japanese"),
    ("zh", "bottom_right"),
)
LANDSCAPE = ((2384.0, 1684.0), (1684.0, 1191.0), (1191.0, 842.0))
PORTRAIT = ((1684.0, 2384.0), (1191.0, 1684.0))
PHASES = {"fr": ("APD", "PRO", "EXE"), "pl": ("PB", "PW")}
LEVELS = {"de": ("UG", "EG", "OG1", "OG2")}
PHONE = {
    "en": "+44 20",
    "de": "+49 30",
    "fr": "+33 1",
    "es": "+34 91",
    "it": "+39 06",
    "pt": "+351 21",
    "nl": "+31 20",
    "sv": "+46 8",
    "da": "+45 33",
    "no": "+47 22",
    "pl": "+48 22",
    "cs": "+420 2",
    "ru": "+7 495",
    "ja": "03",
    "zh": "+86 21",
}
SIGNERS = {
    "ru": ("Иванов", "Петров", "Сидоров", "Кузнецова", "Смирнов"),
    "ja": ("山田", "佐藤", "鈴木"),
    "zh": ("王伟", "李娜", "张强"),
}


@dataclass(frozen=True)
class Truth:
    """What one generated sheet prints (None: the field is not printed)."""

    set_name: str
    language: str
    layout: str
    page: int
    number: str
    title: str
    revision: str | None
    date: str | None
    scale: str | None
    project_number: str | None
    labels: tuple[str, ...]  # every label the sheet prints, as its template spells them


@dataclass(frozen=True)
class GeneratedSet:
    name: str
    language: str
    layout: str
    pdf: bytes
    truths: tuple[Truth, ...]


def generated_sets(seed: int = 36, sheets: int = 4) -> list[GeneratedSet]:
    """Every set of ``PLAN``, ``sheets`` sheets each, from one seed."""
    return [
        make_set(LANGUAGES[lang], layout, random.Random(f"{seed}-{lang}-{layout}"), sheets)
        for lang, layout in PLAN
    ]


def misspelt(label: str, rng: random.Random) -> str:
    """The label with one letter dropped or two neighbours swapped (a template's slip)."""
    letters = [i for i, ch in enumerate(label) if ch.isalpha()]
    if len(letters) < 7:
        return label
    i = rng.choice(letters[1:-2])
    if rng.random() < 0.5:
        return label[:i] + label[i + 1 :]
    return label[:i] + label[i + 1] + label[i] + label[i + 2 :]


@dataclass
class Template:
    """One firm's title block: its labels, style, constants and decoys."""

    lang: Language
    layout: str
    style: Style
    labels: dict[str, str]
    present: set[str]
    project: str
    client: str
    firm: list[str]
    project_number: str
    banner: str | None
    scheme: str
    discipline: str
    date: str
    revisions: list[str]


def _labels(lang: Language, rng: random.Random, iso: bool) -> dict[str, str]:
    chosen = {}
    for kind, forms in lang.labels.items():
        label = forms[0] if rng.random() < 0.5 else rng.choice(forms)
        if not lang.cjk and rng.random() < 0.12:
            label = misspelt(label, rng)
        chosen[kind] = label
    if iso and lang.iso:
        chosen |= {k: v for k, v in lang.iso.items() if not k.endswith("_value")}
    return chosen


def _date(lang: Language, rng: random.Random) -> str:
    year, month, day = rng.randint(2019, 2026), rng.randint(1, 12), rng.randint(1, 28)
    form = rng.choice(lang.dates)
    mon = lang.months[month - 1] if lang.months else ""
    return form.format(
        d=f"{day:02d}", m=f"{month:02d}", y=year, ys=f"{year % 100:02d}", mon=mon, mi=month, di=day
    )


def _firm(lang: Language, rng: random.Random) -> list[str]:
    name = rng.choice(lang.firms)
    slug = (
        "".join(
            ch
            for ch in unicodedata.normalize("NFKD", name.lower())
            if ch.isascii() and ch.isalnum()
        )[:12]
        or "office"
    )
    lines = [name]
    if rng.random() < 0.7:
        lines.append(rng.choice(lang.registrations).format(r=rng.randint(10000, 99999999)))
    if rng.random() < 0.6:
        lines.append(f"info@{slug}.example")
    if rng.random() < 0.5:
        lines.append(f"Tel. {PHONE[lang.code]} {rng.randint(100, 999)} {rng.randint(1000, 9999)}")
    return lines


def template(lang: Language, layout: str, rng: random.Random) -> Template:
    optional = {"revision": 0.85, "date": 0.9, "scale": 0.85, "project_number": 0.85}
    optional |= {"counter": 0.5, "file": 0.4, "client": 0.8, "signatures": 0.8}
    present = {kind for kind, share in optional.items() if rng.random() < share}
    revision_forms = (
        ["A", "B", "C", "D"],
        ["P01", "P02", "P03", "C01"],
        ["0", "1", "2", "3"],
        ["a", "b", "c", "d"],
    )
    return Template(
        lang=lang,
        layout=layout,
        style=Style.pick(rng, lang.cjk),
        labels=_labels(lang, rng, iso=layout == "iso7200"),
        present=present,
        project=rng.choice(lang.projects),
        client=rng.choice(lang.clients),
        firm=_firm(lang, rng),
        project_number=rng.choice(("{y}{n:03d}", "{y}-{n:03d}", "P{y}.{n:02d}", "{n:04d}")).format(
            y=rng.randint(18, 26), n=rng.randint(1, 999)
        ),
        banner=rng.choice(lang.banners) if rng.random() < 0.6 else None,
        scheme=rng.choice(lang.numbers),
        discipline=rng.choice(lang.disciplines),
        date=_date(lang, rng),
        revisions=rng.choice(revision_forms),
    )


@dataclass(frozen=True)
class SheetFacts:
    """One sheet's own values."""

    page: int
    of: int
    number: str
    title_lines: list[str]
    revision: str
    date: str
    scale: str
    earlier: list[tuple[str, str, str]]  # earlier revisions: mark, date, description


def _number(t: Template, rng: random.Random, n: int, page: int) -> str:
    lang = t.lang
    return t.scheme.format(
        d=t.discipline,
        n=f"{n:03d}",
        n2=f"{n % 100:02d}",
        n1=str(page),
        l=n // 100,
        m=f"{n % 100:02d}",
        lv=rng.choice(LEVELS.get(lang.code, ("L1", "L2"))),
        ph=rng.choice(PHASES.get(lang.code, ("P",))),
    )


def _title(lang: Language, rng: random.Random, used: set[str]) -> list[str]:
    first = rng.choice([t for t in lang.titles if t not in used] or list(lang.titles))
    used.add(first)
    lines = [first]
    if rng.random() < 0.35:
        lines += rng.sample(lang.title_parts, k=rng.choice((1, 1, 2)))
    return lines


def sheet_facts(t: Template, rng: random.Random, count: int) -> list[SheetFacts]:
    start = rng.choice((1, 100, 101, 200, 301, 500))
    numbers: set[str] = set()
    used: set[str] = set()
    facts = []
    for page in range(1, count + 1):
        number = _number(t, rng, start + page - 1, page)
        while number in numbers:  # a scheme that repeats (its level chosen alike)
            number = _number(t, rng, start + rng.randint(20, 90), page)
        numbers.add(number)
        rev = rng.randrange(len(t.revisions))
        earlier = [
            (t.revisions[i], _date(t.lang, rng), rng.choice(t.lang.banners)) for i in range(rev)
        ]
        scale = rng.choice(("1:100", "1:50", "1:200", "1 : 100", t.lang.as_indicated))
        if t.lang.code == "ja" and rng.random() < 0.5:
            scale = rng.choice(("1/100", "1/50", "1/200"))
        facts.append(
            SheetFacts(
                page=page,
                of=count,
                number=number,
                title_lines=_title(t.lang, rng, used),
                revision=t.revisions[rev],
                date=t.date if rng.random() < 0.7 else _date(t.lang, rng),
                scale=scale,
                earlier=earlier,
            )
        )
    return facts


def block_for(t: Template, s: SheetFacts, rng: random.Random) -> tuple[Block, Truth]:
    """The title block's content for one sheet, and the sheet's truth."""
    lang, labels = t.lang, t.labels
    printed: dict[str, str | None] = {
        "revision": s.revision if "revision" in t.present else None,
        "date": s.date if "date" in t.present else None,
        "scale": s.scale if "scale" in t.present else None,
        "project_number": t.project_number if "project_number" in t.present else None,
    }
    cells = {
        "number": Cell(labels["number"], [s.number], t.style.number_size),
        "title": Cell(labels["title"], s.title_lines, t.style.title_size),
        "project": Cell(labels["project"], [t.project]),
    }
    for kind, value in printed.items():
        # An absent field: its label printed over an empty cell, or no cell at all.
        if value is not None or rng.random() < 0.5:
            cells[kind] = Cell(labels[kind], [value] if value else [])
    if "client" in t.present:
        cells["client"] = Cell(labels["client"], [t.client])
    if "counter" in t.present:
        cells["counter"] = Cell(None, [lang.counter.format(n=s.page, of=s.of)])
    if "file" in t.present:
        name = f"{t.project_number}_{s.number}.dwg".replace(" ", "")
        cells["file"] = Cell(labels["file"], [name])
    signers = SIGNERS.get(lang.code, ("JD", "MK", "RS", "AB", "TW"))
    signatures = (
        [(labels[k], rng.choice(signers)) for k in ("drawn", "checked", "approved")]
        if "signatures" in t.present
        else []
    )
    block = Block(
        cells=cells,
        firm=t.firm,
        banner=t.banner,
        revisions=s.earlier,
        revision_labels=(labels["revision"], labels["date"], labels["status"]),
        notes=list(lang.notes),
        signatures=signatures,
    )
    if t.layout == "iso7200":
        _iso(block, t, s)
    if t.layout == "gost":
        # The form prints no field of these: the designation holds the project's code, the
        # change table's last row the current change, the signatures only month and year.
        printed["project_number"] = printed["date"] = printed["scale"] = None
        printed["revision"] = s.earlier[-1][0] if s.earlier else None
        _gost(block, t, s, rng)
    title = " ".join(s.title_lines)
    shown = [c.label for c in [*block.cells.values(), *block.extra.values()] if c.label]
    shown += [label for label, _ in block.signatures]
    if block.revisions:
        shown += list(block.revision_labels)
    if t.layout == "gost":
        shown += block.extra["gost_heads"].lines + block.extra["gost_change_heads"].lines
    truth = Truth(
        set_name="",
        language=lang.code,
        layout=t.layout,
        page=s.page,
        number=s.number,
        title=title,
        revision=printed["revision"],
        date=printed["date"],
        scale=printed["scale"],
        project_number=printed["project_number"],
        labels=tuple(dict.fromkeys(shown)),
    )
    return block, truth


def _iso(block: Block, t: Template, s: SheetFacts) -> None:
    """ISO 7200's own fields: department, technical reference, document type and status,
    legal owner, creator, approver, language, sheet n/N."""
    iso = t.lang.iso or {}
    signers = [name for _, name in block.signatures] or ["JD", "MK"]
    block.extra |= {
        "dept": Cell(iso["dept"], [t.discipline]),
        "techref": Cell(iso["techref"], [signers[0]]),
        "doctype": Cell(iso["doctype"], [iso["doctype_value"]]),
        "docstatus": Cell(iso["docstatus"], [iso["docstatus_value"]]),
        "owner": Cell(iso["owner"], [t.firm[0]]),
        "created": Cell(iso["created"], [signers[0]]),
        "approved": Cell(iso["approved"], [signers[-1]]),
        "lang": Cell(iso["lang"], [t.lang.code]),
    }
    block.cells["counter"] = Cell(iso["sheet"], [f"{s.page}/{s.of}"])


def _gost(block: Block, t: Template, s: SheetFacts, rng: random.Random) -> None:
    """GOST 21.101 form 3: the designation and titles in cells with no label, the stage,
    sheet and sheets under their heads, the change table's heads, signatures."""
    designation = f"{t.project_number}-{t.discipline}"
    block.cells["project_number"] = Cell(None, [designation], t.style.value_size + 4)
    block.cells["title"] = Cell(None, block.cells["title"].lines, t.style.title_size)
    block.cells["project"] = Cell(None, [t.project])
    heads = ("Стадия", t.labels["number"], "Листов")
    block.extra |= {
        "gost_heads": Cell(None, list(heads)),
        "gost_values": Cell(None, [rng.choice(("П", "Р")), s.number, str(s.of)]),
        "gost_change_heads": Cell(None, ["Изм.", "Кол.уч.", "Лист", "№ док.", "Подп.", "Дата"]),
        "gost_sign_date": Cell(None, [s.date[3:] if len(s.date) > 6 else s.date]),
    }
    block.firm = t.firm[:1]
    block.banner = None
    block.signatures = list(
        zip(("Разраб.", "Пров.", "ГИП", "Н. контр.", "Утв."), SIGNERS["ru"], strict=True)
    )


# --- the page --------------------------------------------------------------------------------


def _page_size(layout: str, rng: random.Random) -> tuple[float, float]:
    return rng.choice(PORTRAIT if layout == "left_strip" else LANDSCAPE)


def draw_sheet(
    doc: pymupdf.Document, t: Template, s: SheetFacts, block: Block, rng: random.Random
) -> None:
    width, height = _page_size(t.layout, random.Random(t.project_number))
    page = doc.new_page(width=width, height=height)
    ink = Ink(page)
    margin = rng.uniform(14, 30)
    frame = pymupdf.Rect(
        margin + 10 * MM * (t.layout != "left_strip"), margin, width - margin, height - margin
    )
    ink.rect(frame, t.style.frame)
    placed = LAYOUTS[t.layout](ink, frame, block, t.style, random.Random(t.project_number))
    content = _content_area(frame, placed)
    _drawing(ink, content, t, s, rng)
    # A plot stamp below the frame: the CAD file's path, a date and time.
    stamp = f"{t.project_number}\\{s.number}.dwg  {_date(t.lang, rng)} {rng.randint(7, 19):02d}:{rng.randint(0, 59):02d}"
    ink.text(frame.x0, height - margin / 3, stamp, 4.5, t.style.label_font)
    ink.done()


def _content_area(frame: pymupdf.Rect, block: pymupdf.Rect) -> pymupdf.Rect:
    """The largest part of the frame beside or above the title block."""
    beside = [
        pymupdf.Rect(frame.x0, frame.y0, block.x0, frame.y1),
        pymupdf.Rect(block.x1, frame.y0, frame.x1, frame.y1),
        pymupdf.Rect(frame.x0, frame.y0, frame.x1, block.y0),
    ]
    return max(beside, key=lambda r: r.width * r.height if r.width > 0 and r.height > 0 else 0)


def _drawing(ink: Ink, area: pymupdf.Rect, t: Template, s: SheetFacts, rng: random.Random) -> None:
    """A plan: grid lines with bubbles, walls, room numbers, dimensions, a view title, notes,
    a north arrow."""
    lang, font = t.lang, t.style.value_font
    inner = pymupdf.Rect(
        area.x0 + area.width * 0.1,
        area.y0 + area.height * 0.12,
        area.x1 - area.width * 0.25,
        area.y1 - area.height * 0.2,
    )
    if inner.width < 100 or inner.height < 100:
        return
    cols, rows = rng.randint(4, 7), rng.randint(3, 5)
    letters = "АБВГДЕЖ" if lang.code == "ru" else "ABCDEFG"
    for i in range(cols):
        x = inner.x0 + inner.width * i / (cols - 1)
        ink.line((x, inner.y0 - 30), (x, inner.y1 + 10), 0.25)
        ink.circle((x, inner.y0 - 38), 8, 0.4)
        ink.text(x - 3, inner.y0 - 35, str(i + 1), 8, font)
        if i:
            ink.text(
                x - inner.width / (cols - 1) / 2 - 8,
                inner.y0 - 50,
                str(rng.choice((3000, 4500, 6000, 7200))),
                6,
                font,
            )
    for j in range(rows):
        y = inner.y0 + inner.height * j / (rows - 1)
        ink.line((inner.x0 - 30, y), (inner.x1 + 10, y), 0.25)
        ink.circle((inner.x0 - 38, y), 8, 0.4)
        ink.text(inner.x0 - 41, y + 3, letters[j], 8, font)
    ink.rect(inner, 2.0)
    for _ in range(rng.randint(2, 5)):
        x = rng.uniform(inner.x0, inner.x1)
        ink.line((x, inner.y0), (x, rng.uniform(inner.y0, inner.y1)), 1.2)
    for k in range(rng.randint(3, 8)):
        x, y = rng.uniform(inner.x0 + 20, inner.x1 - 40), rng.uniform(inner.y0 + 20, inner.y1 - 20)
        ink.text(x, y, f"{s.page}{k:02d}", 7, font)
    view = lang.view.format(title=s.title_lines[0], scale=s.scale)
    ink.text(inner.x0, inner.y1 + 40, view, 12, font)
    ink.line((inner.x0, inner.y1 + 44), (inner.x0 + min(inner.width, 260), inner.y1 + 44), 0.8)
    y = area.y0 + 20
    for note in lang.notes[: rng.randint(1, len(lang.notes))]:
        ink.text(area.x1 - area.width * 0.22, y, note, 6, font)
        y += 10
    ink.circle((area.x1 - 40, area.y1 - 40), 14, 0.6)
    ink.text(area.x1 - 43, area.y1 - 58, "N", 9, font)


def make_set(lang: Language, layout: str, rng: random.Random, count: int) -> GeneratedSet:
    """One set: ``count`` sheets of one firm's template (two firms' in a two-consultant set)."""
    name = f"{lang.code}-{layout}"
    if layout == "two_consultant":
        first, second = rng.sample(("right_strip", "bottom_right", "left_strip"), 2)
        if "left_strip" in (first, second):  # portrait and landscape are not mixed in a set
            first, second = "right_strip", "bottom_right"
        templates = [template(lang, first, rng), template(lang, second, rng)]
    else:
        templates = [template(lang, layout, rng)]
    doc = pymupdf.Document()
    truths: list[Truth] = []
    share = (count + 1) // len(templates)
    facts: list[tuple[Template, SheetFacts]] = []
    for i, t in enumerate(templates):
        part = share if i < len(templates) - 1 else count - share * i
        facts += [(t, f) for f in sheet_facts(t, rng, part)]
    for page, (t, f) in enumerate(facts, start=1):
        block, truth = block_for(t, f, rng)
        draw_sheet(doc, t, f, block, rng)
        truths.append(Truth(**{**vars(truth), "set_name": name, "layout": layout, "page": page}))
    return GeneratedSet(
        name, lang.code, layout, doc.tobytes(garbage=3, deflate=True), tuple(truths)
    )
