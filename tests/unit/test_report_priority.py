"""Review priority: every page says how soon a person should look at it, and why; a scanned
set says which sheets to look at first."""

from datetime import UTC, datetime

from services.ingest.sheetlog import sheet_log
from services.report import priority
from services.report.assemble import FailedPage, JobInfo, PageOutcome, build_report
from services.report.html import render_report_html
from shared.contracts.models import Coverage, HiddenText, PageVerdict, VerifiedPage
from shared.contracts.report import PageReview, ReadySummary
from shared.sheet.header import SheetHeader
from shared.sheet.reading import FieldReading, SheetReading
from shared.sheet.sheet_set import Correction, SheetSet

FINISHED = datetime(2026, 5, 29, 0, 1, tzinfo=UTC)
SURE = SheetReading(
    number=FieldReading(text="A-101", confidence=0.98),
    title=FieldReading(text="PLAN", confidence=0.97),
)


def scan(n: int, reading: SheetReading = SURE, **verdict) -> VerifiedPage:
    """A scanned page: nothing independent checked it unless the verdict says otherwise."""
    cover = Coverage(total_lines=4, covered_lines=4, ratio=1.0)
    return VerifiedPage(
        job_id="j",
        page_number=n,
        has_text_layer=False,
        sheet=SheetHeader(sheet_number=f"A-10{n}", sheet_title="PLAN", sheet_number_source="ocr"),
        coverage_before=cover,
        coverage=cover,
        floor=0.6,
        below_floor=False,
        reading=reading,
        verdict=PageVerdict(
            **({"ok": True, "unjudged": True, "reason": "a scan read by OCR"} | verdict)
        ),
    )


def kinds(page: VerifiedPage, correction: Correction | None = None) -> list[str]:
    return [r.kind for r in priority.of_page(page, correction).reasons]


def test_each_reason_is_named_and_weighed():
    """High: an open problem, a number OCR was unsure of, the set overriding the page's own
    reading; normal: nothing independent checked it, a title only from the set's template,
    hidden text; low: a checked page with nothing to add."""
    unsure = SheetReading(number=FieldReading(text="A-1O1", confidence=0.61))
    assert kinds(scan(1, unsure)) == ["low_ocr_confidence", "unchecked"]
    assert priority.of_page(scan(1, unsure), None).level == "high"
    reason = priority.of_page(scan(1, unsure), None).reasons[0]
    assert reason.says == "OCR read the sheet number with confidence 0.61"
    assert priority.of_page(scan(2), None).level == "normal"
    template = Correction(
        page_number=3, was=None, now="A-103", sheet_title="PLAN", basis="set_template", source="s"
    )
    no_title = SheetReading(number=FieldReading(text="A-103"))
    assert kinds(scan(3, no_title), template) == [
        "set_override",
        "title_from_template",
        "unchecked",
    ]
    problem = scan(4, ok=False, unjudged=False, problems=["p"], kinds=["content_wrong"])
    assert kinds(problem) == ["problem_open"]
    passed = scan(5, unjudged=False, reason=None)
    assert priority.of_page(passed, None).model_dump() == {"level": "low", "reasons": []}
    hidden = passed.model_copy(
        update={"hidden_text": HiddenText(count=3, kinds={"covered": 3}, sample="X")}
    )
    assert priority.of_page(hidden, None).level == "normal"
    assert priority.of_failed(canceled=False).level == "high"
    assert priority.of_failed(canceled=True).level == "low"


def test_a_scanned_set_says_which_sheets_to_look_at_first():
    """Every page of a scan is unjudged; the report still ranks them: the page whose number
    OCR was unsure of, and the lost page, first. The summary, report.ready, the sheet log
    (on request, by priority) and report.html all carry it."""
    unsure = SheetReading(number=FieldReading(text="A-1O2", confidence=0.7))
    pages: list[PageOutcome] = [
        scan(1),
        scan(2, unsure),
        scan(3),
        FailedPage(page_number=4, stage="extract", reason="x"),
    ]
    job = JobInfo(job_id="j", file_name="scan.pdf", page_count=4, created_at=FINISHED)
    report = build_report(job, pages, finished_at=FINISHED, sheet_set=SheetSet())
    levels = [p.review_priority.level if p.review_priority else None for p in report.pages]
    assert levels == ["normal", "high", "normal", "high"]
    assert report.summary.pages_by_priority == {"high": 2, "normal": 2, "low": 0}
    ready = ReadySummary.of(report)
    assert ready.pages_by_priority == report.summary.pages_by_priority
    assert [s.review_priority for s in ready.sheet_index] == ["normal", "high", "normal"]
    rows = sheet_log(report, order="review_priority").rows
    assert [r.page for r in rows] == [2, 4, 1, 3]
    assert rows[0].review_reasons[0] == "OCR read the sheet number with confidence 0.70"
    html = render_report_html(report, {})
    assert 'href="#by-priority"' in html and "high 2, normal 2, low 0" in html
    by_priority = html[html.index('id="sheet-index-by-priority"') : html.index('id="sheet-index"')]
    assert by_priority.index('href="#page-2"') < by_priority.index('href="#page-1"')


def test_a_review_ends_the_reasons_it_settled():
    """Once a person dismissed the page's problems and gave its number, the open problem and
    the unsure OCR reading no longer make it high."""
    unsure = SheetReading(number=FieldReading(text="A-1O1", confidence=0.6))
    page = scan(1, unsure, ok=False, unjudged=False, problems=["p"], kinds=["content_wrong"])
    job = JobInfo(job_id="j", file_name="s.pdf", page_count=1, created_at=FINISHED)
    [entry] = build_report(job, [page], finished_at=FINISHED).pages
    assert entry.review_priority is not None and entry.review_priority.level == "high"
    reviewed = entry.model_copy(
        update={"review": PageReview(corrected={"sheet_number": "A-101"}, original={})}
    )
    after = priority.after_review(reviewed, open_problems=False)
    assert after is not None and after.model_dump() == {"level": "low", "reasons": []}
