"""The set reconciled once every page is terminal: its drawing index against its sheets,
duplicates, titles, and references to sheets the set does not hold; stored with the
report, counted in its summary and in report.ready, shown as the report's Set section."""

from datetime import UTC, datetime

import pymupdf
import pytest

from services.extract.reading.textlayer import read_text_layer
from services.report.assemble import JobInfo, build_report
from services.report.html import render_report_html
from shared.contracts.models import Coverage, PageVerdict, VerifiedPage
from shared.contracts.report import ReadySummary
from shared.pagetext import TextLayer, laid_out
from shared.sheet.header import SheetHeader, sheet_header
from shared.sheet.index import expand_index, read_drawing_index
from shared.sheet.reading import read_sheet
from shared.sheet.reconcile import PageFacts, reconcile
from shared.sheet.references import references
from tests.support.renderings import turned
from tests.support.sets import INDEX, facts_of, indexed_set


@pytest.fixture(scope="module")
def layers() -> dict[int, TextLayer]:
    doc = indexed_set()
    return {n + 1: read_text_layer(page, n + 1, min_chars=1) for n, page in enumerate(doc.pages())}


def _sheets(layers: dict[int, TextLayer]) -> dict[int, SheetHeader]:
    return {n: sheet_header(read_sheet(layer)) for n, layer in layers.items()}


@pytest.fixture(scope="module")
def sheet_set(layers):
    sheets = _sheets(layers)
    return reconcile([facts_of(n, sheets[n], layer) for n, layer in layers.items()])


def test_the_index_is_read_as_number_title_pairs(layers):
    """The cover's SHEET INDEX is read row by row, numbers and titles as printed."""
    assert read_drawing_index(layers[1]) == INDEX
    assert all(read_drawing_index(layers[n]) == [] for n in range(2, 8))


@pytest.mark.parametrize("degrees", [90, 270])
def test_an_index_on_a_sheet_fed_sideways_is_read_in_its_own_frame(degrees):
    """The same cover turned a quarter (its text layer running down or up the page) gives
    the same rows."""
    with pymupdf.open(stream=turned(indexed_set().tobytes(), degrees)) as doc:
        assert read_drawing_index(read_text_layer(doc[0], 1, min_chars=1)) == INDEX


def test_index_confirms_sheets_and_names_the_absent_one(sheet_set):
    """Sheets the index lists are confirmed (E-02 on the sheet is E-2 in the index); the
    sheet listed but absent is named missing; the unlisted one is named too."""
    assert sheet_set.index_pages == [1]
    assert sheet_set.confirmed_pages == [1, 2, 3, 4, 5]
    assert [e.sheet_number for e in sheet_set.missing] == ["A-102"]
    assert [(e.page_number, e.sheet_number) for e in sheet_set.not_in_index] == [(7, "M-101")]


def test_a_page_is_corrected_only_where_it_prints_the_indexed_number(sheet_set):
    """The page whose number is a word (SITE) gets it from the index, because it prints it
    alone in its title block; the correction names its source."""
    [correction] = sheet_set.corrections
    assert (correction.page_number, correction.was, correction.now) == (6, None, "SITE")
    assert correction.sheet_title == "SITE PLAN"
    assert "page 1" in correction.source and "page 6" in correction.source
    assert sheet_set.unnumbered_pages == []


def test_duplicate_numbers_are_named(sheet_set):
    """Two pages sharing a number are named with both pages."""
    assert [(d.sheet_number, d.page_numbers) for d in sheet_set.duplicates] == [("A-201", [3, 4])]


def test_titles_differ_beyond_case_and_punctuation_only(sheet_set):
    """FIRST FLOOR PLAN against the index's FLOOR PLAN is a mismatch; "Lighting Plan"
    against LIGHTING PLAN is not."""
    assert [(t.page_number, t.sheet_title, t.index_title) for t in sheet_set.title_mismatches] == [
        (2, "FIRST FLOOR PLAN", "FLOOR PLAN")
    ]


