"""The OCR check: an independent reading of a page's claims that works offline.

An object the extraction cut from the page's words cannot be checked against those words.
What the page *shows* can check them: a sample of the page's claims (the title block's
number and title, and objects chosen so that every font the page's claims are set in is
read, ``per_font`` lines of each, at most ``max_objects``: a broken text encoding is a
font's) is read by OCR from a sharp render of each claim's line (its first words, on a long
one), recognition only (no detection pass, one batched call a page), and compared with the
words the claim cites. Agreement confirms (basis ``ocr``). A reading that shares almost
nothing with a long enough text (a broken font encoding, a stale or pasted text layer) is
``text_layer_mismatch``. Anything between is ordinary OCR noise: ``uncertain``, never a
refutation. Only lines of the Latin script are read: the recogniser knows no other, and
a script it cannot read is no evidence against the text.
"""

import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy
import pymupdf
from rapidfuzz.distance import Indel

from shared.contracts.interfaces import Ocr
from shared.contracts.models import ObjectVerification, PageObject
from shared.pagetext import Box, TextLayer, Word, digit_runs
from shared.sheet.reading import SheetReading

# The recogniser scales each line to 48 px tall: a line is rendered that tall, no taller.
LINE_PX = 48
MAX_ZOOM = 8.0  # 576 dpi: a 5 pt line is read from 40 px
# A claim's text must carry this many letters and digits to say anything...
MIN_CHARS = 3
# ...and of a longer line, its first words up to this many are read.
READ_CHARS = 10
# Similarity (0-1, over letters and digits, look-alikes folded) at or above which the
# reading agrees with the text...
AGREE = 0.9
# ...and at or below which, for texts of at least MISMATCH_CHARS, it says something else.
MISMATCH = 0.2
MISMATCH_CHARS = 5
# A line is read where it runs along an axis; a diagonal line is left to the other checks.
_AXES = {(1.0, 0.0), (0.0, -1.0), (0.0, 1.0)}
# Shapes OCR confuses, folded before comparing (both sides alike).
_LOOKALIKES = str.maketrans({"O": "0", "Q": "0", "I": "1", "L": "1", "S": "5", "B": "8", "Z": "2"})
NUMBER_CLAIM = "sheet_number"
TITLE_CLAIM = "sheet_title"


@dataclass(frozen=True)
class Claim:
    """A line of words a claim cites, to be read from the page's render."""

    claim_id: str  # an object id, or NUMBER_CLAIM / TITLE_CLAIM
    words: tuple[Word, ...]

    @property
    def text(self) -> str:
        return " ".join(w.text for w in self.words)

    @property
    def box(self) -> Box:
        return Box.union(w.bbox for w in self.words)

    @property
    def fonts(self) -> frozenset[int | None]:
        return frozenset(w.font for w in self.words)


@dataclass(frozen=True)
class Reading:
    """What OCR read for a claim, and how it compares: agree, mismatch or noise."""

    claim: Claim
    read: str
    outcome: str  # "agree" | "mismatch" | "noise"


def _chars(text: str) -> str:
    return "".join(ch for ch in unicodedata.normalize("NFKC", text).upper() if ch.isalnum())


def _readable(words: Sequence[Word]) -> bool:
    """A line OCR can speak for: the page's own words (not OCR's), shown, along an axis, in
    the Latin script, with enough letters and digits."""
    text = _chars(" ".join(w.text for w in words))
    return (
        len(text) >= MIN_CHARS
        and text.isascii()
        and all(w.origin == "pdf" and w.hidden is None and w.dir in _AXES for w in words)
        and len({w.dir for w in words}) == 1
    )


def _line_of(ids: Sequence[int], layer: TextLayer) -> tuple[Word, ...]:
    """The cited words of the claim's longest line (one line: one crop, one reading)."""
    by_line: dict[int, list[Word]] = {}
    for i in ids:
        if 0 <= i < len(layer.words):
            by_line.setdefault(layer.line_of_word[i], []).append(layer.words[i])
    if not by_line:
        return ()
    line = max(by_line.values(), key=lambda ws: len(_chars(" ".join(w.text for w in ws))))
    return _opening(line)


