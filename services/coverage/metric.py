"""The coverage metric: how much of a page's own text its objects represent.

The units are the page-text model's lines (``shared.pagetext.coverage_units``: its
meaningful lines, or every line with content on a page of short tags), the same units the
fallback rung cites. A unit is covered when the objects cite (``evidence``) words carrying
at least COVERED_SHARE of its letters and digits: coverage is counted in the page's own
words, never by matching text again.
"""

from shared.contracts.models import Coverage, PageObject
from shared.pagetext import TextLayer, alnum_count, coverage_units

# Share of a line's letters and digits its cited words must carry for it to count as covered
# (an object may leave out a stray word of a line, never most of it).
COVERED_SHARE = 0.8


def cited_words(objects: list[PageObject]) -> set[int]:
    """Every page word some object cites."""
    return {i for obj in objects for i in obj.evidence}


def covered_line(layer: TextLayer, line_id: int, cited: set[int]) -> bool:
    """Whether the cited words carry the line (COVERED_SHARE of its letters and digits)."""
    words = layer.words
    total = sum(alnum_count(words[i].text) for i in layer.lines[line_id])
    carried = sum(alnum_count(words[i].text) for i in layer.lines[line_id] if i in cited)
    return total > 0 and carried >= COVERED_SHARE * total


def uncovered_units(layer: TextLayer, objects: list[PageObject]) -> list[int]:
    """The units (line ids) no object represents: what the fallback rung is asked to cite
    and what a ``content_missing`` problem can quote."""
    cited = cited_words(objects)
    return [i for i in coverage_units(layer.line_texts) if not covered_line(layer, i, cited)]


def measure_coverage(layer: TextLayer, objects: list[PageObject]) -> Coverage:
    """Share of the page's units the objects represent; 1.0 when it has none."""
    units = coverage_units(layer.line_texts)
    uncovered = len(uncovered_units(layer, objects)) if units else 0
    ratio = (len(units) - uncovered) / len(units) if units else 1.0
    return Coverage(
        total_lines=len(units), covered_lines=len(units) - uncovered, ratio=round(ratio, 4)
    )
