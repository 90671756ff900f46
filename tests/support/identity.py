"""Sheet identity as the pipeline decides it, in process, and how a decided identity is
scored against what a sheet prints (the manifest of ``../shared/corpus/``, or a generated
sheet's own truth).

Reading: each page through extract's rung 1 offline (``extract_rung1``: its text layer, or
OCR words on a page without one, read closer where the pipeline reads closer), a page that
read no number read again in the cell the set's template names (``reread_missed``), then
the set's identity as the report decides it from the pages' readings (``reconcile_set`` and
``apply_corrections``, on verified pages carrying what coverage gives them). No servers.

Scoring: a number is right when it is the printed one with Unicode dashes and spaces
folded; a title when it is the printed one with case, dashes and whitespace folded. A
**wrong title** is a title reported that is not the printed one (on a page that prints
none, any title); an **invented number** is a number reported on a page that prints none.
"""

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import pymupdf

from services.extract.reading.page import Readers
from services.extract.reading.reread import reread_missed
from services.extract.reading.textlayer import read_text_layer
from services.extract.rung1 import extract_rung1
from services.report.assemble import apply_corrections
from services.report.usecases import reconcile_set
from shared.contracts.models import Coverage, PageVerdict, VerifiedPage
from shared.infra.settings import Settings
from shared.pagetext import fold_dashes
from shared.sheet.fields import straight_marks
from shared.sheet.header import SheetHeader
from shared.sheet.identity import decide_identity
from shared.sheet.reading import SheetReading, read_sheet


async def read_set(
    pdf: bytes, page_numbers: Iterable[int], settings: Settings, readers: Readers
) -> dict[int, SheetReading]:
    """Each page's ``SheetReading`` as extract stores it (offline: no model), then, as the
    report's set step has extract do, each page that read no sheet number read again in the
    cell the set's template names (``reread_missed``)."""
    pages = {}
    for n in page_numbers:
        out = await extract_rung1(
            pdf, n, settings, None, readers=readers, worker_id="identity", job_id="identity"
        )
        pages[n] = (out.text_layer, out.result.reading or SheetReading())
    again = await reread_missed(pdf, pages, settings, readers)
    return {n: reading for n, (_, reading) in again.items()}


def _verified(page_number: int, reading: SheetReading) -> VerifiedPage:
    """The page as verify hands it to the report, as far as identity goes: the header
    coverage decides from the reading (``decide_identity``), and the reading."""
    empty = Coverage(total_lines=0, covered_lines=0, ratio=1.0)
    return VerifiedPage(
        job_id="identity",
        page_number=page_number,
        has_text_layer=True,
        sheet=decide_identity(reading),
        coverage_before=empty,
        coverage=empty,
        floor=0.0,
        below_floor=False,
        verdict=PageVerdict(ok=True),
        reading=reading,
    )


def set_identity(readings: Mapping[int, SheetReading]) -> dict[int, SheetHeader]:
    """Page number → the sheet header the report states for it: the set reconciled from
    the readings, its corrections applied."""
    pages = [_verified(n, r) for n, r in sorted(readings.items())]
    sheet_set = reconcile_set(pages)
    return {
        o.page_number: o.sheet
        for o in apply_corrections(list(pages), sheet_set)
        if isinstance(o, VerifiedPage)
    }


def _folded(text: str) -> str:
    return "".join(fold_dashes(text).split())


def same_number(got: str | None, printed: str) -> bool:
    """The printed number, Unicode dashes and spaces folded."""
    return got is not None and _folded(got) == _folded(printed)


def same_title(got: str | None, printed: str) -> bool:
    """The printed title, case, Unicode dashes and whitespace folded (a text layer's stray
    space is no misreading)."""
    return got is not None and _folded(got).upper() == _folded(printed).upper()


# The manifest writes a scale with its label, and what it scales before it ("SCALE 1\" =
# 200'", "SITE PLAN: (SCALE: 1\" = 20.0' PREFERRED)"): the value is what follows the label.
_SCALE_LABEL = re.compile(r"^.*?\bSCALE\s*:?\s*(?=\d)", re.IGNORECASE)


