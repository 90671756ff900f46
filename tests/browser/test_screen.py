"""The review screen in a real headless Chromium against a real stack, at desktop and phone
widths, as a reviewer uses it: sign in, drop a set on the upload box, open a set and filter
it, zoom a sheet, go to the next one by keyboard, correct a title, accept a proposed
renumbering, download a sheet and the linked set. No page logs an error or cuts an element
off. Screenshots of each page are left in /tmp/screen-*.png to be looked at."""

import base64
import contextlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pymupdf
import pytest

from tests.browser.test_report_html import CHROMIUM, CHROMIUM_ARGS, DESKTOP, FIND_CLIPPED, PHONE
from tests.support.screen import PROJECT, TOKENS, ScreenStack, bearer

sync_api = pytest.importorskip("playwright.sync_api")

pytestmark = [
    pytest.mark.xdist_group("screen"),
    pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on PATH (Debian package `chromium`)"),
]
VIEWPORTS = pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
SHOTS = Path("/tmp")


@contextlib.contextmanager
def person(screen: ScreenStack, viewport: dict, role: str = "reviewer") -> Iterator[Any]:
    """A browser page signed in as ``role``; console and page errors fail the test at the end."""
    errors: list[str] = []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport=viewport, accept_downloads=True)
            page = context.new_page()
            page.set_default_timeout(60_000)
            page.on("console", lambda m: errors.extend([m.text] if m.type == "error" else []))
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(f"{screen.api}/app/")
            assert "/app/signin" in page.url  # no session yet: sent to sign in
            page.get_by_label("Your API token").fill(TOKENS[role])
            page.get_by_role("button", name="Sign in").click()
            page.wait_for_url(f"{screen.api}/app/")
            yield page
        finally:
            browser.close()
    assert errors == []


def looked_at(page: Any, name: str, viewport: dict) -> None:
    """Nothing on the page is cut off or wider than the window; a screenshot is kept."""
    assert page.evaluate(FIND_CLIPPED) == [], name
    tag = "desktop" if viewport is DESKTOP else "phone"
    page.screenshot(path=str(SHOTS / f"screen-{name}-{tag}.png"), full_page=True)


def one_page_pdf() -> bytes:
    doc = pymupdf.open()
    page = doc.new_page(width=1224, height=792)
    page.insert_text((100, 150), "GENERAL NOTES: SEE SHEET A101", fontsize=18)
    page.insert_text((1000, 750), "G002", fontsize=30)
    return doc.tobytes()


def drop_file(page: Any, selector: str, name: str, data: bytes) -> None:
    """Drop a file on ``selector`` as a person drags it from their desktop."""
    page.evaluate(
        """([selector, name, b64]) => {
          const bytes = Uint8Array.from(atob(b64), c => c.charCodeAt(0));
          const data = new DataTransfer();
          data.items.add(new File([bytes], name, {type: 'application/pdf'}));
          document.querySelector(selector).dispatchEvent(
            new DragEvent('drop', {dataTransfer: data, bubbles: true, cancelable: true}));
        }""",
        [selector, name, base64.b64encode(data).decode()],
    )


@VIEWPORTS
def test_a_reviewer_opens_a_set_zooms_a_sheet_and_corrects_it(screen: ScreenStack, viewport):
    report = screen.report(screen.first)
    numbers = {p["page_number"]: p["sheet"]["sheet_number"] for p in report["pages"]}
    a101 = next(n for n, s in numbers.items() if s == "A101")
    fixed = "ELEVATIONS - EAST AND WEST" if viewport is DESKTOP else "GENERAL NOTES - STEEL"
    target = next(n for n, s in numbers.items() if s == ("A201" if viewport is DESKTOP else "S001"))
    with person(screen, viewport) as page:
        assert page.get_by_role("link", name="addendum-1.pdf").count() == 1
        looked_at(page, "jobs", viewport)

        page.get_by_role("link", name="drawing-set.pdf").click()
        page.wait_for_url(f"{screen.api}/app/jobs/{screen.first}")
        rows = page.locator("#sheets tbody tr")
        assert rows.count() == report["page_count"]
        looked_at(page, "set", viewport)
        first = rows.first.get_by_role("link").inner_text()
        page.get_by_label("Order").select_option("desc")  # a select filters as it changes
        page.wait_for_url(re.compile("order=desc"))
        assert rows.first.get_by_role("link").inner_text() != first
        page.get_by_role("searchbox", name="Find").fill("floor")
        page.wait_for_function("document.querySelectorAll('#sheets tbody tr').length === 1")
        assert "q=floor" in page.url  # the filter is in the URL a person can share
        assert rows.first.get_by_role("link").inner_text() == "A101"

        rows.first.get_by_role("link").click()
        page.wait_for_url(re.compile(f"/pages/{a101}$"))
        image = page.locator("#sheet-image")
        assert image.evaluate("i => i.naturalWidth") > 0
        page.get_by_role("button", name="Zoom in").click()
        page.get_by_role("button", name="Zoom in").click()
        assert "transform" in (image.get_attribute("style") or "")
        page.wait_for_function(
            "() => { const i = document.getElementById('sheet-image');"
            " return i.src.endsWith('full.png') && i.complete && i.naturalWidth > 2048; }"
        )
        assert page.locator("#zoom-level").inner_text() != "100%"
        page.get_by_role("button", name="Fit").click()
        page.wait_for_function(  # back to the whole sheet, inside its frame, once settled
            "() => { const i = document.getElementById('sheet-image').getBoundingClientRect();"
            " const v = document.getElementById('viewer').getBoundingClientRect();"
            " return i.left >= v.left - 1 && i.right <= v.right + 1; }"
        )
        looked_at(page, "sheet", viewport)
        assert page.locator("table.fields").get_by_text("A101").count() >= 1

        page.locator("h1").click()  # focus on the page, not in a field
        page.keyboard.press("ArrowRight")
        page.wait_for_url(re.compile(f"/pages/{a101 + 1}$"))

        page.goto(f"{screen.api}/app/jobs/{screen.first}/pages/{target}")
        page.get_by_text("Correct this sheet").click()
        page.locator("#fix-title").fill(fixed)
        page.locator("#fix-reason").fill("the title block reads so")
        page.get_by_role("button", name="Save the correction").click()
        page.locator("#sheet-head", has_text=fixed).wait_for(timeout=90_000)
        looked_at(page, "corrected", viewport)
    fixed_page = next(p for p in screen.report(screen.first)["pages"] if p["page_number"] == target)
    assert fixed_page["sheet"]["sheet_title"] == fixed
    assert fixed_page["review"]["corrected"] == {"sheet_title": fixed}


