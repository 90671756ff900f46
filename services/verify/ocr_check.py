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
from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass, field

import numpy
import pymupdf
from rapidfuzz.distance import Indel

from services.verify.tolerances import OcrCheckTolerances
from shared.contracts.interfaces import Ocr
from shared.contracts.models import FontCheck, ObjectVerification, PageObject
from shared.pagetext import Box, TextLayer, Word, digit_runs
from shared.sheet.reading import SheetReading

TOLERANCES = OcrCheckTolerances()
# A line is read where it runs along an axis; a diagonal line is left to the other checks.
_AXES = {(1.0, 0.0), (0.0, -1.0), (0.0, 1.0)}
# Shapes OCR confuses, folded before comparing (both sides alike).
_LOOKALIKES = str.maketrans({"O": "0", "Q": "0", "I": "1", "L": "1", "S": "5", "B": "8", "Z": "2"})
NUMBER_CLAIM = "sheet_number"
TITLE_CLAIM = "sheet_title"


def font_key(layer: TextLayer, index: int | None) -> int:
    """A font object of the page as the check counts it: its xref in the document where the
    text layer names one, else a negative number of its own on this page (-1: none known)."""
    if index is None:
        return -1
    xrefs = layer.font_xrefs
    xref = xrefs[index] if index < len(xrefs) else None
    return xref if xref is not None else -2 - index


@dataclass(frozen=True)
class Claim:
    """A line of words a claim cites, to be read from the page's render, and the font
    objects it is set in (``font_key``)."""

    claim_id: str  # an object id, or NUMBER_CLAIM / TITLE_CLAIM
    words: tuple[Word, ...]
    fonts: frozenset[int]

    @classmethod
    def of(cls, claim_id: str, words: tuple[Word, ...], layer: TextLayer) -> "Claim":
        return cls(claim_id, words, frozenset(font_key(layer, w.font) for w in words))

    @property
    def text(self) -> str:
        return " ".join(w.text for w in self.words)

    @property
    def box(self) -> Box:
        return Box.union(w.bbox for w in self.words)


@dataclass(frozen=True)
class Candidates:
    """What a page offers the check: its title block's number and title (always read), and
    its objects' lines, in page order."""

    title: list[Claim]
    objects: list[Claim]

    @property
    def fonts(self) -> set[int]:
        """The font objects (xrefs) the readable lines are set in, where known."""
        return {f for claim in (*self.title, *self.objects) for f in claim.fonts if f >= 0}


@dataclass
class Sample:
    """The lines to read, and the objects that cite a reading of their font made already."""

    read: list[Claim]
    cited: list[tuple[Claim, FontCheck]] = field(default_factory=list)


@dataclass(frozen=True)
class Reading:
    """What OCR read for a claim, and how it compares: agree, mismatch or noise."""

    claim: Claim
    read: str
    outcome: str  # "agree" | "mismatch" | "noise"


def _chars(text: str) -> str:
    return "".join(ch for ch in unicodedata.normalize("NFKC", text).upper() if ch.isalnum())


def _readable(words: Sequence[Word], tolerances: OcrCheckTolerances) -> bool:
    """A line OCR can speak for: the page's own words (not OCR's), shown, along an axis, in
    the Latin script, with enough letters and digits."""
    text = _chars(" ".join(w.text for w in words))
    return (
        len(text) >= tolerances.min_chars
        and text.isascii()
        and all(w.origin == "pdf" and w.hidden is None and w.dir in _AXES for w in words)
        and len({w.dir for w in words}) == 1
    )


def _line_of(
    ids: Sequence[int], layer: TextLayer, tolerances: OcrCheckTolerances
) -> tuple[Word, ...]:
    """The cited words of the claim's longest line (one line: one crop, one reading)."""
    by_line: dict[int, list[Word]] = {}
    for i in ids:
        if 0 <= i < len(layer.words):
            by_line.setdefault(layer.line_of_word[i], []).append(layer.words[i])
    if not by_line:
        return ()
    line = max(by_line.values(), key=lambda ws: len(_chars(" ".join(w.text for w in ws))))
    return _opening(line, tolerances.read_chars)


