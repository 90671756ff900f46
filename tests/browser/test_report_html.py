"""The HTML report in a real headless Chromium: it loads, shows every sheet, raises no errors."""

import contextlib
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pymupdf
import pytest

from services.extract.reading.render import render_thumbnail_jpeg
from services.report.assemble import FailedPage, JobInfo, build_report
from services.report.html import render_report_html
from services.verify.crops import render_evidence_jpeg
from shared.contracts.models import (
    Coverage,
    EvidenceCrop,
    ObjectVerification,
    PageObject,
    PageVerdict,
    VerifiedPage,
)
from shared.contracts.register import ProposedMatch, RegisterOutcome, SheetOutcome, UnitCounts
from shared.contracts.report import Report
from shared.infra.storage import Keys
from shared.pagetext import Box
from shared.revisions.delta import SheetDelta, UnitChange
from shared.revisions.drawing import Region
from shared.sheet.header import SheetHeader

sync_api = pytest.importorskip("playwright.sync_api")

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DESKTOP, PHONE = {"width": 1280, "height": 900}, {"width": 390, "height": 844}
EVIDENCE_BOX = Box(120.0, 100.0, 900.0, 170.0)  # where page 2's misread note sits, in points
# Every element outside a scroll container must lie within the box of each ancestor that
# clips its overflow, and the page must not be wider than the window.
FIND_CLIPPED = """() => {
  const clipped = [];
  for (const el of document.querySelectorAll('main *')) {
    const r = el.getBoundingClientRect();
    if (!el.getClientRects().length || r.width === 0 || r.height === 0) continue;
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      const overflow = getComputedStyle(a).overflowX;
      if (overflow === 'visible') continue;
      if (overflow === 'auto' || overflow === 'scroll') break;  // reachable by scrolling
      const b = a.getBoundingClientRect();
      if (r.right > b.right + 1 || r.left < b.left - 1) {
        clipped.push(`${el.tagName.toLowerCase()}.${el.className}: ${el.textContent.trim().slice(0, 40)}`);
      }
      break;
    }
  }
  const page = document.documentElement;
  if (page.scrollWidth > page.clientWidth + 1) clipped.push(`page is ${page.scrollWidth}px wide`);
  return clipped;
}"""
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
PHONE_SCREENSHOT = Path("/tmp/report-screenshot-phone.png")
SHEETS = {1: ("A101", "FLOOR PLAN - LEVEL 1"), 2: ("S001", "STRUCTURAL GENERAL NOTES")}

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no Chromium on PATH (Debian package `chromium`); browser test skipped"
)


def sheet_thumbnails() -> dict[int, bytes]:
    """Thumbnails of the tiny set, as the extract stage stores them."""
    return {i + 1: render_thumbnail_jpeg(p) for i, p in enumerate(sheets_pdf().pages())}


def sheets_pdf() -> pymupdf.Document:
    """A tiny 36x24 set: pages 1-3 with a border, a title block and numbered notes; page 4
    blank."""
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
    return doc


def evidence_crops() -> dict[str, bytes]:
    """Page 2's evidence crop, as verify renders it for the misread note."""
    page = sheets_pdf()[1]
    return {Keys.evidence(2, "p2-o1"): render_evidence_jpeg(page, EVIDENCE_BOX, 36.0)}


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


