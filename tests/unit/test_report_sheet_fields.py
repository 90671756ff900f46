"""The title block's fields and the set's disciplines in the report: report.json's pages,
report.ready's sheet index, and the HTML sheet index."""

from services.report.assemble import build_report
from services.report.html import render_report_html
from shared.contracts.report import ReadySummary
from shared.sheet.header import SheetHeader
from tests.unit.test_report_assemble import FINISHED, job, verified


def _page(n: int, number: str, title: str, **fields: str):
    page = verified(n, sheet_number=number)
    sheet = SheetHeader(
        sheet_number=number, sheet_title=title, sheet_number_source="text_layer", **fields
    )
    return page.model_copy(update={"sheet": sheet})


def test_fields_reach_the_report_the_ready_event_and_the_html():
    """Revision, date, scale and project travel with each sheet; the discipline is the
    set's word (an NCS set here), replacing what the page alone claimed."""
    pages = [
        _page(1, "A101", "FLOOR PLAN", revision="C", issue_date="05/14/2024", scale="1:100"),
        _page(2, "A201", "ELEVATIONS", revision="B", project_number="2023-117"),
    ]
    report = build_report(job(2), pages, finished_at=FINISHED)
    first = report.pages[0].sheet
    assert (first.revision, first.issue_date, first.scale) == ("C", "05/14/2024", "1:100")
    assert [p.sheet.discipline for p in report.pages] == ["architectural", "architectural"]

    ready = ReadySummary.of(report).sheet_index
    assert [(s.page_number, s.sheet_number, s.revision) for s in ready] == [
        (1, "A101", "C"),
        (2, "A201", "B"),
    ]
    assert ready[1].project_number == "2023-117" and ready[0].discipline == "architectural"

    html = render_report_html(report, {})
    index = html[html.index('id="sheet-index"') : html.index("<h2>Pages</h2>")]
    assert "<th>Rev.</th>" in index and "05/14/2024" in index and "2023-117" in index


def test_a_set_outside_the_ncs_scheme_gets_unknown_disciplines():
    """ST01.B and its neighbours say nothing by their letters: unknown, whatever the
    extraction claimed."""
    pages = [_page(n, num, "SITE PLAN") for n, num in enumerate(["ST01.B", "ST02"], start=1)]
    report = build_report(job(2), pages, finished_at=FINISHED)
    assert [p.sheet.discipline for p in report.pages] == ["unknown", "unknown"]
