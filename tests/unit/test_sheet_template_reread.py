"""The set's template re-reads what one page missed: once the confident pages agree where
the number's cell is, a page that read no number is read again in that cell (closer, then
from a second binarisation), and its number is the page's own printed text with its word
ids, read by the page's own reader; the template never supplies a value."""

from dataclasses import dataclass, field

import numpy
import pymupdf
import pytest

from services.extract.reading.page import Readers, ocr_layer
from services.extract.reading.reread import (
    apart_from_label,
    binarised,
    reread_missed,
    reread_number,
    with_first_title,
)
from services.extract.rung1 import extract_rung1
from shared.contracts.interfaces import Raster
from shared.infra.settings import Settings
from shared.pagetext import Box, TextLayer, Word, laid_out
from shared.sheet.reader import Evidence
from shared.sheet.reading import (
    Candidate,
    CellReading,
    FieldReading,
    SheetReading,
    read_sheet,
)
from shared.sheet.template import (
    at_cell,
    cells_to_reread,
    number_cells,
)
from tests.support.fakes import InlinePageReader, ScriptedOcr
from tests.support.glued import CELL_WORDS, NUMBERS, PAGE_WORDS, glued_number_scan, ocr_word

W, H = 1224.0, 792.0
SETTINGS = Settings(_env_file=None)
NUMBER_BOX = Box(1100.0, 740.0, 1160.0, 760.0)


def _confident(number: str, box: Box = NUMBER_BOX) -> SheetReading:
    chosen = Candidate(
        text=number,
        word_ids=[0],
        box=box,
        size=20,
        label="SHEET NO.",
        evidence=Evidence.LABEL_IN_TITLE_BLOCK,
        chosen=True,
    )
    return SheetReading(number=FieldReading(text=number, word_ids=[0]), candidates=[chosen])


def test_confident_pages_that_agree_name_the_cell_a_numberless_page_is_read_in():
    """Two confident pages printing their numbers at one place make the template; the page
    that read none is read again there, the others not."""
    readings = {1: _confident("A-101"), 2: _confident("A-102"), 3: SheetReading()}
    [cell] = number_cells(readings)
    assert cell.pages == 2 and cell.label == "SHEET NO."
    assert cell.box.contains(NUMBER_BOX.centre) and cell.box.x0 < NUMBER_BOX.x0
    assert cells_to_reread(readings) == {3: cell}


def test_a_set_of_two_title_blocks_reads_a_page_in_its_own():
    """Consultants' sheets print their numbers elsewhere: a page whose title block was
    found is read in the cell inside it, not in the cell most pages agree on."""
    theirs = Box(100.0, 740.0, 160.0, 760.0)
    readings = {
        1: _confident("A-101"),
        2: _confident("A-102"),
        3: _confident("A-103"),
        4: _confident("M-1", theirs),
        5: _confident("M-2", theirs),
        6: SheetReading(region=Box(40.0, 600.0, 300.0, 780.0)),
        7: SheetReading(),
    }
    cells = cells_to_reread(readings)
    assert cells[6].box.contains(theirs.centre) and cells[6].pages == 2
    assert cells[7].box.contains(NUMBER_BOX.centre) and cells[7].pages == 3


def _largest(number: str) -> SheetReading:
    """A page whose number was chosen for its print alone (no label vouches for it)."""
    chosen = Candidate(
        text=number, word_ids=[0], box=NUMBER_BOX, size=20, evidence=Evidence.LARGEST, chosen=True
    )
    return SheetReading(number=FieldReading(text=number, word_ids=[0]), candidates=[chosen])


def test_numbers_chosen_for_their_print_name_the_cell_when_they_share_the_sets_shape():
    """Unlabelled numbers that share one shape (S1.02, S1.03) at one place make the
    template; unlabelled texts of different shapes there do not."""
    readings = {1: SheetReading(), 2: _largest("S1.02"), 3: _largest("S1.03")}
    assert cells_to_reread(readings)[1].pages == 2
    mixed = {1: SheetReading(), 2: _largest("S1.02"), 3: _largest("PLAN")}
    assert cells_to_reread(mixed) == {}


def test_a_labelled_number_and_one_chosen_for_its_print_at_its_place_are_one_field():
    """One scanned sheet read its number's label, another only the number's print (in the
    set's shape, where the first prints its number): two pages of one field, under the
    label, and the sheets that read neither are read there."""
    readings = {1: SheetReading(ocr=True), 2: _confident("K-102"), 3: _largest("K-103")}
    [cell] = number_cells(readings)
    assert cell.pages == 2 and cell.label == "SHEET NO."
    assert cells_to_reread(readings) == {1: cell}


