"""Where a claim sits among the page's words: alignment of a text (a model's ``source_text``, a
judge's reading) to the words of the page-text model that carry it.

Extract's grounding guard aligns model-made objects to their evidence words; verify aligns a
judge's reading before it may become an object's ``actual_text``. Objects the extractor builds
from words cite them by construction and are never aligned.

A claim is searched for in three orders of the same words: the text layer's own (where a
note written as one text object is consecutive), the model's reading order (lines within
blocks) and visual rows (where a schedule row drawn cell by cell is consecutive). Letters
decide *where* the claim is; digit-runs then say whether it was read right — the
"(2) 2X6 STUD PACK" the sheet prints as "(5) 2X6 STUD PACK" case.
"""

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from rapidfuzz.distance import Indel

from shared.pagetext.geometry import Box
from shared.pagetext.model import TextLayer
from shared.pagetext.normalize import digit_runs, mask_digits, squash
from shared.pagetext.tolerances import EVIDENCE, EvidenceTolerances


def _letters(tokens: Sequence[str]) -> str:
    return "".join(ch for t in tokens for ch in t if ch.isalpha())


@dataclass(frozen=True)
class Alignment:
    """Where a claim sits on the page, and how well the page's words agree with it."""

    ids: list[int]  # the page's words at that place (TextLayer word ids), in reading order
    text: str  # those words, joined by spaces
    bbox: Box  # union of their boxes
    score: float  # letters-only similarity, 0..1
    digits_agree: bool  # the claim's digit-runs are the words' digit-runs, in order


class _Order:
    """The page's words in one order, indexed by squashed token."""

    def __init__(self, squashed: Sequence[str], order: Sequence[int]):
        self.ids: list[int] = []  # token position -> word id
        self.tokens: list[str] = []
        self.exact: dict[str, list[int]] = defaultdict(list)
        self.shaped: dict[str, list[int]] = defaultdict(list)
        for word_id in order:
            token = squashed[word_id]
            if not token:
                continue
            pos = len(self.tokens)
            self.ids.append(word_id)
            self.tokens.append(token)
            self.exact[token].append(pos)
            self.shaped[mask_digits(token)].append(pos)

    def positions(self, token: str) -> list[int]:
        return self.exact.get(token) or self.shaped.get(mask_digits(token)) or []


class PageWords:
    """A page's words indexed once, to align many claims against them."""

    def __init__(self, layer: TextLayer):
        self.layer = layer

    @cached_property
    def orders(self) -> list[_Order]:
        layer = self.layer
        own = [w.id for w in layer.words if w.hidden is None]
        reading = [w for line in layer.lines for w in line]
        rows = sorted(
            range(len(layer.lines)),
            key=lambda i: (round(layer.words[layer.lines[i][0]].bbox.y0), _left(layer, i)),
        )
        visual = [w for i in rows for w in layer.lines[i]]
        squashed = [squash(w.text) for w in layer.words]
        orders, seen = [], []
        for order in (own, reading, visual):
            if order not in seen:
                seen.append(order)
                orders.append(_Order(squashed, order))
        return orders


def _left(layer: TextLayer, line: int) -> float:
    return layer.words[layer.lines[line][0]].bbox.x0


@dataclass(frozen=True)
class _Claim:
    tokens: list[str]
    full: str
    letters: str
    digits: list[str]
    exact_only: bool


_Window = tuple[tuple[float, float], int, int, float]  # (score key, start, end, letter sim)


def _diagonals(order: _Order, claim: list[str], most: int) -> list[int]:
    """Where the claim may start: each claim token found at position p votes for the window
    starting at p - i (its diagonal); the best-supported diagonals, best first."""
    votes: Counter[int] = Counter()
    for i, token in enumerate(claim):
        for p in order.positions(token):
            votes[p - i] += 1
    if not votes:
        return []
    top = votes.most_common(1)[0][1]
    return [s for s, v in votes.most_common(most) if v * 2 >= top]


