"""Reconciling a set once every page is terminal: its drawing index against its sheets,
duplicate numbers, and references to sheets the set does not hold.

Pure functions. The report service takes each page's facts from its verified page (its
``SheetReading``, read once in extract: ``services.report.facts``) and hands them to ``reconcile``,
which decides identity across the set (``shared.sheet.decide``) from the readings alone. A
page's identity is corrected only to a number the page itself prints; every correction
names its basis and source.
"""

from collections import defaultdict
from dataclasses import dataclass

from shared.pagetext import squash
from shared.sheet.decide import Decision, decide_set
from shared.sheet.index import expand_index
from shared.sheet.reading import SheetReading
from shared.sheet.sheet_set import (
    Basis,
    Correction,
    DuplicateNumber,
    ExtraSheet,
    IndexEntry,
    Reference,
    SheetSet,
    TitleMismatch,
)
from shared.sheet.tokens import designator, sheet_key


@dataclass(frozen=True)
class PageFacts:
    """What the set step needs from one verified page."""

    page_number: int
    sheet_number: str | None
    sheet_title: str | None
    index: list[tuple[str, str | None]]
    references: list[tuple[str, str]]
    reading: SheetReading | None = None


def _index(pages: list[PageFacts]) -> tuple[list[IndexEntry], list[int]]:
    """Every index row of the set, ranges expanded against the set's numbers, each number
    once (the first printing wins)."""
    entries: dict[str, IndexEntry] = {}
    index_pages: list[int] = []
    numbers = [p.sheet_number for p in pages if p.sheet_number]
    for page in pages:
        if page.reading:
            numbers += [c.text for c in page.reading.candidates]
    for page in pages:
        if page.index:
            index_pages.append(page.page_number)
        for number, title in expand_index(page.index, numbers):
            entries.setdefault(
                sheet_key(number),
                IndexEntry(sheet_number=number, sheet_title=title, index_page=page.page_number),
            )
    return list(entries.values()), index_pages


def reconcile(pages: list[PageFacts]) -> SheetSet:
    """The set's findings, identity decided across the set from the pages' readings."""
    index, index_pages = _index(pages)
    by_key = {sheet_key(e.sheet_number): e for e in index}
    readings = {p.page_number: p.reading for p in pages if p.reading is not None}
    corrections = _corrections(pages, decide_set(readings), by_key)
    identity = {p.page_number: (p.sheet_number, p.sheet_title) for p in pages}
    for c in corrections:
        identity[c.page_number] = (c.now, c.sheet_title or identity[c.page_number][1])
    numbered = {n: (num, title) for n, (num, title) in identity.items() if num}
    pages_of: dict[str, list[int]] = defaultdict(list)
    for n, (number, _) in sorted(numbered.items()):
        pages_of[sheet_key(number)].append(n)
    sheet_set = SheetSet(
        index_pages=index_pages,
        index=index,
        corrections=corrections,
        duplicates=[
            DuplicateNumber(sheet_number=numbered[ns[0]][0], page_numbers=ns)
            for ns in pages_of.values()
            if len(ns) > 1
        ],
        unnumbered_pages=sorted(n for n, (number, _) in identity.items() if not number),
    )
    if index:
        corrected = {c.page_number for c in corrections}
        sheet_set.confirmed_pages = [
            n for n, (num, _) in numbered.items() if sheet_key(num) in by_key and n not in corrected
        ]
        sheet_set.missing = [e for key, e in by_key.items() if key not in pages_of]
        sheet_set.not_in_index = [
            ExtraSheet(page_number=n, sheet_number=num)
            for n, (num, _) in numbered.items()
            if sheet_key(num) not in by_key
        ]
        sheet_set.title_mismatches = _title_mismatches(numbered, by_key)
    sheet_set.unresolved_references, sheet_set.external_references = _references(
        pages, set(pages_of), {designator(num) for num, _ in numbered.values()}
    )
    return sheet_set


def _corrections(
    pages: list[PageFacts], decided: dict[int, Decision], by_key: dict[str, IndexEntry]
) -> list[Correction]:
    """The pages the set decided otherwise than the page alone: each to a number it prints
    and no other page carries, or, its number kept, to the title OCR gave it by size where
    the set vouches for that place."""
    claimed = {sheet_key(p.sheet_number) for p in pages if p.sheet_number}
    corrections: list[Correction] = []
    for page in pages:
        d = decided.get(page.page_number)
        if d is None or not d.number:
            continue
        if d.titled_by_place and _same(page.sheet_number, d.number):
            # The page's own number stands; the set vouches for the title OCR gave it.
            basis: Basis = "set_template"
            source = d.why
        else:
            decided_by = d.source
            if decided_by is None or decided_by == "title_block":
                continue
            key = sheet_key(d.number)
            if page.sheet_number == d.number or (
                key in claimed and not _recased(page.sheet_number, d.number)
            ):
                continue
            claimed.discard(sheet_key(page.sheet_number or ""))
            claimed.add(key)
            basis, source = decided_by, d.why
            if basis == "drawing_index" and (entry := by_key.get(key)):
                source = (
                    f"drawing index on page {entry.index_page} lists {entry.sheet_number}, "
                    f"which page {page.page_number} prints in its title block"
                )
        corrections.append(
            Correction(
                page_number=page.page_number,
                was=page.sheet_number,
                now=d.number,
                sheet_title=d.title,
                basis=basis,
                source=source,
            )
        )
    return corrections


def _title_mismatches(
    numbered: dict[int, tuple[str, str | None]], by_key: dict[str, IndexEntry]
) -> list[TitleMismatch]:
    """Sheets whose title differs from the index's in more than case, spacing and
    punctuation."""
    mismatches = []
    for n, (number, title) in numbered.items():
        entry = by_key.get(sheet_key(number))
        if entry and entry.sheet_title and title and squash(entry.sheet_title) != squash(title):
            mismatches.append(
                TitleMismatch(
                    page_number=n,
                    sheet_number=number,
                    sheet_title=title,
                    index_title=entry.sheet_title,
                )
            )
    return mismatches


def _references(
    pages: list[PageFacts], keys: set[str], designators: set[str]
) -> tuple[list[Reference], list[Reference]]:
    """References to sheets not in the set, once per page and sheet: unresolved when the set
    holds sheets of that discipline, external when it holds none."""
    unresolved: dict[tuple[int, str], Reference] = {}
    external: dict[tuple[int, str], Reference] = {}
    for page in pages:
        for target, text in page.references:
            key = sheet_key(target)
            if key in keys:
                continue
            found = unresolved if designator(target) in designators else external
            ref = found.get((page.page_number, key))
            if ref:
                ref.occurrences += 1
            else:
                found[(page.page_number, key)] = Reference(
                    page_number=page.page_number, target=target, text=text
                )
    return list(unresolved.values()), list(external.values())


def _recased(number: str | None, decided: str) -> bool:
    """Whether the set decided the page's own number in other letters' case ("v-101" OCR
    read for "V-101"): the same sheet, printed otherwise."""
    return number is not None and number != decided and number.upper() == decided.upper()


def _same(number: str | None, decided: str | None) -> bool:
    return number is not None and decided is not None and sheet_key(number) == sheet_key(decided)