def test_a_scanned_pages_unvouched_number_outside_the_cell_has_the_cell_read():
    """A scan whose label OCR lost chose a callout's "T11" for its print, away from the cell
    the set's confident pages agree on: the cell is read again; a text page's such number,
    or a scan's number standing in the cell, is not."""
    callout = Box(200.0, 520.0, 230.0, 545.0)

    def unvouched(number: str, box: Box, ocr: bool) -> SheetReading:
        reading = _largest(number)
        reading.candidates[0].box = box
        reading.ocr = ocr
        return reading

    readings = {
        1: _confident("SC20-TN01"),
        2: _confident("SC20-04T"),
        3: unvouched("T11", callout, ocr=True),
        4: unvouched("T12", callout, ocr=False),
        5: unvouched("SC20-05T", NUMBER_BOX, ocr=True),
    }
    assert set(cells_to_reread(readings)) == {3}


def test_a_scanned_pages_position_in_a_count_has_the_number_cell_read():
    """Two sheets read their number field; two scans whose number cell's label OCR lost
    chose their position in "SHEET 1 OF 4" (labelled, but only a position): the positions
    make no template of their own, and the scan is read again in the number's cell, unless
    something it read stands there already (the set takes that); a set whose numbers are
    all positions (a recorded map's) keeps them as its template."""
    count = Box(1170.0, 600.0, 1180.0, 610.0)

    def position(n: int, *, at_cell: bool = False) -> SheetReading:
        chosen = Candidate(
            text=str(n),
            word_ids=[0],
            box=count,
            size=9,
            label="SHEET",
            of="4",
            evidence=Evidence.LABEL_IN_TITLE_BLOCK,
            chosen=True,
        )
        there = Candidate(text=f"P00{n}", word_ids=[1], box=NUMBER_BOX, size=20)
        candidates = [chosen, there] if at_cell else [chosen]
        return SheetReading(
            number=FieldReading(text=str(n), word_ids=[0]), candidates=candidates, ocr=True
        )

    readings = {1: position(1), 2: _confident("P002"), 3: position(3, at_cell=True)}
    readings[4] = _confident("P004")
    [cell] = number_cells(readings)
    assert cell.box.contains(NUMBER_BOX.centre) and cell.pages == 2
    assert cells_to_reread(readings) == {1: cell}
    counted = {n: position(n) for n in (1, 2, 3)}
    [place] = number_cells(counted)
    assert place.box.contains(count.centre) and cells_to_reread(counted) == {}


def test_no_template_without_two_confident_pages_that_agree():
    """Two confident pages printing at different places name no cell; nor does one page
    whose number no label vouches for."""
    elsewhere = Box(100.0, 100.0, 160.0, 120.0)
    apart = {1: _confident("A-101"), 2: _confident("A-102", elsewhere), 3: SheetReading()}
    assert cells_to_reread(apart) == {}
    assert cells_to_reread({1: _largest("S1.02"), 2: SheetReading()}) == {}


def test_the_only_sheet_whose_label_was_read_names_the_cell_for_the_rest():
    """A set whose other sheets lost their labels to OCR: the one sheet whose title block
    labels its number names the cell the others are read in, as a template of one page."""
    readings = {1: SheetReading(ocr=True), 2: _confident("A-102"), 3: SheetReading(ocr=True)}
    cells = cells_to_reread(readings)
    assert set(cells) == {1, 3} and cells[1].pages == 1 and cells[1].label == "SHEET NO."
    assert cells[1].box.contains(NUMBER_BOX.centre)
    # A text page without a number printed none in its text layer: not read on one's word.
    assert cells_to_reread({1: SheetReading(), 2: _confident("A-102")}) == {}


def test_the_cell_read_again_is_the_ruled_cell_the_number_stands_in_with_its_label():
    """A label printed small and turned up its cell's side runs past the value's reach: the
    cell read again is the ruled cell the confident page's number stands in, whole, so the
    closer reading reads the label whole too ("hnungsnummer:" is no label)."""
    ruled = Box(1040.0, 640.0, 1220.0, 790.0)  # taller than the value's reach
    turned_label = CellReading(box=ruled, label="SHEET NO.", field="number")
    labelled = _confident("A-102").model_copy(update={"cells": [turned_label]})
    readings = {1: SheetReading(ocr=True), 2: labelled}
    [cell] = number_cells(readings)
    assert Box.union([cell.box, ruled]) == cell.box
    # A ruled "cell" as large as a stretch of the sheet is not read whole.
    wide = Box(0.0, 0.0, 1224.0, 792.0)
    unruled = _confident("A-102").model_copy(update={"cells": [CellReading(box=wide)]})
    [cell] = number_cells({1: SheetReading(ocr=True), 2: unruled})
    assert cell.box.x1 - cell.box.x0 < 432


