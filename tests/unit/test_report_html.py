"""The HTML report: escaping, every sheet shown, failed pages first, thumbnails embedded."""

import base64
import re
from collections.abc import Sequence
from datetime import UTC, datetime

import pymupdf

from services.extract.reading.render import render_thumbnail_jpeg
from services.report.assemble import FailedPage, JobInfo, PageOutcome, build_report
from services.report.html import render_report_html
from shared.contracts.models import (
    CheckedShare,
    Coverage,
    GuardCounts,
    HiddenText,
    ObjectVerification,
    PageObject,
    PageVerdict,
    VerifiedPage,
)
from shared.contracts.report import Report
from shared.sheet.header import SheetHeader

HOSTILE = '<script>alert("x")</script>'


def page(
    n: int, sheet_number: str | None, objects: Sequence[PageObject] = (), **verdict
) -> VerifiedPage:
    coverage = Coverage(total_lines=4, covered_lines=3, ratio=0.75)
    return VerifiedPage(
        job_id="j_html",
        page_number=n,
        has_text_layer=True,
        sheet=SheetHeader(
            sheet_number=sheet_number, sheet_title="PLAN", sheet_number_source="text_layer"
        ),
        objects=list(objects),
        coverage_before=coverage,
        coverage=coverage,
        floor=0.6,
        below_floor=False,
        rungs=["offline"],
        verdict=PageVerdict(ok=True, **verdict) if "ok" not in verdict else PageVerdict(**verdict),
    )


def report(pages, page_count: int | None = None, file_name: str = "set.pdf") -> Report:
    job = JobInfo(
        job_id="j_html",
        file_name=file_name,
        page_count=page_count or len(pages),
        created_at=datetime(2026, 5, 29, tzinfo=UTC),
    )
    return build_report(job, pages, finished_at=datetime(2026, 5, 29, 0, 1, tzinfo=UTC))


def test_hostile_text_is_escaped():
    """A source_text, problem or file name holding <script> is rendered as text, never as markup."""
    obj = PageObject(
        object_id="o1",
        source_text=HOSTILE,
        verification=ObjectVerification(
            verdict="refuted", kind="content_wrong", actual_text=HOSTILE
        ),
    )
    html = render_report_html(
        report(
            [page(1, "A101", [obj], ok=False, problems=[HOSTILE], kinds=["content_wrong"])],
            file_name=HOSTILE,
        ),
        {},
    )
    assert "<script>" not in html
    assert "&lt;script&gt;alert(" in html


def test_every_sheet_number_and_failed_pages_first():
    """Every sheet number appears, and the failed-pages section comes before the sheet cards."""
    numbers = ["G001", "A101", "A601", "S001"]
    pages: list[PageOutcome] = [page(i + 1, n) for i, n in enumerate(numbers)]
    pages.append(FailedPage(page_number=5, stage="extract", reason="cannot render page"))
    html = render_report_html(report(pages), {})
    for number in numbers:
        assert number in html
    assert html.index('id="failed-pages"') < html.index('id="page-1"')
    assert "cannot render page" in html
    # a page with no outcome at all is named as well
    html = render_report_html(report([page(1, "A101")], page_count=2), {})
    assert "no outcome recorded" in html


def test_refuted_object_cites_actual_text():
    """A content_wrong object shows what was extracted next to what the page says."""
    obj = PageObject(
        object_id="o1",
        source_text="(2) 2X6 STUD PACK AT EACH END OF HEADER",
        verification=ObjectVerification(
            verdict="refuted",
            kind="content_wrong",
            actual_text="(5) 2X6 STUD PACK AT EACH END OF HEADER",
        ),
    )
    html = render_report_html(
        report(
            [page(1, "S001", [obj], ok=False, problems=["number differs"], kinds=["content_wrong"])]
        ),
        {},
    )
    cited = html[html.index('class="cited"') :]
    assert "(2) 2X6 STUD PACK" in cited
    assert "(5) 2X6 STUD PACK" in cited


def test_thumbnail_is_embedded_as_data_uri():
    """The page thumbnail (a JPEG rendered by extract) is embedded, so the file is self-contained."""
    doc = pymupdf.open()
    doc.new_page(width=2592, height=1728).insert_text((100, 200), "A101 FLOOR PLAN", fontsize=80)
    thumb = render_thumbnail_jpeg(doc[0], max_px=120)
    assert thumb.startswith(b"\xff\xd8")
    assert max(pymupdf.Pixmap(thumb).width, pymupdf.Pixmap(thumb).height) == 120
    html = render_report_html(report([page(1, "A101")]), {1: thumb})
    match = re.search(r'src="data:image/jpeg;base64,([A-Za-z0-9+/=]+)"', html)
    assert match and base64.b64decode(match.group(1)) == thumb
    assert "http://" not in html and "https://" not in html


def test_verdict_badges():
    """Each page gets the badge its verdict deserves: ok, problems, unjudged, skipped blank, failed."""
    pages = [
        page(1, "A101"),
        page(2, "A102", ok=False, problems=["x"], kinds=["content_wrong"]),
        page(3, "A103", unjudged=True),
        page(4, None, unjudged=True, skipped="blank"),
        FailedPage(page_number=5, stage="verify", reason="x"),
    ]
    html = render_report_html(report(pages), {})
    badges = re.findall(r'<article class="card (\w+)" id="page-(\d)"', html)
    assert badges == [
        ("ok", "1"),
        ("problems", "2"),
        ("unjudged", "3"),
        ("blank", "4"),
        ("failed", "5"),
    ]


