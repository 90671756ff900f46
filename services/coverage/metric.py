"""The coverage metric: how much of a page's own text its objects represent.

A page's *meaningful* lines are its text-layer lines with some substance; a
line counts as covered when its normalized words appear, as a run, in the
normalized text one object carries. Lines an object spans (a note wrapped over
several text lines) are each found inside that object's text.
"""

import re
from collections.abc import Iterable

from shared.models import Coverage, PageObject, TextLayer

MIN_LINE_CHARS = 12

_WORD = re.compile(r"[^\W_]+")
# A line made only of numbers, feet/inch marks, fractions and an elevation or
# top-of prefix is a dimension tick: it says nothing an object must carry.
_TICK_PREFIX = re.compile(r"^(?:(?:EL(?:EV)?|[TB]\.\s?O\.(?:\s?[A-Z]{1,3}\.?)?)\.?\s*:?\s*)+", re.I)
_TICK_BODY = re.compile(r"^[\d\s'\"′″‘’“”\-–—/.,+±=@()xX]*$")
# "1." or "A." opening a line: an enumerator a note's source_text may omit.
_ENUMERATOR = re.compile(r"^(?:\d{1,3}|[A-Za-z])\.\s+")


def normalize(text: str) -> str:
    """Lowercase alphanumeric words joined by single spaces ("8' - 0\" O.C." → "8 0 o c")."""
    return " ".join(_WORD.findall(text.casefold()))


def fold(line: str) -> str:
    """Collapse runs of whitespace to one space and trim."""
    return " ".join(line.split())


def is_dimension_tick(line: str) -> bool:
    """True for a line of only dimensions/elevations (`15"`, `8' - 0"`, `EL. 100'-6"`)."""
    body = _TICK_PREFIX.sub("", fold(line), count=1)
    return bool(_TICK_BODY.match(body))


def meaningful_lines(text_layer: TextLayer) -> list[str]:
    """The page's text lines worth covering: at least MIN_LINE_CHARS after folding, not ticks."""
    lines = (fold(raw) for raw in text_layer.text.splitlines())
    return [
        line
        for line in lines
        if len(line) >= MIN_LINE_CHARS and not is_dimension_tick(line) and normalize(line)
    ]


def object_text(obj: PageObject) -> str:
    """Everything an object says in words: source_text, description, scalar attribute values."""
    parts: list[str] = [obj.source_text or "", obj.description or ""]
    parts.extend(_attribute_strings(obj.attributes.values()))
    return normalize(" ".join(parts))


def _attribute_strings(values: Iterable[object]) -> Iterable[str]:
    for value in values:
        if isinstance(value, bool):
            continue
        if isinstance(value, str | int | float):
            yield str(value)
        elif isinstance(value, list | tuple):
            yield from _attribute_strings(value)


def _haystack(objects: list[PageObject]) -> str:
    # One string, one object per row: a line matches within an object, never across two.
    return "".join(f" {text} \n" for obj in objects if (text := object_text(obj)))


def _is_covered(line: str, haystack: str) -> bool:
    if f" {normalize(line)} " in haystack:
        return True
    stripped = _ENUMERATOR.sub("", line, count=1)
    return stripped != line and bool(normalize(stripped)) and f" {normalize(stripped)} " in haystack


def uncovered_lines(text_layer: TextLayer, objects: list[PageObject]) -> list[str]:
    """The meaningful lines no object represents (what a `content_missing` problem can cite)."""
    haystack = _haystack(objects)
    return [line for line in meaningful_lines(text_layer) if not _is_covered(line, haystack)]


def measure_coverage(text_layer: TextLayer, objects: list[PageObject]) -> Coverage:
    """Share of the page's meaningful lines the objects represent; 1.0 when there are none."""
    lines = meaningful_lines(text_layer)
    haystack = _haystack(objects)
    covered = sum(1 for line in lines if _is_covered(line, haystack))
    ratio = covered / len(lines) if lines else 1.0
    return Coverage(total_lines=len(lines), covered_lines=covered, ratio=round(ratio, 4))