def test_a_number_every_sheet_prints_alike_makes_no_template():
    """A number printed alike on every sheet (the project's) is no sheet's: no cell."""
    readings = {n: _confident("P-2040") for n in (1, 2, 3)}
    assert number_cells(readings) == []


def test_a_cell_larger_than_a_cell_is_never_read():
    """A template whose cell would be a stretch of the sheet (numbers printed large) is
    not read again."""
    large = Box(900.0, 600.0, 1160.0, 700.0)
    readings = {1: _confident("A-101", large), 2: _confident("A-102", large), 3: SheetReading()}
    assert number_cells(readings) and cells_to_reread(readings) == {}


@dataclass
class CellOcr(ScriptedOcr):
    """OCR whose closer reading of a region gives ``reads[i]`` on its i-th call (the grey
    render, then the binarised one), and records the regions and images it was given."""

    reads: list[list[Word]] = field(default_factory=list)
    images: list[numpy.ndarray] = field(default_factory=list)

    def ocr_raster(self, raster: Raster, turn: int = 0, *, detection_zoom=None, skip=None):
        self.images.append(raster.pixels)
        return self.reads[len(self.images) - 1] if len(self.images) <= len(self.reads) else []


def _readers(ocr: CellOcr) -> Readers:
    return Readers(pages=InlinePageReader(), ocr=ocr)


def _blank_pdf() -> bytes:
    doc = pymupdf.open()
    doc.new_page(width=W, height=H)
    return doc.tobytes()


def _empty_like() -> TextLayer:
    return TextLayer(page_number=1, width=W, height=H, has_text_layer=False, source="ocr")


CELL = Box(1040.0, 700.0, 1220.0, 790.0)


async def test_a_glued_label_and_value_read_apart_in_the_cell_give_the_pages_number():
    """The closer reading of the cell parts the label from its value: the page's own reader
    chooses the number, in the cell, from the page's (new) OCR words."""
    layer = ocr_layer(PAGE_WORDS, _empty_like())
    assert read_sheet(layer).number is None
    ocr = CellOcr(reads=[CELL_WORDS])
    found = await reread_number(
        _blank_pdf(), layer, SheetReading(), CELL, "SHEETNO", SETTINGS, _readers(ocr)
    )
    assert found is not None
    again, reading = found.layer, found.reading
    assert [w.text for w in found.words] == ["SHEET", "NO.", "A-103"]
    assert reading.number is not None and reading.sheet_number == "A-103"
    assert at_cell(reading, CELL)
    assert [again.words[i].text for i in reading.number.word_ids] == ["A-103"]
    # The page's words keep their ids; the glued line read at page resolution is set aside.
    assert [w.text for w in again.words[: len(layer.words)]] == [w.text for w in layer.words]
    assert [w.hidden for w in again.words[:3]] == [None, None, "covered"]
    assert len(ocr.images) == 1


async def test_the_second_binarisation_is_read_when_the_grey_render_gives_nothing():
    """Nothing in the grey render; the binarised one (black and white) reads the number."""
    layer = ocr_layer(PAGE_WORDS, _empty_like())
    ocr = CellOcr(reads=[[], CELL_WORDS])
    found = await reread_number(
        _blank_pdf(), layer, SheetReading(), CELL, "SHEETNO", SETTINGS, _readers(ocr)
    )
    assert found is not None and found.reading.sheet_number == "A-103"
    assert len(ocr.images) == 2 and set(numpy.unique(ocr.images[1])) <= {0, 255}


async def test_a_number_read_outside_the_cell_is_not_taken():
    """Words the closer reading finds outside the cell are not the cell's: no number."""
    layer = ocr_layer(PAGE_WORDS, _empty_like())
    away = [
        w.model_copy(update={"bbox": Box(w.bbox.x0 - 900, w.bbox.y0, w.bbox.x1 - 900, w.bbox.y1)})
        for w in CELL_WORDS
    ]
    ocr = CellOcr(reads=[away, away])
    found = await reread_number(
        _blank_pdf(), layer, SheetReading(), CELL, "SHEETNO", SETTINGS, _readers(ocr)
    )
    assert found is None


