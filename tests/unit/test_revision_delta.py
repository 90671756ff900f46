"""``sheet_delta`` on revision pairs made from real corpus sheets with PyMuPDF, in memory (a
note renumbered, a schedule row edited, a detail moved, only the revision and date changed,
the drawing shifted on its page), read by extract's own text-layer reader: the delta lists
exactly the edits, and nothing else on the sheet."""

import json
from functools import cache

import numpy
import pymupdf
import pytest

from services.extract.reading.textlayer import read_text_layer
from shared.infra.settings import Settings
from shared.pagetext import Box, TextLayer, Word, laid_out
from shared.pagetext.units import Unit, page_units
from shared.revisions import SheetDelta, UnitChange, sheet_delta
from shared.sheet.fields import read_fields
from tests.support.corpus import needs_corpus, pdf_bytes

pytestmark = needs_corpus

# A finish plan with numbered notes, a legend table, repeated tags and a title block with a
# revision mark and an issue date; page 1, unrotated.
SHEET = "opentakeoff__sample-finish-plan.pdf"
# E-size and larger sheets of other producers, for the moved-drawing check.
OTHER_SHEETS = [
    ("ocrparser__E201A-FLOOR-PLAN-P_S.pdf", 1),
    ("plansheet__Pages-from-M01-17-ITS-Tolling-2b.pdf", 1),
]
MIN_CHARS = Settings(_env_file=None).text_layer_min_chars


def read_layer(pdf: bytes, number: int = 1) -> TextLayer:
    """The page's text layer as extract reads it."""
    with pymupdf.open(stream=pdf, filetype="pdf") as doc:
        return read_text_layer(doc[number - 1], number, MIN_CHARS)


@cache
def original() -> tuple[bytes, TextLayer]:
    pdf = pdf_bytes(SHEET)
    return pdf, read_layer(pdf)


def units() -> list[Unit]:
    return page_units(original()[1]).units


def rewritten(pdf: bytes, edits: list[tuple[list[Word], str]]) -> bytes:
    """``pdf`` with each run of words replaced by a text (page 1, unrotated): the words are
    redacted (the drawing under them kept) and the text written where the first one stood,
    at its size; an empty text only removes the words."""
    with pymupdf.open(stream=pdf, filetype="pdf") as doc:
        page = doc[0]
        assert page.rotation == 0
        for words, _ in edits:
            for word in words:
                box = pymupdf.Rect(word.bbox)
                # The middle of the word: neighbours touching its box keep their letters.
                page.add_redact_annot(
                    pymupdf.Rect(
                        box.x0 + 0.3, box.y0 + box.height / 4, box.x1 - 0.3, box.y1 - box.height / 4
                    )
                )
        page.apply_redactions(
            images=pymupdf.mupdf.PDF_REDACT_IMAGE_NONE,
            graphics=pymupdf.mupdf.PDF_REDACT_LINE_ART_NONE,
        )
        for words, text in edits:
            if text:
                first = pymupdf.Rect(words[0].bbox)
                baseline = (first.x0, first.y1 - 0.22 * first.height)
                page.insert_text(baseline, text, fontsize=words[0].size, fontname="helv")
        return doc.tobytes()


def one_page(pdf: bytes, number: int) -> bytes:
    """Page ``number`` alone, as a one-page PDF."""
    with pymupdf.open(stream=pdf, filetype="pdf") as doc:
        doc.select([number - 1])
        return doc.tobytes()


def moved(pdf: bytes, region: Box, target: Box) -> bytes:
    """``pdf`` with everything inside ``region`` of page 1 (text and the drawing wholly in
    it) taken away and drawn again at ``target``, the same size."""
    with (
        pymupdf.open(stream=pdf, filetype="pdf") as source,
        pymupdf.open(stream=pdf, filetype="pdf") as doc,
    ):
        page = doc[0]
        page.add_redact_annot(pymupdf.Rect(region))
        page.apply_redactions(
            images=pymupdf.mupdf.PDF_REDACT_IMAGE_NONE,
            graphics=pymupdf.mupdf.PDF_REDACT_LINE_ART_REMOVE_IF_COVERED,
        )
        page.show_pdf_page(pymupdf.Rect(target), source, 0, clip=pymupdf.Rect(region))
        return doc.tobytes()


