"""Real-world uploads through the real stack: active content is stripped, not refused, and
named; a damaged file's lost pages are named failed pages, never blank ones."""

from pathlib import Path

import httpx

from shared.infra.storage import Keys, ObjectStore
from shared.pdf.damage import DAMAGED
from tests.flow.conftest import OFFLINE_GROUP
from tests.support.active import active_content_left, scripted_set
from tests.support.stack import Stack

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "drawing-set.pdf"


@OFFLINE_GROUP
async def test_scripts_are_stripped_and_damaged_pages_are_named(offline_pipeline: Stack):
    """A set with document JavaScript, an OpenAction and an embedded file is processed (its
    stored source carries no script, the report names what was removed); a truncated set
    is processed with its lost pages failed as damaged, none skipped as blank; a file
    with no readable page is refused."""
    sample = EXAMPLE.read_bytes()
    s = offline_pipeline
    scripted = s.upload(scripted_set(), name="scripted.pdf")
    assert scripted.status_code == 202, scripted.text
    truncated = s.upload(sample[:60000], name="truncated.pdf")
    assert truncated.status_code == 202, truncated.text
    hopeless = s.upload(sample[:5000], name="hopeless.pdf")
    assert hopeless.status_code == 422 and hopeless.json()["error"] == "corrupt_pdf"

    job = scripted.json()["job_id"]
    report = s.wait_report(job)
    html = httpx.get(f"{s.api}/v1/jobs/{job}/report.html").text
    damaged = s.wait_report(truncated.json()["job_id"])
    stored = await ObjectStore(s.settings).get_bytes(Keys.source(job))

    assert report["status"] == "complete"
    removed = {"document_javascript": 2, "open_action": 1, "embedded_files": 1}
    assert report["summary"]["intake"]["removed"] == removed
    assert active_content_left(stored) == []
    assert "document javascript (2)" in html and "embedded files (1)" in html

    intake = damaged["summary"]["intake"]
    assert intake["repaired"] and intake["damaged_pages"]
    failed = {f["page_number"]: f["reason"] for f in damaged["summary"]["failed_pages"]}
    assert set(failed) == set(intake["damaged_pages"])
    assert all(reason.startswith(DAMAGED) for reason in failed.values())
    assert damaged["summary"]["verification"]["pages_skipped_blank"] == 0
    assert any(p["status"] == "verified" for p in damaged["pages"])
