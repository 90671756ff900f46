"""The grounding guard: keep, rescue-and-stamp, drop, no text layer, vision_unverified."""

import pymupdf

from services.extract.guard import apply_grounding_guard
from services.extract.reading.textlayer import read_text_layer
from shared.contracts.models import GuardCounts, PageObject
from shared.pagetext import TextLayer
from shared.pagetext.units import page_units
from tests.support.pdfs import notes_pdf

NOTE_3 = "3. PROVIDE (5) 2X6 STUD PACK AT EACH BEAM BEARING UNLESS NOTED OTHERWISE."


def _layer() -> TextLayer:
    return read_text_layer(pymupdf.open(stream=notes_pdf())[0], 1, 20)


def _obj(source_text: str | None, rung: str = "vision", **fields) -> PageObject:
    return PageObject(object_id="o1", source_text=source_text, rung=rung, **fields)


def test_value_digits_in_own_source_text_are_kept():
    """Digits of the value found in the object's own source_text: kept, grounded source_text."""
    kept, counts = apply_grounding_guard([_obj(NOTE_3, attributes={"count": 5})], _layer())
    assert kept[0].grounding == "source_text" and counts.kept == 1


def test_digits_only_on_the_page_are_rescued_and_stamped():
    """Digits found elsewhere on the page but not in source_text: kept, stamped text_layer."""
    obj = _obj("DO NOT SCALE DRAWINGS.", attributes={"code_year": 2021})
    kept, counts = apply_grounding_guard([obj], _layer())
    assert kept[0].grounding == "text_layer" and counts.rescued == 1 and counts.kept == 0


def test_digits_nowhere_on_the_page_are_dropped():
    """A number the page does not carry anywhere: the object is dropped and counted."""
    kept, counts = apply_grounding_guard([_obj("DO NOT SCALE DRAWINGS.", tag="W12X26")], _layer())
    assert kept == [] and counts.dropped == 1


def test_without_text_layer_only_source_text_counts():
    """On a page without a text layer, digits outside source_text drop the object."""
    scanned = TextLayer(page_number=1, width=612, height=792, has_text_layer=False)
    objects = [
        _obj("ROOM 101", tag="101"),
        PageObject(object_id="o2", source_text="ROOM", tag="101", rung="vision"),
    ]
    kept, counts = apply_grounding_guard(objects, scanned)
    assert [o.object_id for o in kept] == ["o1"] and counts.dropped == 1


def test_misread_cites_the_words_the_page_prints():
    """A misread "(2)" where the sheet says "(5)": kept and tied to the page's own words, for
    the oracle to compare."""
    obj = _obj("3. PROVIDE (2) 2X6 STUD PACK AT EACH BEAM", attributes={"count": 2})
    layer = _layer()
    kept, _ = apply_grounding_guard([obj], layer)
    cited = " ".join(layer.words[i].text for i in kept[0].evidence)
    assert cited == "3. PROVIDE (5) 2X6 STUD PACK AT EACH BEAM"
    assert kept[0].evidence_bbox is not None and kept[0].grounding == "source_text"


def test_source_text_not_on_page_is_vision_unverified():
    """A claim the page does not carry cites nothing and is stamped vision_unverified; a
    model's own list of evidence ids is never taken."""
    obj = _obj("ROOF SHEATHING SHALL BE PLYWOOD", evidence=[1, 2, 3])
    kept, _ = apply_grounding_guard([obj], _layer())
    assert kept[0].grounding == "vision_unverified" and kept[0].evidence == []


def test_page_match_ignores_case_whitespace_and_punctuation():
    """A source_text spanning a line break, in another case, still matches the page."""
    obj = _obj("2 all work shall comply with the 2021 international building code and local")
    kept, _ = apply_grounding_guard([obj], _layer())
    assert kept[0].grounding == "source_text"