def placed(pdf: bytes, number: int, where: pymupdf.Rect, size: tuple[float, float]) -> bytes:
    """A one-page PDF of ``size`` showing page ``number`` of ``pdf`` (unrotated) fitted into
    ``where``: the same drawing moved (and scaled) on its sheet."""
    with pymupdf.open(stream=pdf, filetype="pdf") as source, pymupdf.open() as doc:
        page = doc.new_page(width=size[0], height=size[1])
        page.show_pdf_page(where, source, number - 1)
        return doc.tobytes()


def free_spot(layer: TextLayer, region: Box, margin: float = 12.0, step: float = 24.0) -> Box:
    """A place of ``region``'s size on the page, apart from it, with no word within
    ``margin`` of it."""
    width, height = region.width, region.height
    words = numpy.array([w.bbox for w in layer.words] + [region])
    for y in numpy.arange(4 * margin, layer.height - 4 * margin - height, step):
        for x in numpy.arange(4 * margin, layer.width - 4 * margin - width, step):
            clear = (
                (words[:, 2] < x - margin)
                | (words[:, 0] > x + width + margin)
                | (words[:, 3] < y - margin)
                | (words[:, 1] > y + height + margin)
            )
            if clear.all():
                return Box(float(x), float(y), float(x + width), float(y + height))
    raise AssertionError("no free place on the sheet")


def only_change(delta: SheetDelta) -> UnitChange:
    assert len(delta.changes) == 1, delta.changes
    return delta.changes[0]


def holds(outer: Box | None, inner: Box) -> bool:
    assert outer is not None
    return (
        outer.x0 <= inner.x0
        and outer.y0 <= inner.y0
        and inner.x1 <= outer.x1
        and inner.y1 <= outer.y1
    )


def test_the_same_sheet_twice_has_no_change():
    """The sheet against itself: no change, every unit unchanged, not 'title block only'."""
    _, layer = original()
    delta = sheet_delta(layer, layer)
    assert delta.is_unchanged() and delta.changes == []
    assert (delta.added, delta.removed, delta.changed) == (0, 0, 0)
    assert delta.unchanged > 100 and not delta.title_block_only


def test_the_same_sheet_read_from_a_second_file_has_no_change():
    """The same page written out again (another file, the same drawing): nothing changed."""
    pdf, layer = original()
    with pymupdf.open(stream=pdf, filetype="pdf") as doc:
        again = doc.tobytes(garbage=3, deflate=True)
    assert sheet_delta(layer, read_layer(again)).is_unchanged()


def test_a_renumbered_note_is_one_changed_note():
    """Note 3 renumbered 4: one note changed, its text before and after, its boxes on both
    sheets holding the number; nothing else."""
    pdf, layer = original()
    note = next(u for u in units() if u.kind == "note" and u.text.startswith("3. "))
    number = layer.words[note.word_ids[0]]
    after = read_layer(rewritten(pdf, [([number], "4.")]))
    change = only_change(sheet_delta(layer, after))
    assert (change.kind, change.unit_kind) == ("changed", "note")
    assert change.before == note.text
    assert change.after == "4. " + note.text.removeprefix("3. ")
    assert holds(change.before_bbox, number.bbox) and holds(change.after_bbox, number.bbox)
    assert change.field is None


