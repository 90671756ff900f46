"""A person's review: corrections and decisions are records of their own, taken by the
reviewer's use cases (who = the token's name, before, after, why, an event each), and laid over
the pipeline's report — the set step re-reads the corrected identities, the report shows the
person's value with the pipeline's beside it, a dismissed problem stays listed and is
counted apart, and each record raises the report's revision."""

import dataclasses
from datetime import UTC, datetime
from pathlib import Path

import pytest

from services.ingest.bootstrap import bootstrap
from services.ingest.corrections import ProblemDecision, SheetFix, correct_sheet, review_problem
from services.ingest.refusals import Refusal, RefusalKind
from services.ingest.roles import Caller
from services.ingest.sheetlog import sheet_log
from services.ingest.usecases import Collaborators, accept_job
from services.report.assemble import JobInfo, build_report
from services.report.facts import page_facts
from services.report.html import render_report_html
from services.report.review import apply_review, corrected_pages
from shared.contracts import subjects
from shared.contracts.messages import JobOptions
from shared.contracts.models import Coverage, PageVerdict, VerifiedPage
from shared.contracts.review import ProblemReview, SheetCorrection
from shared.infra.jobs import now
from shared.infra.review_store import review_records
from shared.infra.settings import Settings
from shared.infra.storage import Keys
from shared.sheet.header import SheetHeader
from shared.sheet.reconcile import reconcile
from tests.support.fakes import MemoryBucket, MemoryStateStore, RecordingPublisher

JOB = "j_" + "1" * 32
WHEN = datetime(2026, 5, 1, tzinfo=UTC)
REVIEWER = Caller("dana", "reviewer")
PROBLEM = "(2) 2X6 STUD PACK: the sheet says (5)"


def page(n: int, number: str, problems: list[str] | None = None) -> VerifiedPage:
    coverage = Coverage(total_lines=4, covered_lines=4, ratio=1.0)
    verdict = PageVerdict(
        ok=not problems, problems=problems or [], kinds=["content_wrong"] if problems else []
    )
    return VerifiedPage(
        job_id=JOB,
        page_number=n,
        has_text_layer=True,
        sheet=SheetHeader(
            sheet_number=number,
            sheet_title=f"SHEET {n}",
            discipline="architectural",
            sheet_number_source="text_layer",
        ),
        coverage_before=coverage,
        coverage=coverage,
        floor=0.6,
        below_floor=False,
        verdict=verdict,
    )


PAGES = [page(1, "A-101"), page(2, "A-201"), page(3, "A-201", [PROBLEM])]


def records() -> list[SheetCorrection | ProblemReview]:
    return [
        SheetCorrection(
            record_id="20260501T000001000000-aa",
            job_id=JOB,
            page_number=3,
            by="dana",
            at=WHEN,
            reason="title block reads S-201",
            before={"sheet_number": "A-201"},
            after={"sheet_number": "S-201"},
        ),
        ProblemReview(
            record_id="20260501T000002000000-bb",
            job_id=JOB,
            page_number=3,
            by="dana",
            at=WHEN,
            reason="the (2) is a count of packs, right",
            problem=1,
            text=PROBLEM,
            before=None,
            after="dismissed",
        ),
    ]


def reviewed_report(review: list[SheetCorrection | ProblemReview]):
    sheet_set = reconcile([page_facts(p) for p in corrected_pages(PAGES, review)])
    job = JobInfo(job_id=JOB, file_name="set.pdf", page_count=3, created_at=WHEN)
    return apply_review(
        build_report(job, list(PAGES), finished_at=WHEN, sheet_set=sheet_set), review
    )


def test_without_records_the_report_is_the_pipelines_at_revision_1():
    """No review: nothing changes, revision 1, the duplicate number found by the set step."""
    report = reviewed_report([])
    assert report.revision == 1 and report.review == []
    assert [d.sheet_number for d in report.set.duplicates] == ["A-201"]
    assert all(p.review is None for p in report.pages)
    assert report.summary.review.pages_with_open_problems == 1


def test_a_correction_shows_beside_the_original_and_the_set_step_reruns():
    """The corrected number is the page's, from "person", its discipline following it; the
    pipeline's number is kept beside; the duplicate is gone; the dismissed problem is still
    listed, marked dismissed and counted apart; the revision counts the records."""
    report = reviewed_report(records())
    third = report.pages[2]
    assert (third.sheet.sheet_number, third.sheet.sheet_number_source) == ("S-201", "person")
    assert third.sheet.discipline == "structural"
    assert third.review and third.review.original == {"sheet_number": "A-201"}
    assert third.verification and third.verification.problems == [PROBLEM]  # never removed
    [state] = third.review.problems
    assert (state.number, state.state, state.by) == (1, "dismissed", "dana")
    assert report.set.duplicates == []
    review = report.summary.review
    assert (review.corrections, review.pages_corrected, review.problems_dismissed) == (1, 1, 1)
    assert review.pages_with_open_problems == 0
    assert report.summary.verification.verify_failed == 1  # the pipeline's own count stays
    assert report.revision == 3 and [r.record_id for r in report.review] == [
        r.record_id for r in records()
    ]
    row = sheet_log(report).rows[2]
    assert (row.sheet_number, row.number_source) == ("S-201", "person")
    assert "sheet_number" in row.correction_state and "1 dismissed" in row.correction_state

    html = render_report_html(report, {})
    assert "(was A-201)" in html and "a person" in html and 'id="review-log"' in html
    assert f"<s>{PROBLEM}</s>" in html and "revision 3" in html