def sample_pages() -> list:
    """A verified page, a content_wrong page citing actual text (with its evidence crop), a
    failed page and a blank page."""
    plan = [
        PageObject(
            object_id=f"p1-o{i}",
            object_type="room_tag",
            source_text=f"OFFICE {100 + i}",
            attributes={
                "name": "OFFICE",
                "number": str(100 + i),
                "finish_schedule": "SEE-SPECIFICATION-SECTION-09-51-13-ACOUSTICAL-PANEL-CEILINGS",
            },
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
    misread_page = verified(
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
    )
    misread_page.evidence_crops = [
        EvidenceCrop(
            object_id="p2-o1",
            key=Keys.evidence(2, "p2-o1"),
            bbox=EVIDENCE_BOX,
            page_width=2592,
            page_height=1728,
        )
    ]
    pages = [
        verified(1, plan, PageVerdict(ok=True)),
        misread_page,
        FailedPage(
            page_number=3, stage="extract", reason="the page could not be rendered", deliveries=5
        ),
        verified(4, [], PageVerdict(ok=True, unjudged=True, skipped="blank"), lines=0),
    ]
    return pages


def sample_report() -> Report:
    """A verified page, a content_wrong page citing actual text, a failed page and a blank page."""
    job = JobInfo(
        job_id="j_browser",
        file_name="drawing-set.pdf",
        page_count=4,
        created_at=datetime(2026, 5, 29, 9, 0, tzinfo=UTC),
    )
    return build_report(job, sample_pages(), finished_at=datetime(2026, 5, 29, 9, 2, tzinfo=UTC))


def canceled_report() -> Report:
    """A job canceled after its first page: the rest were never extracted."""
    job = JobInfo(
        job_id="j_canceled",
        file_name="drawing-set.pdf",
        page_count=4,
        created_at=datetime(2026, 5, 29, 9, 0, tzinfo=UTC),
        canceled=True,
    )
    first = sample_pages()[0]
    reason = "the job was canceled before this page was extracted"
    rest = [FailedPage(page_number=n, stage="canceled", reason=reason) for n in (2, 3, 4)]
    return build_report(job, [first, *rest], finished_at=datetime(2026, 5, 29, 9, 2, tzinfo=UTC))


@contextlib.contextmanager
def browser_page(viewport: dict, errors: list[str]) -> Iterator[Any]:
    """A page of a headless Chromium at ``viewport``; console and page errors go to ``errors``."""
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport=viewport)

            def console(message: Any) -> None:
                if message.type == "error":
                    errors.append(message.text)

            page.on("console", console)
            page.on("pageerror", lambda e: errors.append(str(e)))
            yield page
        finally:
            browser.close()


def write_report(tmp_path: Path, report: Report) -> Path:
    thumbnails = {n: thumb for n, thumb in sheet_thumbnails().items() if n != 3}
    path = tmp_path / f"{report.job_id}.html"
    path.write_text(render_report_html(report, thumbnails, evidence_crops()), encoding="utf-8")
    return path


def open_every_details(page: Any) -> None:
    for summary in page.locator("details > summary").all():
        summary.click()


def test_report_renders_in_headless_chromium(tmp_path):
    """The page loads, names every sheet, puts failed pages before the cards, and logs no errors."""
    path = write_report(tmp_path, sample_report())
    errors: list[str] = []
    with browser_page(DESKTOP, errors) as page:
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
        widths = page.eval_on_selector_all(".thumb img", "imgs => imgs.map(i => i.naturalWidth)")
        assert len(widths) == 3 and all(w > 0 for w in widths)

        objects = page.locator("#page-2 table.objects")
        assert not objects.is_visible()
        page.locator("#page-2 details summary").click()
        assert objects.is_visible()
        assert "(2) 2X6 STUD PACK" in objects.inner_text()

        page.screenshot(path=str(SCREENSHOT), full_page=True)
    assert errors == []


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_nothing_is_clipped_at_desktop_and_phone_widths(tmp_path, viewport):
    """With every object table open, no cell is cut off by its container and the page is
    no wider than the window: what does not fit scrolls inside its own box."""
    path = write_report(tmp_path, sample_report())
    errors: list[str] = []
    with browser_page(viewport, errors) as page:
        page.goto(path.as_uri(), wait_until="load")
        open_every_details(page)
        assert page.evaluate(FIND_CLIPPED) == []
        index = page.locator(".index.by-page")
        last_column = index.locator("th").last
        index.evaluate("el => el.scrollLeft = el.scrollWidth")
        assert last_column.is_visible() and last_column.bounding_box()["x"] < viewport["width"]
        if viewport is DESKTOP:  # on a desktop, the object tables fit without sideways scrolling
            widths = page.eval_on_selector_all(
                ".scroll", "boxes => boxes.map(b => b.scrollWidth - b.clientWidth)"
            )
            assert widths and max(widths) <= 1
        else:
            page.screenshot(path=str(PHONE_SCREENSHOT), full_page=True)
        # The index by review priority shows in place of the page order, one link away.
        assert not page.locator("#by-priority").is_visible()
        page.locator('a[href="#by-priority"]').click()
        assert page.locator("#by-priority").is_visible()
        assert not page.locator(".index.by-page").is_visible()
        assert page.evaluate(FIND_CLIPPED) == []
    assert errors == []


def test_a_problem_row_shows_its_evidence_and_where_it_sits(tmp_path):
    """The misread note's row shows the evidence crop, and its link opens the page with the
    evidence box drawn where the note is."""
    path = write_report(tmp_path, sample_report())
    errors: list[str] = []
    with browser_page(DESKTOP, errors) as page:
        page.goto(path.as_uri(), wait_until="load")
        crop = page.locator("#page-2 .cited td.evidence img")
        assert crop.evaluate("img => img.naturalWidth") > 0
        view = page.locator("#evidence-2-1")
        assert not view.is_visible()
        page.locator("#page-2 .cited td.evidence a").click()
        assert view.is_visible()
        sheet, box = view.locator(".sheet").bounding_box(), view.locator(".box").bounding_box()
        # The box sits where the note is: 120..900 of 2592 points across, 100..170 of 1728 down.
        assert abs((box["x"] - sheet["x"]) / sheet["width"] - 120 / 2592) < 0.01
        assert abs((box["y"] - sheet["y"]) / sheet["height"] - 100 / 1728) < 0.01
        assert abs(box["width"] / sheet["width"] - 780 / 2592) < 0.02
        view.locator(".close").click()
        assert not view.is_visible()
    assert errors == []


def test_canceled_pages_are_shown_canceled_not_failed(tmp_path):
    """A canceled job's unextracted pages carry a gray canceled badge, are listed as
    canceled, and no page is shown failed."""
    path = write_report(tmp_path, canceled_report())
    errors: list[str] = []
    with browser_page(DESKTOP, errors) as page:
        page.goto(path.as_uri(), wait_until="load")
        badges = page.locator("article.card .card-head .badge").all_inner_texts()
        assert badges == ["ok", "canceled", "canceled", "canceled"]
        assert page.locator("#failed-pages").count() == 0
        assert "2, 3, 4" in page.locator("#canceled-pages").inner_text()
        assert page.locator(".badge.failed").count() == 0
    assert errors == []


def changes_report() -> tuple[Report, dict[str, tuple[SheetDelta, bytes | None]]]:
    """The sample report of a project's second upload: page 2 revised (a note's count and
    the revision mark), page 1 proposed as sheet A100 renumbered; with the delta and an
    overlay picture."""
    delta_key = "projects/tower-b/sheets/S001/j_browser/delta.json"
    note = "PROVIDE ({}) 2X6 STUD PACK AT EACH END OF HEADER UNLESS NOTED OTHERWISE ON PLAN"
    delta = SheetDelta(
        changes=[
            UnitChange(
                "changed", "note", note.format(2), note.format(5), Box(1, 2, 3, 4), Box(1, 2, 3, 4)
            ),
            UnitChange("changed", "title_field", "B", "C", None, None, field="revision"),
            UnitChange(
                "added", "line", None, "SEE-SPECIFICATION-SECTION-09-51-13-PANELS", None, None
            ),
        ],
        changed=2,
        added=1,
        graphics=[Region("added", Box(300, 200, 420, 230), Box(300, 200, 420, 230), 0.004)],
        page_size=(sheets_pdf()[1].rect.width, sheets_pdf()[1].rect.height),
    )
    proposal = ProposedMatch(
        sheet_key="A101",
        sheet_number="A101",
        matches_key="A100",
        matches_number="A100",
        sheet_title="FLOOR PLAN - LEVEL 1",
        similarity=0.97,
        job_id="j_browser",
    )
    changes = RegisterOutcome(
        project="tower-b",
        job_id="j_browser",
        sequence=2,
        register_key="projects/tower-b/register/00000002-j_browser.json",
        issue="Addendum 2",
        sheets=[
            SheetOutcome(
                sheet_key="A101",
                sheet_number="A101",
                page_number=1,
                outcome="proposed",
                to_version=1,
                proposed_match=proposal,
            ),
            SheetOutcome(
                sheet_key="S001",
                sheet_number="S001",
                sheet_title="STRUCTURAL GENERAL NOTES",
                page_number=2,
                outcome="revised",
                from_version=1,
                to_version=2,
                from_revision="B",
                to_revision="C",
                changes=UnitCounts(added=1, changed=2, regions=1),
                delta_key=delta_key,
                overlay_key="projects/tower-b/sheets/S001/j_browser/overlay.png",
            ),
        ],
        carried=["A100", "A601"],
    )
    overlay = sheets_pdf()[1].get_pixmap(dpi=20).tobytes("png")
    return sample_report().model_copy(update={"changes": changes}), {delta_key: (delta, overlay)}


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_changes_section_shows_the_overlay_beside_the_delta(tmp_path, viewport):
    """A revised sheet's overlay and its delta, the words that changed marked, side by side
    on a desktop and one above the other on a phone, nothing clipped; the drawing's changed
    region listed with its crop; the upload's issue named; the renumbered sheet's proposal
    listed."""
    report, revisions = changes_report()
    path = tmp_path / "changes.html"
    path.write_text(render_report_html(report, sheet_thumbnails(), {}, revisions), encoding="utf-8")
    errors: list[str] = []
    with browser_page(viewport, errors) as page:
        page.goto(path.as_uri(), wait_until="load")
        change = page.locator("#change-S001")
        assert "version 1 → 2" in change.locator("h3").inner_text()
        width = change.locator("figure img").evaluate("i => i.naturalWidth")
        assert width > 0
        assert change.locator("td.before mark").all_inner_texts() == ["(2)", "B"]
        assert change.locator("td.after mark").all_inner_texts() == [
            "(5)",
            "C",
            "SEE-SPECIFICATION-SECTION-09-51-13-PANELS",
        ]
        picture = change.locator("figure").bounding_box()
        listing = change.locator("table.delta").bounding_box()
        assert picture and listing
        if viewport is DESKTOP:
            assert listing["x"] > picture["x"] + picture["width"] - 1  # beside
        else:
            assert listing["y"] > picture["y"] + picture["height"] - 1  # below
        assert "A100" in page.locator("#changes-proposed").inner_text()
        assert "Addendum 2" in page.locator("#changes-section").inner_text()
        # The drawing's changed region, listed with the overlay cut around it.
        region = change.locator("#regions-S001 li")
        assert "linework added" in region.inner_text() and "120×30 pt" in region.inner_text()
        assert region.locator("img").evaluate("i => i.naturalWidth") > 0
        page.locator("#changes").scroll_into_view_if_needed()
        assert page.evaluate(FIND_CLIPPED) == []
    assert errors == []
