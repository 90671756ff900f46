"""Sheet identity on the real drawing sets of ``../shared/corpus/``, as the report decides it:
each page read once into its ``SheetReading`` (OCR words on the sheets without a text layer,
the file's bookmarks for the page), then identity decided across each file from the
readings alone (``decide_set``: the template, the scheme, the bookmarks, the drawing index).
The manifest lists what each page prints."""

import asyncio
from functools import cache

import pymupdf
import pytest

from services.extract.reading.page import Readers
from services.extract.reading.textlayer import read_text_layer
from services.extract.rung1 import extract_rung1
from shared.infra.settings import Settings
from shared.pagetext import TextLayer
from shared.sheet.decide import decide_set
from shared.sheet.index import expand_index
from shared.sheet.reading import SheetReading, read_sheet
from shared.sheet.tokens import sheet_key
from tests.support.corpus import manifest, needs_corpus, pdf_bytes
from tests.support.identity import Tally, same_number, same_title

# The readings are shared: the three tests run in one worker (``--dist loadgroup``) and read
# the set once. OCR of the scanned sets takes most of it (minutes, until OCR is made fast).
pytestmark = [
    needs_corpus,
    pytest.mark.slow,
    pytest.mark.xdist_group("corpus_identity"),
    pytest.mark.timeout(1200),
]
# Shares of the manifest's labelled pages read right today (82/82 numbers, 79/82 titles),
# less a page. Two scans and an outlined page have no title field: the title their largest
# OCR'd text beside the number would give is not taken (a coin toss on OCR words).
NUMBERS_RIGHT = 0.98
TITLES_RIGHT = 0.95
# On the pages with a usable text layer (the scans wait for OCR to improve).
TEXT_NUMBERS_RIGHT = 1.0
TEXT_TITLES_RIGHT = 0.98

SETTINGS = Settings(_env_file=None)
# Each page's words, kept as they are read: a test that runs out of time leaves the pages it
# read to the next one.
_LAYERS: dict[tuple[str, int], TextLayer] = {}


def _layer(entry: dict, page_number: int, readers: Readers) -> TextLayer:
    key = (entry["file"], page_number)
    if key not in _LAYERS:
        _LAYERS[key] = _read_layer(entry, page_number, readers)
    return _LAYERS[key]


def _read_layer(entry: dict, page_number: int, readers: Readers) -> TextLayer:
    """The page's words as extract reads them: its text layer, or OCR words standing in."""
    if entry["text_layer_usable"] is False:
        pdf = pdf_bytes(entry["file"])
        out = asyncio.run(
            extract_rung1(
                pdf, page_number, SETTINGS, None, readers=readers, worker_id="t", job_id="t"
            )
        )
        return out.text_layer
    with pymupdf.open(stream=pdf_bytes(entry["file"])) as doc:
        page = doc.load_page(page_number - 1)
        return read_text_layer(page, page_number, SETTINGS.text_layer_min_chars)


def _bookmarks(file: str) -> dict[int, list[str]]:
    """Page number → the titles of the file's bookmarks that point at it."""
    with pymupdf.open(stream=pdf_bytes(file)) as doc:
        marks: dict[int, list[str]] = {}
        for _, title, page_number in doc.get_toc():
            marks.setdefault(page_number, []).append(title)
    return marks


@cache
def readings(readers: Readers) -> dict[tuple[str, int], SheetReading]:
    """(file, page) → the page's reading, as extract stores it."""
    found = {}
    for entry in manifest():
        marks = _bookmarks(entry["file"])
        for s in entry["sheets"]:
            layer = _layer(entry, s["page"], readers)
            found[(entry["file"], s["page"])] = read_sheet(layer, bookmarks=marks.get(s["page"]))
    return found


@cache
def identities(readers: Readers) -> dict[tuple[str, int], tuple[str | None, str | None]]:
    """(file, page) → (sheet number, title) as the report decides them."""
    found = {}
    for entry in manifest():
        pages = {s["page"]: readings(readers)[(entry["file"], s["page"])] for s in entry["sheets"]}
        for n, decision in decide_set(pages).items():
            found[(entry["file"], n)] = (decision.number, decision.title)
    return found


def _printed() -> list[tuple[str, int, str | None, str | None]]:
    return [
        (entry["file"], s["page"], s["sheet_number"], s["sheet_title"])
        for entry in manifest()
        for s in entry["sheets"]
    ]


def _text_layer_files() -> set[str]:
    return {e["file"] for e in manifest() if e["text_layer_usable"] is not False}


def test_sheet_numbers_on_real_sets(readers):
    """A share of the printed sheet numbers are read exactly (Unicode dashes aside): all of
    them on pages with a text layer."""
    labelled = [(f, n, number) for f, n, number, _ in _printed() if number]
    right = {
        (f, n) for f, n, number in labelled if same_number(identities(readers)[(f, n)][0], number)
    }
    misses = sorted({(f, n) for f, n, _ in labelled} - right)
    assert len(right) >= NUMBERS_RIGHT * len(labelled), (
        f"{len(right)}/{len(labelled)} right; missed {misses}"
    )
    text = [(f, n) for f, n, _ in labelled if f in _text_layer_files()]
    assert len(right.intersection(text)) >= TEXT_NUMBERS_RIGHT * len(text), misses


