"""The grounding guard: no number survives extraction unless the page itself carries it, and
every model-made object is tied to the page words it came from.

An object's *value* is what a reader takes from it as data: its ``tag``, ``name``,
``description`` and every scalar in ``attributes`` (keys excluded). ``source_text`` is its
evidence, not its value. The guard compares the digit-runs of the value with the digit-runs
of the evidence:

- all in the object's own ``source_text`` → kept;
- all in the page's text layer but not in ``source_text`` → kept, stamped
  ``grounding="text_layer"`` (rescued);
- otherwise → dropped (on a page without a text layer only ``source_text`` counts);
- no digits in the value → kept as is (nothing numeric to ground).

A kept model-made object's ``source_text`` is aligned to the page's words
(``shared.pagetext.evidence.align``): the words found become its ``evidence`` (a misread cites the
words the page really prints, for the oracle to compare), and an object that aligns to
nothing is stamped ``grounding="vision_unverified"``, unless it was rescued (already a weaker
claim). Objects built from the page's own words (rungs offline and fallback) cite them by
construction and are never aligned. Objects left without a grounding get ``source_text``
(or ``graphical`` without one).
"""

from typing import Any

from shared.models import GuardCounts, PageObject
from shared.pagetext import (
    PageWords,
    TextLayer,
    align,
    digit_runs,
    number_key,
    numbers_printed,
    plain_numbers,
)


def apply_grounding_guard(
    objects: list[PageObject], text_layer: TextLayer
) -> tuple[list[PageObject], GuardCounts]:
    """Keep, rescue (stamp ``text_layer``) or drop each object by where its value's digits
    are found, align model-made claims to their words (stamping ``vision_unverified`` on
    claims the page does not carry), and count each object once: kept, rescued,
    vision_unverified or dropped."""
    has_text = text_layer.has_text_layer
    page_digits = numbers_printed(text_layer.text) if has_text else set()
    page = PageWords(text_layer) if text_layer.words else None
    counts = GuardCounts()
    kept: list[PageObject] = []
    for obj in objects:
        value_digits = {number_key(r) for r in digit_runs(plain_numbers(obj.value_text()))}
        source = obj.source_text or ""
        update: dict[str, Any] = {}
        grounding = obj.grounding
        beyond_source = bool(value_digits) and not value_digits <= numbers_printed(source)
        if beyond_source:
            if not (has_text and value_digits <= page_digits):
                counts.dropped += 1
                continue
            grounding = "text_layer"
        if obj.rung not in ("offline", "fallback"):
            # A model's own claim of evidence is never taken: only alignment cites words.
            found = align(source, page) if source.strip() and page is not None else None
            update |= {
                "evidence": found.ids if found else [],
                "evidence_bbox": found.bbox if found else None,
            }
            if found is None and source.strip() and has_text and grounding != "text_layer":
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
            update["grounding"] = grounding
        kept.append(obj.model_copy(update=update) if update else obj)
    return kept, counts