def _opening(line: Sequence[Word]) -> tuple[Word, ...]:
    """The line's first words, up to ``READ_CHARS`` letters and digits: what is read of a
    long line (the recogniser's time grows with a line's length; a font's encoding shows
    in a few words as well as in many)."""
    words: list[Word] = []
    chars = 0
    for word in line:
        if chars >= READ_CHARS:
            break
        words.append(word)
        chars += len(_chars(word.text))
    return tuple(words)


def sample_claims(
    objects: Sequence[PageObject],
    layer: TextLayer,
    reading: SheetReading | None,
    max_objects: int,
    per_font: int,
) -> list[Claim]:
    """The claims worth reading on a page: its title block's number and title (from the
    page's ``reading``), then objects (one line each, readable ones only) until every font
    the readable lines are set in is read ``per_font`` times (and one object at least), at
    most ``max_objects`` objects, each font's spread over the page's order. Objects a check
    has already refuted are left as they are."""
    claims: list[Claim] = []
    for claim_id, field in (
        (NUMBER_CLAIM, reading and reading.number),
        (TITLE_CLAIM, reading and reading.title),
    ):
        ids = field.word_ids if field else []
        words = _line_of(ids, layer)
        if words and _readable(words):
            claims.append(Claim(claim_id, words))
    candidates = []
    for obj in objects:
        if obj.verification and obj.verification.verdict == "refuted":
            continue
        words = _line_of(obj.evidence, layer)
        if words and _readable(words):
            candidates.append(Claim(obj.object_id, words))
    return claims + _by_font(claims, candidates, max_objects, per_font)