async def test_the_set_rereads_only_the_page_that_missed_its_number():
    """Of a set of three, the two confident pages are not read again; the third is, and
    reads its own number."""
    layer = ocr_layer(PAGE_WORDS, _empty_like())
    pages = {
        1: (layer, _confident("A-101")),
        2: (layer, _confident("A-102")),
        3: (layer, read_sheet(layer)),
    }
    ocr = CellOcr(reads=[CELL_WORDS])
    again = await reread_missed(_blank_pdf(), pages, SETTINGS, _readers(ocr))
    assert again[3][1].sheet_number == "A-103"
    assert again[1] == pages[1] and again[2] == pages[2]
    assert len(ocr.images) == 1


def _doubted(number: str, confidence: float, *, ocr: bool = True) -> SheetReading:
    """A page whose labelled number in the cell OCR read with ``confidence``."""
    reading = _confident(number)
    reading.number = FieldReading(text=number, word_ids=[0], confidence=confidence)
    reading.ocr = ocr
    return reading


def test_a_scanned_pages_number_ocr_was_unsure_of_has_its_cell_read_again():
    """OCR read "S0" at 0.79 for "S01" in the cell the set names: the cell is read again
    closer; a number OCR was sure of, or a text page's, is not."""
    readings = {
        1: _confident("S02"),
        2: _confident("S03"),
        3: _doubted("S0", 0.79),
        4: _doubted("S04", 0.99),
    }
    assert set(cells_to_reread(readings)) == {3}


@pytest.mark.parametrize(
    ("first_at", "closer", "kept"),
    [(NUMBER_BOX, 0.98, "A-103"), (NUMBER_BOX, 0.6, "A-10"), (Box(20, 20, 40, 30), 0.6, "A-103")],
)
async def test_a_number_read_again_is_taken_only_where_ocr_is_surer_of_it(first_at, closer, kept):
    """The cell read closer replaces a number OCR was unsure of in it only with one it is
    surer of; a number first read elsewhere (a count's position) is no rival to it."""
    layer = ocr_layer(PAGE_WORDS, _empty_like())
    first = _doubted("A-10", 0.79)
    first.candidates[0].box = first_at
    if first_at != NUMBER_BOX:  # chosen elsewhere for its print alone
        first.candidates[0].evidence = Evidence.LARGEST
    pages = {1: (layer, _confident("A-101")), 2: (layer, _confident("A-102")), 3: (layer, first)}
    closer_words = [w.model_copy(update={"confidence": closer}) for w in CELL_WORDS]
    again = await reread_missed(
        _blank_pdf(), pages, SETTINGS, _readers(CellOcr(reads=[closer_words]))
    )
    assert again[3][1].sheet_number == kept


async def test_a_cell_one_sheet_named_takes_only_a_number_the_pages_own_label_vouches_for():
    """Read in a cell a single sheet named (``pages`` 1), a page takes the number only
    where it reads its own label there; a bare number in the cell is not taken on one
    sheet's word, where two sheets' template takes it."""
    layer = ocr_layer(PAGE_WORDS, _empty_like())

    async def read(words: list[Word], pages: int) -> str | None:
        found = await reread_number(
            _blank_pdf(),
            layer,
            SheetReading(),
            CELL,
            "SHEETNO",
            SETTINGS,
            _readers(CellOcr(reads=[words, words])),
            pages=pages,
        )
        return found.reading.sheet_number if found else None

    assert await read(CELL_WORDS, pages=1) == "A-103"
    # Large, unlabelled, read surely: the page's reader takes it for its print alone.
    bare = [
        ocr_word("A-103", (1080.0, 735.0, 1180.0, 775.0), 40).model_copy(
            update={"confidence": 0.99}
        )
    ]
    assert await read(bare, pages=2) == "A-103"
    assert await read(bare, pages=1) is None


async def test_a_text_layer_with_words_in_the_cell_is_never_ocrd():
    """A page whose text layer has words in the cell was read there: no OCR, no number."""
    words = [Word(text="COVER", bbox=Box(1100.0, 740.0, 1160.0, 760.0), size=20)]
    layer = laid_out(words=words, page_number=1, width=W, height=H, has_text_layer=True)
    ocr = CellOcr(reads=[CELL_WORDS])
    found = await reread_number(
        _blank_pdf(), layer, SheetReading(), CELL, "SHEETNO", SETTINGS, _readers(ocr)
    )
    assert found is None and ocr.images == []


