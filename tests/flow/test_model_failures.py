"""A configured model that fails is never silent: on real NATS, S3 and service processes,
with a scripted model server answering 500 to every call (on the session's
``judged_pipeline``)."""

import pytest

from tests.flow.conftest import JUDGED_GROUP
from tests.support.flows import ModelStack, page
from tests.support.model_server import ModelReply
from tests.support.pdfs import SCANNED_LINES, add_notes_page, add_scanned_page, make_pdf


@pytest.mark.slow
@JUDGED_GROUP
async def test_failed_model_calls_degrade_pages_and_are_counted(judged_pipeline: ModelStack):
    """Every vision call fails: each page is read offline instead (the scanned one by OCR,
    keeping its text), marked degraded with the reason, and every failed call (vision and
    judge) is listed in the summary by page and stage."""
    failing = lambda request: ModelReply(status=500, content="the GPU is on fire")  # noqa: E731
    judged_pipeline.script(failing)
    s = judged_pipeline.stack
    report = s.wait_report(s.submit(make_pdf(add_notes_page, add_scanned_page)), timeout=180)

    summary = report["summary"]
    assert summary["degraded_pages"] == [1, 2]
    extract_failures = [f for f in summary["model_failures"] if f["stage"] == "extract"]
    assert [f["page_number"] for f in extract_failures] == [1, 2]
    assert all("HTTP 500" in f["reason"] for f in summary["model_failures"])
    assert any(f["stage"] == "verify" for f in summary["model_failures"])
    for number in (1, 2):
        entry = page(report, number)
        assert entry["degraded"] and "read offline instead" in entry["extraction_reason"]
        assert entry["objects"], f"page {number} ended with no objects"
    scanned = " ".join(o["source_text"] or "" for o in page(report, 2)["objects"])
    assert SCANNED_LINES[0] in scanned.upper()
