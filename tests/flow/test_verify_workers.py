"""Verify workers share the job's checked fonts (the job state store): a font object is read
once per job, whichever of two verify processes works which page."""

import re
from collections import Counter

from tests.support.flows import wait_pulling, wait_started
from tests.support.pdfs import add_notes_page, make_pdf
from tests.support.stack import stack

PAGES = 8
READ = re.compile(r"page (\d+): read font objects \[([\d, ]+)\] alike for the job")


async def test_two_verify_workers_read_a_font_once_per_job(settings):
    """Eight notes pages set in one font object, verified by two verify processes at once:
    one page reads a line of the font, the seven others cite that reading (page and line)
    and pass; the font is read once in the whole job."""
    with stack(settings, "ingest", "extract", "coverage", "report") as s:
        workers = [s.start("verify", tag=tag) for tag in ("-1", "-2")]
        await wait_started(workers)
        await wait_pulling(settings, "verify", workers=2)
        report = s.wait_report(s.submit(make_pdf(*[add_notes_page] * PAGES)), timeout=240)
        logs = [w.log_path.read_text() for w in workers if w.log_path]

    reads = Counter(
        font for log in logs for _, fonts in READ.findall(log) for font in fonts.split(", ")
    )
    assert len(reads) == 1 and set(reads.values()) == {1}, (reads, logs)
    pages = report["pages"]
    read_on = [
        p["page_number"]
        for p in pages
        if any(
            o["verification"]["basis"] == "ocr" and not o["verification"].get("font_check")
            for o in p["objects"]
        )
    ]
    assert len(read_on) == 1, read_on
    for page in pages:
        v = page["verification"]
        assert v["ok"] and not v["unjudged"], page["page_number"]
        if page["page_number"] != read_on[0]:
            [cited] = [
                o["verification"]["font_check"]
                for o in page["objects"]
                if o["verification"].get("font_check")
            ]
            assert cited["page"] == read_on[0] and cited["line"]
            assert v["checked"]["fonts_cited"] == 1 and v["checked"]["ocr_lines"] == 0