def _opening(line: Sequence[Word], read_chars: int) -> tuple[Word, ...]:
    """The line's first words, up to ``read_chars`` letters and digits: what is read of a
    long line (the recogniser's time grows with a line's length; a font's encoding shows
    in a few words as well as in many)."""
    words: list[Word] = []
    chars = 0
    for word in line:
        if chars >= read_chars:
            break
        words.append(word)
        chars += len(_chars(word.text))
    return tuple(words)


def candidates(
    objects: Sequence[PageObject],
    layer: TextLayer,
    reading: SheetReading | None,
    tolerances: OcrCheckTolerances = TOLERANCES,
) -> Candidates:
    """The page's readable lines: its title block's number and title (from the page's
    ``reading``), and one line of each object a check has not refuted."""
    title: list[Claim] = []
    for claim_id, field_ in (
        (NUMBER_CLAIM, reading and reading.number),
        (TITLE_CLAIM, reading and reading.title),
    ):
        ids = field_.word_ids if field_ else []
        words = _line_of(ids, layer, tolerances)
        if words and _readable(words, tolerances):
            title.append(Claim.of(claim_id, words, layer))
    lines = []
    for obj in objects:
        if obj.verification and obj.verification.verdict == "refuted":
            continue
        words = _line_of(obj.evidence, layer, tolerances)
        if words and _readable(words, tolerances):
            lines.append(Claim.of(obj.object_id, words, layer))
    return Candidates(title, lines)


