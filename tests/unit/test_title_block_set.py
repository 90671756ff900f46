"""Sheet identity decided across the set (``shared.sheet.decide``): a page its own title block
leaves ambiguous is decided by the template the other sheets share, a tie by the file's
bookmarks, a weak number by the set's scheme, and text every sheet prints alike is no
sheet's number. Each set is a real PDF built with PyMuPDF, read as extract reads it; the
report carries each decision's source."""

from datetime import UTC, datetime

import pymupdf

from services.extract.reading.textlayer import read_text_layer
from services.report.assemble import JobInfo, build_report
from services.report.facts import page_facts
from shared.contracts.models import Coverage, PageVerdict, VerifiedPage
from shared.pagetext import Box
from shared.sheet.decide import Decision, decide_set, shape
from shared.sheet.header import SheetHeader
from shared.sheet.reader import Evidence
from shared.sheet.reading import Candidate, FieldReading, SheetReading, read_sheet
from shared.sheet.reconcile import reconcile
from tests.support.identity import set_identity

W, H = 36 * 72, 24 * 72


def _sheet(doc: pymupdf.Document, number: str | None, title: str, *, label: bool = True):
    """A sheet with a ruled right-hand strip: the firm, a title cell, and a number cell at
    the bottom (labelled SHEET NO. unless ``label`` is false)."""
    page = doc.new_page(width=W, height=H)
    page.draw_rect(pymupdf.Rect(36, 36, W - 36, H - 36), width=2)
    x0 = W - 320
    page.draw_line((x0, 36), (x0, H - 36), width=2)
    for y in (H - 400, H - 220):
        page.draw_line((x0, y), (W - 36, y), width=1)
    page.insert_text((x0 + 20, 100), "NORTHWIND ARCHITECTS", fontsize=16)
    page.insert_text((x0 + 20, H - 370), "SHEET TITLE", fontsize=8)
    page.insert_text((x0 + 20, H - 330), title, fontsize=18)
    if label:
        page.insert_text((x0 + 20, H - 190), "SHEET NO.", fontsize=8)
    if number:
        page.insert_text((x0 + 20, H - 80), number, fontsize=72)
    page.insert_text((120, 300), "GENERAL NOTES", fontsize=14)
    page.insert_text((120, 330), "1. VERIFY ALL DIMENSIONS IN THE FIELD.", fontsize=10)
    return page


def _readings(doc: pymupdf.Document) -> dict[int, SheetReading]:
    marks: dict[int, list[str]] = {}
    for _, title, page_number in doc.get_toc():
        marks.setdefault(page_number, []).append(title)
    return {
        n + 1: read_sheet(read_text_layer(page, n + 1, min_chars=1), bookmarks=marks.get(n + 1))
        for n, page in enumerate(doc.pages())
    }


def template_set() -> pymupdf.Document:
    """Four sheets numbered in the labelled number cell; on the third, a revision cloud's
    tag as large as the number stands beside it, so the page alone cannot tell them apart."""
    doc = pymupdf.open()
    for number, title in [
        ("A-101", "FIRST FLOOR PLAN"),
        ("A-102", "SECOND FLOOR PLAN"),
        ("A-103", "ROOF PLAN"),
        ("A-201", "ELEVATIONS"),
    ]:
        page = _sheet(doc, number, title, label=number != "A-103")
        if number == "A-103":
            page.insert_text((W - 300, H - 520), "B-2", fontsize=72)
    return doc


def bookmarked_set() -> pymupdf.Document:
    """Two unlabelled sheets; the second prints two numbers equally large, and the file's
    bookmark names one of them."""
    doc = pymupdf.open()
    _sheet(doc, "E-101", "LIGHTING PLAN", label=False)
    page = _sheet(doc, "E-102", "POWER PLAN", label=False)
    page.insert_text((W - 300, H - 520), "E-201", fontsize=72)
    doc.set_toc([[1, "E-101 Lighting Plan", 1], [1, "E-102 Power Plan", 2]])
    return doc


def test_an_ambiguous_page_is_decided_by_the_template_of_the_others():
    """The page whose number cell lost its label, with a rival as large, takes the number
    standing where the other sheets print theirs; the source says so."""
    readings = _readings(template_set())
    assert readings[3].number is None  # alone, the page cannot tell
    assert {c.text for c in readings[3].candidates} >= {"A-103", "B-2"}
    decided = decide_set(readings)
    assert (decided[3].number, decided[3].source) == ("A-103", "set_template")
    assert decided[3].title == "ROOF PLAN"
    assert "print their number here" in decided[3].why
    assert [decided[n].source for n in (1, 2, 4)] == ["title_block"] * 3


