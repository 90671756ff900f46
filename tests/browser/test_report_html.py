"""The HTML report in a real headless Chromium: it loads, shows every sheet, raises no errors."""

import shutil
from datetime import UTC, datetime
from pathlib import Path

import pymupdf
import pytest

from services.extract.render import render_thumbnail_jpeg
from services.report.assemble import FailedPage, JobInfo, build_report
from services.report.html import render_report_html
from shared.models import (
    Coverage,
    ObjectVerification,
    PageObject,
    PageVerdict,
    SheetHeader,
    VerifiedPage,
)

sync_api = pytest.importorskip("playwright.sync_api")

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
SCREENSHOT = Path("/tmp/report-screenshot.png")
SHEETS = {1: ("A101", "FLOOR PLAN - LEVEL 1"), 2: ("S001", "STRUCTURAL GENERAL NOTES")}

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no Chromium on PATH (Debian package `chromium`); browser test skipped"
)


def sheet_thumbnails() -> dict[int, bytes]:
    """Thumbnails of a tiny 36x24 set, as the extract stage stores them."""
    doc = pymupdf.open()
    for n in range(1, 5):
        page = doc.new_page(width=2592, height=1728)
        if n == 4:
            continue  # the blank sheet
        page.draw_rect(pymupdf.Rect(36, 36, 2556, 1692), width=3)
        page.draw_rect(pymupdf.Rect(2200, 1400, 2556, 1692), width=2)
        number, title = SHEETS.get(n, ("A601", "DOOR SCHEDULE"))
        page.insert_text((2220, 1500), title, fontsize=18)
        page.insert_text((2220, 1640), number, fontsize=60)
        for i in range(12):
            page.insert_text(
                (120, 160 + i * 60), f"{i + 1}. GENERAL NOTE LINE {i + 1}", fontsize=24
            )
    return {i + 1: render_thumbnail_jpeg(p) for i, p in enumerate(doc)}


def verified(
    n: int, objects: list[PageObject], verdict: PageVerdict, *, lines: int = 12
) -> VerifiedPage:
    number, title = SHEETS.get(n, (None, None))
    coverage = Coverage(
        total_lines=lines,
        covered_lines=min(lines, len(objects)),
        ratio=min(1.0, len(objects) / lines) if lines else 0.0,
    )
    return VerifiedPage(
        job_id="j_browser",
        page_number=n,
        has_text_layer=lines > 0,
        sheet=SheetHeader(
            sheet_number=number,
            sheet_title=title,
            discipline="Architectural"
            if number and number.startswith("A")
            else "Structural"
            if number
            else None,
            sheet_number_source="extraction" if n == 1 else "text_layer" if number else None,
        ),
        objects=objects,
        coverage_before=coverage,
        coverage=coverage,
        floor=0.6,
        below_floor=bool(lines) and coverage.ratio < 0.6,
        rungs=["offline"] if n == 1 else ["offline", "text_structuring"] if lines else ["offline"],
        timings_ms={"extract": 120.0 * n, "verify": 15.0 * n},
        verdict=verdict,
    )


def sample_report() -> dict:
    """A verified page, a content_wrong page citing actual text, a failed page and a blank page."""
    plan = [
        PageObject(
            object_id=f"p1-o{i}",
            object_type="room_tag",
            source_text=f"OFFICE {100 + i}",
            attributes={"name": "OFFICE", "number": str(100 + i)},
            grounding="source_text",
            confidence=0.95,
            verification=ObjectVerification(verdict="confirmed"),
        )
        for i in range(1, 11)
    ]
    notes = [
        PageObject(
            object_id="p2-o1",
            object_type="note",
            source_text="(2) 2X6 STUD PACK AT EACH END OF HEADER",
            attributes={"count": 2},
            grounding="vision_unverified",
            confidence=0.7,
            verification=ObjectVerification(
                verdict="refuted",
                kind="content_wrong",
                actual_text="(5) 2X6 STUD PACK AT EACH END OF HEADER",
            ),
        ),
        *(
            PageObject(
                object_id=f"p2-o{i}",
                object_type="note",
                source_text=f"{i}. GENERAL NOTE LINE {i}",
                grounding="source_text",
                confidence=0.9,
                verification=ObjectVerification(verdict="confirmed"),
            )
            for i in range(2, 7)
        ),
    ]
    pages = [
        verified(1, plan, PageVerdict(ok=True)),
        verified(
            2,
            notes,
            PageVerdict(
                ok=False,
                problems=[
                    (
                        'note p2-o1 says "(2) 2X6 STUD PACK AT EACH END OF HEADER" '
                        'but the sheet reads "(5) 2X6 STUD PACK AT EACH END OF HEADER"'
                    )
                ],
                kinds=["content_wrong"],
            ),
        ),
        FailedPage(
            page_number=3, stage="extract", reason="the page could not be rendered", deliveries=5
        ),
        verified(4, [], PageVerdict(ok=True, unjudged=True, skipped="blank"), lines=0),
    ]
    job = JobInfo(
        job_id="j_browser",
        file_name="drawing-set.pdf",
        page_count=4,
        created_at=datetime(2026, 5, 29, 9, 0, tzinfo=UTC),
    )
    return build_report(job, pages, finished_at=datetime(2026, 5, 29, 9, 2, tzinfo=UTC))


def test_report_renders_in_headless_chromium(tmp_path):
    """The page loads, names every sheet, puts failed pages before the cards, and logs no errors."""
    report = sample_report()
    thumbnails = {n: thumb for n, thumb in sheet_thumbnails().items() if n != 3}
    path = tmp_path / "report.html"
    path.write_text(render_report_html(report, thumbnails), encoding="utf-8")

    errors: list[str] = []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("console", lambda m: m.type == "error" and errors.append(m.text))
            page.on("pageerror", lambda e: errors.append(str(e)))
            response = page.goto(path.as_uri(), wait_until="load")
            assert response is not None and response.ok

            assert page.title().startswith("drawing-set.pdf")
            index = page.locator("#sheet-index")
            for number in ("A101", "S001"):
                assert index.get_by_text(number, exact=True).count() == 1
                assert page.locator(".card .sheetno", has_text=number).count() == 1

            failed_box = page.locator("#failed-pages").bounding_box()
            first_card = page.locator("#page-1").bounding_box()
            assert failed_box and first_card and failed_box["y"] < first_card["y"]
            assert "Page 3" in page.locator("#failed-pages").inner_text()

            assert page.locator("#page-2 .cited").inner_text().count("(5) 2X6 STUD PACK") == 1
            badges = page.locator("article.card .card-head .badge").all_inner_texts()
            assert badges == ["ok", "problems", "failed", "skipped blank"]
            # thumbnails are decoded images, not broken links
            widths = page.eval_on_selector_all(
                ".thumb img", "imgs => imgs.map(i => i.naturalWidth)"
            )
            assert len(widths) == 3 and all(w > 0 for w in widths)

            objects = page.locator("#page-2 table.objects")
            assert not objects.is_visible()
            page.locator("#page-2 details summary").click()
            assert objects.is_visible()
            assert "(2) 2X6 STUD PACK" in objects.inner_text()

            page.screenshot(path=str(SCREENSHOT), full_page=True)
        finally:
            browser.close()
    assert errors == []