def test_no_number_on_a_page_that_prints_none(readers):
    """A page whose title block prints no sheet number (or that has no title block) gets
    none: the reader never invents one."""
    invented = [
        (f, n, identities(readers)[(f, n)][0])
        for f, n, number, _ in _printed()
        if not number and identities(readers)[(f, n)][0]
    ]
    assert invented == []


def test_sheet_titles_on_real_sets(readers):
    """A share of the printed titles are read, compared without case or whitespace."""
    labelled = [(f, n, title) for f, n, _, title in _printed() if title]
    wrong = [
        (f, n, identities(readers)[(f, n)][1])
        for f, n, title in labelled
        if not same_title(identities(readers)[(f, n)][1], title)
    ]
    assert len(labelled) - len(wrong) >= TITLES_RIGHT * len(labelled), wrong
    text = [(f, n) for f, n, _ in labelled if f in _text_layer_files()]
    text_wrong = [w for w in wrong if w[0] in _text_layer_files()]
    assert len(text) - len(text_wrong) >= TEXT_TITLES_RIGHT * len(text), text_wrong


def _tally(readers) -> Tally:
    tally = Tally()
    for f, n, number, title in _printed():
        tally.count(f"{f} p{n}", identities(readers)[(f, n)], (number, title))
    return tally


def test_no_wrong_title_on_real_sets(readers):
    """No page of a real set gets a title that is not the printed one."""
    tally = _tally(readers)
    assert tally.titles_wrong == 0, tally.misses


def test_every_printed_drawing_index_is_read_and_matched(readers):
    """Each set whose manifest lists a drawing index gets it read, its rows (ranges
    expanded) each matched to a sheet of the set (zero padding aside)."""
    for entry in manifest():
        if not entry.get("index"):
            continue
        pages = [readings(readers)[(entry["file"], s["page"])] for s in entry["sheets"]]
        rows = [row for r in pages for row in r.index_rows]
        assert len(rows) == len(entry["index"]), (entry["file"], rows)
        numbers = [v[0] for (f, _), v in identities(readers).items() if f == entry["file"] and v[0]]
        keys = {sheet_key(n) for n in numbers}
        unmatched = [n for n, _ in expand_index(rows, numbers) if sheet_key(n) not in keys]
        assert unmatched == [], (entry["file"], unmatched)


# --- pages without a usable text layer (scanned, raster, text drawn as outlines) --------


def _scanned() -> list[tuple[dict, dict]]:
    return [(e, s) for e in manifest() if e["text_layer_usable"] is False for s in e["sheets"]]


def test_scanned_sheets_read_their_numbers_and_no_paragraph_as_a_title(readers):
    """On the pages read by OCR: at least 90% of the printed sheet numbers are read, none
    is invented, and no title is a paragraph (a heading is a dozen words at most)."""
    labelled = [(e["file"], s["page"], s["sheet_number"]) for e, s in _scanned()]
    got = {(f, n): identities(readers)[(f, n)] for f, n, _ in labelled}
    right = [(f, n) for f, n, number in labelled if number and got[(f, n)][0] == number]
    numbered = [(f, n) for f, n, number in labelled if number]
    assert len(right) >= 0.9 * len(numbered), sorted(set(numbered) - set(right))
    invented = [(f, n, got[(f, n)][0]) for f, n, number in labelled if got[(f, n)][0] != number]
    assert all(number is None for _, _, number in invented), invented
    paragraphs = [(f, n, t) for (f, n), (_, t) in got.items() if t and len(t.split()) > 16]
    assert paragraphs == []


# The scanned survey map turns its content inside its portrait pages (the manifest's note):
# a quarter on sheets 1-6, 9 and 10 (reading upwards), upside down on sheets 7 and 8.
TURNED_MAP = "nerr__8_Recorded_Map.pdf"
READS_UPSIDE_DOWN = {7, 8}


def test_a_scan_turned_inside_its_pages_is_read_the_way_its_text_runs(readers):
    """Most of each page's words are read running the way its content is turned (the
    direction of the words, weighted by their length)."""
    entry = next(e for e in manifest() if e["file"] == TURNED_MAP)
    for sheet in entry["sheets"]:
        layer = _layer(entry, sheet["page"], readers)
        runs = (-1.0, 0.0) if sheet["page"] in READS_UPSIDE_DOWN else (0.0, -1.0)
        along = sum(
            len(w.text) for w in layer.words if w.dir[0] * runs[0] + w.dir[1] * runs[1] > 0.9
        )
        assert along > 0.6 * sum(len(w.text) for w in layer.words), sheet["page"]
