"""The generated multilingual set as raster images (``tests.support.renderings``: 150 dpi,
grey, JPEG, no text layer), read through extract's rung 1 with the real OCR engine and
decided as the report decides it (``tests.support.identity``). One set of each capability
a scan's title block needs:

- the cells' walls found in the image itself (a page that is an image has no drawing);
- the walls of the last cells, the drawing's frame, standing well clear of any text;
- labels in small print turned 90°, too small for the page image's detector, read closer
  in the strip where the number was found;
- a wall touching a value, read by the recogniser as "|";
- a number whose script changes inside it ("建施-00"), split by the recogniser;
- labels in cells of their own (Japanese 表題欄);
- a scale's value ("Som angivet") beside the number, never the title.

``python -m bench.titleblocks --renderings raster`` reads every set."""

import random
from functools import cache

import pytest

from shared.infra.settings import Settings
from tests.support.identity import Tally, read_set, set_identity
from tests.support.renderings import render
from tests.support.titleblocks.languages import LANGUAGES
from tests.support.titleblocks.sheets import generated_sets, make_set

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("generated_title_blocks")]

# Two sheets of each: the set's decision has a second page to agree with.
SETS = (
    ("en-two_consultant", (1, 2)),
    ("en-iso7200", (1, 2)),
    ("sv-right_strip", (1, 2)),
    ("da-right_strip", (1, 2)),
    ("it-bottom_right", (1, 2)),
    ("zh-right_strip", (1, 2)),
    ("ja-japanese", (1, 2)),
    ("da-bottom_right", (1, 2)),
)


@cache
def _sets():
    return {s.name: s for s in generated_sets()}


@pytest.mark.parametrize(("name", "pages"), SETS)
async def test_a_raster_title_block_reads_its_number_and_title(name, pages, readers):
    generated = _sets()[name]
    pdf = render("raster", generated.pdf)
    readings = await read_set(pdf, pages, Settings(_env_file=None), readers)
    decided = set_identity(readings)
    tally = Tally()
    for truth in generated.truths[: len(pages)]:
        got = decided[truth.page]
        tally.count(
            f"p{truth.page}", (got.sheet_number, got.sheet_title), (truth.number, truth.title)
        )
    assert tally.numbers_right == tally.numbers_labelled, tally.misses
    assert tally.titles_right == tally.titles_labelled, tally.misses
    assert tally.titles_wrong == 0, tally.misses


async def test_the_one_sheet_that_read_its_number_label_names_the_cell_the_rest_are_read_in(
    readers,
):
    """A German strip whose "Zeichnungsnummer:" label, printed small and turned up its
    cell's side, OCR read on one sheet only (seed 38): the other sheet took its position in
    "Blatt 1 von 4" for its number. Read again in the ruled cell the labelled sheet's number
    stands in, label and all, it reads its own printed number."""
    generated = make_set(LANGUAGES["de"], "right_strip", random.Random("38-de-right_strip"), 4)
    pdf = render("raster", generated.pdf)
    decided = set_identity(await read_set(pdf, (1, 3), Settings(_env_file=None), readers))
    for truth in (generated.truths[0], generated.truths[2]):
        assert decided[truth.page].sheet_number == truth.number
