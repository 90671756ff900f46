"""The page verdict: problems as sentences, kinds in a fixed order, unjudged never a pass."""

from services.verify.verdict import checked_share, page_verdict
from shared.contracts.models import ObjectVerification, PageObject


def _obj(object_id: str, verdict: str | None, kind: str | None = None, problem: str | None = None):
    v = ObjectVerification(verdict=verdict, kind=kind, problem=problem) if verdict else None
    return PageObject(object_id=object_id, verification=v)


def test_kinds_follow_the_fixed_order_and_problems_are_sentences():
    """Kinds are distinct and ordered identity, missing, wrong, unsupported, judge; ok is False."""
    objects = [
        _obj("a", "refuted", "judge_refuted", "Judge says no."),
        _obj("b", "refuted", "unsupported", "Object b claims X."),
        _obj("c", "refuted", "content_wrong", 'Object c reads "(2)" but the sheet says "(5)".'),
        _obj("d", "refuted", "content_wrong", "Object d is wrong."),
        _obj("e", "confirmed"),
    ]
    v = page_verdict(
        objects, [("identity_wrong", "Sheet mismatch."), ("content_missing", "Missing.")]
    )
    assert v.kinds == [
        "identity_wrong",
        "content_missing",
        "content_wrong",
        "unsupported",
        "judge_refuted",
    ]
    assert not v.ok and not v.unjudged
    assert v.problems[:2] == ["Sheet mismatch.", "Missing."]
    assert 'Object c reads "(2)" but the sheet says "(5)".' in v.problems and len(v.problems) == 6


def test_all_confirmed_is_ok_and_judged():
    """A page whose objects are confirmed is ok, judged, no object left unjudged."""
    v = page_verdict([_obj("a", "confirmed"), _obj("b", "uncertain")])
    assert v.ok and not v.unjudged and v.objects_not_judged == 0 and v.kinds == []


def test_nothing_judged_is_unjudged_not_a_pass():
    """Objects no one could judge make the page unjudged, with a reason, counted as not judged."""
    v = page_verdict([_obj("a", "not_judged"), _obj("b", None)])
    assert v.ok and v.unjudged and v.objects_not_judged == 2 and v.reason


def test_uncertain_alone_is_unjudged_not_a_pass():
    """Objects the judge looked at but could not decide give no definite verdict: a page whose
    objects are all uncertain (or not judged) is unjudged, never a pass."""
    v = page_verdict([_obj("a", "uncertain"), _obj("b", "uncertain"), _obj("c", "not_judged")])
    assert v.unjudged and v.objects_not_judged == 1 and "definite" in (v.reason or "")


def test_a_definite_page_level_verdict_judges_a_page_without_objects():
    """A page with no objects whose emptiness was confirmed is judged and passes."""
    v = page_verdict([], page_judged=True)
    assert v.ok and not v.unjudged and v.reason is None


def test_reason_is_kept_for_unjudged_and_judged_pages():
    """The reason given (e.g. the judge's reply was cut off) is carried either way."""
    cut = "the judge's reply was cut off at the token limit (asked twice)"
    assert page_verdict([_obj("a", "not_judged")], reason=cut).reason == cut
    assert page_verdict([_obj("a", "confirmed")], reason=cut).reason == cut


def test_page_problem_alone_judges_the_page():
    """A page with no objects but content_missing is judged, not unjudged."""
    v = page_verdict([], [("content_missing", "No objects.")])
    assert not v.ok and not v.unjudged and v.kinds == ["content_missing"]


def test_blank_skip_is_recorded():
    """A blank page is ok, unjudged and skipped 'blank'."""
    v = page_verdict([], skipped="blank")
    assert v.ok and v.unjudged and v.skipped == "blank"


def test_checked_says_how_much_of_the_page_each_basis_read():
    """One object of four confirmed by OCR, one refuted by the text layer, two unjudged:
    2 of 4 checked, by basis, with each share of the objects and of the cited words."""
    objects = [
        PageObject(
            object_id="a",
            evidence=[0, 1],
            verification=ObjectVerification(verdict="confirmed", basis="ocr"),
        ),
        PageObject(
            object_id="b",
            evidence=[2],
            verification=ObjectVerification(verdict="refuted", basis="text_layer"),
        ),
        PageObject(
            object_id="c", evidence=[3], verification=ObjectVerification(verdict="not_judged")
        ),
        PageObject(object_id="d", evidence=[4, 5, 6, 7, 8, 9], verification=None),
    ]
    checked = checked_share(objects, ocr_lines=3)
    assert (checked.objects, checked.checked, checked.ocr_lines) == (4, 2, 3)
    assert (checked.share_of_objects, checked.share_of_text) == (0.5, 0.3)
    assert checked.by_basis["ocr"].model_dump() == {
        "objects": 1,
        "confirmed": 1,
        "share_of_objects": 0.25,
        "share_of_text": 0.2,
    }
    assert checked.by_basis["text_layer"].confirmed == 0
    assert checked.sentence() == "checked 2 of 4 objects (OCR check of 3 lines)"
    assert checked_share([]).sentence() == "checked 0 of 0 objects"


def test_a_problem_of_no_known_kind_is_counted_untagged_and_kept():
    """A problem no known kind fits fails the page, is listed with the others, and counts in
    untagged, not in kinds."""
    v = page_verdict([], [("untagged", "The judge says: wrong."), ("content_missing", "m")])
    assert not v.ok and v.problems == ["The judge says: wrong.", "m"]
    assert (v.untagged, v.kinds) == (1, ["content_missing"])