def _candidate_spans(order: _Order, claim: list[str], starts: list[int]) -> set[tuple[int, int]]:
    n = len(claim)
    # A model may drop or add a word or two; long notes get a little more room.
    slack = max(2, min(n // 5, 6))
    total = len(order.tokens)
    spans: set[tuple[int, int]] = set()
    for start in starts:
        for a in range(start - 1, start + 2):
            for length in range(max(1, n - slack), n + slack + 1):
                lo, hi = max(0, a), min(total, a + length)
                if lo < hi:
                    spans.add((lo, hi))
    return spans


def _best_window(order: _Order, claim: _Claim, tolerances: EvidenceTolerances) -> _Window | None:
    starts = _diagonals(order, claim.tokens, tolerances.max_diagonals)
    letter_match = tolerances.letter_match
    n = len(claim.tokens)
    # A claim printed word for word (most are) needs no fuzzy scoring: the first such place.
    exact = [a for a in starts if order.tokens[max(0, a) : a + n] == claim.tokens]
    if exact:
        a = min(exact)
        return ((1.0, 1.0), a, a + n, 1.0)
    claim_shape = mask_digits(claim.full)
    best: _Window | None = None
    for a, b in _candidate_spans(order, claim.tokens, starts):
        window = order.tokens[a:b]
        full = " ".join(window)
        if claim.exact_only:
            if full != claim.full:
                continue
            key, letter_sim = (1.0, 1.0), 1.0
        else:
            letter_sim = Indel.normalized_similarity(
                _letters(window), claim.letters, score_cutoff=letter_match
            )
            if letter_sim < letter_match:
                continue
            # Shape (digit-runs masked) picks the window laid out like the claim, so
            # "(5) 2X6 STUD PACK" beats "2X6 STUD PACK" for "(2) 2X6 STUD PACK"; the exact
            # text breaks ties in favour of a correct reading.
            key = (
                Indel.normalized_similarity(mask_digits(full), claim_shape),
                Indel.normalized_similarity(full, claim.full),
            )
        if best is None or (key, -a) > (best[0], -best[1]):
            best = (key, a, b, letter_sim)
    return best


def claim_tokens(text: str) -> list[str]:
    """A text's squashed words, as claims and page words are compared."""
    return [t for t in (squash(w) for w in text.split()) if t]


def align(
    text: str, page: PageWords, tolerances: EvidenceTolerances = EVIDENCE
) -> Alignment | None:
    """The best place of ``text`` among windows of consecutive page words, or None.

    Tolerant of case, punctuation and line breaks. None when no window matches the claim's
    letters (or, for a claim with almost no letters, when it does not appear exactly).
    """
    tokens = claim_tokens(text)
    if not tokens:
        return None
    full = " ".join(tokens)
    letters = _letters(tokens)
    exact_only = len(letters) < tolerances.min_fuzzy_letters
    claim = _Claim(tokens, full, letters, digit_runs(full), exact_only)
    found = []
    for order in page.orders:
        if (best := _best_window(order, claim, tolerances)) is not None:
            found.append((best, order))
            if best[0] == (1.0, 1.0):
                break  # printed exactly as claimed: no other order can do better
    if not found:
        return None
    (_, a, b, letter_sim), order = max(found, key=lambda f: f[0][0])
    ids = order.ids[a:b]
    words = page.layer.words
    return Alignment(
        ids=ids,
        text=" ".join(words[i].text for i in ids),
        bbox=Box.union(words[i].bbox for i in ids),
        score=round(letter_sim, 4),
        digits_agree=digit_runs(" ".join(order.tokens[a:b])) == claim.digits,
    )


def page_reading(reading: str, page: PageWords | None) -> str | None:
    """The page's own words for ``reading`` (someone's claim of what the sheet says) when the
    text layer carries it with the same numbers; None when it does not, or when there is no
    text layer (``page`` None) to check it against."""
    if page is None or not reading.strip():
        return None
    match = align(reading, page)
    return match.text if match is not None and match.digits_agree else None
