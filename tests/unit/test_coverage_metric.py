"""The coverage metric: the page-text model's lines, covered by the words objects cite."""

import pytest

from services.coverage.metric import measure_coverage, uncovered_units
from shared.contracts.models import PageObject
from shared.pagetext import TextLayer
from tests.support.pdfs import text_layer_of

NOTES = [
    "1. ALL DIMENSIONS SHALL BE VERIFIED IN THE FIELD.",
    "2. PROVIDE FIRE BLOCKING AT EACH FLOOR LEVEL.",
    "3. (5) 2X6 STUD PACK AT EACH GIRDER BEARING.",
]


def citing(layer: TextLayer, *line_ids: int, drop: int = 0) -> PageObject:
    """An object citing the words of the given lines (less the last ``drop`` words)."""
    ids = [w for i in line_ids for w in layer.lines[i]]
    ids = ids[: len(ids) - drop]
    text = " ".join(layer.words[i].text for i in ids)
    return PageObject(object_id=f"o{line_ids}", source_text=text, evidence=ids)


def test_every_line_cited_is_full_coverage():
    """Objects citing every line's words give ratio 1.0."""
    layer = text_layer_of(NOTES)
    objects = [citing(layer, i) for i in range(3)]
    assert measure_coverage(layer, objects).model_dump() == {
        "total_lines": 3,
        "covered_lines": 3,
        "ratio": 1.0,
    }


def test_no_objects_is_zero_coverage():
    """A text-bearing page with no objects has every unit uncovered."""
    coverage = measure_coverage(text_layer_of(NOTES), [])
    assert (coverage.total_lines, coverage.covered_lines, coverage.ratio) == (3, 0, 0.0)


def test_partial_coverage_names_the_uncovered_lines():
    """One line of three cited gives one third; the other two are the uncovered units."""
    layer = text_layer_of(NOTES)
    objects = [citing(layer, 1)]
    assert measure_coverage(layer, objects).ratio == pytest.approx(1 / 3, abs=1e-4)
    assert [layer.line_texts[i] for i in uncovered_units(layer, objects)] == [NOTES[0], NOTES[2]]


def test_a_claim_citing_no_words_covers_nothing():
    """Text that is not tied to the page's words (a paraphrase the guard could not align)
    represents none of the page."""
    layer = text_layer_of(NOTES)
    paraphrase = PageObject(object_id="p", source_text=NOTES[0])
    assert measure_coverage(layer, [paraphrase]).ratio == 0.0


def test_a_line_is_covered_when_most_of_it_is_cited():
    """Leaving out the last word of a long line still covers it; citing half does not."""
    layer = text_layer_of(["PROVIDE FIRE BLOCKING AT EACH FLOOR LEVEL AND STAIR"])
    assert measure_coverage(layer, [citing(layer, 0, drop=1)]).ratio == 1.0
    assert measure_coverage(layer, [citing(layer, 0, drop=5)]).ratio == 0.0


def test_a_line_cited_in_two_pieces_is_covered():
    """Two objects citing the two halves of a line together cover it (it is the page's
    words that count, not which object cites them)."""
    layer = text_layer_of(["PROVIDE FIRE BLOCKING AT EACH FLOOR"])
    ids = layer.lines[0]
    a = PageObject(object_id="a", source_text="PROVIDE FIRE BLOCKING", evidence=ids[:3])
    b = PageObject(object_id="b", source_text="AT EACH FLOOR", evidence=ids[3:])
    assert measure_coverage(layer, [a, b]).covered_lines == 1


def test_noise_lines_are_not_units_when_the_page_has_text():
    """Short lines and dimension ticks are left out beside real text lines."""
    noise = ['15"', "8' - 0\"", "EL. 100'-6\"", "T.O.S. EL. 112'-0\"", "ROOM 101"]
    layer = text_layer_of([*noise, NOTES[0]])
    assert [layer.line_texts[i] for i in uncovered_units(layer, [])] == [NOTES[0]]
    assert measure_coverage(layer, []).total_lines == 1


def test_a_page_of_short_tags_is_measured_by_its_tags():
    """With no line long enough to count, every line with content is a unit, so a sheet of
    tags with no objects is not called covered."""
    layer = text_layer_of(['15"', "A-101", "W12", "N"])
    coverage = measure_coverage(layer, [])
    assert (coverage.total_lines, coverage.ratio) == (3, 0.0)


def test_a_page_without_words_is_fully_covered():
    """A page with no words has nothing to miss."""
    layer = TextLayer(page_number=1, width=612, height=792, has_text_layer=False)
    assert measure_coverage(layer, []).ratio == 1.0


def test_note_wrapped_over_lines_is_covered_by_its_object():
    """A note the page wraps over three lines counts all three covered by the one object."""
    wrapped = [
        "4. CONTRACTOR SHALL COORDINATE ALL",
        "OPENINGS IN STRUCTURAL WALLS WITH THE",
        "MECHANICAL AND ELECTRICAL DRAWINGS.",
    ]
    layer = text_layer_of(wrapped)
    assert measure_coverage(layer, [citing(layer, 0, 1, 2)]).covered_lines == 3
