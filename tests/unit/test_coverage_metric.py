"""The coverage metric: meaningful lines of a real PDF text layer against objects."""

import pymupdf
import pytest

from services.coverage.metric import (
    is_dimension_tick,
    meaningful_lines,
    measure_coverage,
    normalize,
    uncovered_lines,
)
from shared.models import PageObject, TextLayer, Word

NOTES = [
    "1. ALL DIMENSIONS SHALL BE VERIFIED IN THE FIELD.",
    "2. PROVIDE FIRE BLOCKING AT EACH FLOOR LEVEL.",
    "3. (5) 2X6 STUD PACK AT EACH GIRDER BEARING.",
]


def text_layer(lines: list[str], fontsize: float = 9) -> TextLayer:
    """A real text layer: each line written on a tiny PDF page with PyMuPDF."""
    doc = pymupdf.open()
    page = doc.new_page(width=792, height=612)
    for i, line in enumerate(lines):
        page.insert_text((36, 40 + i * 14), line, fontsize=fontsize)
    return TextLayer(
        page_number=1,
        width=page.rect.width,
        height=page.rect.height,
        text=page.get_text(),
        words=[Word(text=w[4], bbox=tuple(w[:4])) for w in page.get_text("words")],
        has_text_layer=True,
    )


def obj(object_id: str, source_text: str | None = None, **fields) -> PageObject:
    return PageObject(object_id=object_id, source_text=source_text, **fields)


def test_every_line_carried_is_full_coverage():
    """Objects whose source_text carries every note line give ratio 1.0."""
    layer = text_layer(NOTES)
    objects = [obj(f"n{i}", note) for i, note in enumerate(NOTES)]
    assert measure_coverage(layer, objects).model_dump() == {
        "total_lines": 3,
        "covered_lines": 3,
        "ratio": 1.0,
    }


def test_no_objects_is_zero_coverage():
    """A text-bearing page with no objects has every meaningful line uncovered."""
    coverage = measure_coverage(text_layer(NOTES), [])
    assert (coverage.total_lines, coverage.covered_lines, coverage.ratio) == (3, 0, 0.0)


def test_partial_coverage_counts_lines():
    """One note of three carried gives one third, and the other two are named uncovered."""
    layer = text_layer(NOTES)
    objects = [obj("n2", "PROVIDE FIRE BLOCKING AT EACH FLOOR LEVEL")]
    assert measure_coverage(layer, objects).ratio == pytest.approx(1 / 3, abs=1e-4)
    assert uncovered_lines(layer, objects) == [NOTES[0], NOTES[2]]


def test_noise_lines_are_not_meaningful():
    """Short lines and dimension/elevation ticks are left out of the line count."""
    noise = ['15"', "8' - 0\"", "EL. 100'-6\"", "12'-6 1/2\"   8' - 0\"", "T.O.S. EL. 112'-0\""]
    noise.append("ROOM 101")
    layer = text_layer([*noise, NOTES[0]])
    assert meaningful_lines(layer) == [NOTES[0]]
    assert measure_coverage(layer, []).total_lines == 1


@pytest.mark.parametrize(
    ("line", "tick"),
    [
        ('15"', True),
        ("8' - 0\"", True),
        ("EL. 100'-6\"", True),
        ("ELEV 98'-0\" +/-", True),
        ('2X6 @ 16" O.C. TYP.', False),
        ("ELECTRICAL PANEL 2A", False),
    ],
)
def test_dimension_ticks(line, tick):
    """Only lines of numbers and feet/inch marks (with an elevation prefix) are ticks."""
    assert is_dimension_tick(line) is tick


def test_page_without_meaningful_lines_is_fully_covered():
    """A page with only noise has ratio 1.0: there is nothing to miss."""
    coverage = measure_coverage(text_layer(['15"', "A-101", "N"]), [])
    assert (coverage.total_lines, coverage.ratio) == (0, 1.0)


def test_note_wrapped_over_lines_is_covered_by_its_object():
    """A note the page wraps over three lines counts all three covered by the one object."""
    wrapped = [
        "4. CONTRACTOR SHALL COORDINATE ALL",
        "OPENINGS IN STRUCTURAL WALLS WITH THE",
        "MECHANICAL AND ELECTRICAL DRAWINGS.",
    ]
    note = obj("n4", " ".join(wrapped))
    assert measure_coverage(text_layer(wrapped), [note]).covered_lines == 3


def test_case_punctuation_and_enumerator_do_not_matter():
    """Lowercase source_text without the note number and punctuation still covers the line."""
    note = obj("n1", "all dimensions shall be verified in the field")
    assert measure_coverage(text_layer([NOTES[0]]), [note]).ratio == 1.0


def test_description_and_attribute_values_count():
    """Text carried in a description or in attribute values covers its line."""
    layer = text_layer(["DOOR SCHEDULE NOTES APPLY", "D101 HOLLOW METAL PAINTED"])
    objects = [
        obj("a", None, description="Door schedule notes apply"),
        obj("b", attributes={"mark": "D101", "material": "HOLLOW METAL", "finish": ["PAINTED"]}),
    ]
    assert measure_coverage(layer, objects).covered_lines == 2


def test_a_line_is_not_covered_across_two_objects():
    """Half a line in one object and half in the next does not cover it."""
    layer = text_layer(["PROVIDE FIRE BLOCKING AT EACH FLOOR"])
    objects = [obj("a", "PROVIDE FIRE BLOCKING"), obj("b", "AT EACH FLOOR")]
    assert measure_coverage(layer, objects).covered_lines == 0


def test_a_number_misread_leaves_the_line_uncovered():
    """ "(2) 2X6 STUD PACK" does not cover a line that says "(5)": words match whole."""
    misread = obj("s", "(2) 2X6 STUD PACK AT EACH GIRDER BEARING")
    assert measure_coverage(text_layer([NOTES[2]]), [misread]).ratio == 0.0


def test_normalize():
    """Normalization keeps lowercase alphanumeric words, single-spaced."""
    assert normalize("  (5) 2X6 STUD-PACK,\nTYP. ") == "5 2x6 stud pack typ"