def test_guard_counts_and_unjudged_reason_are_shown():
    """The vision_unverified count is a header tile and, with kept/rescued/dropped, a page
    fact; an unjudged page says why."""
    guarded = page(1, "A101").model_copy(
        update={"guard": GuardCounts(kept=5, rescued=1, dropped=2, vision_unverified=3)}
    )
    unjudged = page(2, "A102", unjudged=True, reason="the judge's reply was cut off")
    html = render_report_html(report([guarded, unjudged]), {})
    tiles = re.findall(r'<div class="v">([^<]*)</div><div class="l">([^<]*)</div>', html)
    assert {label: value for value, label in tiles}["vision unverified"] == "3"
    assert "kept 5 · rescued 1 · vision unverified 3 · dropped 2" in html
    assert "Why: the judge&#39;s reply was cut off" in html


def test_a_scan_shows_the_coverage_of_its_ocr_words():
    """A scanned page's coverage, measured over the lines OCR read, is shown as such (in
    the sheet index and on the page); a scan OCR read nothing on says there was nothing."""
    ocr = Coverage(total_lines=124, covered_lines=123, ratio=0.9919)
    scan = page(1, "E3.0").model_copy(
        update={"has_text_layer": False, "coverage": ocr, "coverage_before": ocr}
    )
    empty = Coverage(total_lines=0, covered_lines=0, ratio=0.0)
    unread = page(2, None).model_copy(
        update={"has_text_layer": False, "coverage": empty, "coverage_before": empty}
    )
    html = render_report_html(report([scan, unread]), {})
    assert "99% (OCR)" in html
    assert "coverage 123/124 lines read by OCR (no PDF text layer) · 99%" in html
    assert "No PDF text layer, and no words OCR could read: nothing to cover." in html


def test_a_number_ocr_read_says_so():
    """A number read from OCR words is shown as the title block's, read by OCR, and counted
    with the numbers the title block gave (not as extracted)."""
    scan = page(1, "E3.0").model_copy(
        update={
            "has_text_layer": False,
            "sheet": SheetHeader(sheet_number="E3.0", sheet_number_source="ocr"),
        }
    )
    built = report([scan, page(2, "E3.1")])
    html = render_report_html(built, {})
    assert "title block (OCR)" in html
    assert html.count("title block (text layer)") == 1
    assert built.summary.sheets.recovered_from_text_layer == 2


def test_self_read_pages_and_hidden_text_are_named():
    """A page only its own words speak for is called out as not judged (never a pass), and
    text the page does not show is named in a notice and on its page, escaped."""
    hidden = HiddenText(count=2, kinds={"invisible": 1, "covered": 1}, sample="Z-999 <b>x</b>")
    pages = [
        page(1, "A101", unjudged=True, self_read=True, reason="own text"),
        page(2, "A102").model_copy(update={"hidden_text": hidden}),
    ]
    html = render_report_html(report(pages), {})
    assert 'id="self-read"' in html and "nothing independent read it" in html
    assert 'id="hidden-text"' in html
    assert html.count("Z-999 &lt;b&gt;x&lt;/b&gt;") == 2 and "<b>x</b>" not in html
    assert "invisible 1" in html and "covered 1" in html
    plain = render_report_html(report([page(1, "A101")]), {})
    assert 'id="self-read"' not in plain and 'id="hidden-text"' not in plain


def test_each_verdict_says_what_checked_it():
    """An object's verdict cell names its basis."""
    obj = PageObject(
        object_id="o1",
        source_text="GENERAL NOTES",
        verification=ObjectVerification(verdict="confirmed", basis="ocr"),
    )
    html = render_report_html(report([page(1, "A101", [obj])]), {})
    assert "<small>by ocr</small>" in html


def test_an_ok_page_says_how_much_of_it_was_checked():
    """Where a page says ok, it says how many of its objects a check read (and the lines
    OCR read): "ok" on one object of 31 is not "ok" on all of them."""
    checked = CheckedShare(
        objects=31, checked=1, share_of_objects=0.03, share_of_text=0.05, ocr_lines=1
    )
    html = render_report_html(report([page(1, "A101", checked=checked)]), {})
    assert "checked 1 of 31 objects (OCR check of 1 line)" in html
    assert "1/31 checked" in html


def test_a_count_of_nothing_takes_no_colour_and_unjudged_pages_are_named():
    """A header tile that counts nothing is not red (or amber); a tile that counts something
    keeps its colour. Each unjudged page is named with why, above the index."""
    scan = page(2, "A102", unjudged=True, reason="no judge").model_copy(
        update={"has_text_layer": False}
    )
    html = render_report_html(report([page(1, "A101"), scan]), {})
    tiles = re.findall(
        r'<div class="tile ?([\w ]*)"><div class="v">([^<]*)</div><div class="l">([^<]*)</div>',
        html,
    )
    by_label = {label: (css.strip(), value) for css, value, label in tiles}
    assert by_label["with problems"] == ("", "0") and by_label["failed"] == ("", "0")
    assert by_label["unjudged"] == ("unjudged", "1")
    assert "<li>page 2 is a scan read by OCR; nothing independent read it</li>" in html
