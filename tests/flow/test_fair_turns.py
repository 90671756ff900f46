"""Fair turns on the extract workers: a one-page job uploaded while a large job runs is not
queued behind the large job's pages (each job has a window of pages queued at a time), and
the large job still finishes, every page once.

Counted in the large job's pages, not in seconds: how many of them finish while the small
job is in flight does not depend on how loaded the machine is. The seconds (the issue's
5-second bound) are measured side by side by ``python -m bench.fairness``."""

import time

import pymupdf
import pytest

from tests.flow.conftest import OFFLINE_GROUP
from tests.support.pdfs import notes_pdf
from tests.support.stack import Stack

pytestmark = pytest.mark.slow

LARGE = 150
# The small job's page waits behind at most the large job's queued window at extract, and
# behind about as many again at each later stage; without turns it waits behind all of them.
WINDOWS_AHEAD = 3


def light_set(pages: int) -> bytes:
    doc = pymupdf.open()
    for n in range(pages):
        page = doc.new_page(width=1224, height=792)
        page.insert_text((72, 72), f"GENERAL NOTES {n + 1}: ALL WORK PER CODE", fontsize=10)
        page.insert_text((1000, 740), f"A-{n + 1:03d}", fontsize=14)
    return doc.tobytes()


def pages_done(s: Stack, job_id: str) -> int:
    return int(s.status(job_id)["pages_terminal"])


@OFFLINE_GROUP
def test_a_one_page_job_beside_a_large_one_waits_for_a_few_windows_not_the_whole_job(
    offline_pipeline: Stack,
):
    """While a 1-page job runs beside a 150-page job, the large job finishes no more than a
    few windows of pages; the large job's report then holds every page once."""
    s = offline_pipeline
    window = s.settings.job_window_pages
    assert LARGE > 2 * WINDOWS_AHEAD * window, "the large job must dwarf the bound"
    large = s.submit(light_set(LARGE))
    deadline = time.monotonic() + 60
    while s.status(large)["pages"]["queued"] > LARGE - 10:  # the large job is under way
        assert time.monotonic() < deadline, s.status(large)
        time.sleep(0.2)
    before = pages_done(s, large)
    s.wait_report(s.submit(notes_pdf()), timeout=120)
    during = pages_done(s, large) - before
    assert during < LARGE - before, "the large job ended first: nothing was measured"
    assert during <= WINDOWS_AHEAD * window, (
        f"{during} of the large job's pages finished while the small job waited (window {window})"
    )
    report = s.wait_report(large, timeout=600)
    assert [p["page_number"] for p in report["pages"]] == list(range(1, LARGE + 1))
