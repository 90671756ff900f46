"""Titles OCR gave by size alone (``SheetReading.title_guess``): a page does not take its own,
and the set takes them where its sheets show the place is their title's (``shared.sheet.
decide``): at least three sheets print theirs there, not all in one wording, and none cut
short. The page keeps its own number and its source."""

from shared.pagetext import Box
from shared.sheet.decide import decide_set
from shared.sheet.reading import CellReading, FieldReading, PlacedGuess, SheetReading
from tests.support.identity import set_identity

SLOT = Box(2300, 1540, 2500, 1560)  # where the sheets' titles are printed


def _page(number: str, guess: str | None, at: Box = SLOT, title: str | None = None):
    return SheetReading(
        number=FieldReading(text=number, word_ids=[1]),
        title=FieldReading(text=title, word_ids=[2]) if title else None,
        ocr=True,
        title_guess=PlacedGuess(text=guess, word_ids=[3, 4], box=at) if guess else None,
    )


def _titles(pages: list[SheetReading]) -> dict[int, str | None]:
    return {n: d.title for n, d in decide_set(dict(enumerate(pages, start=1))).items()}


def test_guesses_printed_where_the_sets_sheets_print_theirs_are_taken():
    pages = [
        _page("F1", "CLUBHOUSE 1ST FLR FA PLAN"),
        _page("F2", "CLUBHOUSE 2ND FLR FA PLAN"),
        _page("F3", "CALCULATIONS"),
        _page("F4", "CALCULATIONS & RISER DETAIL"),
        _page("F5", "COTTAGES ON THE LAKE", at=Box(2300, 300, 2500, 320)),  # elsewhere
        _page("F6", "KEY PLAN", title="FIRE ALARM RISER"),  # the page read its own title
    ]
    assert _titles(pages) == {
        1: "CLUBHOUSE 1ST FLR FA PLAN",
        2: "CLUBHOUSE 2ND FLR FA PLAN",
        3: "CALCULATIONS",
        4: "CALCULATIONS & RISER DETAIL",
        5: None,
        6: "FIRE ALARM RISER",
    }
    headers = set_identity(dict(enumerate(pages, start=1)))
    assert headers[1].sheet_title == "CLUBHOUSE 1ST FLR FA PLAN"
    assert headers[1].sheet_number == "F1" and headers[1].sheet_number_source == "ocr"
    assert headers[5].sheet_title is None


def test_one_wording_everywhere_is_a_banner_and_two_sheets_are_no_slot():
    banner = [_page(f"T{n}", "I-5 TO SR 161 NEW EXPRESSWAY") for n in range(1, 5)]
    assert set(_titles(banner).values()) == {None}
    two = [_page("T1", "ROOF PLAN"), _page("T2", "SITE PLAN"), _page("T3", None)]
    assert set(_titles(two).values()) == {None}


def test_a_guess_cut_short_of_the_wording_more_sheets_print_is_not_taken():
    pages = [
        _page("SC1", "SR167 STAGE 1 TEMPORARY ITS PLANS"),
        _page("SC2", "SR167 STAGE 1 TEMPORARY ITS PLANS"),
        _page("SC3", "SR167 STAGE 2 ITS PLANS"),
        _page("SC4", "TEMPORARY ITS PLANS", at=Box(2300, 1552, 2500, 1560)),
    ]
    assert _titles(pages) == {
        1: "SR167 STAGE 1 TEMPORARY ITS PLANS",
        2: "SR167 STAGE 1 TEMPORARY ITS PLANS",
        3: "SR167 STAGE 2 ITS PLANS",
        4: None,
    }


def test_one_wording_with_words_ocr_lost_is_still_one_wording():
    """Every sheet prints one line there (a project's name over its title, say); OCR lost a
    word or two of it on some: one wording, a banner, not the sheets' titles."""
    full = "I-5 TO SR 161 NEW EXPRESSWAY COMMUNICATION ONE-LINE DIAGRAM"
    lost = "I-5 TO SR NEW EXPRESSWAY COMMUNICATION ONE-LINE"
    pages = [_page(f"ITS-{n}", full if n % 2 else lost) for n in range(1, 5)]
    assert set(_titles(pages).values()) == {None}


CELL = Box(2280, 1520, 2520, 1580)  # the title cell around SLOT