def choose(
    lines: Sequence[Claim],
    read: Sequence[Claim],
    max_objects: int,
    per_font: int,
    *,
    checked: Mapping[int, FontCheck] | None = None,
    skip: Set[int] = frozenset(),
    at_least_one: bool = True,
) -> Sample:
    """Object lines, in page order, to check until each of their fonts is checked
    ``per_font`` times (counting the claims ``read`` already; a font's lines spread over the
    page, a line set in two fonts counting for both), at most ``max_objects``. The sample does
    not depend on what other pages have read: a chosen line set only in fonts ``checked`` on
    another page is cited with that reading instead of being read again, so a page's verdicts
    are the same whichever of the job's pages read a font first. Fonts to ``skip`` (another
    page is reading them) are left alone. With ``at_least_one``, one object is read when
    nothing else would be (the title block read every font), so the page's objects are not
    all left unjudged."""
    checked = checked or {}
    times: Counter[int] = Counter(font for claim in read for font in claim.fonts)
    fonts = list(dict.fromkeys(font for claim in lines for font in claim.fonts))
    chosen: set[int] = set()
    for font in fonts:
        if font in skip:
            continue
        of_font = [i for i, claim in enumerate(lines) if font in claim.fonts]
        wanted = per_font - times[font]
        if wanted <= 0:
            continue
        step = len(of_font) / min(wanted, len(of_font))
        for i in (of_font[int(k * step)] for k in range(min(wanted, len(of_font)))):
            if len(chosen) >= max_objects or i in chosen:
                continue
            chosen.add(i)
            times.update(lines[i].fonts)
    cited = {
        i: checked[min(lines[i].fonts)]
        for i in chosen
        if lines[i].fonts and lines[i].fonts <= checked.keys()
    }
    idle = not (chosen or skip & set(fonts))
    if at_least_one and lines and idle and max_objects > 0:
        chosen.add(len(lines) // 2)
    return Sample(
        read=[lines[i] for i in sorted(chosen) if i not in cited],
        cited=[(lines[i], cited[i]) for i in sorted(cited)],
    )


def compare(text: str, read: str, tolerances: OcrCheckTolerances = TOLERANCES) -> str:
    """``agree``, ``mismatch`` or ``noise``: how OCR's reading compares with the text."""
    cited, seen = _chars(text), _chars(read)
    folded = cited.translate(_LOOKALIKES), seen.translate(_LOOKALIKES)
    similarity = Indel.normalized_similarity(*folded)
    if similarity >= tolerances.agree and (
        folded[0] == folded[1] or digit_runs(cited) == digit_runs(seen)
    ):
        return "agree"
    if (
        similarity <= tolerances.mismatch
        and min(len(cited), len(seen)) >= tolerances.mismatch_chars
    ):
        return "mismatch"
    return "noise"


def _crop(
    display: pymupdf.DisplayList, claim: Claim, tolerances: OcrCheckTolerances
) -> numpy.ndarray:
    """The claim's line rendered gray ``line_px`` tall across it (at most ``max_zoom``),
    turned to read left to right as the recogniser reads."""
    box = claim.box
    direction = claim.words[0].dir
    across = box.height if direction == (1.0, 0.0) else box.width
    zoom = min(tolerances.max_zoom, tolerances.line_px / max(across, 1e-3))
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


def render_claims(
    display: pymupdf.DisplayList,
    claims: Sequence[Claim],
    tolerances: OcrCheckTolerances = TOLERANCES,
) -> list[numpy.ndarray]:
    """Each claim's line rendered from ``display``, the page's display list (the caller
    holds ``PDF_LOCK``)."""
    return [_crop(display, claim, tolerances) for claim in claims]


def read_claims(
    engine: Ocr,
    claims: Sequence[Claim],
    crops: Sequence[numpy.ndarray],
    tolerances: OcrCheckTolerances = TOLERANCES,
) -> list[Reading]:
    """The claims' lines read from their crops in one batched call, recognition only (each
    line's place and direction are known), each compared with the words it cites."""
    read = engine.read_crops(list(crops))
    return [
        Reading(claim, text, compare(claim.text, text, tolerances))
        for claim, (text, _) in zip(claims, read, strict=True)
    ]


def reading_verdicts(
    objects: Sequence[PageObject], readings: Sequence[Reading]
) -> tuple[dict[str, ObjectVerification], list[tuple[str, str]], bool]:
    """Each read object's verdict from its reading, the page-level problems (the title
    block's lines) and whether a page-level claim was confirmed.

    A mismatch refutes (``text_layer_mismatch``, basis ``ocr``): the text layer other checks
    trust is not what the page shows. Agreement confirms; noise is ``uncertain``, saying
    what was read (``services.verify.checks.registry`` says which verdict stands)."""
    by_id = {o.object_id: o for o in objects}
    fonts = {font for r in readings for font in r.claim.fonts}
    sample = (
        f"the check read {len(readings)} line(s) of the page (a long line's first words), "
        f"in {len(fonts)} font(s)"
    )
    verdicts: dict[str, ObjectVerification] = {}
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
        if r.outcome == "mismatch":
            verdicts[obj.object_id] = ObjectVerification(
                verdict="refuted",
                basis="ocr",
                kind="text_layer_mismatch",
                evidence_bbox=claim.box,
                problem=f"Object {obj.object_id}: {said}.",
            )
            continue
        located = obj.verification.evidence_bbox if obj.verification else None
        agree = r.outcome == "agree"
        verdicts[obj.object_id] = ObjectVerification(
            verdict="confirmed" if agree else "uncertain",
            basis="ocr",
            evidence_bbox=located or claim.box,
            reason=f"OCR of the sheet reads it alike ({sample})"
            if agree
            else f"OCR of the sheet reads {r.read!r} ({sample})",
        )
    return verdicts, problems, identity_confirmed


def cited_verdicts(
    objects: Sequence[PageObject], cited: Sequence[tuple[Claim, FontCheck]]
) -> dict[str, ObjectVerification]:
    """Each cited object confirmed (basis ``ocr``) on the reading of its font it cites."""
    by_id = {o.object_id: o for o in objects}
    verdicts = {}
    for claim, check in cited:
        obj = by_id[claim.claim_id]
        located = obj.verification.evidence_bbox if obj.verification else None
        verdicts[obj.object_id] = ObjectVerification(
            verdict="confirmed",
            basis="ocr",
            evidence_bbox=located or claim.box,
            reason=f"its font ({check.font}, object {check.xref}) was read alike by OCR on "
            f'page {check.page}: "{check.line}"',
            font_check=check,
        )
    return verdicts


def agreed_fonts(readings: Sequence[Reading], layer: TextLayer, page: int) -> dict[int, FontCheck]:
    """The font objects (known xrefs) of the lines read alike, each with the first such
    line: what later pages of the job may cite."""
    names = {xref: layer.fonts[i] for i, xref in enumerate(layer.font_xrefs) if xref is not None}
    agreed: dict[int, FontCheck] = {}
    for r in readings:
        if r.outcome != "agree":
            continue
        for xref in r.claim.fonts:
            if xref >= 0 and xref not in agreed:
                agreed[xref] = FontCheck(
                    xref=xref, font=names.get(xref, ""), page=page, line=r.claim.text
                )
    return agreed
