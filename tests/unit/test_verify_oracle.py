"""The text oracle: claims located among the page's words and checked digit by digit."""

import random
import time

import pymupdf
import pytest

from services.verify.oracle import (
    check_content,
    check_identity,
    check_object,
    find_evidence_bbox,
    index_words,
)
from shared.models import Coverage, CoveredPage, PageObject, Word


def _words(lines: list[str], fontsize: float = 10) -> list[Word]:
    """Real words from a tiny PDF, one text line per entry, in reading order."""
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    for i, line in enumerate(lines):
        page.insert_text((72, 100 + i * 2 * fontsize), line, fontsize=fontsize)
    return [Word(text=w[4], bbox=tuple(w[:4])) for w in page.get_text("words", sort=True)]


NOTES = [
    "GENERAL NOTES",
    "1. PROVIDE (5) 2X6 STUD PACK AT EACH END OF BEAM.",
    "2. ALL FRAMING LUMBER SHALL BE DOUG FIR NO. 2 OR BETTER.",
]


def test_exact_claim_is_found_with_its_words_bbox():
    """A claim printed on the page is located, its digits agree, and the bbox spans its words."""
    words = _words(NOTES)
    match = find_evidence_bbox("(5) 2X6 STUD PACK", words)
    assert match is not None
    assert match.text == "(5) 2X6 STUD PACK"
    assert match.digits_agree and match.score == 1.0
    boxes = [w.bbox for w in words if w.text in {"(5)", "PACK"}]
    assert match.bbox[0] == pytest.approx(boxes[0][0]) and match.bbox[2] == pytest.approx(
        boxes[1][2]
    )


def test_case_and_punctuation_do_not_matter():
    """Lower case, a hyphen for a space and a dropped period still find the note."""
    match = find_evidence_bbox("provide (5) 2x6 stud-pack at each end of beam", _words(NOTES))
    assert match is not None
    assert match.text == "PROVIDE (5) 2X6 STUD PACK AT EACH END OF BEAM."
    assert match.digits_agree


def test_claim_across_a_line_break_is_found():
    """A note wrapped over two lines is consecutive words; the bbox covers both lines."""
    words = _words(["3. BLOCKING AT 48 IN O.C. BETWEEN ALL", "JOISTS OVER BEARING WALLS."])
    match = find_evidence_bbox(
        "BLOCKING AT 48 IN O.C. BETWEEN ALL JOISTS OVER BEARING WALLS", words
    )
    assert match is not None and match.digits_agree
    first_line = next(w for w in words if w.text == "BLOCKING").bbox
    second_line = next(w for w in words if w.text == "JOISTS").bbox
    assert match.bbox[1] == pytest.approx(first_line[1])
    assert match.bbox[3] == pytest.approx(second_line[3])


def test_claim_not_on_the_page_is_not_found():
    """A sentence the page does not carry has no evidence."""
    assert find_evidence_bbox("ROOF SHEATHING 5/8 PLYWOOD", _words(NOTES)) is None


def test_short_claims_must_match_exactly():
    """A tag with too few letters to locate fuzzily is found only as printed."""
    words = _words(["SEE W1 AND A101"])
    assert find_evidence_bbox("W1", words) is not None
    assert find_evidence_bbox("W2", words) is None


def test_misread_number_is_refuted_citing_the_page():
    """ "(2) 2X6 STUD PACK" where the sheet says "(5)" is content_wrong with the sheet's words."""
    obj = PageObject(object_id="N1", source_text="(2) 2X6 STUD PACK")
    v = check_object(obj, _words(NOTES))
    assert v.verdict == "refuted"
    assert v.kind == "content_wrong"
    assert v.actual_text == "(5) 2X6 STUD PACK"
    assert v.evidence_bbox is not None
    assert '"(5) 2X6 STUD PACK"' in v.problem and "N1" in v.problem


def test_correct_claim_is_confirmed():
    """A claim that matches with the same digits is confirmed with its evidence bbox."""
    obj = PageObject(
        object_id="N2", source_text="ALL FRAMING LUMBER SHALL BE DOUG FIR NO. 2 OR BETTER"
    )
    v = check_object(obj, index_words(_words(NOTES)))
    assert v.verdict == "confirmed" and v.kind is None and v.evidence_bbox is not None