def test_a_notes_line_rewritten_at_the_end_of_the_stream_is_one_changed_note():
    """A line in the middle of a note taken out and written again at the end of the page's
    content stream (as Acrobat and Bluebeam edit): the page's units leave the note's lines
    apart, yet the delta lists one changed note, its text otherwise whole, and nothing
    removed."""
    pdf, layer = original()
    note = next(
        u
        for u in units()
        if u.kind == "note" and len({layer.line_of_word[i] for i in u.word_ids}) >= 3
    )
    line_ids = sorted({layer.line_of_word[i] for i in note.word_ids})
    middle = [layer.words[i] for i in layer.lines[line_ids[1]]]
    longest = max(middle, key=lambda w: len(w.text))
    old_line = " ".join(w.text for w in middle)
    new_line = " ".join("X" + w.text[1:] if w is longest else w.text for w in middle)
    edited = read_layer(rewritten(pdf, [(middle, new_line)]))
    split = [
        u
        for u in page_units(edited).units
        if u.kind == "note" and u.text.startswith(note.text[:12])
    ]
    assert split and split[0].text != note.text.replace(old_line, new_line)  # the units are apart
    delta = sheet_delta(layer, edited)
    [change] = delta.changes
    assert (change.kind, change.unit_kind) == ("changed", "note")
    assert change.before == note.text and change.after == note.text.replace(old_line, new_line)
    assert (delta.added, delta.removed) == (0, 0)


def test_an_edited_schedule_row_is_one_changed_row():
    """A legend row's description edited: that row changed, with its cells before and
    after; nothing else, and not 'title block only'."""
    pdf, layer = original()
    row = next(u for u in units() if u.kind == "row" and len(u.word_ids) >= 3)
    last = layer.words[row.word_ids[-1]]
    delta = sheet_delta(layer, read_layer(rewritten(pdf, [([last], "PLANK")])))
    change = only_change(delta)
    assert (change.kind, change.unit_kind) == ("changed", "row")
    assert change.before == row.text
    assert change.after is not None and change.after.endswith("PLANK")
    assert change.after.split(" | ")[0] == row.text.split(" | ")[0]
    assert holds(change.before_bbox, last.bbox)
    assert (delta.changed, delta.added, delta.removed) == (1, 0, 0)
    assert not delta.title_block_only


def test_only_the_revision_and_date_changed_says_title_block_only():
    """The revision mark and the issue date rewritten: exactly those two changed, each
    naming its field, and the delta says the title block alone changed."""
    pdf, layer = original()
    fields = read_fields(layer)
    revision = [layer.words[i] for i in fields["revision"].word_ids]
    date = [layer.words[i] for i in fields["issue_date"].word_ids]
    after = read_layer(rewritten(pdf, [(revision, "2"), (date, "JUNE 30, 2021")]))
    delta = sheet_delta(layer, after)
    by_field = {c.field: c for c in delta.changes}
    assert len(delta.changes) == 2 and set(by_field) == {"revision", "issue_date"}
    assert (by_field["revision"].before, by_field["revision"].after) == ("1", "2")
    assert by_field["issue_date"].before == fields["issue_date"].text
    assert by_field["issue_date"].after == "JUNE 30, 2021"
    assert all(c.kind == "changed" for c in delta.changes)
    assert delta.title_block_only


@pytest.mark.parametrize("number", [1, 2])
def test_a_detail_moved_across_the_sheet_is_unchanged(number):
    """The legend table cut out and drawn again at a free place far across the sheet (on
    page 2, beside another schedule, whose rows are then found anew with it): the same text
    elsewhere is no change."""
    pdf = one_page(pdf_bytes(SHEET), number)
    layer = read_layer(pdf)
    sheet_units = page_units(layer).units
    row = next(u for u in sheet_units if u.text.startswith("ACT | ACOUSTICAL"))
    table = [u for u in sheet_units if u.group == row.group]
    box = Box.union(u.box for u in table)
    region = Box(box.x0 - 6, box.y0 - 6, box.x1 + 6, box.y1 + 6)
    target = free_spot(layer, region)
    assert abs(target.x0 - region.x0) > layer.width / 3  # across the sheet
    after = read_layer(moved(pdf, region, target))
    assert any(w.bbox.overlaps(target) for w in after.words)  # the table is drawn there
    delta = sheet_delta(layer, after)
    assert delta.is_unchanged(), delta.changes