def test_objects_without_digits_are_never_dropped():
    """No digits in the value: kept; a graphical claim is grounded "graphical"."""
    objects = [_obj(None, name="NORTH ARROW", graphical_basis="symbol at top right")]
    kept, counts = apply_grounding_guard(objects, _layer())
    assert kept[0].grounding == "graphical" and counts.kept == 1 and counts.dropped == 0


def test_deterministic_objects_are_not_stamped_unverified():
    """Fallback stubs keep their grounding even when the text is not found verbatim."""
    stub = _obj("SOMETHING ELSE", rung="fallback", grounding="text_layer_fallback")
    kept, _ = apply_grounding_guard([stub], _layer())
    assert kept[0].grounding == "text_layer_fallback"


def test_each_object_is_counted_once_vision_unverified_apart():
    """kept, rescued, vision_unverified and dropped partition the objects: a misread the
    page does not carry is counted vision_unverified, not kept."""
    objects = [
        _obj(NOTE_3, attributes={"count": 5}),
        _obj("(2) 2X6 STUD PACK AT EACH END OF HEADER", attributes={"count": 2}),
        _obj("DO NOT SCALE DRAWINGS.", tag="W12X26"),
    ]
    kept, counts = apply_grounding_guard(objects, _layer())
    assert [o.grounding for o in kept] == ["source_text", "vision_unverified"]
    assert counts == GuardCounts(
        kept=1, rescued=0, dropped=1, vision_unverified=1, placed_by_alignment=2
    )


# --- claims placed by the ids they cite --------------------------------------------------


def _cited(source_text: str, ids: list[str], rung: str = "vision"):
    """The one object kept (and the counts) when it cites ``ids``."""
    layer = _layer()
    [obj], counts = apply_grounding_guard(
        [_obj(source_text, rung=rung)], layer, {"o1": ids}, page_units(layer)
    )
    return obj, counts


def _unit_words(unit_id: str) -> list[int]:
    return list(page_units(_layer()).by_id[unit_id].word_ids)


def test_a_claim_citing_the_line_it_comes_from_takes_that_line_s_words():
    """Cited ids whose words carry the claim are its evidence, exactly: counted by ids."""
    obj, counts = _cited(NOTE_3, ["L4"])
    assert obj.evidence == _unit_words("L4") and obj.grounding == "source_text"
    assert obj.evidence_bbox == page_units(_layer()).by_id["L4"].box
    assert counts.placed_by_ids == 1 and counts.placed_by_alignment == 0


def test_a_part_of_a_cited_line_takes_just_its_words():
    """A claim printed word for word inside the cited line cites those words only."""
    obj, counts = _cited("DO NOT SCALE", ["L5"])
    assert [_layer().words[i].text for i in obj.evidence] == ["DO", "NOT", "SCALE"]
    assert counts.placed_by_ids == 1


def test_a_misread_number_in_the_cited_line_keeps_the_line_for_the_oracle():
    """Letters place the claim; the digits the page prints differ, for the oracle to see."""
    obj, counts = _cited(NOTE_3.replace("(5)", "(2)"), ["L4"])
    assert obj.evidence == _unit_words("L4") and counts.placed_by_ids == 1


def test_ids_that_do_not_exist_or_do_not_carry_the_claim_fall_back_to_alignment():
    """An unknown id, or a line that says something else: placed by alignment (to the right
    words), and counted as a refused citation."""
    for ids in (["L99"], ["L2"]):
        obj, counts = _cited(NOTE_3, ids)
        assert obj.evidence == _unit_words("L4")
        assert counts.citations_refused == 1 and counts.placed_by_alignment == 1
        assert counts.placed_by_ids == 0


def test_a_text_structuring_object_is_its_cited_words_by_construction():
    """Rung 2 (no image): an object placed by its ids takes the cited words as its
    source_text, whatever the model copied."""
    obj, counts = _cited("4. DO NOT SCALE DRAWING", ["L5"], "text_structuring")
    assert obj.source_text == "4. DO NOT SCALE DRAWINGS." and counts.placed_by_ids == 1
