"""The sheet log export: one row per page of a report, every column the drawing log needs,
as JSON rows and as a CSV file a spreadsheet opens (UTF-8 with a byte-order mark, no cell
taken for a formula)."""

import csv
import io
from datetime import UTC, datetime

from services.ingest.sheetlog import COLUMNS, UTF8_BOM, sheet_log, to_csv
from services.report.assemble import FailedPage, JobInfo, PageOutcome, build_report
from shared.contracts.models import Coverage, PageVerdict, VerifiedPage
from shared.sheet.header import SheetHeader

JOB = "j_" + "0" * 32
WHEN = datetime(2026, 5, 1, tzinfo=UTC)


def verified(n: int, number: str | None, title: str | None, verdict: PageVerdict) -> VerifiedPage:
    coverage = Coverage(total_lines=10, covered_lines=8, ratio=0.8)
    return VerifiedPage(
        job_id=JOB,
        page_number=n,
        has_text_layer=True,
        sheet=SheetHeader(
            sheet_number=number,
            sheet_title=title,
            discipline="architectural" if number else None,
            sheet_number_source="extraction" if number else None,
        ),
        coverage_before=coverage,
        coverage=coverage,
        floor=0.6,
        below_floor=False,
        verdict=verdict,
    )


def report():
    pages: list[PageOutcome] = [
        verified(1, "A-101", "GRUNDRISS ERDGESCHOß", PageVerdict(ok=True)),
        verified(
            2,
            "A-102",
            '=HYPERLINK("http://x")',
            PageVerdict(ok=False, problems=["(2) is printed (5)"], kinds=["content_wrong"]),
        ),
        FailedPage(page_number=3, stage="extract", reason="RuntimeError: boom"),
    ]
    job = JobInfo(job_id=JOB, file_name="set.pdf", page_count=3, created_at=WHEN)
    return build_report(job, pages, finished_at=WHEN)


def test_one_row_per_page_with_every_column():
    """Every page is a row; a failed page is a row too, named failed."""
    rows = sheet_log(report()).rows
    assert [r.page for r in rows] == [1, 2, 3]
    assert (rows[0].sheet_number, rows[0].discipline, rows[0].number_source) == (
        "A-101",
        "architectural",
        "extraction",
    )
    assert (rows[0].coverage, rows[0].verdict, rows[0].problems) == (0.8, "ok", [])
    assert (rows[1].verdict, rows[1].problems) == ("problems", ["(2) is printed (5)"])
    assert (rows[2].verdict, rows[2].sheet_number, rows[2].coverage) == ("failed", None, None)
    assert COLUMNS == (
        "page",
        "sheet_number",
        "sheet_number_printed",
        "sheet_title",
        "discipline",
        "version",
        "revision",
        "issue_date",
        "issue_date_printed",
        "number_source",
        "coverage",
        "verdict",
        "problems",
        "correction_state",
        "review_priority",
        "review_reasons",
        "checked",
    )


def test_the_csv_opens_as_utf8_with_a_header_and_no_formulas():
    """The file starts with a BOM, parses back with the csv module to the header and one
    row per page, keeps accented titles, and a title that looks like a formula is text."""
    data = to_csv(sheet_log(report()))
    text = data.decode("utf-8")
    assert text.startswith(UTF8_BOM)
    parsed = list(csv.reader(io.StringIO(text.removeprefix(UTF8_BOM))))
    assert tuple(parsed[0]) == COLUMNS
    body = [dict(zip(COLUMNS, line, strict=True)) for line in parsed[1:]]
    assert [b["page"] for b in body] == ["1", "2", "3"]
    assert body[0]["sheet_title"] == "GRUNDRISS ERDGESCHOß"
    assert body[1]["sheet_title"] == '\'=HYPERLINK("http://x")'
    assert body[1]["problems"] == "(2) is printed (5)"
    assert body[2]["verdict"] == "failed" and body[2]["sheet_number"] == ""
