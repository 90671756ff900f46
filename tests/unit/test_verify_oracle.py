"""The text oracle: each claim checked against the page words it cites, digit by digit."""

from services.extract.guard import apply_grounding_guard
from services.verify.oracle import check_content, check_identity, check_object
from shared.contracts.models import Coverage, CoveredPage, PageObject
from shared.pagetext import TextLayer, Word, join_words
from tests.support.pdfs import text_layer_of

NOTES = [
    "GENERAL NOTES",
    "1. PROVIDE (5) 2X6 STUD PACK AT EACH END OF BEAM.",
    "2. ALL FRAMING LUMBER SHALL BE DOUG FIR NO. 2 OR BETTER.",
]


def _ids(layer: TextLayer, *texts: str) -> list[int]:
    """The ids of the first run of words reading ``texts``."""
    words = [w.text for w in layer.words]
    n = len(texts)
    start = next(i for i in range(len(words)) if tuple(words[i : i + n]) == texts)
    return list(range(start, start + n))


def _vision(layer: TextLayer, **fields) -> PageObject:
    """A model-made object after the grounding guard aligned it to the page."""
    (obj,), _ = apply_grounding_guard([PageObject(rung="vision", **fields)], layer)
    return obj


def test_misread_number_is_refuted_citing_the_page():
    """ "(2) 2X6 STUD PACK" aligned to the sheet's "(5) ..." is content_wrong with its words."""
    layer = text_layer_of(NOTES)
    obj = _vision(layer, object_id="N1", source_text="(2) 2X6 STUD PACK")
    v = check_object(obj, layer.words)
    assert (v.verdict, v.kind, v.actual_text) == ("refuted", "content_wrong", "(5) 2X6 STUD PACK")
    assert v.evidence_bbox is not None
    assert '"(5) 2X6 STUD PACK"' in (v.problem or "") and "N1" in (v.problem or "")


def test_a_planted_misread_in_an_attribute_is_refuted():
    """A verbatim source_text whose value says 2 where its words print (5) is content_wrong: the
    2 of "2X6" is not the number 2."""
    layer = text_layer_of(NOTES)
    obj = _vision(layer, object_id="N1", source_text="(5) 2X6 STUD PACK", attributes={"count": "2"})
    v = check_object(obj, layer.words)
    assert (v.verdict, v.kind) == ("refuted", "content_wrong")
    assert v.actual_text == "(5) 2X6 STUD PACK" and '"2"' in (v.problem or "")
    right = obj.model_copy(update={"attributes": {"count": "5", "member": "2X6"}})
    assert check_object(right, layer.words).verdict == "confirmed"


def test_numbers_compare_as_numbers_and_tokens_as_printed():
    """ "02" is the 2 of "LEVEL 2", and "A101" is carried by "A-101"."""
    layer = text_layer_of(["LEVEL 2 PLAN SEE SHEET A-101"])
    ids = list(range(len(layer.words)))
    obj = PageObject(
        object_id="t",
        source_text=join_words(layer.words, ids),
        evidence=ids,
        attributes={"level": "02", "sheet": "A101"},
    )
    assert check_object(obj, layer.words).verdict == "confirmed"


def test_correct_claim_is_confirmed_with_its_words_bbox():
    """A claim whose cited words say it, numbers included, is confirmed where they sit."""
    layer = text_layer_of(NOTES)
    ids = _ids(layer, "ALL", "FRAMING", "LUMBER", "SHALL", "BE", "DOUG", "FIR", "NO.", "2")
    obj = PageObject(
        object_id="N2", source_text="all framing lumber shall be doug fir no 2", evidence=ids
    )
    v = check_object(obj, layer.words)
    assert v.verdict == "confirmed" and v.kind is None
    assert v.evidence_bbox and v.evidence_bbox[0] == layer.words[ids[0]].bbox[0]


def test_claim_citing_no_words_is_unsupported():
    """A claim the page does not carry cites nothing, and is refuted as unsupported."""
    layer = text_layer_of(NOTES)
    obj = _vision(layer, object_id="X", source_text="INSTALL SPRINKLER HEADS PER NFPA 13")
    assert obj.evidence == [] and obj.grounding == "vision_unverified"
    v = check_object(obj, layer.words)
    assert v.verdict == "refuted" and v.kind == "unsupported"
    assert "INSTALL SPRINKLER HEADS PER NFPA 13" in (v.problem or "")


def test_claim_whose_words_say_something_else_is_unsupported():
    """Evidence that does not read like the claim supports nothing."""
    layer = text_layer_of(NOTES)
    obj = PageObject(object_id="X", source_text="ROOF SHEATHING", evidence=[0, 1])
    v = check_object(obj, layer.words)
    assert (v.verdict, v.kind, v.actual_text) == ("refuted", "unsupported", "GENERAL NOTES")


def test_evidence_out_of_range_is_unsupported():
    """Word ids the page does not have are no evidence."""
    layer = text_layer_of(NOTES)
    obj = PageObject(object_id="X", source_text="GENERAL NOTES", evidence=[0, 999])
    assert check_object(obj, layer.words).kind == "unsupported"


def test_ocr_words_alone_never_confirm():
    """A claim only OCR words support is uncertain, saying why."""
    words = [
        Word(text="SEE", bbox=(0, 0, 10, 10), origin="ocr"),
        Word(text="A101", bbox=(12, 0, 30, 10), origin="ocr"),
    ]
    obj = PageObject(object_id="o", source_text="SEE A101", evidence=[0, 1])
    v = check_object(obj, words)
    assert v.verdict == "uncertain" and v.kind is None and "OCR" in (v.reason or "")


