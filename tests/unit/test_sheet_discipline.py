"""A sheet's discipline only where the set says it: its NCS numbering, its titles, its
drawing index; otherwise unknown."""

import pytest

from shared.sheet.discipline import UNKNOWN, follows_ncs, named_disciplines, set_disciplines


def test_an_ncs_set_says_the_discipline_by_its_letters():
    """A101, S-001, M2.01, E3.0: the designator letter names the discipline."""
    sheets = [("A101", "FLOOR PLAN"), ("S-001", "NOTES"), ("M2.01", "ROOF"), ("E3.0", "LIGHTING")]
    assert set_disciplines(sheets) == ["architectural", "structural", "mechanical", "electrical"]


def test_a_set_outside_the_ncs_scheme_says_nothing_by_its_letters():
    """An Australian ST01.B SITE PLAN is not structural; nor are the sheets beside it."""
    sheets = [("ST01.B", "SITE PLAN"), ("ST02", "FLOOR PLAN"), ("ST04", "STORE"), ("ST29", "X")]
    assert set_disciplines(sheets) == [UNKNOWN] * 4
    assert not follows_ncs([n for n, _ in sheets])


def test_words_decide_where_the_letter_agrees_or_there_is_none():
    """A title naming one discipline counts when the number's letter agrees or it has no
    letter; a title that contradicts the letter leaves it unknown."""
    sheets = [
        ("COV-S", "STRUCTURAL COVER SHEET"),  # no NCS letter: the words say it
        ("700-00", "ELECTRICAL GROUND FLOOR PLAN"),
        ("100-00", "SITE PLAN"),
        ("A5", "STRUCTURAL NOTES"),  # the letter says architectural: no agreement
        (None, "TRAGWERKSPLANUNG GRUNDRISS"),
        (None, "COVER"),
    ]
    assert set_disciplines(sheets) == [
        "structural",
        "electrical",
        UNKNOWN,
        UNKNOWN,
        "structural",
        None,
    ]


def test_the_drawing_index_titles_count_as_the_sheets_words():
    """The index's title for a number names the discipline the sheet's own title does not."""
    sheets = [("10-01", "GROUND FLOOR"), ("20-01", "GROUND FLOOR")]
    index = [("10-01", "ARCHITECTURAL GROUND FLOOR"), ("20-01", "ELEKTRO ERDGESCHOSS")]
    assert set_disciplines(sheets, index) == ["architectural", "electrical"]


def test_one_odd_number_does_not_break_an_ncs_set():
    """A cover numbered COV-S among S-numbers: the set still follows the scheme."""
    numbers = ["COV-S", *(f"S{n:03}" for n in (1, 2, 101, 301, 601, 602, 621, 622, 701))]
    assert follows_ncs(numbers)
    assert set_disciplines([(n, "PLAN") for n in numbers])[1:] == ["structural"] * 9


@pytest.mark.parametrize(
    ("title", "named"),
    [
        ("FIRE ALARM RISER", {"fire alarm"}),
        ("STRUCTURAL AND ARCHITECTURAL", {"structural", "architectural"}),
        ("CIVILIAN SHELTER", set()),
        (None, set()),
    ],
)
def test_named_disciplines_are_whole_words(title, named):
    assert named_disciplines(title) == named
