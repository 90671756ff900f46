"""The set's template re-reads what one page missed, on real NATS and S3 with every service a
process (the session's ``offline_pipeline``): the report asks extract to read the scanned
sheet that read no number again in the cell its set's other sheets print theirs in
(``page.read_cell``), waits for the answer (``page.cell_read``), and states the number the
sheet prints there, its own words cited; one report."""

from shared.contracts import subjects
from tests.flow.conftest import OFFLINE_GROUP
from tests.support.glued import NUMBERS, glued_number_scan
from tests.support.stack import Stack, stream_messages


@OFFLINE_GROUP
async def test_the_report_reads_a_missed_number_in_the_sets_cell(offline_pipeline: Stack):
    """Sheet 3's label and number OCR as one word; the report has it read again in the
    template's cell and reports A-103 from the page's own OCR words."""
    s = offline_pipeline
    r = s.upload(glued_number_scan(), name="glued.pdf")
    assert r.status_code == 202, r.text
    job_id = r.json()["job_id"]
    report = s.wait_report(job_id, timeout=300)

    numbers = [p["sheet"]["sheet_number"] for p in report["pages"]]
    assert numbers == list(NUMBERS)
    asked = await stream_messages(s.settings, subjects.PAGE_READ_CELL, expect=1)
    asked = [m for m in asked if m["job_id"] == job_id]
    assert [m["page_number"] for m in asked] == [3]
    answered = await stream_messages(s.settings, subjects.PAGE_CELL_READ, expect=1)
    answered = [m for m in answered if m["job_id"] == job_id]
    assert [(m["page_number"], m["number"]) for m in answered] == [(3, "A-103")]
    ready = await stream_messages(s.settings, subjects.REPORT_READY, expect=1)
    assert len([m for m in ready if m["job_id"] == job_id]) == 1


@OFFLINE_GROUP
async def test_one_sheet_that_read_its_label_names_the_cell_for_the_others(
    offline_pipeline: Stack,
):
    """Sheets 2 and 3 both read label and number as one word: the one sheet that read its
    label names the cell (``pages`` 1), and each of the others reads its own label and
    number there, closer."""
    s = offline_pipeline
    r = s.upload(glued_number_scan(close=2), name="glued-two.pdf")
    assert r.status_code == 202, r.text
    job_id = r.json()["job_id"]
    report = s.wait_report(job_id, timeout=300)

    assert [p["sheet"]["sheet_number"] for p in report["pages"]] == list(NUMBERS)
    asked = await stream_messages(s.settings, subjects.PAGE_READ_CELL, expect=2)
    asked = [m for m in asked if m["job_id"] == job_id]
    assert sorted((m["page_number"], m["pages"]) for m in asked) == [(2, 1), (3, 1)]
