"""The one normaliser, the one digit-run function and the unit of coverage."""

import pytest

from shared.pagetext import (
    coverage_units,
    digit_runs,
    fold_dashes,
    is_dimension_tick,
    is_meaningful,
    normalize,
    numbers_printed,
    plain_numbers,
    squash,
)


def test_normaliser():
    """One normaliser: case, punctuation, line breaks and Unicode dashes never decide."""
    assert normalize("  (5) 2X6 STUD-PACK,\nTYP. ") == "5 2x6 stud pack typ"
    assert normalize("A\u2010101") == normalize("A-101") == "a 101"
    assert squash("S\u2013201") == "s201"
    assert fold_dashes("E\u22122") == "E-2"
    assert digit_runs("12'-6 1/2\"") == ["12", "6", "1", "2"]


@pytest.mark.parametrize(
    ("line", "tick"),
    [
        ('15"', True),
        ("8' - 0\"", True),
        ("EL. 100'-6\"", True),
        ("ELEV 98'-0\" +/-", True),
        ("12'\u20136\"", True),
        ('2X6 @ 16" O.C. TYP.', False),
        ("ELECTRICAL PANEL 2A", False),
    ],
)
def test_dimension_ticks(line, tick):
    """Only lines of numbers and feet/inch marks (with an elevation prefix) are ticks."""
    assert is_dimension_tick(line) is tick


def test_coverage_units_fall_back_to_short_lines_only_when_there_is_nothing_else():
    """Meaningful lines are the units; a page of short tags is measured by its tags."""
    assert coverage_units(["GENERAL NOTES APPLY", "W1", "8'-0\""]) == [0]
    assert coverage_units(["W1", "8'-0\"", "A-101"]) == [0, 2]
    assert is_meaningful("PROVIDE FIRE BLOCKING") and not is_meaningful("ROOM 101")


def test_numbers_spelled_plainly_only_where_they_stand_alone():
    """Thousands lose their commas and decimals their trailing zeros; a number inside a token
    (a sheet "A101.10", a tag "W1,200") and a list ("1, 200") keep theirs."""
    assert plain_numbers("1,200 SF; 12,500,000; 3.50m; 12.0") == "1200 SF; 12500000; 3.5m; 12"
    for kept in ("A101.10", "W1,200", "1, 200", "0.125", "2.10.3"):
        assert plain_numbers(kept) == kept
    assert numbers_printed("LEVEL 02, 1,200 SF") == {"2", "1", "200", "1200"}