def test_binarised_is_black_and_white_with_thicker_strokes():
    """A faint one-pixel stroke comes out black and wider."""
    pixels = numpy.full((20, 20), 240, numpy.uint8)
    pixels[:, 10] = 150
    out = binarised(Raster(pixels, 300 / 72, 0.0, 0.0)).pixels
    assert set(numpy.unique(out)) == {0, 255}
    assert ((out == 0).sum(axis=1) == 2).all()  # two pixels wide, from one


def test_a_value_read_glued_to_the_end_of_its_label_is_parted_from_it():
    """ "NO.A-103" (the end of the label SHEET NO. and the value, read as one word) becomes
    "NO." and "A-103", the box shared along the line; a word that only looks like a label
    and has no digit after it, or a value alone, is left whole."""
    glued = ocr_word("NO.A-103", (1000.0, 700.0, 1080.0, 720.0), 14)
    label, value = apart_from_label([glued], "SHEETNO")
    assert (label.text, value.text) == ("NO.", "A-103")
    assert label.bbox.x1 == value.bbox.x0 == 1030.0 and value.bbox.x1 == 1080.0
    whole = ocr_word("SHEETNO.A-7", (0.0, 0.0, 110.0, 10.0), 10)
    assert [w.text for w in apart_from_label([whole], "SHEETNO")] == ["SHEETNO.", "A-7"]
    alone = [ocr_word("NOTES", (0.0, 0.0, 50.0, 10.0), 10), ocr_word("A-103", (0, 20, 50, 30), 10)]
    assert apart_from_label(alone, "SHEETNO") == alone
    assert apart_from_label([glued], None) == [glued]


@pytest.mark.slow
async def test_a_scanned_set_reads_the_number_one_sheet_missed_in_its_cell(readers):
    """With the OCR engine a worker runs: the last sheet's label and number read as one
    word give it no number alone; read again in the cell the other sheets name, it reads
    its own printed number."""
    pdf = glued_number_scan()
    pages = {}
    for n in (1, 2, 3):
        out = await extract_rung1(
            pdf, n, SETTINGS, None, readers=readers, worker_id="t", job_id="t"
        )
        pages[n] = (out.text_layer, out.result.reading or SheetReading())
    assert [pages[n][1].sheet_number for n in (1, 2, 3)] == ["A-101", "A-102", None]
    again = await reread_missed(pdf, pages, SETTINGS, readers)
    assert [again[n][1].sheet_number for n in (1, 2, 3)] == list(NUMBERS)
    layer, reading = again[3]
    assert reading.number is not None
    assert all(layer.words[i].origin == "ocr" for i in reading.number.word_ids)


def test_a_title_the_cells_words_would_change_stays_as_first_read():
    """The number read in the cell comes with the page's first title: a title the closer
    words would read otherwise is kept as first read, or, its words set aside, the page
    keeps its first reading."""
    layer = ocr_layer(PAGE_WORDS, _empty_like())
    first = SheetReading(title=FieldReading(text="GENERAL NOTES", word_ids=[0, 1]))
    found = _confident("A-103").model_copy(
        update={
            "number": FieldReading(text="A-103", word_ids=[2]),
            "title": FieldReading(text="NOTES A-103", word_ids=[1, 2]),
        }
    )
    kept = with_first_title(first, found, layer)
    assert kept is not None and kept.sheet_number == "A-103"
    assert kept.sheet_title == "GENERAL NOTES"
    assert [c.title for c in kept.candidates if c.chosen] == [first.title]
    hidden = layer.model_copy(
        update={"words": [w.model_copy(update={"hidden": "covered"}) for w in layer.words]}
    )
    assert with_first_title(first, found, hidden) is None
    assert with_first_title(SheetReading(), found, layer) == found


def test_a_first_title_that_was_the_numbers_cell_misread_gives_way():
    """A page first titled by its number's cell read glued ("SHEETNO.A-103") takes the title
    read with the number: that first title stood where the number now does."""
    layer = ocr_layer(PAGE_WORDS + CELL_WORDS, _empty_like())
    first = SheetReading(title=FieldReading(text="SHEETNO.A-103", word_ids=[2]))
    found = _confident("A-103").model_copy(
        update={
            "number": FieldReading(text="A-103", word_ids=[5]),
            "title": FieldReading(text="GENERAL NOTES", word_ids=[0, 1]),
        }
    )
    assert with_first_title(first, found, layer) == found