def test_a_moved_detail_with_an_edit_reports_the_edit_alone():
    """The legend moved and one of its rows edited: one row changed, boxed where it was and
    where it is now."""
    pdf, layer = original()
    row = next(u for u in units() if u.kind == "row" and len(u.word_ids) >= 3)
    table = [u for u in units() if u.group == row.group]
    box = Box.union(u.box for u in table)
    region = Box(box.x0 - 6, box.y0 - 6, box.x1 + 6, box.y1 + 6)
    target = free_spot(layer, region)
    edited = rewritten(pdf, [([layer.words[row.word_ids[-1]]], "PLANK")])
    change = only_change(sheet_delta(layer, read_layer(moved(edited, region, target))))
    assert (change.kind, change.unit_kind, change.before) == ("changed", "row", row.text)
    assert change.after_bbox is not None and change.after_bbox.overlaps(target)
    assert change.before_bbox is not None and change.before_bbox.overlaps(region)


def test_one_copy_of_a_repeated_tag_removed_is_one_removal():
    """A tag printed many times, one copy erased: one removal, at that copy's place (the
    copies are matched as a multiset, each with its nearest)."""
    pdf, layer = original()
    texts = [u.text for u in units() if u.kind == "block"]
    tag = max(set(texts), key=texts.count)
    assert texts.count(tag) >= 5
    copies = [w for w in layer.words if w.text == tag]
    erased = copies[len(copies) // 2]
    change = only_change(sheet_delta(layer, read_layer(rewritten(pdf, [([erased], "")]))))
    assert (change.kind, change.before, change.after) == ("removed", tag, None)
    assert holds(change.before_bbox, erased.bbox)


def test_a_note_added_is_one_addition():
    """A new note written at a free place: one unit added, at that place."""
    pdf, layer = original()
    target = free_spot(layer, Box(0, 0, 300, 14))
    with pymupdf.open(stream=pdf, filetype="pdf") as doc:
        doc[0].insert_text(
            (target.x0, target.y1 - 3), "16. VERIFY ALL FINISHES ON SITE.", fontsize=9
        )
        pdf_after = doc.tobytes()
    change = only_change(sheet_delta(layer, read_layer(pdf_after)))
    assert (change.kind, change.before, change.after) == (
        "added",
        None,
        "16. VERIFY ALL FINISHES ON SITE.",
    )
    assert change.after_bbox is not None and change.after_bbox.overlaps(target)


@pytest.mark.parametrize(("file", "number"), [(SHEET, 1), *OTHER_SHEETS])
def test_a_drawing_shifted_and_scaled_on_its_sheet_is_unchanged(file, number):
    """The whole sheet drawn a little smaller and off-centre on a page of its size (a
    re-plot with other margins): no change, and the delta places the old drawing on the
    new sheet."""
    pdf = pdf_bytes(file)
    layer = read_layer(pdf, number)
    where = pymupdf.Rect(36, 24, layer.width - 12, layer.height - 8)
    after = read_layer(placed(pdf, number, where, (layer.width, layer.height)), 1)
    delta = sheet_delta(layer, after)
    assert delta.is_unchanged(), delta.changes
    assert delta.placement is not None
    fitted = min(where.width / layer.width, where.height / layer.height)
    assert delta.placement.scale == pytest.approx(fitted, abs=0.002)


def test_the_delta_round_trips_through_json():
    """to_json is plain JSON; from_json gives the same delta back."""
    pdf, layer = original()
    fields = read_fields(layer)
    revision = [layer.words[i] for i in fields["revision"].word_ids]
    delta = sheet_delta(layer, read_layer(rewritten(pdf, [(revision, "2")])))
    assert delta.changes
    assert SheetDelta.from_json(json.loads(json.dumps(delta.to_json()))) == delta


# --- word order and line breaks, on small laid-out pages ----------------------------------


def line_words(text: str, x: float, y: float, size: float = 10.0) -> list[dict]:
    """The words of one line of text from (x, y), as a text layer holds them."""
    words = []
    for token in text.split():
        width = 0.6 * size * len(token)
        words.append({"text": token, "bbox": (x, y, x + width, y + size), "size": size})
        x += width + 0.3 * size
    return words


def page_of(*lines: tuple[str, float, float]) -> TextLayer:
    words = [w for text, x, y in lines for w in line_words(text, x, y)]
    return laid_out(page_number=1, width=1000, height=800, words=words, has_text_layer=True)


def test_a_line_broken_in_two_is_unchanged():
    """A label wrapped onto two lines in the new version, its words the same: no change."""
    before = page_of(("SEE STRUCTURAL DRAWINGS FOR FOOTINGS", 100, 100), ("ROOF", 600, 600))
    after = page_of(
        ("SEE STRUCTURAL DRAWINGS", 100, 100), ("FOR FOOTINGS", 100, 112), ("ROOF", 600, 600)
    )
    assert sheet_delta(before, after).is_unchanged()


def test_repeated_identical_labels_are_counted_as_a_multiset():
    """'TYP.' three times, then four: one added, the new copy; the others (one moved) are
    unchanged."""
    before = page_of(("TYP.", 100, 100), ("TYP.", 300, 100), ("TYP.", 500, 100))
    after = page_of(("TYP.", 100, 100), ("TYP.", 300, 400), ("TYP.", 500, 100), ("TYP.", 700, 700))
    change = only_change(sheet_delta(before, after))
    assert (change.kind, change.after) == ("added", "TYP.")
    assert change.after_bbox is not None and change.after_bbox.x0 == 700


def test_a_different_value_in_one_place_is_changed_not_added_and_removed():
    """A short mark rewritten where it stood ('A' to 'B') is one change."""
    before = page_of(("A", 900, 700), ("GENERAL NOTES", 100, 100))
    after = page_of(("B", 900, 700), ("GENERAL NOTES", 100, 100))
    change = only_change(sheet_delta(before, after))
    assert (change.kind, change.before, change.after) == ("changed", "A", "B")


def test_values_swapped_between_two_rows_are_two_changes():
    """Two lines trading a word in place ('WOOD' and 'STEEL') are two changes: a word
    rewritten where it stood is an edit, however the words balance."""
    before = page_of(("DOOR 1 WOOD", 100, 100), ("DOOR 2 STEEL", 100, 300))
    after = page_of(("DOOR 1 STEEL", 100, 100), ("DOOR 2 WOOD", 100, 300))
    delta = sheet_delta(before, after)
    assert [(c.kind, c.before, c.after) for c in delta.changes] == [
        ("changed", "DOOR 1 WOOD", "DOOR 1 STEEL"),
        ("changed", "DOOR 2 STEEL", "DOOR 2 WOOD"),
    ]


def test_a_word_removed_here_and_written_into_a_new_note_there_is_reported():
    """'TYP.' erased in one place and a new note holding 'TYP.' written elsewhere: the
    removal and the addition both stand (the note's other words came from nowhere)."""
    before = page_of(("TYP.", 100, 100), ("GENERAL NOTES", 400, 400))
    after = page_of(("SEE NOTE 3 TYP.", 600, 600), ("GENERAL NOTES", 400, 400))
    delta = sheet_delta(before, after)
    assert sorted((c.kind, c.before or c.after) for c in delta.changes) == [
        ("added", "SEE NOTE 3 TYP."),
        ("removed", "TYP."),
    ]


def test_short_labels_far_apart_are_not_paired():
    """A tag removed in one corner and another added far away: a removal and an addition,
    not one tag 'changed'."""
    before = page_of(("D1", 100, 100), ("GENERAL NOTES", 400, 400))
    after = page_of(("D2", 900, 700), ("GENERAL NOTES", 400, 400))
    delta = sheet_delta(before, after)
    assert sorted(c.kind for c in delta.changes) == ["added", "removed"]