def _by_font(
    read: Sequence[Claim], candidates: Sequence[Claim], max_objects: int, per_font: int
) -> list[Claim]:
    """Candidates, in page order, until each of their fonts is read ``per_font`` times
    (counting the claims ``read`` already), and one at least: a font's lines are taken
    spread over the page, and a line set in two fonts counts for both."""
    times: Counter[int | None] = Counter(font for claim in read for font in claim.fonts)
    fonts = list(dict.fromkeys(font for claim in candidates for font in claim.fonts))
    chosen: set[int] = set()
    for font in fonts:
        of_font = [i for i, claim in enumerate(candidates) if font in claim.fonts]
        wanted = per_font - times[font]
        if wanted <= 0:
            continue
        step = len(of_font) / min(wanted, len(of_font))
        for i in (of_font[int(k * step)] for k in range(min(wanted, len(of_font)))):
            if len(chosen) >= max_objects or i in chosen:
                continue
            chosen.add(i)
            times.update(candidates[i].fonts)
    if candidates and not chosen and max_objects > 0:
        # The title block read every font: one object is read still, so the page's
        # objects are not all left unjudged.
        chosen.add(len(candidates) // 2)
    return [candidates[i] for i in sorted(chosen)]


def compare(text: str, read: str) -> str:
    """``agree``, ``mismatch`` or ``noise``: how OCR's reading compares with the text."""
    cited, seen = _chars(text), _chars(read)
    folded = cited.translate(_LOOKALIKES), seen.translate(_LOOKALIKES)
    similarity = Indel.normalized_similarity(*folded)
    if similarity >= AGREE and (folded[0] == folded[1] or digit_runs(cited) == digit_runs(seen)):
        return "agree"
    if similarity <= MISMATCH and min(len(cited), len(seen)) >= MISMATCH_CHARS:
        return "mismatch"
    return "noise"


def _crop(display: pymupdf.DisplayList, claim: Claim) -> numpy.ndarray:
    """The claim's line rendered gray ``LINE_PX`` tall across it (at most ``MAX_ZOOM``),
    turned to read left to right as the recogniser reads."""
    box = claim.box
    direction = claim.words[0].dir
    across = box.height if direction == (1.0, 0.0) else box.width
    zoom = min(MAX_ZOOM, LINE_PX / max(across, 1e-3))
    clip = pymupdf.Rect(*box) & display.rect
    pixmap = display.get_pixmap(
        matrix=pymupdf.Matrix(zoom, zoom), clip=clip, colorspace=pymupdf.csGRAY, alpha=False
    )
    rows = numpy.frombuffer(pixmap.samples_mv, numpy.uint8).reshape(pixmap.height, pixmap.stride)
    pixels = rows[:, : pixmap.width]
    # Upwards (0, -1) is turned a quarter clockwise to read left to right; downwards back.
    turns = {(1.0, 0.0): 0, (0.0, -1.0): -1, (0.0, 1.0): 1}[direction]
    # A copy: the pixmap's samples go with it.
    return numpy.rot90(pixels, turns).copy()


def render_claims(display: pymupdf.DisplayList, claims: Sequence[Claim]) -> list[numpy.ndarray]:
    """Each claim's line rendered from ``display``, the page's display list (the caller
    holds ``PDF_LOCK``)."""
    return [_crop(display, claim) for claim in claims]


def read_claims(
    engine: Ocr, claims: Sequence[Claim], crops: Sequence[numpy.ndarray]
) -> list[Reading]:
    """The claims' lines read from their crops in one batched call, recognition only (each
    line's place and direction are known), each compared with the words it cites."""
    read = engine.read_crops(list(crops))
    return [
        Reading(claim, text, compare(claim.text, text))
        for claim, (text, _) in zip(claims, read, strict=True)
    ]


def apply_readings(
    objects: Sequence[PageObject], readings: Sequence[Reading]
) -> tuple[list[tuple[str, str]], bool]:
    """Set each read object's verification from its reading, and return the page-level
    problems (the title block's lines) and whether a page-level claim was confirmed.

    A mismatch refutes (``text_layer_mismatch``, basis ``ocr``) whatever the text check
    said: the text layer it trusted is not what the page shows. Agreement confirms an
    object nothing independent judged; noise leaves it ``uncertain``, saying what was read.
    A verdict another check gave stands otherwise."""
    by_id = {o.object_id: o for o in objects}
    fonts = {font for r in readings for font in r.claim.fonts}
    sample = (
        f"the check read {len(readings)} line(s) of the page (a long line's first words), "
        f"in {len(fonts)} font(s)"
    )
    problems: list[tuple[str, str]] = []
    identity_confirmed = False
    for r in readings:
        claim = r.claim
        said = f'the text layer says "{claim.text}" but OCR of the sheet reads "{r.read}"'
        obj = by_id.get(claim.claim_id)
        if obj is None:  # the title block's number or title
            if r.outcome == "mismatch":
                field = "number" if claim.claim_id == NUMBER_CLAIM else "title"
                problems.append(
                    ("text_layer_mismatch", f"The title block's sheet {field}: {said}.")
                )
            identity_confirmed |= r.outcome == "agree" and claim.claim_id == NUMBER_CLAIM
            continue
        current = obj.verification or ObjectVerification(verdict="not_judged")
        if r.outcome == "mismatch":
            obj.verification = ObjectVerification(
                verdict="refuted",
                basis="ocr",
                kind="text_layer_mismatch",
                evidence_bbox=claim.box,
                problem=f"Object {obj.object_id}: {said}.",
            )
        elif current.verdict == "not_judged":
            verdict = "confirmed" if r.outcome == "agree" else "uncertain"
            obj.verification = ObjectVerification(
                verdict=verdict,
                basis="ocr",
                evidence_bbox=current.evidence_bbox or claim.box,
                reason=f"OCR of the sheet reads it alike ({sample})"
                if verdict == "confirmed"
                else f"OCR of the sheet reads {r.read!r} ({sample})",
            )
    return problems, identity_confirmed
