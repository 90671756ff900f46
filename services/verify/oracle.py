"""The text oracle: every claim checked against the page's own words.

A claim's ``source_text`` is located among windows of consecutive page words
(reading order, so a note wrapped over two lines is still consecutive; then
visual lines, so a schedule row drawn cell by cell is too). Letters decide
*where* the claim is; digit-runs then decide whether it was read right — the
"(2) 2X6 STUD PACK" the sheet prints as "(5) 2X6 STUD PACK" case.
"""

import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from rapidfuzz.distance import Indel

from shared.models import BBox, CoveredPage, ObjectVerification, PageObject, Word

# Letters-only similarity at or above which a window is the claim's place on the page.
LETTER_MATCH = 0.85
# Below this many letters a claim (a tag, a dimension) is too short to locate
# fuzzily: it must appear exactly, or the page does not carry it.
MIN_FUZZY_LETTERS = 4
# Best-supported candidate places scored per claim.
MAX_DIAGONALS = 8

_NON_ALNUM = re.compile(r"[^0-9a-z]")
_DIGIT_RUN = re.compile(r"\d+")
_SEPARATORS = re.compile(r"[\s\-_]")


def _norm(token: str) -> str:
    return _NON_ALNUM.sub("", token.lower())


def _shape(token: str) -> str:
    return _DIGIT_RUN.sub("#", token)


def _letters(tokens: Sequence[str]) -> str:
    return "".join(ch for t in tokens for ch in t if ch.isalpha())


def digit_runs(text: str) -> list[str]:
    """The runs of digits in a text, in order: what a misread changes."""
    return _DIGIT_RUN.findall(text)


@dataclass(frozen=True)
class EvidenceMatch:
    """Where a claim sits on the page, and how well the page's words agree with it."""

    text: str  # the page's words at that place, joined by spaces
    bbox: BBox  # union of the matched words' boxes, PDF points
    score: float  # letters-only similarity, 0..1
    digits_agree: bool
    start: int  # index of the first matched word in the page's words
    end: int  # one past the last matched word


class WordIndex:
    """The page's words in one order, indexed by normalized token."""

    def __init__(self, words: Sequence[Word], order: Sequence[int]):
        self.words = [words[i] for i in order]
        self.original = list(order)  # position in self.words -> index in the page's words
        self.tokens: list[str] = []  # normalized, non-empty tokens only
        self.word_at: list[int] = []  # token position -> position in self.words
        self.exact: dict[str, list[int]] = defaultdict(list)
        self.shaped: dict[str, list[int]] = defaultdict(list)
        for i, word in enumerate(self.words):
            token = _norm(word.text)
            if not token:
                continue
            pos = len(self.tokens)
            self.tokens.append(token)
            self.word_at.append(i)
            self.exact[token].append(pos)
            self.shaped[_shape(token)].append(pos)

    def positions(self, token: str) -> list[int]:
        return self.exact.get(token) or self.shaped.get(_shape(token)) or []


class PageIndex:
    """A page's words indexed once, to check many claims against them.

    Two orders are searched: the text layer's own (reading order, where a wrapped
    note is consecutive) and visual lines left to right (where a schedule row
    whose cells are separate text blocks is consecutive). Candidate windows come
    from where the claim's tokens occur, so a page of thousands of words is not
    slid over for each of hundreds of claims.
    """

    def __init__(self, words: Sequence[Word]):
        self.words = list(words)
        reading = range(len(self.words))
        lines = _visual_order(self.words)
        self.orders = [WordIndex(self.words, reading)]
        if lines != list(reading):
            self.orders.append(WordIndex(self.words, lines))


def _visual_order(words: Sequence[Word]) -> list[int]:
    """Word indices line by line (words sharing most of their height), each line left to right."""
    lines: list[list[int]] = []
    line_box: tuple[float, float] | None = None
    for i in sorted(range(len(words)), key=lambda i: (words[i].bbox[1] + words[i].bbox[3]) / 2):
        y0, y1 = words[i].bbox[1], words[i].bbox[3]
        if line_box and min(y1, line_box[1]) - max(y0, line_box[0]) >= 0.5 * min(
            y1 - y0, line_box[1] - line_box[0]
        ):
            lines[-1].append(i)
            continue
        lines.append([i])
        line_box = (y0, y1)
    return [i for line in lines for i in sorted(line, key=lambda i: words[i].bbox[0])]


def index_words(words: Sequence[Word]) -> PageIndex:
    """Index a page's words once, to check many claims against them."""
    return PageIndex(words)


