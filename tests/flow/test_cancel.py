"""Canceling a job: pages not yet extracted are skipped and the job ends `canceled` with a report."""

import httpx

from tests.support.pdfs import add_notes_page, add_schedule_page, make_pdf
from tests.support.stack import stack


async def test_cancel_skips_unextracted_pages_and_ends_canceled(settings):
    """A job canceled before any worker ran ends canceled; every page is named as skipped."""
    pdf = make_pdf(add_notes_page, add_schedule_page, add_notes_page)
    with stack(settings, "ingest", "coverage", "verify", "report") as s:
        job_id = s.submit(pdf)
        assert httpx.delete(f"{s.api}/v1/jobs/{job_id}").status_code == 202
        s.start("extract")
        report = s.wait_report(job_id)
        status = s.status(job_id)
        again = httpx.delete(f"{s.api}/v1/jobs/{job_id}")
    assert report["status"] == "canceled"
    assert [p["page_number"] for p in report["pages"]] == [1, 2, 3]
    assert all(
        p["status"] == "failed" and "canceled" in p["failure_reason"] for p in report["pages"]
    )
    assert status["status"] == "canceled" and status["pages"]["skipped"] == 3
    assert again.status_code == 409 and again.json()["error"] == "already_finished"