def _consultant_sheet(doc: pymupdf.Document, number: str, *, label: bool) -> pymupdf.Page:
    """A consultant's sheet in the same file: its own block along the bottom, the number
    at its left end, under DWG NO. (left out when ``label`` is false)."""
    page = doc.new_page(width=W, height=H)
    page.draw_rect(pymupdf.Rect(36, 36, W - 36, H - 36), width=2)
    page.draw_line((36, H - 200), (W - 36, H - 200), width=2)
    page.insert_text((1200, H - 120), "SOUTHWIND STRUCTURAL CONSULTANTS", fontsize=16)
    if label:
        page.insert_text((60, H - 180), "DWG NO.", fontsize=8)
    page.insert_text((60, H - 80), number, fontsize=60)
    page.insert_text((400, H - 120), "FOUNDATION DETAILS", fontsize=18)
    page.insert_text((120, 300), "GENERAL NOTES", fontsize=14)
    return page


def test_sets_that_mix_title_blocks_form_groups():
    """Architect's sheets number in their strip, the consultant's at the left of their own
    block; the consultant's sheet that lost its label follows the consultant's sheets."""
    doc = pymupdf.open()
    for number in ("A-101", "A-102", "A-103"):
        _sheet(doc, number, "FLOOR PLAN")
    _consultant_sheet(doc, "S-1", label=True)
    _consultant_sheet(doc, "S-2", label=True)
    page = _consultant_sheet(doc, "S-3", label=False)
    page.insert_text((1200, H - 60), "B-7", fontsize=60)  # a rival as large, elsewhere
    readings = _readings(doc)
    assert readings[6].number is None
    decided = decide_set(readings)
    assert (decided[6].number, decided[6].source) == ("S-3", "set_template")
    assert "'DWGNO'" in decided[6].why


def test_bookmarks_break_a_tie_the_page_leaves():
    """Two numbers equally large and unlabelled: the bookmark names the sheet's own."""
    readings = _readings(bookmarked_set())
    assert readings[2].number is None
    decided = decide_set(readings)
    assert (decided[2].number, decided[2].source) == ("E-102", "bookmark")
    assert decided[1].source == "title_block"


def test_bookmarks_never_override_what_the_sheet_prints():
    """A bookmark naming another number than the labelled one changes nothing."""
    doc = pymupdf.open()
    _sheet(doc, "M-101", "MECHANICAL PLAN")
    doc.set_toc([[1, "M-999", 1]])
    decided = decide_set(_readings(doc))
    assert (decided[1].number, decided[1].source) == ("M-101", "title_block")


def test_text_every_sheet_prints_is_no_sheets_number():
    """A contract code labelled and printed larger than the sheet number, alike on every
    sheet, wins on each page alone; across the set it is the set's, and each sheet's own
    labelled number is its number."""
    readings = _side_by_side(
        "FRAMING PLAN",
        [(("DWG NO.", "K-7", 60), ("SHEET NO.", n, 40)) for n in ("S-1", "S-2", "S-3")],
    )
    assert [readings[n].sheet_number for n in (1, 2, 3)] == ["K-7"] * 3
    decided = decide_set(readings)
    assert [decided[n].number for n in (1, 2, 3)] == ["S-1", "S-2", "S-3"]
    assert {decided[n].source for n in (1, 2, 3)} == {"set_template"}


def test_a_number_breaking_the_sets_scheme_loses_to_one_that_fits():
    """A drawing-body label's value ("DWG NO. 12") outranks the unlabelled number on its
    page alone; the set's numbers share the shape A-9, so the page's A-103 is its number."""
    doc = pymupdf.open()
    for number in ("A-101", "A-102", "A-103", "A-104"):
        page = _sheet(doc, number, "FLOOR PLAN", label=False)
        if number == "A-103":
            page.insert_text((120, 500), "DWG NO. 12", fontsize=10)
    readings = _readings(doc)
    assert readings[3].sheet_number == "12"
    decided = decide_set(readings)
    assert (decided[3].number, decided[3].source) == ("A-103", "scheme")
    assert "'A-9'" in decided[3].why


def test_a_set_numbered_as_one_drawing_tells_its_sheets_apart_by_position():
    """One drawing number on every sheet, "SHEET n OF 3" beside it: each sheet is the
    drawing number with its position, not a duplicate of it."""
    readings = _one_drawing(["1 OF 3", "2 OF 3", "3 OF 3"])
    assert {readings[n].sheet_number for n in (1, 2, 3)} == {"C-101"}
    decided = decide_set(readings)
    assert [decided[n].number for n in (1, 2, 3)] == [
        "C-101 (1 of 3)",
        "C-101 (2 of 3)",
        "C-101 (3 of 3)",
    ]
    assert {decided[n].source for n in (1, 2, 3)} == {"set_template"}