def test_claim_the_page_does_not_carry_is_unsupported():
    """A claim with no match anywhere is refuted as unsupported."""
    obj = PageObject(object_id="X", source_text="INSTALL SPRINKLER HEADS PER NFPA 13")
    v = check_object(obj, _words(NOTES))
    assert v.verdict == "refuted" and v.kind == "unsupported"
    assert "INSTALL SPRINKLER HEADS PER NFPA 13" in v.problem


def test_graphical_claim_is_not_judged():
    """An object with no source_text is left to the judge."""
    obj = PageObject(object_id="G", graphical_basis="door swing", source_text=None)
    assert check_object(obj, _words(NOTES)).verdict == "not_judged"


def test_identity_disagreement_and_separator_tolerance():
    """A different title-block number is a problem; A-101 and A101 are the same sheet."""
    assert check_identity("A-101", "A101") is None
    assert check_identity("a101", "A 101") is None
    sentence = check_identity("A102", "A-101")
    assert sentence is not None and '"A102"' in sentence and '"A-101"' in sentence
    assert check_identity(None, "A101") is None
    assert check_identity("A101", None) is None


def _covered(objects: list[PageObject], ratio: float, below: bool) -> CoveredPage:
    cov = Coverage(total_lines=10, covered_lines=int(ratio * 10), ratio=ratio)
    return CoveredPage(
        job_id="j",
        page_number=1,
        has_text_layer=True,
        objects=objects,
        coverage_before=cov,
        coverage=cov,
        floor=0.6,
        below_floor=below,
    )


def test_content_missing_below_floor():
    """Coverage below the floor is content_missing; at or above it, nothing."""
    obj = PageObject(object_id="a", source_text="x")
    assert "below the 60% floor" in check_content(_covered([obj], 0.3, True))
    assert check_content(_covered([obj], 0.9, False)) is None


def test_a_dense_page_is_checked_quickly():
    """200 claims against 3000 words of repetitive note text take well under a few seconds."""
    rng = random.Random(7)
    vocab = (
        "the and of at each end beam stud pack provide see framing nailing per schedule typ".split()
    )
    tokens = [
        rng.choice(vocab + ["2X6", f"({rng.randint(1, 9)})", str(rng.randint(1, 40))])
        for _ in range(3000)
    ]
    words = [
        Word(text=t, bbox=(i % 100 * 6.0, i // 100 * 12.0, i % 100 * 6.0 + 5, i // 100 * 12.0 + 10))
        for i, t in enumerate(tokens)
    ]
    claims = []
    for _ in range(200):
        start = rng.randrange(0, 2980)
        claims.append(" ".join(tokens[start : start + rng.randint(3, 15)]))
    began = time.perf_counter()
    index = index_words(words)
    matches = [find_evidence_bbox(c, index) for c in claims]
    assert time.perf_counter() - began < 5.0
    assert all(m is not None and m.digits_agree for m in matches)


def test_schedule_row_written_column_by_column_is_found_on_its_line():
    """Cells drawn column by column are not consecutive in the stream; the visual line matches."""
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    rows = [("D1", "3068", "SOLID CORE WOOD"), ("D2", "2868", "HOLLOW METAL")]
    for col, x in enumerate((72, 150, 250)):
        for row, cells in enumerate(rows):
            page.insert_text((x, 100 + row * 20), cells[col], fontsize=10)
    words = [Word(text=w[4], bbox=tuple(w[:4])) for w in page.get_text("words")]
    assert [w.text for w in words[:2]] == ["D1", "D2"]  # stream order is column-major
    match = find_evidence_bbox("D2 2868 HOLLOW METAL", words)
    assert match is not None and match.digits_agree and match.text == "D2 2868 HOLLOW METAL"
    v = check_object(PageObject(object_id="D2", source_text="D2 2668 HOLLOW METAL"), words)
    assert v.kind == "content_wrong" and v.actual_text == "D2 2868 HOLLOW METAL"
