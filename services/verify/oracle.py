"""The text oracle: every claim checked against the page words it cites.

An object's ``evidence`` names the words it came from: by construction for objects the
extractor built from words, by alignment in extract's grounding guard for a model's claims.
The oracle does not search the page again; it reads the cited words and asks whether they
say what the object says: its ``source_text`` (letters locate, digit-runs decide — "(2) 2X6
STUD PACK" where the words read "(5) 2X6 STUD PACK" is ``content_wrong``), and every number in
its values (a verbatim ``source_text`` with ``count: 2`` where the words read "(5)" is
``content_wrong`` too). Words read by OCR can be misread themselves: a claim they alone
support is ``uncertain``, never confirmed.
"""

from collections.abc import Sequence

from rapidfuzz.distance import Indel

from shared.contracts.models import CoveredPage, ObjectVerification, PageObject
from shared.pagetext import (
    Box,
    Word,
    claim_tokens,
    digit_runs,
    normalize,
    number_key,
    plain_numbers,
)
from shared.pagetext.tolerances import EVIDENCE
from shared.sheet import sheet_key

OCR_ONLY = "supported only by words read from the page image by OCR, which can misread too"


def _letters(text: str) -> str:
    return "".join(ch for ch in normalize(text) if ch.isalpha())


def _says_claim(claim: str, evidence: str) -> bool:
    """Whether the evidence words are the claim's place: the same words (case and
    punctuation aside), or, for a claim long enough to compare fuzzily, the same letters."""
    if claim_tokens(claim) == claim_tokens(evidence):
        return True
    letters = _letters(claim)
    if len(letters) < EVIDENCE.min_fuzzy_letters:
        return False
    return Indel.normalized_similarity(letters, _letters(evidence)) >= EVIDENCE.letter_match


def _numbers(text: str) -> list[tuple[str, ...]]:
    """The digit-runs of each token that has any, as numbers (so "02" is "2")."""
    tokens = normalize(text).split()
    return [tuple(map(number_key, runs)) for t in tokens if (runs := digit_runs(t))]


def _digits_agree(claim: str, evidence: str) -> bool:
    """The claim prints the evidence's digit-runs, in order: as printed, or with both sides'
    numbers spelled plainly ("1200" is the "1,200" of the sheet)."""
    if digit_runs(normalize(claim)) == digit_runs(normalize(evidence)):
        return True
    plain = [list(map(number_key, digit_runs(plain_numbers(t)))) for t in (claim, evidence)]
    return plain[0] == plain[1]


def _uncarried_value(obj: PageObject, evidence: str) -> tuple[str, bool] | None:
    """A value of the object holding a number its evidence words do not print as a token
    ("2" is not carried by "2X6"; 1200 is carried by "1,200" and 3.5 by "3.50"), and whether
    the words print a number of the same shape in its place (a swap: "3" where they print
    "(5)"); None when every value is carried."""
    carried = set(_numbers(evidence)) | set(_numbers(plain_numbers(evidence)))
    shapes = {tuple(map(len, runs)) for runs in carried}
    for token in normalize(plain_numbers(obj.value_text())).split():
        runs = digit_runs(token)
        if runs and tuple(map(number_key, runs)) not in carried:
            return token, tuple(map(len, map(number_key, runs))) in shapes
    return None


def locate(obj: PageObject, words: Sequence[Word]) -> Box | None:
    """Where the words a claim cites sit, when it has a claim and they are all on the page
    and shown; None otherwise."""
    if not (obj.source_text or "").strip():
        return None
    cited = [words[i] for i in obj.evidence if 0 <= i < len(words)]
    if not cited or len(cited) != len(obj.evidence) or any(w.hidden for w in cited):
        return None
    return Box.union(w.bbox for w in cited)


def check_object(obj: PageObject, words: Sequence[Word]) -> ObjectVerification:
    """The oracle's verdict on one object against the page words it cites.

    ``not_judged`` for a graphical claim (no ``source_text``); ``refuted unsupported`` when it
    cites no words (the page's text does not carry it), words the page does not show, or
    words that do not say it; ``refuted content_wrong`` (citing the words) when a number of
    its text or its values differs from theirs — a value rescued from elsewhere on the page
    (grounding ``text_layer``) is ``uncertain`` instead, unless its own words print a number
    of the same shape in its place (a swap inside its own words); ``uncertain`` when only
    OCR words support it; else ``confirmed``. Every verdict has basis ``text_layer``.
    """
    claim = (obj.source_text or "").strip()
    if not claim:
        return ObjectVerification(verdict="not_judged")
    cited = [words[i] for i in obj.evidence if 0 <= i < len(words)]
    if not cited or len(cited) != len(obj.evidence) or any(w.hidden for w in cited):
        return ObjectVerification(
            verdict="refuted",
            basis="text_layer",
            kind="unsupported",
            problem=(
                f'Object {obj.object_id} claims "{claim}", which the page\'s text does not carry.'
            ),
        )
    evidence = " ".join(w.text for w in cited)
    bbox = Box.union(w.bbox for w in cited)
    # A claim that is its words, as printed, says them and prints their digits.
    verbatim = claim == evidence
    if not verbatim and not _says_claim(claim, evidence):
        return ObjectVerification(
            verdict="refuted",
            basis="text_layer",
            kind="unsupported",
            actual_text=evidence,
            evidence_bbox=bbox,
            problem=f'Object {obj.object_id} claims "{claim}", but its words read "{evidence}".',
        )
    if not verbatim and not _digits_agree(claim, evidence):
        return ObjectVerification(
            verdict="refuted",
            basis="text_layer",
            kind="content_wrong",
            actual_text=evidence,
            evidence_bbox=bbox,
            problem=f'Object {obj.object_id} reads "{claim}" but the sheet says "{evidence}".',
        )
    if uncarried := _uncarried_value(obj, evidence):
        value, swapped = uncarried
        sentence = (
            f'Object {obj.object_id} gives the value "{value}", which its words '
            f'"{evidence}" do not print.'
        )
        if obj.grounding == "text_layer" and not swapped:
            return ObjectVerification(
                verdict="uncertain", basis="text_layer", evidence_bbox=bbox, reason=sentence
            )
        return ObjectVerification(
            verdict="refuted",
            basis="text_layer",
            kind="content_wrong",
            actual_text=evidence,
            evidence_bbox=bbox,
            problem=sentence,
        )
    if all(w.origin == "ocr" for w in cited):
        return ObjectVerification(
            verdict="uncertain", basis="text_layer", evidence_bbox=bbox, reason=OCR_ONLY
        )
    return ObjectVerification(verdict="confirmed", basis="text_layer", evidence_bbox=bbox)


def check_identity(extracted_sheet_number: str | None, title_block_value: str | None) -> str | None:
    """A problem sentence when the extracted sheet number disagrees with the title block.

    "A-101", "A‐101" and "A101" are the same sheet (``shared.sheet.sheet_key``);
    nothing to compare → no problem.
    """
    if not extracted_sheet_number or not title_block_value:
        return None
    if sheet_key(extracted_sheet_number) == sheet_key(title_block_value):
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
