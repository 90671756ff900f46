"""What the screen shows, without servers: the sheets table filtered and sorted, each page's
verdict, the title block's crop and marks, and sessions that end when they expire or when the
deployment drops their token; the upload form's fields as the upload's options."""

from datetime import timedelta

import pytest
from pydantic import SecretStr

from services.ingest.refusals import Refusal
from services.ingest.roles import Caller
from services.ingest.screen import views
from services.ingest.screen.pages import upload_options
from services.ingest.sessions import find_session, open_session
from services.ingest.usecases import job_options
from shared.contracts.report import Report
from shared.infra.settings import ApiToken, Settings
from shared.pagetext import Box, TextLayer, Word
from shared.sheet.reading import Candidate, FieldReading, SheetReading
from tests.browser.test_report_html import sample_report
from tests.support.fakes import MemoryStateStore


def report() -> Report:
    return sample_report()  # A101 ok, S001 with a problem, page 3 failed, page 4 blank


def test_each_page_has_the_report_s_verdict():
    assert [views.verdict(p) for p in report().pages] == ["ok", "problems", "failed", "blank"]
    assert [views.open_problems(p) for p in report().pages] == [0, 1, 0, 0]


def test_the_sheets_are_filtered_and_sorted_as_the_query_says():
    rows = views.sheet_rows(report())
    found = views.filtered(rows, views.Filter.of({"q": "notes"}))
    assert [r.number for r in found] == [2]
    structural = views.Filter.of({"discipline": "structural"})
    assert [r.number for r in views.filtered(rows, structural)] == [2]
    by_problems = views.Filter.of({"sort": "problems"})
    assert next(r.number for r in views.filtered(rows, by_problems)) == 2
    numbers = views.Filter.of({"sort": "number", "order": "desc"})
    assert [r.number for r in views.filtered(rows, numbers)] == [4, 3, 2, 1]  # unnumbered first
    by_priority = views.Filter.of({"sort": "priority"})
    levels = [r.page.review_priority for r in views.filtered(rows, by_priority)]
    ranks = [views.priority_rank(r.page) for r in views.filtered(rows, by_priority)]
    assert ranks == sorted(ranks) and all(levels)
    unknown = views.Filter.of({"sort": "evil", "verdict": "nonsense"})
    assert unknown.sort == "page" and unknown.verdict == ""


def test_the_title_block_crop_frames_its_region_and_marks_what_was_read():
    words = [
        Word(id=0, text="A-101", bbox=Box(2300, 1600, 2500, 1660)),
        Word(id=1, text="PLAN", bbox=Box(2220, 1480, 2300, 1500)),
    ]
    layer = TextLayer(
        page_number=1, width=2592, height=1728, words=words, lines=[[0], [1]], has_text_layer=True
    )
    reading = SheetReading(
        number=FieldReading(text="A-101", word_ids=[0]),
        title=FieldReading(text="PLAN", word_ids=[1]),
        region=Box(2200, 1400, 2556, 1692),
        candidates=[
            Candidate(text="25177", why="a project number", score=0.2),
            Candidate(text="A-101", chosen=True, evidence=3, why="under SHEET NO."),
        ],
    )
    page = report().pages[0]
    block = views.title_block(page, reading, layer)
    crop = block.crop
    assert crop is not None
    assert crop["size_x"] == round(100 * 2592 / 356, 3)
    assert crop["pos_x"] == round(100 * 2200 / (2592 - 356), 3)
    number = block.marks[0]
    assert number.chosen and number.left == round(100 * 100 / 356, 2)
    rows = {r["label"]: r for r in block.rows}
    assert rows["Sheet number"]["read"] == "A-101" and rows["Sheet number"]["chosen"] == "A101"
    assert rows["Sheet number"]["differs"]
    assert [c["text"] for c in block.candidates] == ["A-101", "25177"]


async def test_a_session_ends_when_it_expires_or_its_token_is_gone():
    state = MemoryStateStore()
    settings = Settings(
        _env_file=None,
        api_tokens=[ApiToken(name="dana", role="reviewer", token=SecretStr("t-dana-1"))],
    )
    session_id, session = await open_session(state, Caller("dana", "reviewer"), ttl_s=3600)
    assert session.expires_at - session.created_at == timedelta(hours=1)
    assert session_id not in str(state.documents)  # kept under the id's hash, never the id
    found = await find_session(state, settings, session_id)
    assert found and found.caller == Caller("dana", "reviewer")
    demoted = settings.model_copy(
        update={"api_tokens": [ApiToken(name="dana", role="reader", token=SecretStr("t"))]}
    )
    assert await find_session(state, demoted, session_id) is None
    assert state.documents == {}  # ended on the server
    expired_id, _ = await open_session(state, Caller("dana", "reviewer"), ttl_s=-1)
    assert await find_session(state, settings, expired_id) is None
    assert await find_session(state, settings, "no-such-session") is None


def test_the_upload_forms_project_and_issue_become_the_uploads_options():
    """The screen's upload form names a project and the upload's issue (label and date): the
    upload's options carry them as the API's ``options`` field does; empty fields are left
    out, a project id that is not one is refused as the API refuses it."""
    given = {"project": "tower-b", "issue": " Addendum 2 ", "issue_date": "2026-03-14"}
    options = job_options(upload_options(given), None)
    assert (options.project, options.issue, str(options.issue_date)) == (
        "tower-b",
        "Addendum 2",
        "2026-03-14",
    )
    assert upload_options({"project": "", "issue": "", "issue_date": ""}) is None
    with pytest.raises(Refusal):
        upload_options({"project": "no/slash"})