@VIEWPORTS
def test_a_set_dropped_on_the_upload_box_starts_a_job(screen: ScreenStack, viewport):
    with person(screen, viewport, role="submitter") as page:
        drop_file(page, "[data-drop]", "g002.pdf", one_page_pdf())
        assert "g002.pdf" in page.locator("#drop-hint").inner_text()
        page.get_by_role("button", name="Upload").click()
        page.wait_for_url(re.compile(r"/app/jobs/j_[0-9a-f]{32}$"))
        assert page.locator("h1").inner_text() == "g002.pdf"
        looked_at(page, "uploaded", viewport)


@VIEWPORTS
def test_a_reviewer_decides_a_proposed_renumbering(screen: ScreenStack, viewport):
    """On a desktop the reviewer accepts A609 as A601 renumbered, with a reason, and the
    register follows; on a phone the project shows it decided (the same stack, after)."""
    with person(screen, viewport) as page:
        page.get_by_role("link", name="Projects").click()
        page.get_by_role("link", name=PROJECT).click()
        proposals = page.locator("#proposals")
        looked_at(page, "project", viewport)
        if viewport is DESKTOP:
            assert "A609" in proposals.inner_text() and "proposed" in proposals.inner_text()
            proposals.locator("input[name=reason]").fill("the same drawing, renumbered")
            proposals.get_by_role("button", name="Accept: the same drawing").click()
            page.get_by_role("status").wait_for()
            for _ in range(60):
                page.reload()
                if "accepted" in page.locator("#proposals").inner_text():
                    break
                page.wait_for_timeout(1000)
        assert "accepted" in page.locator("#proposals").inner_text()
        page.get_by_role("link", name="A609").first.click()
        # The old number's version first, then the new one's: one sheet under A609.
        page.wait_for_url("**/sheets/A609")
        assert "A609" in page.locator("h1").inner_text()
        assert page.locator("table.list tbody tr").count() == 2
        looked_at(page, "versions", viewport)
    r = httpx.get(f"{screen.api}/v1/projects/{PROJECT}/proposals", headers=bearer("reader"))
    assert [p["status"] for p in r.json()] == ["accepted"]


def test_downloads_from_the_screen_are_named_by_sheet(screen: ScreenStack, tmp_path):
    with person(screen, DESKTOP, role="reader") as page:
        page.goto(f"{screen.api}/app/jobs/{screen.first}")
        assert page.get_by_text("Correct this sheet").count() == 0  # a reader: no forms
        with page.expect_download() as linked:
            page.get_by_role("link", name="Linked set (PDF)").click()
        saved = tmp_path / "set.pdf"
        linked.value.save_as(saved)
        assert linked.value.suggested_filename == "drawing-set - bookmarked.pdf"
        page.get_by_role("link", name="A101").click()
        assert page.get_by_text("Correct this sheet").count() == 0
        with page.expect_download() as sheet:
            page.get_by_role("link", name="This sheet (PDF)").click()
        assert sheet.value.suggested_filename == "A101 - FLOOR PLAN - LEVEL 1.pdf"
    with pymupdf.open(saved) as doc:
        assert [2, "A101 — FLOOR PLAN - LEVEL 1", 2] in doc.get_toc()
