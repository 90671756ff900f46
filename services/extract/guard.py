"""The grounding guard: no number survives extraction unless the page itself carries it.

An object's *value* is what a reader takes from it as data: its ``tag``, ``name``,
``description`` and every scalar in ``attributes`` (keys excluded). ``source_text`` is
its evidence, not its value. The guard compares the digit-runs of the value with the
digit-runs of the evidence:

- all in the object's own ``source_text`` → kept;
- all in the page's text layer but not in ``source_text`` → kept, stamped
  ``grounding="text_layer"`` (rescued);
- otherwise → dropped (on a page without a text layer only ``source_text`` counts);
- no digits in the value → kept as is (nothing numeric to ground).

Kept model-made objects whose ``source_text`` is not on the page (compared without case,
whitespace or punctuation) are stamped ``grounding="vision_unverified"``; a rescued object
keeps its ``text_layer`` stamp (already a weaker claim, checked by verify either way).
Objects built from the page's own words (rungs offline and fallback) are never stamped.
Objects left without a grounding get ``source_text`` (or ``graphical`` without one).
"""

import re
import unicodedata
from collections.abc import Iterator
from typing import Any

from services.extract.segment import build_blocks, rows_of_chunks
from shared.models import GuardCounts, PageObject, TextLayer

_DIGITS = re.compile(r"\d+")


def digit_runs(text: str) -> set[str]:
    """Maximal runs of digits ("12'-6 1/2"" → {"12", "6", "1", "2"})."""
    return set(_DIGITS.findall(text))


def _scalars(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _scalars(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _scalars(item)
    elif value is not None and not isinstance(value, bool):
        yield str(value)


def value_text(obj: PageObject) -> str:
    """The object's value as one string: tag, name, description and attribute values."""
    return " ".join(_scalars([obj.tag, obj.name, obj.description, obj.attributes]))


def squash(text: str) -> str:
    """Lowercase letters and digits only: the form texts are compared in, so case,
    whitespace, line breaks and punctuation never decide a match."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return "".join(ch for ch in text if ch.isalnum())


def page_texts(text_layer: TextLayer) -> tuple[str, ...]:
    """The page text squashed in three reading orders: PyMuPDF's, row by row, and block by
    block (a note that wraps beside another column reads whole in at least one)."""
    rows = rows_of_chunks(text_layer.words)
    by_rows = " ".join(chunk.text for row in rows for chunk in row)
    by_blocks = " ".join(block.text for block in build_blocks(rows))
    return squash(text_layer.text), squash(by_rows), squash(by_blocks)


def on_page(source_text: str, squashed_pages: tuple[str, ...]) -> bool:
    """True when ``source_text`` occurs on the page, insensitive to case, whitespace and
    punctuation."""
    needle = squash(source_text)
    return bool(needle) and any(needle in page for page in squashed_pages)


def apply_grounding_guard(
    objects: list[PageObject], text_layer: TextLayer
) -> tuple[list[PageObject], GuardCounts]:
    """Keep, rescue (stamp ``text_layer``) or drop each object by where its value's digits
    are found, stamp ``vision_unverified`` on claims the page does not carry, and count each
    object once: kept, rescued, vision_unverified or dropped."""
    has_text = text_layer.has_text_layer
    page_digits = digit_runs(text_layer.text) if has_text else set()
    pages = page_texts(text_layer) if has_text else ()
    counts = GuardCounts()
    kept: list[PageObject] = []
    for obj in objects:
        value_digits = digit_runs(value_text(obj))
        source = obj.source_text or ""
        grounding = obj.grounding
        beyond_source = bool(value_digits) and not value_digits <= digit_runs(source)
        if beyond_source:
            if not (has_text and value_digits <= page_digits):
                counts.dropped += 1
                continue
            grounding = "text_layer"
        model_made = obj.rung not in ("offline", "fallback")
        if (
            model_made
            and grounding != "text_layer"
            and source
            and has_text
            and not on_page(source, pages)
        ):
            grounding = "vision_unverified"
        if grounding is None:
            grounding = "source_text" if source else "graphical"
        if beyond_source:  # and on the page: rescued
            counts.rescued += 1
        elif grounding == "vision_unverified":
            counts.vision_unverified += 1
        else:
            counts.kept += 1
        if grounding != obj.grounding:
            obj = obj.model_copy(update={"grounding": grounding})
        kept.append(obj)
    return kept, counts
