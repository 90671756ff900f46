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

A kept model-made object is placed on the page's words: the words of the lines (units,
``shared.pagetext.units``) it cites, where they carry its ``source_text``; else its
``source_text`` is aligned to the page's words (``shared.pagetext.evidence.align``). The words
found become its ``evidence`` (a misread cites the words the page really prints, for the
oracle to compare), and an object placed nowhere is stamped
``grounding="vision_unverified"``, unless it was rescued (already a weaker claim). A
text-structuring object placed by its ids takes those words as its ``source_text``: with no
image, its text is the page's by construction; so does an object that gave no
``source_text`` of its own. Either is marked ``source_cited``: its text is its citation, and
no check against those words can fail. Objects built from the page's own words
(rungs offline and fallback) cite them by construction and are never aligned. Objects left
without a grounding get ``source_text`` (or ``graphical`` without one).
"""

from collections.abc import Mapping, Sequence
from typing import Any

from shared.contracts.models import GuardCounts, PageObject
from shared.pagetext import (
    Box,
    PageWords,
    TextLayer,
    align,
    digit_runs,
    join_words,
    number_key,
    numbers_printed,
    plain_numbers,
)
from shared.pagetext.units import PageUnits, carried_by


def apply_grounding_guard(
    objects: list[PageObject],
    text_layer: TextLayer,
    cited: Mapping[str, Sequence[str]] | None = None,
    units: PageUnits | None = None,
) -> tuple[list[PageObject], GuardCounts]:
    """Keep, rescue (stamp ``text_layer``) or drop each object by where its value's digits
    are found, place model-made claims on their words (the words of the ``units`` they cite,
    ``cited`` by object id, where those carry the claim; else by alignment, stamping
    ``vision_unverified`` on claims the page does not carry), and count each object once:
    kept, rescued, vision_unverified or dropped; and each model-made claim by how it was
    placed."""
    has_text = text_layer.has_text_layer
    page_digits = numbers_printed(text_layer.text) if has_text else set()
    page = PageWords(text_layer) if text_layer.words else None
    counts = GuardCounts()
    kept: list[PageObject] = []
    for obj in objects:
        update: dict[str, Any] = {}
        source = obj.source_text or ""
        model_made = obj.rung not in ("offline", "fallback")
        # A model's own claim of evidence is never taken: only the words of the lines it
        # cites, when they carry its claim, or alignment.
        names = (cited or {}).get(obj.object_id) if model_made else None
        evidence = _by_citation(obj, text_layer, names, units)
        if evidence is not None and (obj.rung == "text_structuring" or not source.strip()):
            # Text-only objects are the page's words by construction, never a copy.
            source = join_words(text_layer.words, evidence)
            update |= {"source_text": source, "source_cited": True}
        value_digits = {number_key(r) for r in digit_runs(plain_numbers(obj.value_text()))}
        grounding = obj.grounding
        beyond_source = bool(value_digits) and not value_digits <= numbers_printed(source)
        if beyond_source:
            if not (has_text and value_digits <= page_digits):
                counts.dropped += 1
                continue
            grounding = "text_layer"
        if model_made:
            evidence = _placed(source, evidence, bool(names), page, counts)
            update |= {
                "evidence": evidence or [],
                "evidence_bbox": (
                    Box.union(text_layer.words[i].bbox for i in evidence) if evidence else None
                ),
            }
            if evidence is None and source.strip() and has_text and grounding != "text_layer":
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


def _placed(
    source: str, cited: list[int] | None, names: bool, page: PageWords | None, counts: GuardCounts
) -> list[int] | None:
    """A model-made claim's evidence: the cited words that carry it, else the words its
    ``source`` aligns to; counted by how it was placed (and a citation that did not hold)."""
    counts.citations_refused += names and cited is None
    if cited is not None:
        counts.placed_by_ids += 1
        return cited
    if not source.strip() or page is None:
        return None
    counts.placed_by_alignment += 1
    found = align(source, page)
    return found.ids if found else None


def _by_citation(
    obj: PageObject, text_layer: TextLayer, names: Sequence[str] | None, units: PageUnits | None
) -> list[int] | None:
    """The words of the lines named (``names``: the unit ids ``obj`` cites) that carry its
    claim (all of them for an object without ``source_text``); None when it cites nothing,
    or cites what does not carry it."""
    if not names or units is None:
        return None
    words = units.words_of(names)
    source = obj.source_text or ""
    if not words:
        return None
    return carried_by(source, text_layer, words) if source.strip() else words