def test_references_to_sheets_not_in_the_set(sheet_set):
    """SEE SHEET A-501 points at no sheet of the set (which holds A- sheets): unresolved.
    2/A-201 and M-101 resolve; DETAIL 3 ON S-502 names a discipline the set does not hold
    and is kept apart as external."""
    assert [(r.page_number, r.target) for r in sheet_set.unresolved_references] == [(2, "A-501")]
    assert [(r.page_number, r.target) for r in sheet_set.external_references] == [(3, "S-502")]


@pytest.mark.parametrize(
    ("line", "targets"),
    [
        ("SEE 2/S301 FOR TYPICAL FOOTING DETAIL.", ["S301"]),
        ("SEE SHEET A-501", ["A-501"]),
        ("DETAIL 3 ON S-502", ["S-502"]),
        ("REFER TO DWG. E2.1 FOR PANELS", ["E2.1"]),
        ('SEE NOTE 3. USE 1/2" BOLTS W/ A-307 NUTS', []),
        ("I-90 TO SR 520, STA 12+50", []),
    ],
)
def test_reference_forms(line, targets):
    """The printed forms of a reference, and what only looks like one."""
    layer = laid_out(
        page_number=1,
        width=600,
        height=400,
        words=[
            {"text": w, "bbox": (10 + 40 * i, 10, 45 + 40 * i, 20)}
            for i, w in enumerate(line.split())
        ],
        has_text_layer=True,
    )
    assert [target for target, _ in references(layer)] == targets


def test_no_index_still_names_duplicates_and_nothing_else():
    """A set without an index is checked against itself only."""
    facts = [
        PageFacts(1, "A-101", "PLAN", [], []),
        PageFacts(2, "A101", "PLAN", [], []),
        PageFacts(3, None, None, [], []),
    ]
    sheet_set = reconcile(facts)
    assert [d.page_numbers for d in sheet_set.duplicates] == [[1, 2]]
    assert sheet_set.unnumbered_pages == [3]
    assert not (sheet_set.missing or sheet_set.not_in_index or sheet_set.confirmed_pages)


def _verified(n: int, sheet: SheetHeader) -> VerifiedPage:
    coverage = Coverage(total_lines=1, covered_lines=1, ratio=1.0)
    return VerifiedPage(
        job_id="j",
        page_number=n,
        has_text_layer=True,
        sheet=sheet,
        coverage_before=coverage,
        coverage=coverage,
        floor=0.6,
        below_floor=False,
        verdict=PageVerdict(ok=True),
    )


def test_report_stores_counts_and_shows_the_set(layers, sheet_set):
    """The report stores the set, applies the correction to page 6's identity (source
    drawing_index), counts the findings in its summary and in report.ready's, and shows
    them in a Set section."""
    sheets = _sheets(layers)
    job = JobInfo(
        job_id="j", file_name="set.pdf", page_count=7, created_at=datetime(2026, 5, 29, tzinfo=UTC)
    )
    pages = [_verified(n, sheets[n]) for n in range(1, 8)]
    report = build_report(job, pages, finished_at=datetime.now(UTC), sheet_set=sheet_set)
    assert report.set.missing[0].sheet_number == "A-102"
    site = report.pages[5].sheet
    assert (site.sheet_number, site.sheet_number_source) == ("SITE", "drawing_index")
    counts = report.summary.set
    assert counts == ReadySummary.of(report).set
    assert counts.missing == counts.duplicates == counts.corrected == 1
    assert counts.unresolved_references == counts.not_in_index == 1
    assert report.summary.sheets.identified == 7
    html = render_report_html(report, {})
    assert 'id="set"' in html and "A-102" in html and "A-501" in html
    assert "drawing index on page 1 lists SITE" in html


def _index_page(draw) -> TextLayer:
    doc = pymupdf.open()
    page = doc.new_page(width=1224, height=792)
    draw(page)
    return read_text_layer(page, 1, min_chars=1)