def _candidate_spans(index: WordIndex, claim: list[str]) -> set[tuple[int, int]]:
    n = len(claim)
    # Each claim token found at page position p votes for the window starting at
    # p - i (its diagonal); only the best-supported diagonals are scored.
    votes: Counter[int] = Counter()
    for i, token in enumerate(claim):
        for p in index.positions(token):
            votes[p - i] += 1
    if not votes:
        return set()
    top = votes.most_common(1)[0][1]
    starts = [s for s, v in votes.most_common(MAX_DIAGONALS) if v * 2 >= top]
    # Vision may drop or add a word or two; long notes get a little more room.
    slack = max(2, min(n // 5, 6))
    total = len(index.tokens)
    spans: set[tuple[int, int]] = set()
    for start in starts:
        for a in range(start - 1, start + 2):
            for length in range(max(1, n - slack), n + slack + 1):
                lo, hi = max(0, a), min(total, a + length)
                if lo < hi:
                    spans.add((lo, hi))
    return spans


@dataclass(frozen=True)
class _Claim:
    tokens: list[str]
    full: str
    letters: str
    digits: list[str]
    exact_only: bool


_Window = tuple[tuple[float, float], int, int, float]  # (score key, start, end, letter similarity)


def _best_window(index: WordIndex, claim: _Claim) -> _Window | None:
    claim_shape = _shape(claim.full)
    best: _Window | None = None
    for a, b in _candidate_spans(index, claim.tokens):
        window = index.tokens[a:b]
        full = " ".join(window)
        if claim.exact_only:
            if full != claim.full:
                continue
            key, letter_sim = (1.0, 1.0), 1.0
        else:
            letter_sim = Indel.normalized_similarity(
                _letters(window), claim.letters, score_cutoff=LETTER_MATCH
            )
            if letter_sim < LETTER_MATCH:
                continue
            # Shape (digit-runs masked) picks the window laid out like the claim,
            # so "(5) 2X6 STUD PACK" beats "2X6 STUD PACK" for "(2) 2X6 STUD PACK";
            # the exact text breaks ties in favour of a correct reading.
            key = (
                Indel.normalized_similarity(_shape(full), claim_shape),
                Indel.normalized_similarity(full, claim.full),
            )
        if best is None or (key, -a) > (best[0], -best[1]):
            best = (key, a, b, letter_sim)
    return best


def find_evidence_bbox(source_text: str, words: Sequence[Word] | PageIndex) -> EvidenceMatch | None:
    """Best fuzzy place of ``source_text`` among windows of consecutive page words.

    Tolerant of case, punctuation and line breaks. Returns None when no window
    matches the claim's letters (or, for a claim with almost no letters, when it
    does not appear exactly). Pass a :class:`PageIndex` to check many claims.
    """
    page = words if isinstance(words, PageIndex) else PageIndex(words)
    tokens = [t for t in (_norm(w) for w in source_text.split()) if t]
    if not tokens:
        return None
    full = " ".join(tokens)
    letters = _letters(tokens)
    claim = _Claim(tokens, full, letters, digit_runs(full), len(letters) < MIN_FUZZY_LETTERS)

    found = []
    for index in page.orders:
        if (best := _best_window(index, claim)) is not None:
            found.append((best, index))
            if best[0] == (1.0, 1.0):
                break  # printed exactly as claimed: no other order can do better
    if not found:
        return None
    (_, a, b, letter_sim), index = max(found, key=lambda f: f[0][0])
    first, last = index.word_at[a], index.word_at[b - 1]
    matched = index.words[first : last + 1]
    original = index.original[first : last + 1]
    return EvidenceMatch(
        text=" ".join(w.text for w in matched),
        bbox=(
            min(w.bbox[0] for w in matched),
            min(w.bbox[1] for w in matched),
            max(w.bbox[2] for w in matched),
            max(w.bbox[3] for w in matched),
        ),
        score=round(letter_sim, 4),
        digits_agree=digit_runs(" ".join(index.tokens[a:b])) == claim.digits,
        start=min(original),
        end=max(original) + 1,
    )


def page_reading(reading: str, index: PageIndex | None) -> str | None:
    """The page's own words for ``reading`` (someone's claim of what the sheet says) when
    the text layer carries it with the same numbers; None when it does not, or when there is
    no text layer (``index`` None) to check it against."""
    if index is None or not reading.strip():
        return None
    match = find_evidence_bbox(reading, index)
    return match.text if match is not None and match.digits_agree else None


def check_object(obj: PageObject, words: Sequence[Word] | PageIndex) -> ObjectVerification:
    """The oracle's verdict on one object against the page's words.

    Confirmed when its ``source_text`` is on the page with the same numbers;
    refuted ``content_wrong`` (citing the page's words) when the letters match
    but a number differs; refuted ``unsupported`` when the page does not carry
    it; ``not_judged`` for a graphical claim with no ``source_text``.
    """
    if not (obj.source_text and obj.source_text.strip()):
        return ObjectVerification(verdict="not_judged")
    return verdict_from_match(obj, find_evidence_bbox(obj.source_text, words))


def verdict_from_match(obj: PageObject, match: EvidenceMatch | None) -> ObjectVerification:
    """The oracle's verdict on an object with a ``source_text``, given where it was found."""
    claim = (obj.source_text or "").strip()
    if match is None:
        return ObjectVerification(
            verdict="refuted",
            kind="unsupported",
            problem=(
                f'Object {obj.object_id} claims "{claim}", which the page\'s text does not carry.'
            ),
        )
    if match.digits_agree:
        return ObjectVerification(verdict="confirmed", evidence_bbox=match.bbox)
    return ObjectVerification(
        verdict="refuted",
        kind="content_wrong",
        actual_text=match.text,
        evidence_bbox=match.bbox,
        problem=f'Object {obj.object_id} reads "{claim}" but the sheet says "{match.text}".',
    )


def _sheet_key(sheet_number: str) -> str:
    return _SEPARATORS.sub("", sheet_number).upper()


def check_identity(extracted_sheet_number: str | None, title_block_value: str | None) -> str | None:
    """A problem sentence when the extracted sheet number disagrees with the title block.

    "A-101" and "A101" are the same sheet; nothing to compare → no problem.
    """
    if not extracted_sheet_number or not title_block_value:
        return None
    if _sheet_key(extracted_sheet_number) == _sheet_key(title_block_value):
        return None
    return (
        f'The page was extracted as sheet "{extracted_sheet_number}" '
        f'but its title block says "{title_block_value}".'
    )


def check_content(covered: CoveredPage) -> str | None:
    """A ``content_missing`` sentence when the objects cover too little of the text layer
    (a page with no objects at all is weighed by ``blank.page_emptiness``)."""
    if covered.has_text_layer and covered.below_floor:
        c = covered.coverage
        return (
            f"Only {c.covered_lines} of {c.total_lines} text lines on the page "
            f"({c.ratio:.0%}) are represented by extracted objects, "
            f"below the {covered.floor:.0%} floor."
        )
    return None
