"""Normalised forms beside the printed ones: sheet numbers with ASCII hyphens, dates in ISO
8601 read in the day/month order the set's dates share (an ambiguous set keeps its printed
dates only, and says so), in the sheet log and its CSV."""

import csv
import io
from datetime import UTC, datetime

import pytest

from services.ingest.sheetlog import UTF8_BOM, sheet_log, to_csv
from services.report.assemble import JobInfo, build_report
from shared.contracts.models import Coverage, PageVerdict, VerifiedPage
from shared.sheet.header import SheetHeader
from shared.sheet.normal import ascii_number, date_order, iso_date, without_cad_codes

WHEN = datetime(2026, 5, 1, tzinfo=UTC)


def test_a_sheet_number_gets_ascii_hyphens_and_single_spaces():
    assert ascii_number("100\u201000") == "100-00"  # Unicode hyphen
    assert ascii_number("A\u2013101") == "A-101"  # en dash
    assert ascii_number("S\u2212201  B") == "S-201 B"  # minus sign, two spaces
    assert ascii_number(None) is None


@pytest.mark.parametrize(
    ("dates", "order"),
    [
        (["13/10/2023", "01/02/2023"], "day_first"),
        (["12/31/2024", "01/02/2024"], "month_first"),
        (["04/12/16", "04/12/2016"], None),  # nothing says which
        (["13/04/16", "04/13/16"], None),  # both are said: ambiguous
        (["APRIL 23, 2021", "2021-04-23"], None),  # no numeric date to order
    ],
)
def test_a_sets_dates_share_one_order_or_none(dates, order):
    assert date_order(dates) == order


@pytest.mark.parametrize(
    ("printed", "order", "iso"),
    [
        ("04/12/16", "day_first", "2016-12-04"),
        ("04/12/2016", "month_first", "2016-04-12"),
        ("04/12/16", None, None),  # the order matters and is not known
        ("05.05.2020", None, "2020-05-05"),  # it does not matter
        ("2016-04-12", None, "2016-04-12"),
        ("12 APR 2016", None, "2016-04-12"),
        ("APRIL 23, 2021", None, "2021-04-23"),
        ("12-Apr-16", None, "2016-04-12"),
        ("12.März.2016", None, "2016-03-12"),
        ("FEBRUARY 2024", None, None),  # no day
        ("31/02/2020", "day_first", None),  # no such day
        ("REV 3", None, None),
        (None, None, None),
    ],
)
def test_a_printed_date_in_iso_8601(printed, order, iso):
    assert iso_date(printed, order) == iso


def page(n: int, number: str, date: str) -> VerifiedPage:
    coverage = Coverage(total_lines=4, covered_lines=4, ratio=1.0)
    return VerifiedPage(
        job_id="j_" + "0" * 32,
        page_number=n,
        has_text_layer=True,
        sheet=SheetHeader(sheet_number=number, sheet_title=f"SHEET {n}", issue_date=date),
        coverage_before=coverage,
        coverage=coverage,
        floor=0.6,
        below_floor=False,
        verdict=PageVerdict(ok=True),
    )


def log_of(*pages: VerifiedPage):
    job = JobInfo(
        job_id="j_" + "0" * 32, file_name="set.pdf", page_count=len(pages), created_at=WHEN
    )
    return sheet_log(build_report(job, list(pages), finished_at=WHEN))


def test_the_sheet_log_exports_normalised_forms_beside_the_printed():
    log = log_of(page(1, "100\u201000", "13/10/2023"), page(2, "100-01", "01/11/2023"))
    assert log.date_order == "day_first"
    first, second = log.rows
    assert (first.sheet_number, first.sheet_number_printed) == ("100-00", "100\u201000")
    assert (second.issue_date, second.issue_date_printed) == ("2023-11-01", "01/11/2023")
    text = to_csv(log).decode("utf-8").removeprefix(UTF8_BOM)
    rows = list(csv.DictReader(io.StringIO(text)))
    assert rows[0]["sheet_number"] == "100-00" and rows[0]["issue_date"] == "2023-10-13"


def test_an_ambiguous_set_keeps_its_printed_dates_and_says_so():
    log = log_of(page(1, "A-1", "04/12/16"), page(2, "A-2", "04/12/2016"))
    assert log.date_order == "ambiguous"
    assert [(r.issue_date, r.issue_date_printed) for r in log.rows] == [
        (None, "04/12/16"),
        (None, "04/12/2016"),
    ]


def test_cad_text_codes_left_in_a_text_layer_read_as_the_cad_program_prints_them():
    """An export that leaves AutoCAD's codes in the text ("%%UFLOOR PLAN"): underline and
    overline are formatting, the others their symbols; other text is untouched."""
    assert without_cad_codes("%%UFLOOR PLAN") == "FLOOR PLAN"
    assert without_cad_codes("%%uSECTION %%uA-A") == "SECTION A-A"
    assert without_cad_codes("%%C100 AT 45%%D") == "\u2300100 AT 45\u00b0"
    assert without_cad_codes("%%P5 %%065 100%%%") == "\u00b15 A 100%"
    assert without_cad_codes("PLAN 50% 1:100") == "PLAN 50% 1:100"
