"""Segmentation for the fallback rung and the stubs it makes."""

import pymupdf

from services.extract.fallback import fallback_stubs
from services.extract.segment import segment_text
from services.extract.textlayer import read_text_layer
from tests.support.pdfs import NOTES, add_notes_page, schedule_pdf


def _layer(pdf: bytes):
    return read_text_layer(pymupdf.open(stream=pdf)[0], 1, 20)


def _notes_with_noise() -> bytes:
    doc = pymupdf.open()
    page = add_notes_page(doc)
    page.insert_text((400, 500), "8'-0\"", fontsize=8)  # a dimension tick
    page.insert_text((400, 520), "12", fontsize=8)  # a grid number
    page.insert_text((40, 600), "CONTRACTOR SHALL COORDINATE ALL TRADES", fontsize=10)
    page.insert_text((40, 612), "AND KEEP THE SITE CLEAN AT ALL TIMES.", fontsize=10)
    return doc.tobytes()


def test_notes_rejoined_prose_merged_noise_skipped():
    """Numbered notes are whole, a prose run is one segment, ticks and numbers are skipped."""
    texts = [s.text for s in segment_text(_layer(_notes_with_noise()))]
    assert texts[0] == "GENERAL NOTES"
    assert texts[1:5] == [f"{i}. {n}" for i, n in enumerate(NOTES, 1)]
    prose = "CONTRACTOR SHALL COORDINATE ALL TRADES AND KEEP THE SITE CLEAN AT ALL TIMES."
    assert texts[5] == prose
    assert len(texts) == 6


def test_schedule_rows_are_one_segment_each():
    """A table is cut row by row, not column by column."""
    segments = segment_text(_layer(schedule_pdf()))
    rows = [s.text for s in segments if s.kind == "row"]
    assert rows[1] == "D1 3'-0\" 7'-0\" HM EXTERIOR" and len(rows) == 4


def test_fallback_stubs_are_low_confidence_verbatim_and_capped():
    """Stubs are general_note / low / text_layer_fallback / fallback, with bbox, capped."""
    layer = _layer(_notes_with_noise())
    stubs = fallback_stubs(layer, max_objects=3)
    assert len(stubs) == 3
    stub = stubs[1]
    assert stub.source_text == f"1. {NOTES[0]}"
    assert (stub.object_type, stub.confidence, stub.grounding, stub.rung) == (
        "general_note",
        "low",
        "text_layer_fallback",
        "fallback",
    )
    assert stub.bbox is not None and stub.page_number == 1
    assert len({s.object_id for s in fallback_stubs(layer, 200)}) == 6


def test_notes_set_in_columns_are_not_a_table():
    """Three aligned columns of numbered notes stay notes, one segment per note."""
    doc = pymupdf.open()
    page = doc.new_page(width=1224, height=792)
    for col in range(3):
        for n in range(1, 4):
            y = 60 + 30 * n
            page.insert_text((40 + col * 400, y), f"{n}.", fontsize=8)
            page.insert_text((55 + col * 400, y), f"COLUMN {col} NOTE {n} FIRST LINE", fontsize=8)
            page.insert_text((55 + col * 400, y + 10), "AND ITS SECOND LINE", fontsize=8)
    segments = segment_text(read_text_layer(page, 1, 20))
    assert [s.kind for s in segments] == ["note"] * 9
    assert "1. COLUMN 2 NOTE 1 FIRST LINE AND ITS SECOND LINE" in [s.text for s in segments]


def _index_beside_notes() -> bytes:
    """A sheet index (number, title) whose rows share their lines with a column of notes."""
    doc = pymupdf.open()
    page = doc.new_page(width=1224, height=792)
    for i, (number, title) in enumerate(SHEET_INDEX):
        page.insert_text((40, 100 + 20 * i), number, fontsize=10)
        page.insert_text((110, 100 + 20 * i), title, fontsize=10)
    page.insert_text((600, 96), "1.", fontsize=10)
    for i, line in enumerate(
        [
            "CONTRACTOR SHALL VERIFY ALL EXISTING CONDITIONS",
            "BEFORE",
            "STARTING WORK AND REPORT ANY DISCREPANCIES.",
        ]
    ):
        page.insert_text((620, 96 + 13 * i), line, fontsize=10)
    return doc.tobytes()


SHEET_INDEX = [
    ("G001", "COVER SHEET AND INDEX"),
    ("A101", "FLOOR PLAN - LEVEL 1"),
    ("A601", "DOOR SCHEDULE"),
    ("S001", "STRUCTURAL GENERAL NOTES"),
]


def test_two_column_list_is_cut_row_by_row_beside_other_text():
    """A sheet index beside a note is one segment per row; the note stays whole."""
    texts = {s.text: s.kind for s in segment_text(_layer(_index_beside_notes()))}
    for number, title in SHEET_INDEX:
        assert texts[f"{number} {title}"] == "row"
    note = (
        "1. CONTRACTOR SHALL VERIFY ALL EXISTING CONDITIONS BEFORE"
        " STARTING WORK AND REPORT ANY DISCREPANCIES."
    )
    assert texts[note] == "note"
    assert len(texts) == len(SHEET_INDEX) + 1