def test_a_drawings_sheets_say_the_count_it_prints_or_none():
    """The count is the one the sheets print ("SHEET 5 OF 9"), never how many of them the
    set holds; a sheet that prints its position without a count is told apart by it alone."""
    decided = decide_set(_one_drawing(["1 OF 9", "5 OF 9", "7"]))
    assert [decided[n].number for n in (1, 2, 3)] == [
        "C-101 (1 of 9)",
        "C-101 (5 of 9)",
        "C-101 (7)",
    ]


def _numbered_in_a_field_and_counted(lost: set[int]) -> dict[int, SheetReading]:
    """Four sheets printing their number under DWG NO. (the label lost on the sheets in
    ``lost``) and, lower in the strip, their position ("SHEET 2 OF 4")."""
    doc = pymupdf.open()
    for n in (1, 2, 3, 4):
        page = _sheet(doc, None, "FLOOR PLAN", label=False)
        if n not in lost:
            page.insert_text((W - 300, H - 190), "DWG NO.", fontsize=8)
        page.insert_text((W - 300, H - 150), f"A-10{n}", fontsize=28)
        page.insert_text((W - 300, H - 60), f"SHEET {n} OF 4", fontsize=14)
    return _readings(doc)


def test_a_sheets_position_yields_to_the_number_field_the_set_prints():
    """Where two sheets lost their number field's label (small print OCR did not read), their
    position ("SHEET 2 OF 4") is not their number: the value standing where the other
    sheets print their number is; a set that prints positions alone keeps them."""
    readings = _numbered_in_a_field_and_counted(lost={2, 3})
    assert [readings[n].sheet_number for n in (2, 3)] == ["2", "3"]  # alone, the position
    decided = decide_set(readings)
    assert [decided[n].number for n in (1, 2, 3, 4)] == ["A-101", "A-102", "A-103", "A-104"]
    assert decided[2].source == "set_template"
    assert "number 2 is only its position" in decided[2].why
    counted = _numbered_in_a_field_and_counted(lost={1, 2, 3, 4})
    assert [decide_set(counted)[n].number for n in (1, 2, 3, 4)] == ["1", "2", "3", "4"]


def _side_by_side(
    title: str, sheets: list[tuple[tuple[str, str, float], tuple[str, str, float]]]
) -> dict[int, SheetReading]:
    """The readings of sheets whose title blocks hold two labelled values side by side, each
    given as (label, value, the value's size)."""
    doc = pymupdf.open()
    for fields in sheets:
        page = _sheet(doc, None, title, label=False)
        for x, (label, value, size) in zip((W - 300, W - 140), fields, strict=True):
            page.insert_text((x, H - 190), label, fontsize=8)
            page.insert_text((x, H - 120), value, fontsize=size)
    return _readings(doc)


def _one_drawing(positions: list[str]) -> dict[int, SheetReading]:
    """Sheets of the drawing C-101, each printing its position under SHEET ("2 OF 3")."""
    return _side_by_side(
        "SITE GRADING PLAN", [(("DWG NO.", "C-101", 40), ("SHEET", p, 14)) for p in positions]
    )


def test_the_scheme_is_the_shape_the_numbers_share():
    """Letters, digits and separators make a number's shape."""
    assert shape("S-101") == shape("A-2") == "A-9"
    assert shape("A101.01") == "A9.9"
    assert shape("SC20-TN01") == "A9-A9"


def _verified(n: int, reading: SheetReading) -> VerifiedPage:
    coverage = Coverage(total_lines=1, covered_lines=1, ratio=1.0)
    return VerifiedPage(
        job_id="j",
        page_number=n,
        has_text_layer=True,
        sheet=SheetHeader(
            sheet_number=reading.sheet_number,
            sheet_title=reading.sheet_title,
            sheet_number_source="text_layer" if reading.number else None,
        ),
        coverage_before=coverage,
        coverage=coverage,
        floor=0.6,
        below_floor=False,
        verdict=PageVerdict(ok=True),
        reading=reading,
    )


def test_each_decision_and_its_source_reach_report_json():
    """The report's set step decides from the pages' readings alone; report.json carries
    each page's source (set_template, bookmark) and the correction with its why, and the
    page keeps its candidates for a reviewer."""
    for doc, page, source, number in [
        (template_set(), 3, "set_template", "A-103"),
        (bookmarked_set(), 2, "bookmark", "E-102"),
    ]:
        pages = [_verified(n, r) for n, r in _readings(doc).items()]
        sheet_set = reconcile([page_facts(p) for p in pages])
        job = JobInfo(
            job_id="j",
            file_name="set.pdf",
            page_count=len(pages),
            created_at=datetime(2026, 5, 29, tzinfo=UTC),
        )
        report = build_report(job, pages, finished_at=datetime.now(UTC), sheet_set=sheet_set)
        stored = report.model_validate_json(report.model_dump_json())
        sheet = stored.pages[page - 1].sheet
        assert (sheet.sheet_number, sheet.sheet_number_source) == (number, source)
        [correction] = stored.set.corrections
        assert (correction.page_number, correction.basis, correction.now) == (page, source, number)
        assert stored.summary.set.corrected == 1
        reading = pages[page - 1].reading
        assert reading is not None and any(c.text == number for c in reading.candidates)


