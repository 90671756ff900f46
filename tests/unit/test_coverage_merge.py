"""Additive merge: earlier rungs' objects are kept, later ones add only new text."""

from services.coverage.merge import merge_objects
from shared.contracts.models import PageObject
from shared.sheet.header import SheetHeader
from shared.sheet.identity import merge_header


def obj(object_id: str, source_text: str | None = None, **fields) -> PageObject:
    return PageObject(object_id=object_id, source_text=source_text, **fields)


def ids(objects: list[PageObject]) -> list[str]:
    return [o.object_id for o in objects]


def test_duplicate_later_object_is_dropped():
    """A later object carrying text already present is not appended."""
    base = [obj("v1", "PROVIDE FIRE BLOCKING AT EACH FLOOR.")]
    later = [obj("t1", "PROVIDE FIRE BLOCKING AT EACH FLOOR."), obj("t2", "SEAL ALL PENETRATIONS.")]
    assert ids(merge_objects(base, later)) == ["v1", "t2"]


def test_dedupe_ignores_case_punctuation_and_line_breaks():
    """Text that differs only in case, punctuation and line breaks is the same text."""
    base = [obj("v1", "1. Provide fire-blocking at each floor")]
    later = [obj("t1", "1) PROVIDE FIRE BLOCKING\nAT EACH FLOOR.")]
    assert ids(merge_objects(base, later)) == ["v1"]


def test_later_text_inside_a_larger_earlier_object_is_dropped():
    """A note already carried inside a grouped earlier object is not added again."""
    base = [obj("v1", "GENERAL NOTES: 1. VERIFY DIMENSIONS. 2. SEAL ALL PENETRATIONS.")]
    assert merge_objects(base, [obj("t1", "2. Seal all penetrations")]) == base


def test_later_block_split_across_earlier_objects_is_dropped():
    """A stub whose every word earlier objects cite, in pieces, adds nothing."""
    base = [obj("v1", "VERIFY ALL DIMENSIONS", evidence=[0, 1, 2]), obj("v2", "SEAL", evidence=[3])]
    later = [obj("f1", "VERIFY ALL DIMENSIONS SEAL", evidence=[0, 1, 2, 3])]
    assert ids(merge_objects(base, later)) == ["v1", "v2"]


def test_a_stub_citing_any_uncited_word_is_kept():
    """A later object that cites a word no kept object cites adds coverage: it is kept."""
    base = [obj("v1", "VERIFY ALL DIMENSIONS", evidence=[0, 1, 2])]
    later = [obj("f1", "VERIFY ALL DIMENSIONS ON SITE", evidence=[0, 1, 2, 3, 4])]
    assert ids(merge_objects(base, later)) == ["v1", "f1"]


def test_partly_new_text_is_kept():
    """A later object that extends an earlier one's text is new content and is appended."""
    base = [obj("v1", "SEAL ALL PENETRATIONS")]
    later = [obj("t1", "SEAL ALL PENETRATIONS WITH RATED FIRESTOP")]
    assert ids(merge_objects(base, later)) == ["v1", "t1"]


def test_graphical_and_duplicate_base_objects_are_never_dropped():
    """Base objects without source_text, and even base duplicates, all survive in order."""
    base = [
        obj("v1", None, graphical_basis="north arrow", object_type="symbol"),
        obj("v2", "SEAL ALL PENETRATIONS"),
        obj("v3", "SEAL ALL PENETRATIONS"),
    ]
    later = [obj("t1", "SEAL ALL PENETRATIONS"), obj("t2", "VERIFY DIMENSIONS IN FIELD")]
    merged = merge_objects(base, later)
    assert merged[:3] == base
    assert ids(merged) == ["v1", "v2", "v3", "t2"]


def test_vision_order_is_kept_and_later_appended_in_order():
    """The merged list is the base in its order, then new later objects in theirs."""
    base = [obj("v3", "ZETA NOTE TEXT"), obj("v1", "ALPHA NOTE TEXT")]
    later = [obj("t2", "OMEGA NOTE TEXT"), obj("t1", "BETA NOTE TEXT")]
    assert ids(merge_objects(base, later)) == ["v3", "v1", "t2", "t1"]


def test_duplicates_within_later_are_dropped():
    """Two later objects with the same text add it once."""
    later = [obj("t1", "SEAL ALL PENETRATIONS"), obj("t2", "Seal all penetrations.")]
    assert ids(merge_objects([], later)) == ["t1"]


def test_colliding_later_ids_are_made_unique():
    """A later object reusing an id gets a fresh one; its content is unchanged."""
    base = [obj("n1", "VERIFY DIMENSIONS"), obj("n1-2", "SEAL PENETRATIONS")]
    later = [obj("n1", "PROVIDE FIRE BLOCKING")]
    merged = merge_objects(base, later)
    assert ids(merged) == ["n1", "n1-2", "n1-3"]
    assert merged[2].source_text == "PROVIDE FIRE BLOCKING"
    assert later[0].object_id == "n1"


def test_merging_the_same_answer_twice_changes_nothing():
    """A redelivered rung answer merged again yields the same page (idempotent)."""
    base = [obj("v1", "VERIFY DIMENSIONS")]
    later = [obj("v1", "PROVIDE FIRE BLOCKING"), obj("g", None, graphical_basis="hatch")]
    once = merge_objects(base, later)
    assert merge_objects(once, later) == once


def test_header_fills_only_empty_fields():
    """Fields the earlier rung left null or blank are filled; set ones are never overwritten."""
    base = SheetHeader(sheet_number=None, sheet_title="FLOOR PLAN", discipline="", scale=None)
    later = SheetHeader(
        sheet_number="A-101",
        sheet_title="SOMETHING ELSE",
        discipline="architectural",
        scale='1/4" = 1\'-0"',
        sheet_number_source="text_layer",
    )
    merged = merge_header(base, later)
    assert merged.model_dump() == {
        "sheet_number": "A-101",
        "sheet_title": "FLOOR PLAN",
        "discipline": "architectural",
        "drawing_type": None,
        "level": None,
        "scale": '1/4" = 1\'-0"',
        "sheet_number_source": "text_layer",
        "revision": None,
        "issue_date": None,
        "project_number": None,
        "project_name": None,
    }


def test_header_source_stays_with_an_existing_number():
    """A number the earlier rung found keeps its own source."""
    base = SheetHeader(sheet_number="S-201", sheet_number_source="extraction")
    later = SheetHeader(sheet_number="S-301", sheet_number_source="text_layer")
    merged = merge_header(base, later)
    assert (merged.sheet_number, merged.sheet_number_source) == ("S-201", "extraction")
