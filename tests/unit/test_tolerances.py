"""The reading's tolerances are frozen settings objects: today's values by default, each a
documented field, and set per call, where they change what is read (no module edited)."""

import pytest
from pydantic import BaseModel, ValidationError

from services.extract.model.tiles import plan_tiles
from services.extract.reading.visibility import property_hidden
from services.extract.tolerances import (
    TileTolerances,
    VisibilityTolerances,
)
from shared.pagetext import (
    Box,
    EvidenceTolerances,
    LayoutTolerances,
    PageWords,
    TableTolerances,
    TextLayer,
    Word,
    align,
    find_tables,
    laid_out,
)

KINDS = [
    LayoutTolerances,
    TableTolerances,
    EvidenceTolerances,
    VisibilityTolerances,
    TileTolerances,
]


@pytest.mark.parametrize("kind", KINDS)
def test_each_tolerance_is_a_documented_field_of_a_frozen_object(kind: type[BaseModel]):
    """A tolerance is one field with its default and the sentence saying what it weighs
    (a new one is one more such line); the objects cannot be changed once made."""
    assert kind.model_fields
    for name, field in kind.model_fields.items():
        assert field.description and len(field.description.split()) >= 4, name
        assert not field.is_required(), name
    tolerances = kind()
    name = next(iter(kind.model_fields))
    with pytest.raises(ValidationError):
        setattr(tolerances, name, getattr(tolerances, name))


def test_the_defaults_are_todays_values():
    """What the reading weighed before its tolerances were objects, unchanged."""
    assert LayoutTolerances() == LayoutTolerances(
        line_gap=1.0, line_size_ratio=1.6, block_gap=0.8, block_size_tolerance=0.25, align_pts=4.0
    )
    assert TableTolerances().model_dump() == {
        "align_heights": 0.3,
        "align_pts": 4.0,
        "height_tolerance": 0.35,
        "max_cell_words": 8,
        "max_median_cell_words": 4,
        "max_cell_gap": 15.0,
        "gutter_heights": 4.0,
        "gutter_ratio": 3.0,
        "table_row_gap": 2.5,
        "wrap_gap": 0.8,
        "min_table_rows": 3,
        "min_two_row_columns": 3,
    }
    assert EvidenceTolerances() == EvidenceTolerances(
        letter_match=0.85, min_fuzzy_letters=4, max_diagonals=8
    )
    assert VisibilityTolerances() == VisibilityTolerances(
        min_readable_pt=1.0, ground_tolerance=24, ring_px=2, min_box_px=2
    )
    assert TileTolerances() == TileTolerances(
        legible_px=10.0,
        small_text_share=0.1,
        default_text_pt=6.75,
        overlap=0.1,
        overview_px=1024,
        min_gain=1.25,
        zoom_step=1.1,
    )


def _layer(words: list[tuple[str, Box]], tolerances: LayoutTolerances | None = None) -> TextLayer:
    laid = [Word(text=text, bbox=box, size=box.height) for text, box in words]
    extra = {"tolerances": tolerances} if tolerances else {}
    return laid_out(words=laid, page_number=1, width=612, height=792, has_text_layer=True, **extra)


def test_a_wider_line_gap_set_per_call_joins_two_words_into_one_line():
    """Two words 1.5 text heights apart are two lines by today's gap, one line for a caller
    that allows two heights."""
    words = [("DOOR", Box(100, 100, 140, 110)), ("SCHEDULE", Box(155, 100, 235, 110))]
    assert _layer(words).line_texts == ["DOOR", "SCHEDULE"]
    assert _layer(words, LayoutTolerances(line_gap=2.0)).line_texts == ["DOOR SCHEDULE"]


def test_a_two_row_table_of_two_columns_is_found_when_a_caller_allows_it():
    """A header of two columns over one row of values is no table by today's tolerances
    (three columns are asked), and one for a caller that asks two."""
    cells = [
        ("MARK", Box(100, 100, 130, 108)),
        ("WIDTH", Box(200, 100, 235, 108)),
        ("D1", Box(100, 115, 115, 123)),
        ("900", Box(200, 115, 220, 123)),
    ]
    layer = _layer(cells)
    assert find_tables(layer) == []
    [table] = find_tables(layer, tolerances=TableTolerances(min_two_row_columns=2))
    assert [row.text for row in table.rows] == ["MARK WIDTH", "D1 900"]


def test_a_smaller_readable_size_set_per_call_shows_tiny_text():
    """Text of 0.8 pt is tiny (hidden) by today's size, shown to a caller that reads 0.5 pt."""
    span = {"size": 0.8, "alpha": 255}
    assert property_hidden(span) == "tiny"
    assert property_hidden(span, VisibilityTolerances(min_readable_pt=0.5)) is None


def test_a_higher_legibility_set_per_call_tiles_a_page_read_whole_today():
    """A letter page of 10 pt text is legible whole in a 1000 px image today; a caller that
    asks text 40 px high gets it as tiles."""
    words = [("GENERAL", Box(72, 100, 130, 110)), ("NOTES", Box(135, 100, 175, 110))]
    layer = _layer(words)
    zoom = 1000 / 792
    assert plan_tiles(layer, zoom, 1000, 12).clips == []
    tiled = plan_tiles(layer, zoom, 1000, 12, tolerances=TileTolerances(legible_px=40.0))
    assert len(tiled.clips) >= 2


def test_a_looser_letter_match_set_per_call_finds_a_claim_misspelt_past_todays():
    """A claim two letters off in eleven is nowhere on the page by today's match, and found
    on its words by a caller that accepts less alike letters."""
    words = [("GENERAL", Box(72, 100, 130, 110)), ("NOTES", Box(135, 100, 175, 110))]
    page = PageWords(_layer(words))
    assert align("GENERIC NOTES", page) is None
    found = align("GENERIC NOTES", page, EvidenceTolerances(letter_match=0.7))
    assert found is not None and found.text == "GENERAL NOTES"