def _celled(number: str, *, title: str | None = None, guess: str | None = None, sure=1.0, lines=1):
    """A sheet whose title cell is read under its label (``title``), or whose label OCR did
    not read, its value a guess (``guess``, read with the confidence ``sure``, the last of
    the cell's ``lines``); the cell a few points off where the others are, as scans are."""
    shift = 0 if title else 6
    cell = CellReading(
        box=Box(CELL.x0 + shift, CELL.y0 + shift, CELL.x1 + shift, CELL.y1 + shift),
        label="TITLE" if title else "Ttlse",
        field="title" if title else None,
        value=title or guess or "",
        value_ids=[2] if title else [*range(5, 4 + lines), 3, 4],
    )
    page = _page(number, None, title=title)
    if guess is None:
        return page.model_copy(update={"cells": [cell]})
    placed = PlacedGuess(text=guess, word_ids=[3, 4], box=SLOT, confidence=sure)
    return page.model_copy(update={"cells": [cell], "title_guess": placed})


def test_a_guess_in_the_cell_where_other_sheets_print_their_labelled_title_is_taken():
    """A sheet whose title label OCR misread ("Ttlse") takes the value of its cell where two
    other sheets print their title under the label; not with one sheet to show it, nor a
    value OCR was unsure of (the place vouches for where a title is, not how it was read)."""
    pages = [
        _celled("A1", title="SITE PLAN"),
        _celled("A2", title="ROOF PLAN"),
        _celled("A3", guess="SECTIONS"),
        _celled("A4", guess="ELEVATI0NS", sure=0.9),
    ]
    decided = decide_set(dict(enumerate(pages, start=1)))
    assert [decided[n].title for n in (1, 2, 3, 4)] == ["SITE PLAN", "ROOF PLAN", "SECTIONS", None]
    assert "2 other sheets of the set print their title under its label" in decided[3].why
    assert decided[3].titled_by_place
    one = [_celled("A1", title="SITE PLAN"), _celled("A3", guess="SECTIONS")]
    assert _titles(one) == {1: "SITE PLAN", 2: None}
    cut = [*pages[:2], _celled("A3", guess="BEFINTLIGT OCH NYTT", lines=2)]
    assert _titles(cut)[3] is None  # the guess is the last of the cell's two lines


def test_a_guess_on_the_line_over_the_sets_titles_is_another_place():
    """Three sheets' guesses are one wording (their one title, a banner); a fourth sheet's
    guess is the project's name on the line over it, its corner near theirs: the two lines
    are two places, neither vouched by the other's wording."""
    pages = [_page(f"SC{n}", "SR167 STAGE 1 TEMPORARY ITS PLANS") for n in range(1, 4)]
    over = Box(2304, 1505, 2500, 1530)
    pages.append(_page("SC4", "SR 161 TO SR 410 REBUILD INTERCHANGE", at=over))
    assert set(_titles(pages).values()) == {None}


def _unread_label(number: str, value: str, *, sure: float = 0.99, at: Box = CELL):
    """A sheet that read no title and gave no guess: its title cell's label lost, the cell
    holding ``value``, read with the confidence ``sure``."""
    cell = CellReading(box=at, value=value, value_ids=[5, 6], value_confidence=sure)
    return _page(number, None).model_copy(update={"cells": [cell]})


def test_the_value_of_a_cell_whose_label_was_lost_where_other_sheets_print_their_title():
    """A scanned sheet whose title label OCR lost and whose largest print is a banner (so no
    guess): the set takes its cell's value where other sheets (one is enough) print their
    title under its label, the title all the cell holds; not a value OCR was unsure of, a
    banner, a cell elsewhere, nor where the titles are part of their cells (a cell of a
    title and its scale)."""
    titled = [_celled("A1", title="SITE PLAN"), _celled("A2", title="ROOF PLAN")]
    decided = decide_set(dict(enumerate([*titled, _unread_label("A3", "SECTIONS")], start=1)))
    assert decided[3].title == "SECTIONS"
    assert decided[3].titled_by_place and decided[3].number == "A3"
    assert "2 other sheets of the set print their title" in decided[3].why
    assert _titles([*titled, _unread_label("A3", "SECTIONS", sure=0.9)])[3] is None
    assert _titles([*titled, _unread_label("A3", "ISSUED FOR CONSTRUCTION")])[3] is None
    elsewhere = Box(CELL.x0, CELL.y0 - 80, CELL.x1, CELL.y1 - 80)
    assert _titles([*titled, _unread_label("A3", "SECTIONS", at=elsewhere)])[3] is None
    # Apart both across and down: the gaps are no overlap, whatever their product.
    apart = Box(CELL.x0 - 400, CELL.y0 - 200, CELL.x1 - 400, CELL.y1 - 200)
    assert _titles([*titled, _unread_label("A3", "SECTIONS", at=apart)])[3] is None
    assert _titles([titled[0], _unread_label("A3", "SECTIONS")])[2] == "SECTIONS"
    parted = [
        t.model_copy(update={"cells": [t.cells[0].model_copy(update={"value_ids": [2, 9]})]})
        for t in titled
    ]
    assert _titles([*parted, _unread_label("A3", "SECTIONS")])[3] is None
