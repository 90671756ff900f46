"""A sheet's discipline, said only where the set itself says it.

A designator letter means a discipline only in the US National CAD Standard's scheme, so it
counts only when the set's numbers follow that scheme (nearly all of them: a discipline
designator, then a three-digit sheet type and sequence, "A101", "S-001", "M2.01"); an
Australian "ST01.B" or a "100-00" says nothing by its letters. Words say it too: a title or
the drawing index's title naming exactly one discipline ("STRUCTURAL NOTES", "ELEKTRO")
decides where the number's letter agrees or the number has no letter. Otherwise the
discipline is ``unknown``.
"""

import re
from collections.abc import Sequence

from shared.pagetext import fold_dashes
from shared.sheet.tokens import designator, discipline_for, sheet_key

UNKNOWN = "unknown"
# Share of a set's numbered sheets that must follow the NCS shape for its letters to count.
NCS_SHARE = 0.8
_NCS_SHAPE = re.compile(r"^[A-Z]{1,2}[-. ]?(?:\d{3}(?:\.\d{1,2}|[A-Z])?|\d{1,2}\.\d{1,2}[A-Z]?)$")
# Words naming a discipline, in the languages the reader knows (capitals, whole words).
_WORDS: dict[str, tuple[str, ...]] = {
    "architectural": ("ARCHITECTURAL", "ARCHITEKTUR", "ARCHITECTURE", "ARQUITECTURA"),
    "structural": ("STRUCTURAL", "TRAGWERK", "TRAGWERKSPLANUNG", "STATIK", "ESTRUCTURAL"),
    "electrical": ("ELECTRICAL", "ELEKTRO", "ELEKTROTECHNIK", "ÉLECTRICITÉ", "ELEKTRISCH"),
    "mechanical": ("MECHANICAL", "HVAC", "HEIZUNG", "LÜFTUNG", "CVC"),
    "plumbing": ("PLUMBING", "SANITÄR", "PLOMBERIE", "FONTANERÍA"),
    "civil": ("CIVIL",),
    "landscape": ("LANDSCAPE", "LANDSCAPING", "FREIANLAGEN"),
    "fire protection": ("SPRINKLER", "SPRINKLERS"),
    "fire alarm": ("FIRE ALARM",),
    "telecommunications": ("TELECOMMUNICATIONS", "TELECOM"),
}


def follows_ncs(numbers: Sequence[str]) -> bool:
    """Whether a set's numbers follow the NCS scheme (nearly all of them, letters known)."""
    shaped = [n for n in numbers if is_ncs_number(n)]
    return bool(numbers) and len(shaped) >= NCS_SHARE * len(numbers)


def is_ncs_number(number: str) -> bool:
    """A discipline designator the NCS knows, then sheet type and sequence."""
    token = fold_dashes(number).strip().upper()
    return bool(_NCS_SHAPE.match(token)) and discipline_for(token) is not None


def named_disciplines(text: str | None) -> set[str]:
    """The disciplines a title names by word."""
    if not text:
        return set()
    upper = " ".join(re.findall(r"[^\W\d_]+", text.upper()))
    return {
        name
        for name, words in _WORDS.items()
        if any(re.search(rf"\b{re.escape(w)}\b", upper) for w in words)
    }


def set_disciplines(
    sheets: Sequence[tuple[str | None, str | None]],
    index_rows: Sequence[tuple[str, str | None]] = (),
) -> list[str | None]:
    """Each sheet's discipline, from (number, title) pairs in page order and the set's
    drawing index: a discipline, ``unknown``, or None for a page with no number that names
    none."""
    numbers = [n for n, _ in sheets if n]
    ncs = follows_ncs(numbers)
    index_titles: dict[str, list[str]] = {}
    for indexed_number, indexed_title in index_rows:
        if indexed_title:
            index_titles.setdefault(sheet_key(indexed_number), []).append(indexed_title)
    found: list[str | None] = []
    for number, title in sheets:
        named = named_disciplines(title)
        for indexed in index_titles.get(sheet_key(number), []) if number else []:
            named |= named_disciplines(indexed)
        found.append(_decide(number, named, ncs))
    return found


def _decide(number: str | None, named: set[str], ncs: bool) -> str | None:
    word = next(iter(named)) if len(named) == 1 else None
    if not number:
        return word
    letter = discipline_for(number) if designator(number) else None
    if word and (letter is None or letter == word):
        return word
    if word is None and ncs and letter and is_ncs_number(number):
        return letter
    return UNKNOWN
