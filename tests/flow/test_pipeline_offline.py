"""The whole pipeline, offline (no model), on real NATS and S3 with every service a process
(the session's ``offline_pipeline``)."""

from pathlib import Path

import httpx

from shared.contracts import subjects
from tests.flow.conftest import OFFLINE_GROUP
from tests.support.stack import Stack, stream_messages

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "drawing-set.pdf"


@OFFLINE_GROUP
async def test_sample_set_end_to_end(offline_pipeline: Stack):
    """Every page of the sample set reaches the report: text pages with objects, the scan via OCR, the blank skipped."""
    pdf = EXAMPLE.read_bytes()
    s = offline_pipeline
    r = s.upload(pdf, name="drawing-set.pdf")
    assert r.status_code == 202, r.text
    job_id = r.json()["job_id"]
    report = s.wait_report(job_id, timeout=180)

    assert report["status"] == "complete", report["summary"]
    pages = report["pages"]
    assert [p["page_number"] for p in pages] == list(range(1, len(pages) + 1))
    assert all(p["status"] == "verified" for p in pages)
    text_pages = [p for p in pages if p["has_text_layer"]]
    assert text_pages and all(p["objects"] for p in text_pages)
    assert all(p["coverage"]["ratio"] >= 0.6 for p in text_pages)
    numbers = {p["sheet"]["sheet_number"] for p in pages}
    assert {"G001", "A101", "A601", "S001"} <= numbers
    assert report["summary"]["verification"]["pages_skipped_blank"] == 1
    # The set, reconciled once every page was terminal: the cover's index lists every
    # sheet, and the notes refer to sheets the sample set does not hold.
    sheet_set = report["set"]
    assert sheet_set["index_pages"] == [1] and not sheet_set["missing"]
    assert {r["target"] for r in sheet_set["unresolved_references"]} == {"A602", "S301"}

    html = httpx.get(f"{s.api}/v1/jobs/{job_id}/report.html")
    assert html.status_code == 200 and "A601" in html.text and 'id="set"' in html.text
    status = s.status(job_id)
    assert status["status"] == "complete"
    assert status["pages"]["verified"] == len(pages)

    # Every report.ready of the stack, the other tests' jobs' too: this job's once.
    ready = await stream_messages(s.settings, subjects.REPORT_READY, expect=1)
    ready = [m for m in ready if m["job_id"] == job_id]
    assert [m["job_id"] for m in ready] == [job_id]
    assert ready[0]["summary"]["set"] == report["summary"]["set"]
