"""The sheet log: one row per page of a finished job's report — the table people paste into
a drawing log — as JSON rows or as a CSV file a spreadsheet opens."""

import csv
import io
from collections import Counter
from datetime import date
from typing import Literal

from pydantic import BaseModel, Field

from shared.contracts.report import PRIORITY_ORDER, PageReport, Report
from shared.sheet.normal import Order, ascii_number, date_order, iso_date

# A cell a spreadsheet would take for a formula: text read from a PDF is untrusted, so such
# a cell is written with a leading apostrophe, which spreadsheets show as text (OWASP's
# advice for CSV injection). The JSON rows keep the value as read.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
# Written first in the CSV file: Excel reads a CSV without it in the machine's legacy code
# page, garbling every accented title; with it, as UTF-8. Other spreadsheets skip it.
UTF8_BOM = "\ufeff"


class SheetRow(BaseModel):
    """One page of the set as the sheet log lists it."""

    page: int = Field(examples=[3])
    sheet_number: str | None = Field(
        description="with ASCII hyphens (a search for 100-00 finds a sheet printed 100‐00)",
        examples=["A-201"],
    )
    sheet_number_printed: str | None = Field(description="as the sheet prints it")
    sheet_title: str | None = Field(examples=["FLOOR PLAN - LEVEL 2"])
    discipline: str | None = Field(examples=["Architectural"])
    version: int | None = Field(
        None, description="the version of its project's register the page is (projects only)"
    )
    revision: str | None = Field(description="the sheet's current revision mark, as printed")
    issue_date: str | None = Field(
        description="the sheet's date in ISO 8601, its day/month order read from the set "
        "(empty where the set's order is ambiguous)",
        examples=["2016-04-12"],
    )
    issue_date_printed: str | None = Field(description="the sheet's date, as printed")
    number_source: str | None = Field(
        description="where the sheet number came from (extraction, text_layer, ocr, "
        "drawing_index, person, …)"
    )
    coverage: float | None = Field(description="share of the page's text lines covered")
    verdict: str = Field(
        examples=["ok"], description="ok, problems, unjudged, blank, failed, canceled"
    )
    problems: list[str] = Field(
        description="the page's problems, as the report states them; one a person decided "
        "ends in (dismissed) or (confirmed)"
    )
    correction_state: str = Field(
        "", description="what a person changed on the page (empty: nothing)"
    )
    review_priority: str = Field(
        "", examples=["high"], description="how soon to look at the page: high, normal, low"
    )
    review_reasons: list[str] = Field(
        [], description="why, one sentence each (empty for a low priority)"
    )
    checked: str = Field(
        "",
        examples=["checked 1 of 31 objects (OCR check of 1 line)"],
        description="how much of the page the checks read",
    )


class SheetLog(BaseModel):
    job_id: str
    file_name: str
    issue: str | None = Field(None, description="the upload's issue label (options.issue)")
    issued_on: date | None = Field(None, description="the upload's issue date (options)")
    date_order: Literal["day_first", "month_first", "ambiguous"] | None = Field(
        None,
        description="the day/month order the set's numeric dates share; ambiguous: they say "
        "both or neither and it matters (their ISO form is left empty); none: nothing to "
        "read in an order",
    )
    rows: list[SheetRow]


COLUMNS = tuple(SheetRow.model_fields)


def verdict(page: PageReport) -> str:
    """The page's verdict in one word, the first matching state winning."""
    v = page.verification
    if page.status == "failed":
        return "canceled" if page.failure_stage == "canceled" else "failed"
    if v is None:
        return "failed"
    if v.skipped == "blank":
        return "blank"
    if not v.ok:
        return "problems"
    return "unjudged" if v.unjudged else "ok"


def correction_state(page: PageReport) -> str:
    """What a person changed: the fields corrected and the problems decided, counted."""
    review = page.review
    if review is None:
        return ""
    parts = [f"corrected: {', '.join(review.corrected)}"] if review.corrected else []
    decided = Counter(p.state for p in review.problems if p.state != "open")
    parts += [f"{count} {state}" for state, count in sorted(decided.items())]
    return "; ".join(parts)


def problems(page: PageReport) -> list[str]:
    """The page's problems as the report states them, a decided one marked so."""
    states = {p.number: p.state for p in page.review.problems} if page.review else {}
    texts = page.verification.problems if page.verification else []
    return [
        f"{text} ({states[n]})" if states.get(n, "open") != "open" else text
        for n, text in enumerate(texts, start=1)
    ]


def row(page: PageReport, order: Order | None, version: int | None = None) -> SheetRow:
    sheet = page.sheet
    corrected = page.review.corrected if page.review else {}
    return SheetRow(
        page=page.page_number,
        sheet_number=ascii_number(sheet.sheet_number),
        sheet_number_printed=sheet.sheet_number,
        sheet_title=sheet.sheet_title,
        discipline=sheet.discipline,
        version=version,
        # Title-block fields beyond number and title, once the report carries them; a
        # revision a person set is shown even before then.
        revision=corrected["revision"]
        if "revision" in corrected
        else getattr(sheet, "revision", None),
        issue_date=iso_date(sheet.issue_date, order),
        issue_date_printed=sheet.issue_date,
        number_source=sheet.sheet_number_source,
        coverage=page.coverage.ratio if page.coverage and page.coverage.total_lines else None,
        verdict=verdict(page),
        problems=problems(page),
        correction_state=correction_state(page),
        review_priority=page.review_priority.level if page.review_priority else "",
        review_reasons=[r.says for r in page.review_priority.reasons]
        if page.review_priority
        else [],
        checked=v.checked.sentence() if (v := page.verification) and v.checked else "",
    )


SheetOrder = Literal["page", "review_priority"]


def sheet_log(report: Report, order: SheetOrder = "page") -> SheetLog:
    """The rows in page order, or by review priority (high first; page order within), each
    date also in ISO form where the set's dates say which order they are in."""
    dates = [p.sheet.issue_date for p in report.pages if p.sheet.issue_date]
    days = date_order(dates)
    # Ambiguous: a date whose ISO form turns on the order, which the set does not give.
    ambiguous = any(iso_date(d, None) is None and iso_date(d, "day_first") for d in dates)
    changes = report.changes
    versions = {s.page_number: s.to_version for s in changes.sheets} if changes else {}
    rows = [row(p, days, versions.get(p.page_number)) for p in report.pages]
    if order == "review_priority":
        rank: dict[str, int] = {level: n for n, level in enumerate(PRIORITY_ORDER)}
        rows.sort(key=lambda r: (rank.get(r.review_priority, len(rank)), r.page))
    return SheetLog(
        job_id=report.job_id,
        file_name=report.file_name,
        issue=changes.issue if changes else None,
        issued_on=changes.issued_on if changes else None,
        date_order=days or ("ambiguous" if ambiguous else None),
        rows=rows,
    )


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        value = " | ".join(str(v) for v in value)
    text = str(value)
    return f"'{text}" if text.startswith(FORMULA_STARTS) else text


def to_csv(log: SheetLog) -> bytes:
    """The rows as CSV (UTF-8 with a byte-order mark, CRLF rows as RFC 4180 has them)."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(COLUMNS)
    for entry in log.rows:
        values = entry.model_dump()
        writer.writerow(_cell(values[c]) for c in COLUMNS)
    return (UTF8_BOM + out.getvalue()).encode("utf-8")
