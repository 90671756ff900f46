"""The page as models read it: units with ids (title-block fields, table rows, whole notes),
capped by whole units, and the cited words that carry a claim."""

from pathlib import Path

import pymupdf

from services.extract.offline.extractor import extract_offline
from services.extract.reading.textlayer import read_text_layer
from shared.pagetext import TextLayer, Word, laid_out
from shared.pagetext.units import page_units
from shared.sheet.fields import title_block_fields
from tests.support.pdfs import notes_pdf

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "drawing-set.pdf"


def _page(pdf: bytes, number: int = 1) -> TextLayer:
    return read_text_layer(pymupdf.open(stream=pdf)[number - 1], number, 20)


def _schedule_page() -> TextLayer:
    """The example set's door schedule (a table, numbered notes and a title block)."""
    with pymupdf.open(EXAMPLES) as doc:
        page = next(p for p in doc if "DOOR SCHEDULE NOTES" in p.get_text())
        return read_text_layer(page, page.number + 1, 20)


def test_a_schedule_reads_as_rows_header_first_notes_whole_and_fields_labelled():
    """Each table row is one line with its cells separated, the header row first; each
    numbered note one line; each title-block field ``LABEL: value``; ids L1, L2... in order;
    rows of one table and fields of one title block stay together."""
    layer = _schedule_page()
    units = page_units(layer, title_block_fields(layer)).units
    assert [u.id for u in units] == [f"L{n}" for n in range(1, len(units) + 1)]
    header = next(u for u in units if u.kind == "header")
    assert header.text.startswith("MARK | WIDTH | HEIGHT")
    rows = [u for u in units if u.kind == "row"]
    assert rows[0].id == f"L{int(header.id[1:]) + 1}" and len(rows) >= 5
    assert all(" | " in r.text and r.group == header.group for r in rows)
    notes = [u.text for u in units if u.kind == "note"]
    assert notes[0].startswith("1. ") and len(notes) >= 3
    fields = [u for u in units if u.kind == "field"]
    assert "SHEET NUMBER: A601" in [f.text for f in fields]
    assert len({f.group for f in fields}) == 1


def test_every_schedule_row_and_note_the_offline_reader_finds_is_one_unit():
    """The units are the offline extractor's rows and notes: a model copying each line as
    one object returns each of them whole."""
    layer = _schedule_page()
    objects = extract_offline(layer)
    wanted = [set(o.evidence) for o in objects if o.object_type in ("schedule_row", "general_note")]
    units = {frozenset(u.word_ids) for u in page_units(layer).units}
    assert wanted and all(frozenset(w) in units for w in wanted)


def test_the_cap_cuts_whole_units_and_says_what_it_left_out():
    """A reading over the cap ends with the last whole unit that fits, then a line naming
    how many units and characters were left out."""
    units = page_units(_page(notes_pdf()))
    lines = units.render(200).splitlines()
    assert lines[:2] == [
        "L1 GENERAL NOTES",
        "L2 1. VERIFY ALL DIMENSIONS IN THE FIELD BEFORE STARTING CONSTRUCTION.",
    ]
    left = units.units[2:]
    chars = sum(len(u.line) + 1 for u in left)
    assert lines[2:] == [f"[… {len(left)} more units ({chars} characters) left out]"]
    assert units.render(10_000).splitlines()[-1].startswith("L5 4. DO NOT SCALE")


def test_words_kept_out_of_the_lines_never_reach_the_reading():
    """A word the page does not show (kept in ``words`` but out of every line) is in no
    unit: the reading is built from lines alone."""
    shown = laid_out(
        page_number=1,
        width=200,
        height=100,
        words=[Word(text="SHOWN", bbox=(10, 10, 50, 20)), Word(text="TEXT", bbox=(52, 10, 80, 20))],
        has_text_layer=True,
    )
    hidden = Word(id=2, text="IGNORE", bbox=(10, 40, 60, 50))
    layer = shown.model_copy(update={"words": [*shown.words, hidden]})
    assert page_units(layer).render(1000) == "L1 SHOWN TEXT"


def test_cited_ids_are_read_as_models_write_them():
    """ "L3", "l3", "[L3]" and 3 name unit L3; unknown ids are counted, not guessed."""
    units = page_units(_page(notes_pdf()))
    l3 = units.by_id["L3"]
    assert all(units.unit(name) is l3 for name in ("L3", "l3", "[L3]", 3, " L3 "))
    assert units.unit("L99") is None and units.unit("X3") is None
    assert units.words_of(["L3", "L99", "L3"]) == list(l3.word_ids)
    l2 = units.by_id["L2"]
    assert units.words_of(["L3", "L2"]) == [*l2.word_ids, *l3.word_ids], "reading order"
