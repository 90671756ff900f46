"""Whether a sheet new to a project's register is one the register holds under another
number (renumbered): the same title, and nearly the same words. Pure."""

import re
from collections import Counter
from collections.abc import Mapping

from shared.pagetext import TextLayer

# Share of their words (counted with repeats) two pages must share to be proposed as one
# drawing: a renumbered sheet differs in its number, and in little else.
PROPOSE_SIMILARITY = 0.9


def title_key(title: str | None) -> str:
    """A title as compared: case, spacing and punctuation aside."""
    return re.sub(r"[\W_]+", " ", title or "").strip().casefold()


def same_title(a: str | None, b: str | None) -> bool:
    return bool(title_key(a)) and title_key(a) == title_key(b)


def word_counts(layer: TextLayer) -> Counter[str]:
    """The words the page shows (those in its lines), case folded, with their repeats."""
    return Counter(layer.words[i].text.casefold() for line in layer.lines for i in line)


def similarity(a: Counter[str], b: Counter[str]) -> float:
    """The share of words two pages share: the words both have over the words either has."""
    union = sum((a | b).values())
    return sum((a & b).values()) / union if union else 0.0


def best_match(
    words: Counter[str], candidates: Mapping[str, Counter[str]]
) -> tuple[str, float] | None:
    """The candidate (key) whose words are nearest ``words``, with its similarity, when it
    is near enough to propose; None otherwise."""
    scored = [(similarity(words, theirs), key) for key, theirs in candidates.items()]
    if not scored:
        return None
    score, key = max(scored)
    return (key, round(score, 4)) if score >= PROPOSE_SIMILARITY else None