def collaborators() -> Collaborators:
    return bootstrap(
        bucket=MemoryBucket(),
        state=MemoryStateStore(),
        publisher=RecordingPublisher(),
        settings=Settings(_env_file=None),
        inspector=None,  # type: ignore[arg-type]
        servers=None,  # type: ignore[arg-type]
        worker_id="ingest@test:1",
    )


async def finished_job(io, tmp_path: Path) -> str:
    source = tmp_path / "set.pdf"
    source.write_bytes(b"%PDF-1.7")
    job = await accept_job(io, source, file_name="set.pdf", page_count=3, options=JobOptions())
    return job.job_id


async def test_the_reviewers_records_say_who_before_after_and_why(tmp_path):
    """Correcting a page stores a record (by the token's name) and announces it; a second
    correction's before is the first's after; a problem decision names the problem; a report
    not yet written, a page or problem out of range, or no change is refused."""
    io = collaborators()
    job_id = await finished_job(io, tmp_path)
    fix = SheetFix(sheet_number="S-201", reason="title block reads S-201")
    with pytest.raises(Refusal) as refused:
        await correct_sheet(io, REVIEWER, job_id, 3, fix)
    assert (refused.value.kind, refused.value.error) == (RefusalKind.CONFLICT, "report_not_ready")

    job = JobInfo(job_id=job_id, file_name="set.pdf", page_count=3, created_at=WHEN)
    await io.bucket.put_json(Keys.report(job_id), build_report(job, list(PAGES), finished_at=WHEN))
    await io.jobs.update_job(job_id, status="complete", finished_at=now())

    first = await correct_sheet(io, REVIEWER, job_id, 3, fix)
    assert (first.by, first.before, first.after) == (
        "dana",
        {"sheet_number": "A-201"},
        {"sheet_number": "S-201"},
    )
    second = await correct_sheet(
        io, REVIEWER, job_id, 3, SheetFix(sheet_number="S-202", revision="B", reason="rev B issued")
    )
    assert second.before == {"sheet_number": "S-201", "revision": None}
    with pytest.raises(Refusal) as refused:
        await correct_sheet(io, REVIEWER, job_id, 3, SheetFix(sheet_number="S-202", reason="again"))
    assert refused.value.error == "no_change"
    with pytest.raises(Refusal) as refused:
        await correct_sheet(io, REVIEWER, job_id, 9, fix)
    assert refused.value.kind is RefusalKind.NOT_FOUND

    decided = await review_problem(
        io, REVIEWER, job_id, 3, 1, ProblemDecision(decision="dismiss", reason="fine")
    )
    assert (decided.text, decided.before, decided.after) == (PROBLEM, None, "dismissed")
    with pytest.raises(Refusal) as refused:
        await review_problem(
            io, REVIEWER, job_id, 3, 2, ProblemDecision(decision="confirm", reason="x y z")
        )
    assert refused.value.kind is RefusalKind.NOT_FOUND

    stored = await review_records(io.bucket, job_id)
    assert [r.record_id for r in stored] == [first.record_id, second.record_id, decided.record_id]
    assert isinstance(io.publisher, RecordingPublisher)
    corrected = io.publisher.on(subjects.SHEET_CORRECTED)
    reviewed = io.publisher.on(subjects.PROBLEM_REVIEWED)
    assert [e.after for e in corrected] == [first.after, second.after]
    assert [(e.problem, e.decision, e.by) for e in reviewed] == [(1, "dismissed", "dana")]


def test_a_fix_must_name_a_field_and_a_reason():
    """A correction without a field or without a reason is refused by the request model."""
    with pytest.raises(ValueError, match="at least one"):
        SheetFix(reason="because")
    with pytest.raises(ValueError):
        SheetFix(sheet_number="A-1", reason="")


class GoneBucket(MemoryBucket):
    """S3 in an outage: listing fails as the SDK's connection does."""

    async def list_keys(self, prefix: str) -> list[str]:
        raise ConnectionRefusedError("S3 is gone")


async def test_an_outage_is_a_503_not_an_internal_error(tmp_path):
    """A review call that meets S3 down is refused as unavailable, with a retry hint."""
    io = collaborators()
    job_id = await finished_job(io, tmp_path)
    job = JobInfo(job_id=job_id, file_name="set.pdf", page_count=3, created_at=WHEN)
    await io.bucket.put_json(Keys.report(job_id), build_report(job, list(PAGES), finished_at=WHEN))
    await io.jobs.update_job(job_id, status="complete", finished_at=now())
    gone = GoneBucket()
    assert isinstance(io.bucket, MemoryBucket)
    gone.objects = io.bucket.objects
    io = dataclasses.replace(io, bucket=gone)
    with pytest.raises(Refusal) as refused:
        await correct_sheet(io, REVIEWER, job_id, 3, SheetFix(sheet_number="S-1", reason="why not"))
    assert refused.value.kind is RefusalKind.UNAVAILABLE and refused.value.retry_after_s
