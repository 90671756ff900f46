"""Reconciling a set once every page is terminal: its drawing index against its sheets,
duplicate numbers, and references to sheets the set does not hold.

Pure functions. The report service takes each page's facts from its verified page (coverage
read the drawing index and references it prints: ``page_facts``), asks the pages the index
could correct whether they print an indexed number (``correction_requests`` →
``shared.sheet.printed_alone``, from their text layers), and hands both to
``reconcile``. A page's identity is corrected only where the page itself prints the
indexed number; every correction names its source.
"""

from collections import defaultdict
from dataclasses import dataclass

from shared.models import VerifiedPage
from shared.pagetext import squash
from shared.sheet import Reading, designator, sheet_key
from shared.sheet.sheet_set import (
    Correction,
    DuplicateNumber,
    ExtraSheet,
    IndexEntry,
    Reference,
    SheetSet,
    TitleMismatch,
)


@dataclass(frozen=True)
class PageFacts:
    """What the set step needs from one verified page."""

    page_number: int
    sheet_number: str | None
    sheet_title: str | None
    index: list[tuple[str, str | None]]
    references: list[tuple[str, str]]


def page_facts(page: VerifiedPage) -> PageFacts:
    """A page's identity, the drawing index it prints (if any) and its cross-references, as
    coverage read them from its words."""
    return PageFacts(
        page_number=page.page_number,
        sheet_number=page.sheet.sheet_number,
        sheet_title=page.sheet.sheet_title,
        index=page.drawing_index,
        references=page.references,
    )


def _index(pages: list[PageFacts]) -> tuple[list[IndexEntry], list[int]]:
    """Every index row of the set, each number once (the first printing wins)."""
    entries: dict[str, IndexEntry] = {}
    index_pages: list[int] = []
    for page in pages:
        if page.index:
            index_pages.append(page.page_number)
        for number, title in page.index:
            entries.setdefault(
                sheet_key(number),
                IndexEntry(sheet_number=number, sheet_title=title, index_page=page.page_number),
            )
    return list(entries.values()), index_pages


def correction_requests(pages: list[PageFacts]) -> dict[int, set[str]]:
    """Page number → the indexed numbers (``sheet_key`` forms) no page carries, for each page
    whose own number is missing or not in the index: what it may print instead."""
    index, _ = _index(pages)
    indexed = {sheet_key(e.sheet_number) for e in index}
    carried = {sheet_key(p.sheet_number) for p in pages if p.sheet_number}
    unclaimed = indexed - carried
    if not unclaimed:
        return {}
    return {
        p.page_number: unclaimed
        for p in pages
        if not p.sheet_number or sheet_key(p.sheet_number) not in indexed
    }


def reconcile(pages: list[PageFacts], printed: dict[int, Reading]) -> SheetSet:
    """The set's findings. ``printed`` maps a page asked about by ``correction_requests`` to
    the indexed number it prints alone in its title block (pages printing none left out)."""
    index, index_pages = _index(pages)
    by_key = {sheet_key(e.sheet_number): e for e in index}
    corrections = _corrections(pages, printed, by_key)
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
    pages: list[PageFacts], printed: dict[int, Reading], by_key: dict[str, IndexEntry]
) -> list[Correction]:
    claimed = {sheet_key(p.sheet_number) for p in pages if p.sheet_number}
    corrections: list[Correction] = []
    for page in pages:
        reading = printed.get(page.page_number)
        if reading is None or not reading.number:
            continue
        key = sheet_key(reading.number)
        entry = by_key.get(key)
        if entry is None or key in claimed:
            continue
        claimed.add(key)
        corrections.append(
            Correction(
                page_number=page.page_number,
                was=page.sheet_number,
                now=reading.number,
                sheet_title=reading.title,
                source=(
                    f"drawing index on page {entry.index_page} lists {entry.sheet_number}, "
                    f"which page {page.page_number} prints in its title block"
                ),
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
