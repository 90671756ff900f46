"""Alignment of a claim to the page words that carry it (shared by extract's guard and
verify's reading of a judge)."""

import random

import pymupdf
import pytest

from services.extract.reading.textlayer import read_text_layer
from shared.pagetext import PageWords, Word, align, laid_out, page_reading
from tests.support.pdfs import text_layer_of

NOTES = [
    "GENERAL NOTES",
    "1. PROVIDE (5) 2X6 STUD PACK AT EACH END OF BEAM.",
    "2. ALL FRAMING LUMBER SHALL BE DOUG FIR NO. 2 OR BETTER.",
]


def _page(lines: list[str]) -> PageWords:
    return PageWords(text_layer_of(lines))


def test_exact_claim_is_found_with_its_words_and_bbox():
    """A claim printed on the page is located, its digits agree, and it cites its words."""
    page = _page(NOTES)
    match = align("(5) 2X6 STUD PACK", page)
    assert match is not None
    assert match.text == "(5) 2X6 STUD PACK"
    assert match.digits_agree and match.score == 1.0
    words = page.layer.words
    assert [words[i].text for i in match.ids] == ["(5)", "2X6", "STUD", "PACK"]
    assert match.bbox[0] == pytest.approx(words[match.ids[0]].bbox[0])
    assert match.bbox[2] == pytest.approx(words[match.ids[-1]].bbox[2])


def test_case_and_punctuation_do_not_matter():
    """Lower case, a hyphen for a space and a dropped period still find the note."""
    match = align("provide (5) 2x6 stud-pack at each end of beam", _page(NOTES))
    assert match is not None and match.digits_agree
    assert match.text == "PROVIDE (5) 2X6 STUD PACK AT EACH END OF BEAM."


def test_unicode_dashes_compare_as_hyphens():
    """A claim typed with an ASCII hyphen finds words printed with a Unicode one."""
    match = align("SEE DETAIL 3-A501", _page(["SEE DETAIL 3\u2010A501"]))
    assert match is not None and match.digits_agree


def test_claim_across_a_line_break_is_found():
    """A note wrapped over two lines is consecutive words; the bbox covers both lines."""
    page = _page(["3. BLOCKING AT 48 IN O.C. BETWEEN ALL", "JOISTS OVER BEARING WALLS."])
    match = align("BLOCKING AT 48 IN O.C. BETWEEN ALL JOISTS OVER BEARING WALLS", page)
    assert match is not None and match.digits_agree
    words = page.layer.words
    first = next(w for w in words if w.text == "BLOCKING").bbox
    second = next(w for w in words if w.text == "JOISTS").bbox
    assert match.bbox[1] == pytest.approx(first[1]) and match.bbox[3] == pytest.approx(second[3])


def test_misread_cites_the_words_the_page_prints():
    """ "(2) 2X6 STUD PACK" lands on the page's "(5) 2X6 STUD PACK", digits disagreeing."""
    match = align("(2) 2X6 STUD PACK", _page(NOTES))
    assert match is not None and not match.digits_agree
    assert match.text == "(5) 2X6 STUD PACK"


def test_claim_not_on_the_page_is_not_found():
    """A sentence the page does not carry has no evidence."""
    assert align("ROOF SHEATHING 5/8 PLYWOOD", _page(NOTES)) is None


def test_short_claims_must_match_exactly():
    """A tag with too few letters to locate fuzzily is found only as printed."""
    page = _page(["SEE W1 AND A101"])
    assert align("W1", page) is not None
    assert align("W2", page) is None


def test_schedule_row_written_column_by_column_is_found_on_its_line():
    """Cells drawn column by column are not consecutive in the text layer's own order; the
    model's rows are, so the row is found whole."""
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    rows = [("D1", "3068", "SOLID CORE WOOD"), ("D2", "2868", "HOLLOW METAL")]
    for col, x in enumerate((72, 150, 250)):
        for row, cells in enumerate(rows):
            page.insert_text((x, 100 + row * 20), cells[col], fontsize=10)
    layer = read_text_layer(page, 1, min_chars=1)
    assert [w.text for w in layer.words[:2]] == ["D1", "D2"]  # the layer's order is by column
    match = align("D2 2868 HOLLOW METAL", PageWords(layer))
    assert match is not None and match.digits_agree and match.text == "D2 2868 HOLLOW METAL"


def test_a_dense_page_aligns_every_claim_it_carries():
    """200 claims cut from 3000 words of repetitive note text are all found, digits agreeing."""
    rng = random.Random(7)
    vocab = "the and of at each end beam stud pack provide see framing nailing per schedule typ"
    tokens = [
        rng.choice([*vocab.split(), "2X6", f"({rng.randint(1, 9)})", str(rng.randint(1, 40))])
        for _ in range(3000)
    ]
    words = [
        Word(text=t, bbox=(i % 100 * 6.0, i // 100 * 12.0, i % 100 * 6.0 + 5, i // 100 * 12.0 + 10))
        for i, t in enumerate(tokens)
    ]
    page = PageWords(
        laid_out(page_number=1, width=612, height=792, words=words, has_text_layer=True)
    )
    for _ in range(200):
        start = rng.randrange(0, 2980)
        claim = " ".join(tokens[start : start + rng.randint(3, 15)])
        match = align(claim, page)
        assert match is not None and match.digits_agree, claim


def test_page_reading_keeps_only_what_the_page_carries_with_its_numbers():
    """A judge's reading becomes the page's words only when the numbers agree."""
    page = _page(NOTES)
    assert page_reading("provide (5) 2x6 stud pack", page) == "PROVIDE (5) 2X6 STUD PACK"
    assert page_reading("PROVIDE (6) 2X6 STUD PACK", page) is None
    assert page_reading("PROVIDE (5) 2X6 STUD PACK", None) is None