def _read(number: str, *, ocr: bool = True) -> SheetReading:
    """A page whose labelled number cell holds ``number`` (read by OCR unless told)."""
    chosen = Candidate(
        text=number,
        word_ids=[0],
        box=Box(W - 300, H - 150, W - 200, H - 120),
        size=28,
        label="SHEET NO.",
        evidence=Evidence.LABEL_IN_TITLE_BLOCK,
        chosen=True,
    )
    return SheetReading(
        number=FieldReading(text=number, word_ids=[0]), candidates=[chosen], ocr=ocr
    )


def test_a_cells_wall_ocr_read_as_a_numbers_first_letter_is_no_part_of_it():
    """On a scanned page whose number touches its cell's wall, OCR reads the wall as a first
    letter ("IS1.04" where every other sheet's number starts "S1.0"): the report states the
    number without it. A text layer's number, a number whose rest starts otherwise than the
    others', and one whose rest is another sheet's number stay as read."""

    def numbers(texts: list[str], ocr: bool = True) -> list[str | None]:
        readings = {n: _read(t, ocr=ocr) for n, t in enumerate(texts, start=1)}
        headers = set_identity(readings)
        return [headers[n].sheet_number for n in readings]

    assert numbers(["S1.01", "S1.02", "S1.03", "IS1.04"])[3] == "S1.04"
    assert numbers(["V-102", "V-103", "|V-101"])[2] == "V-101"
    assert numbers(["S1.01", "S1.02", "S1.03", "IS1.04"], ocr=False)[3] == "IS1.04"
    assert numbers(["A-101", "A-102", "I-101"])[2] == "I-101"
    assert numbers(["S1.01", "S1.02", "IS1.02"])[2] == "IS1.02"


def test_small_letters_ocr_read_for_capitals_of_their_shape_are_capitals():
    """OCR tells "v" from "V" by size alone: a scanned sheet's "v-101", where every other
    sheet's number prints capitals, is "V-101". A small letter of its own shape ("a"), a
    set whose numbers print small letters, and a text layer's number stay as read."""

    def numbers(texts: list[str], ocr: bool = True) -> list[str | None]:
        readings = {n: _read(t, ocr=ocr) for n, t in enumerate(texts, start=1)}
        headers = set_identity(readings)
        return [headers[n].sheet_number for n in readings]

    assert numbers(["V-102", "V-103", "v-101"])[2] == "V-101"
    assert numbers(["S1.01", "S1.02", "s1.03"])[2] == "S1.03"
    assert numbers(["A-101", "A-102", "a-103"])[2] == "a-103"
    assert numbers(["A-101a", "A-101b", "s-102"])[2] == "s-102"
    assert numbers(["V-102", "V-103", "v-101"], ocr=False)[2] == "v-101"


def test_a_label_that_reads_two_values_takes_the_one_where_the_set_prints_its_numbers():
    """OCR ran a revision's "P03" into the number's row ("P03 Änd. Sachnummer E-OG1-101"):
    the label reads two values and the page chose the revision. The value standing where
    the set's other sheets print their number is the page's; a page whose label reads one
    value, or whose values both stand off the set's place, keeps its own."""
    revision = Box(W - 500, H - 150, W - 460, H - 120)

    def two_values(number: str, *, at: Box | None = None, rival: Box = revision):
        own = _read(number).candidates[0]
        if at is not None:
            own = own.model_copy(update={"box": at})
        chosen = own.model_copy(update={"text": "P03", "word_ids": [1], "box": rival})
        own = own.model_copy(update={"chosen": False, "score": -1.0})
        return SheetReading(
            number=FieldReading(text="P03", word_ids=[1]), candidates=[chosen, own], ocr=True
        )

    def decided_second(second: SheetReading) -> Decision:
        return decide_set({1: _read("E-101"), 2: second, 3: _read("E-103")})[2]

    decided = decided_second(two_values("E-102"))
    assert decided.number == "E-102" and decided.source == "set_template"
    assert "reads two values" in decided.why
    one_value = two_values("E-102")
    one_value = one_value.model_copy(update={"candidates": one_value.candidates[:1]})
    assert decided_second(one_value).number == "P03"
    far = Box(100, 100, 140, 130)
    assert decided_second(two_values("E-102", at=far, rival=far)).number == "P03"
