"""One rows rule for words, cells and list entries, each caller with its own tolerance."""

from shared.pagetext import Box, rows


def _boxes(*boxes: tuple[float, float, float, float]) -> list[Box]:
    return [Box(*b) for b in boxes]


def test_items_side_by_side_form_a_row_in_order_along_it():
    """Rows come top to bottom, each row's items left to right, whatever the input order."""
    items = _boxes((50, 0, 60, 10), (0, 30, 10, 40), (0, 1, 10, 11), (20, 31, 30, 41))
    assert rows(items, lambda b: b) == [[items[2], items[0]], [items[1], items[3]]]


def test_a_row_keeps_its_first_items_centre_unless_it_settles():
    """Each item a little lower than the last: against the first item's centre the third is
    out of reach; against the row's mean centre (words) it is still in."""
    items = _boxes((0, 0, 10, 10), (20, 4, 30, 14), (40, 6, 50, 16))
    assert [len(r) for r in rows(items, lambda b: b)] == [2, 1]
    assert [len(r) for r in rows(items, lambda b: b, settle=True)] == [3]


def test_the_caller_sets_the_reach_and_the_height():
    """A reach of half the row's first height takes in a small item the default (half the
    smaller height) leaves out; a text height given by the caller replaces the box's."""
    big, small = _boxes((0, 0, 10, 20), (20, 13, 30, 17))
    assert len(rows([big, small], lambda b: b)) == 2
    assert len(rows([big, small], lambda b: b, reach=lambda row, _item: 0.5 * row)) == 1
    assert len(rows([big, small], lambda b: b, height=lambda _b: 20.0)) == 1


def test_items_can_be_taken_by_their_tops():
    """By top, a tall item whose top is highest seeds the row, whatever its centre."""
    tall, short = _boxes((0, 0, 10, 30), (20, 10, 30, 14))
    by_centre = rows([tall, short], lambda b: b, reach=lambda row, _item: 0.5 * row)
    by_top = rows([tall, short], lambda b: b, reach=lambda row, _item: 0.5 * row, by_top=True)
    assert by_centre == [[short], [tall]] and by_top == [[tall, short]]