def test_rescued_value_outside_its_words_is_uncertain_not_refuted():
    """A value the guard rescued from elsewhere on the page is not a contradiction."""
    layer = text_layer_of(NOTES)
    obj = _vision(layer, object_id="r", source_text="STUD PACK", attributes={"count": "5"})
    assert obj.grounding == "text_layer"
    v = check_object(obj, layer.words)
    assert v.verdict == "uncertain" and '"5"' in (v.reason or "")


def test_graphical_claim_is_not_judged():
    """An object with no source_text is left to the judge."""
    obj = PageObject(object_id="G", graphical_basis="door swing", source_text=None)
    assert check_object(obj, text_layer_of(NOTES).words).verdict == "not_judged"


def test_identity_disagreement_and_separator_tolerance():
    """A different title-block number is a problem; A-101, A‐101 and A101 are one sheet."""
    assert check_identity("A-101", "A101") is None
    assert check_identity("A\u2010101", "A-101") is None
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
    assert "below the 60% floor" in (check_content(_covered([obj], 0.3, True)) or "")
    assert check_content(_covered([obj], 0.9, False)) is None


def test_a_number_spelled_otherwise_is_the_same_number():
    """A model's 1200 is the sheet's "1,200", its 3.5 or 3.50 the sheet's "3.50", its 36.0 the
    sheet's 36: kept by the guard and confirmed, never a content_wrong; a different number
    still is one."""
    layer = text_layer_of(["AREA 1,200 SF SLAB 3.50 M THICK", "DOOR WIDTH 36 IN"])
    area = _vision(layer, object_id="A", source_text="AREA 1,200 SF", attributes={"sf": 1200})
    slab = _vision(layer, object_id="S", source_text="SLAB 3.50 M", attributes={"m": 3.5})
    door = _vision(layer, object_id="D", source_text="DOOR WIDTH 36 IN", attributes={"in": 36.0})
    plain = _vision(layer, object_id="P", source_text="AREA 1200 SF")
    for obj in (area, slab, door, plain):
        assert obj.grounding == "source_text", obj
        assert check_object(obj, layer.words).verdict == "confirmed", obj.object_id
    wrong = area.model_copy(update={"attributes": {"sf": 1300}})
    assert check_object(wrong, layer.words).kind == "content_wrong"
    misread = _vision(layer, object_id="M", source_text="AREA 1,300 SF")
    assert check_object(misread, layer.words).kind == "content_wrong"


def test_a_number_inside_a_token_keeps_its_digits():
    """ "A101.10" is not "A101.1": plain spelling touches only numbers standing alone, so a
    tag the page does not print is dropped by the guard and refuted by the oracle."""
    layer = text_layer_of(["SEE SHEET A101.10 FOR DETAILS"])
    obj = PageObject(rung="vision", object_id="R", source_text="SEE SHEET A101.10", tag="A101.1")
    kept, counts = apply_grounding_guard([obj], layer)
    assert kept == [] and counts.dropped == 1
    cited = obj.model_copy(update={"evidence": _ids(layer, "SEE", "SHEET", "A101.10")})
    assert check_object(cited, layer.words).kind == "content_wrong"


def test_a_number_swapped_inside_its_own_words_is_refuted_even_when_rescued():
    """A verbatim source_text "(5) 2X6 STUD PACK" with count 3, where a "3" is printed
    elsewhere on the page (so the guard rescued it): its own words print "(5)" in its place,
    so it is content_wrong citing them, never uncertain."""
    layer = text_layer_of([*NOTES, "3. SEE STRUCTURAL DRAWINGS."])
    obj = _vision(layer, object_id="N1", source_text="(5) 2X6 STUD PACK", attributes={"count": 3})
    assert obj.grounding == "text_layer"
    v = check_object(obj, layer.words)
    assert (v.verdict, v.kind, v.basis) == ("refuted", "content_wrong", "text_layer")
    assert v.actual_text == "(5) 2X6 STUD PACK" and '"3"' in (v.problem or "")


def test_every_verdict_of_the_oracle_says_its_basis():
    """Confirmed, refuted and uncertain verdicts name the text layer as what checked them; a
    graphical claim's not_judged names nothing."""
    layer = text_layer_of(NOTES)
    good = _vision(layer, object_id="N", source_text="GENERAL NOTES")
    bad = _vision(layer, object_id="B", source_text="(2) 2X6 STUD PACK")
    rescued = _vision(layer, object_id="r", source_text="STUD PACK", attributes={"count": "5"})
    assert [check_object(o, layer.words).basis for o in (good, bad, rescued)] == ["text_layer"] * 3
    graphical = PageObject(object_id="G", graphical_basis="door swing")
    assert check_object(graphical, layer.words).basis is None


def test_a_claim_citing_words_the_page_does_not_show_is_unsupported():
    """Words marked hidden never support a claim, even when they say it."""
    words = [
        Word(text="SHEET", bbox=(0, 0, 10, 10)),
        Word(text="Z-999", bbox=(12, 0, 30, 10), hidden="invisible"),
    ]
    obj = PageObject(object_id="o", source_text="SHEET Z-999", evidence=[0, 1])
    v = check_object(obj, words)
    assert (v.verdict, v.kind) == ("refuted", "unsupported")