def same_field(name: str, got: str | None, printed: str) -> bool:
    """A title-block field as printed, case, dashes and spaces aside; a scale described at
    more length ("As indicated (views 1 : 50)") counts when it, or what follows its label,
    starts with what was read."""
    if got is None:
        return False
    # A curly or typeset inch or foot mark is the straight one ("1” = 200'").
    got, printed = straight_marks(got), straight_marks(printed)
    key, want = _folded(got).upper(), _folded(printed).upper()
    if key == want:
        return True
    value = _folded(_SCALE_LABEL.sub("", printed, count=1)).upper()
    return name == "scale" and bool(key) and (want.startswith(key) or value.startswith(key))


@dataclass
class Tally:
    """Sheet numbers and titles of a group of pages against what they print."""

    pages: int = 0
    numbers_labelled: int = 0
    numbers_right: int = 0
    numbers_wrong: int = 0  # reported on a numbered page, and not its number
    numbers_invented: int = 0  # reported on a page that prints none
    titles_labelled: int = 0
    titles_right: int = 0
    titles_wrong: int = 0  # reported, and not the printed title (or the page prints none)
    misses: list[str] = field(default_factory=list)

    def count(
        self,
        where: str,
        got: tuple[str | None, str | None],
        printed: tuple[str | None, str | None],
    ) -> None:
        """One page: the (number, title) reported and the (number, title) printed."""
        (number, title), (printed_number, printed_title) = got, printed
        self.pages += 1
        if printed_number:
            self.numbers_labelled += 1
            if same_number(number, printed_number):
                self.numbers_right += 1
            else:
                self.numbers_wrong += number is not None
                self.misses.append(f"{where} number {number!r} (prints {printed_number!r})")
        elif number:
            self.numbers_invented += 1
            self.misses.append(f"{where} number {number!r} (prints none)")
        if printed_title:
            self.titles_labelled += 1
            if same_title(title, printed_title):
                self.titles_right += 1
                return
            self.misses.append(f"{where} title {title!r} (prints {printed_title[:60]!r})")
        elif title:
            self.misses.append(f"{where} title {title!r} (prints none)")
        self.titles_wrong += title is not None

    def add(self, other: "Tally") -> None:
        for name, value in vars(other).items():
            if isinstance(value, int):
                setattr(self, name, getattr(self, name) + value)
        self.misses += other.misses

    def line(self) -> str:
        """numbers right/labelled, wrong, invented; titles right/labelled, wrong."""
        return (
            f"numbers {self.numbers_right}/{self.numbers_labelled} "
            f"(wrong {self.numbers_wrong}, invented {self.numbers_invented})  "
            f"titles {self.titles_right}/{self.titles_labelled} (wrong {self.titles_wrong})"
        )


def read_text_pages(pdf: bytes, settings: Settings) -> dict[int, SheetReading]:
    """Each page's reading from its text layer alone (no render, no OCR): what extract reads
    on a page whose text layer is usable, cheaply, for unit tests."""
    with pymupdf.open(stream=pdf) as doc:
        return {
            page.number + 1: read_sheet(
                read_text_layer(page, page.number + 1, settings.text_layer_min_chars)
            )
            for page in doc
        }


# The title-block fields scored beside number and title: SheetHeader's name for each.
FIELDS = ("revision", "issue_date", "project_number", "scale")


@dataclass
class FieldTally:
    """Title-block fields right / printed, and values given where none is printed."""

    right: dict[str, int] = field(default_factory=dict)
    printed: dict[str, int] = field(default_factory=dict)
    unlisted: dict[str, int] = field(default_factory=dict)

    def count(self, got: SheetHeader, printed: Mapping[str, str | None]) -> None:
        for name in FIELDS:
            value, want = getattr(got, name), printed.get(name)
            if want:
                self.printed[name] = self.printed.get(name, 0) + 1
                self.right[name] = self.right.get(name, 0) + same_field(name, value, want)
            elif value:
                self.unlisted[name] = self.unlisted.get(name, 0) + 1

    def add(self, other: "FieldTally") -> None:
        for mine, theirs in (
            (self.right, other.right),
            (self.printed, other.printed),
            (self.unlisted, other.unlisted),
        ):
            for name, n in theirs.items():
                mine[name] = mine.get(name, 0) + n

    def line(self) -> str:
        return "  ".join(
            f"{name} {self.right.get(name, 0)}/{self.printed.get(name, 0)}"
            f" (+{self.unlisted.get(name, 0)})"
            for name in FIELDS
        )
