"""Fair turns on the extract workers: a one-page job uploaded while a large job runs is not
queued behind the large job's pages (each job has a window of pages queued at a time), and
the large job still finishes, every page once."""

import time

import pymupdf
import pytest

from tests.flow.conftest import OFFLINE_GROUP
from tests.support.pdfs import notes_pdf
from tests.support.stack import Stack

pytestmark = pytest.mark.slow

LARGE = 150
# The bound: the small job's time beside the large one, less its time alone.
SLACK_S = 5.0


def light_set(pages: int) -> bytes:
    doc = pymupdf.open()
    for n in range(pages):
        page = doc.new_page(width=1224, height=792)
        page.insert_text((72, 72), f"GENERAL NOTES {n + 1}: ALL WORK PER CODE", fontsize=10)
        page.insert_text((1000, 740), f"A-{n + 1:03d}", fontsize=14)
    return doc.tobytes()


def time_to_report(s: Stack, pdf: bytes) -> float:
    started = time.monotonic()
    s.wait_report(s.submit(pdf), timeout=120)
    return time.monotonic() - started


@OFFLINE_GROUP
def test_a_one_page_job_beside_a_large_one_finishes_about_as_soon_as_alone(
    offline_pipeline: Stack,
):
    """The 1-page job finishes within 5 s of its time alone while a 150-page job runs; the
    large job's report then holds every page once."""
    s = offline_pipeline
    alone = time_to_report(s, notes_pdf())
    large = s.submit(light_set(LARGE))
    deadline = time.monotonic() + 60
    while s.status(large)["pages"]["queued"] > LARGE - 10:  # the large job is under way
        assert time.monotonic() < deadline, s.status(large)
        time.sleep(0.2)
    beside = time_to_report(s, notes_pdf())
    running = s.status(large)
    assert running["pages_terminal"] < LARGE, "the large job ended first: nothing was measured"
    assert beside <= alone + SLACK_S, f"{beside:.1f} s beside, {alone:.1f} s alone; {running}"
    report = s.wait_report(large, timeout=600)
    assert [p["page_number"] for p in report["pages"]] == list(range(1, LARGE + 1))