def test_index_rows_that_are_ranges_expand_against_the_set():
    """ "UC-3A THRU UC-3C" and "21-23" name runs of sheets; a row that is one of the set's
    numbers stays one; index numbers differing only in zero padding match."""

    def draw(page):
        page.insert_text((100, 100), "INDEX OF SHEETS", fontsize=16)
        for k, (n, t) in enumerate(
            [("UC-1", "TITLE SHEET"), ("UC-3A THRU UC-3C", "DETAILS"), ("UC-4", "PLAN")]
        ):
            page.insert_text((80, 140 + 20 * k), n, fontsize=11)
            page.insert_text((260, 140 + 20 * k), t, fontsize=11)

    rows = read_drawing_index(_index_page(draw))
    assert rows[1] == ("UC-3A THRU UC-3C", "DETAILS")
    expanded = expand_index(rows, ["UC-1", "UC-04"])
    assert [n for n, _ in expanded] == ["UC-1", "UC-3A", "UC-3B", "UC-3C", "UC-4"]
    assert [n for n, _ in expand_index([("21-23", None)], ["20"])] == ["21", "22", "23"]
    assert expand_index([("21-23", None)], ["21-23"]) == [("21-23", None)]
    facts = [PageFacts(1, "UC-1", None, rows, []), PageFacts(2, "UC-04", None, [], [])]
    facts += [PageFacts(3 + k, f"UC-3{s}", None, [], []) for k, s in enumerate("ABC")]
    sheet_set = reconcile(facts)
    assert sheet_set.missing == [] and sheet_set.not_in_index == []


def test_index_grouped_by_discipline_with_column_headers_and_ruled_cells():
    """Column headers and group titles between rows do not end the list; ruled cells
    around each row do not matter."""

    def draw(page):
        page.insert_text((100, 100), "DRAWING INDEX", fontsize=16)
        y = 130
        page.insert_text((100, y), "SHEET NO.", fontsize=10)
        page.insert_text((220, y), "SHEET TITLE", fontsize=10)
        for group, sheets in [
            ("ARCHITECTURAL", [("A-101", "FLOOR PLAN"), ("A-201", "ELEVATIONS")]),
            ("STRUCTURAL", [("S-101", "FOUNDATION PLAN")]),
        ]:
            y += 20
            page.insert_text((100, y), group, fontsize=10)
            for n, t in sheets:
                y += 20
                page.draw_rect(pymupdf.Rect(95, y - 14, 500, y + 5), width=0.5)
                page.insert_text((100, y), n, fontsize=10)
                page.insert_text((220, y), t, fontsize=10)

    assert read_drawing_index(_index_page(draw)) == [
        ("A-101", "FLOOR PLAN"),
        ("A-201", "ELEVATIONS"),
        ("S-101", "FOUNDATION PLAN"),
    ]


def test_index_in_two_columns_and_listed_upwards():
    """Rows that run on in a second column beside the first are read after it; a list
    printed above its heading (bottom-up) is read too."""

    def two_columns(page):
        page.insert_text((100, 100), "SHEET INDEX", fontsize=16)
        for k in range(3):
            page.insert_text((100, 130 + 20 * k), f"A-10{k + 1}", fontsize=10)
            page.insert_text((160, 130 + 20 * k), f"PLAN LEVEL {k + 1}", fontsize=10)
            page.insert_text((400, 130 + 20 * k), f"E-10{k + 1}", fontsize=10)
            page.insert_text((460, 130 + 20 * k), f"LIGHTING LEVEL {k + 1}", fontsize=10)

    rows = read_drawing_index(_index_page(two_columns))
    assert [n for n, _ in rows] == ["A-101", "A-102", "A-103", "E-101", "E-102", "E-103"]
    assert rows[3] == ("E-101", "LIGHTING LEVEL 1")

    def upwards(page):
        for k, n in enumerate(["M-103", "M-102", "M-101"]):
            page.insert_text((900, 600 + 20 * k), n, fontsize=10)
            page.insert_text((960, 600 + 20 * k), "MECHANICAL", fontsize=10)
        page.insert_text((900, 680), "DRAWING LIST", fontsize=12)

    assert [n for n, _ in read_drawing_index(_index_page(upwards))] == ["M-101", "M-102", "M-103"]
