"""The report's finish-and-announce-once logic, driven through its use cases with in-memory
stores and publisher: one report per job, written once every page is terminal and announced
once, whatever is redelivered or crashes in between."""

import asyncio
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import pytest
from pydantic import BaseModel

from services.report.bootstrap import bootstrap
from services.report.store import TerminalPages
from services.report.usecases import (
    INTAKE_GRACE_S,
    Collaborators,
    maybe_finish,
    on_failed,
    on_verified,
    revise,
    supervise_intakes,
)
from shared.contracts import report as report_contract
from shared.contracts import subjects
from shared.contracts.links import SheetLinks
from shared.contracts.messages import PageFailed, PageVerified, ReportReady
from shared.contracts.models import Coverage, PageVerdict, VerifiedPage
from shared.contracts.report import ReadySheet, Report
from shared.contracts.review import SheetCorrection
from shared.contracts.subjects import Subject
from shared.infra.jobs import IntakeMarker, JobRecord, JobStore, now
from shared.infra.review_store import save_record
from shared.infra.settings import Settings
from shared.infra.storage import Keys
from tests.support.fakes import MemoryBucket, MemoryStateStore, RecordingPublisher

JOB = "j_fedcba9876543210fedcba9876543210"
REPORT_KEY = Keys.report(JOB, "json")
PASSED = PageVerdict(ok=True)
E = TypeVar("E", bound=BaseModel)


class OutageOnce(RecordingPublisher):
    """A publisher whose first report.ready fails, as NATS would in an outage."""

    def __init__(self) -> None:
        super().__init__()
        self.failed = False

    async def publish(self, subject: Subject[E], event: E, *, dedup_id: str) -> None:
        if subject == subjects.REPORT_READY and not self.failed:
            self.failed = True
            raise ConnectionError("NATS is gone")
        await super().publish(subject, event, dedup_id=dedup_id)


class CountingBucket(MemoryBucket):
    """Keeps the key of every JSON write."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[str] = []

    async def put_json(self, key: str, value: BaseModel | dict[str, Any] | list[Any]) -> None:
        self.writes.append(key)
        await super().put_json(key, value)


@dataclass
class Rig:
    """One report service's world, kept across messages: its stores and publisher, and the
    collaborators (the per-job locks among them) wired once by the service's bootstrap."""

    bucket: MemoryBucket = field(default_factory=MemoryBucket)
    state: MemoryStateStore = field(default_factory=MemoryStateStore)
    publisher: RecordingPublisher = field(default_factory=RecordingPublisher)

    def __post_init__(self) -> None:
        self.collaborators = bootstrap(
            bucket=self.bucket,
            state=self.state,
            publisher=self.publisher,
            settings=Settings(_env_file=None),
        )

    def io(self) -> Collaborators:
        return self.collaborators

    async def job(self, pages: int) -> None:
        job = JobRecord(
            job_id=JOB,
            file_name="set.pdf",
            page_count=pages,
            source_key=Keys.source(JOB),
            status="running",
            created_at=datetime(2026, 1, 1, tzinfo=UTC),
        )
        await JobStore(self.state).create_job(job)

    async def verified(self, n: int) -> PageVerified:
        """Verify's output for page ``n`` stored, and its event."""
        key = Keys.page(JOB, n, "verified.json")
        page = VerifiedPage(
            job_id=JOB,
            page_number=n,
            has_text_layer=True,
            coverage_before=Coverage(total_lines=1, covered_lines=1, ratio=1.0),
            coverage=Coverage(total_lines=1, covered_lines=1, ratio=1.0),
            floor=0.6,
            below_floor=False,
            rungs=["offline"],
            verdict=PASSED,
        )
        await self.bucket.put_json(key, page)
        return PageVerified(job_id=JOB, page_number=n, verified_key=key, verdict=PASSED)

    def announcements(self) -> list[ReportReady]:
        return [e for e in self.publisher.on(subjects.REPORT_READY) if isinstance(e, ReportReady)]

    async def record(self) -> JobRecord:
        job = await JobStore(self.state).get_job(JOB)
        assert job is not None
        return job


def failed(n: int, stage: str = "extract") -> PageFailed:
    return PageFailed(job_id=JOB, page_number=n, stage=stage, reason="the page is unreadable")


async def test_the_report_waits_for_every_page_then_is_written_and_announced_once():
    """Nothing before the last page is terminal; then report.json and report.html, the job
    finished, and report.ready, in that order, once, naming the failed page."""
    rig = Rig()
    await rig.job(pages=2)
    await on_verified(rig.io(), await rig.verified(1))
    assert REPORT_KEY not in rig.bucket.objects and rig.publisher.published == []

    await on_failed(rig.io(), failed(2))
    report = await rig.bucket.get_model(REPORT_KEY, Report)
    assert report.status == "partial"
    assert [p.status for p in report.pages] == ["verified", "failed"]
    assert Keys.report(JOB, "html") in rig.bucket.objects
    job = await rig.record()
    assert job.status == "partial" and job.finished_at and job.announced
    assert job.report_key == REPORT_KEY
    (ready,) = rig.announcements()
    assert ready.report_key == REPORT_KEY and ready.summary.pages_failed == 1
    # Links people open: relative without SHEETFLOW_PUBLIC_URL, the job's and each sheet's.
    assert ready.links and ready.links.screen == f"/app/jobs/{JOB}"
    assert ready.links.set_pdf == f"/v1/jobs/{JOB}/set.pdf"
    (sheet,) = ready.summary.sheet_index
    assert sheet.links and sheet.links.screen == f"/app/jobs/{JOB}/pages/1"
    assert sheet.links.pdf == f"/v1/jobs/{JOB}/sheets/page-1.pdf"
    states = await JobStore(rig.state).page_states(JOB)
    assert states[2].stage == "failed"


async def test_an_index_too_large_for_the_event_is_left_to_the_report(monkeypatch):
    """A set of thousands of sheets: its index would pass NATS's largest message, so
    report.ready says the index is in the report and carries none; a small set's is carried."""
    monkeypatch.setattr(report_contract, "READY_INDEX_BYTES", 1000)
    rig = Rig()
    await rig.job(pages=12)
    for n in range(1, 13):
        await on_verified(rig.io(), await rig.verified(n))
    (ready,) = rig.announcements()
    assert ready.summary.sheet_index == [] and not ready.summary.sheet_index_complete
    report = await rig.bucket.get_model(REPORT_KEY, Report)
    assert len(report.pages) == 12

    monkeypatch.undo()
    rig = Rig()
    await rig.job(pages=12)
    for n in range(1, 13):
        await on_verified(rig.io(), await rig.verified(n))
    (ready,) = rig.announcements()
    assert len(ready.summary.sheet_index) == 12 and ready.summary.sheet_index_complete


def test_the_index_budget_leaves_room_for_links_under_the_largest_message():
    """At the budget, with a long public URL's links on every sheet, report.ready stays under
    NATS's default largest message (1 MiB)."""
    sheet = ReadySheet(page_number=9999, sheet_number="A-101", sheet_title="FLOOR PLAN")
    count = report_contract.READY_INDEX_BYTES // len(sheet.model_dump_json())
    base = "https://sheetflow.example-engineering-firm.com/a/long/prefix/for/the/deployment"
    linked = sheet.model_copy(
        update={
            "links": SheetLinks(
                screen=f"{base}/app/jobs/{JOB}/pages/9999",
                pdf=f"{base}/v1/jobs/{JOB}/sheets/page-9999.pdf",
            )
        }
    )
    assert count * len(linked.model_dump_json()) < 1024 * 1024


async def test_redelivered_pages_after_the_announcement_change_nothing():
    """Every page's event again after the report went out: no second report, no second
    announcement, and a late failure never turns a verified page failed."""
    rig = Rig()
    await rig.job(pages=2)
    events = [await rig.verified(1), await rig.verified(2)]
    for event in events:
        await on_verified(rig.io(), event)
    written = rig.bucket.objects[REPORT_KEY]

    for event in events:
        await on_verified(rig.io(), event)
    await on_failed(rig.io(), failed(1))
    assert rig.bucket.objects[REPORT_KEY] == written
    assert [p.name for p in rig.publisher.attempts].count(subjects.REPORT_READY) == 1
    assert await TerminalPages(rig.state).all(JOB) == {1: "verified", 2: "verified"}
    assert (await rig.record()).status == "complete"


async def test_an_outage_between_writing_and_announcing_is_finished_by_the_redelivery():
    """report.ready failing after the report was written: the job stays unannounced, and the
    redelivered event announces the stored report without writing it again."""
    rig = Rig(publisher=OutageOnce())
    await rig.job(pages=1)
    event = await rig.verified(1)
    with pytest.raises(ConnectionError):
        await on_verified(rig.io(), event)
    written = rig.bucket.objects[REPORT_KEY]
    job = await rig.record()
    assert job.finished_at and not job.announced and rig.announcements() == []
    assert rig.io().finishing == {}  # the job's lock let go despite the outage

    await on_verified(rig.io(), event)
    assert rig.bucket.objects[REPORT_KEY] == written
    assert len(rig.announcements()) == 1 and (await rig.record()).announced


async def test_two_last_pages_at_once_write_one_report():
    """Two deliveries that both see every page terminal: one writes and announces, the other
    waits for it and then has nothing left to do."""
    bucket = CountingBucket()
    rig = Rig(bucket=bucket)
    await rig.job(pages=2)
    for n in (1, 2):
        await rig.verified(n)
        await TerminalPages(rig.state).add(JOB, n, "verified")
    terminal = await TerminalPages(rig.state).all(JOB)
    await asyncio.gather(*(maybe_finish(rig.io(), JOB, terminal) for _ in range(2)))
    assert bucket.writes.count(REPORT_KEY) == 1
    assert [p.name for p in rig.publisher.attempts].count(subjects.REPORT_READY) == 1
    assert rig.io().finishing == {}


async def test_a_canceled_page_is_skipped_and_the_report_says_canceled():
    """A page extract skipped for a canceled job is marked skipped, and the job's report is
    canceled once every page is accounted for."""
    rig = Rig()
    await rig.job(pages=1)
    await JobStore(rig.state).update_job(JOB, canceled=True)
    await on_failed(rig.io(), failed(1, stage="canceled"))
    states = await JobStore(rig.state).page_states(JOB)
    assert states[1].stage == "skipped"
    assert (await rig.bucket.get_model(REPORT_KEY, Report)).status == "canceled"
    assert rig.announcements()[0].status == "canceled"


async def test_an_abandoned_intake_ends_with_every_page_failed_by_name():
    """An intake older than any intake may take: every page of its job is failed with the
    reason, once, and the report follows; a fresh intake is left to its ingest."""
    rig = Rig()
    await rig.job(pages=3)
    io = rig.io()
    old = now() - timedelta(seconds=io.settings.intake_timeout_s + INTAKE_GRACE_S + 1)
    await rig.state.put(f"intake.{JOB}", IntakeMarker(job_id=JOB, started_at=old))
    fresh = "j_0123456789abcdef0123456789abcdef"
    await io.jobs.intake_started(fresh)
    await supervise_intakes(io)
    await supervise_intakes(io)  # a second round finds nothing more to do
    failed = rig.publisher.on(subjects.PAGE_FAILED)
    assert [(e.page_number, e.stage) for e in failed] == [
        (1, "intake"),
        (2, "intake"),
        (3, "intake"),
    ]
    assert all("intake did not finish" in e.reason for e in failed)
    assert [i.job_id for i in await io.jobs.intakes()] == [fresh]
    for event in failed:
        await on_failed(io, event)
    report = await rig.bucket.get_model(REPORT_KEY, Report)
    assert [p.page_number for p in report.pages] == [1, 2, 3]
    assert len(rig.publisher.on(subjects.REPORT_READY)) == 1


async def test_an_abandoned_intake_without_a_record_keeps_nothing():
    """A source stored before the ingest stopped, or by a refused upload whose removal
    stopped half-way, with no record: its keys and marker are removed, no page is failed."""
    rig = Rig()
    io = rig.io()
    old = now() - timedelta(seconds=io.settings.intake_timeout_s + INTAKE_GRACE_S + 1)
    await rig.bucket.put_bytes(Keys.source(JOB), b"%PDF-1.7", "application/pdf")
    await rig.state.put(f"intake.{JOB}", IntakeMarker(job_id=JOB, started_at=old))
    await supervise_intakes(io)
    assert rig.bucket.objects == {} and rig.state.documents == {}
    assert rig.publisher.on(subjects.PAGE_FAILED) == []


async def test_a_page_of_a_removed_job_is_dropped():
    """A page of a refused upload (its record removed) ends nowhere: no report, no failed
    page written."""
    rig = Rig()
    await on_failed(rig.io(), PageFailed(job_id=JOB, page_number=1, stage="canceled", reason="x"))
    assert rig.bucket.objects == {} and rig.state.documents == {}
    await on_verified(rig.io(), await rig.verified(1))
    assert REPORT_KEY not in rig.bucket.objects


async def test_a_review_rebuilds_the_report_with_a_higher_revision_announced_once():
    """A review record on a finished job: the report is rewritten with revision 2 (its
    finish time kept) and announced again, carrying the revision; the same event handled
    twice rewrites and announces nothing more; a job not finished yet is left for its first
    report."""
    rig = Rig()
    await rig.job(pages=1)
    await revise(rig.io(), JOB)  # not finished: nothing to rebuild yet
    assert rig.publisher.published == []
    await on_verified(rig.io(), await rig.verified(1))
    first = await rig.bucket.get_model(REPORT_KEY, Report)
    record = SheetCorrection(
        record_id="20260101T000000000000-aa",
        job_id=JOB,
        page_number=1,
        by="dana",
        at=datetime(2026, 1, 2, tzinfo=UTC),
        reason="the title block reads S-1",
        before={"sheet_number": None},
        after={"sheet_number": "S-1"},
    )
    await save_record(rig.bucket, record)
    writes = len(rig.bucket.objects)
    await revise(rig.io(), JOB)
    second = await rig.bucket.get_model(REPORT_KEY, Report)
    assert (first.revision, second.revision) == (1, 2)
    assert second.finished_at == first.finished_at
    assert second.pages[0].sheet.sheet_number == "S-1"
    await revise(rig.io(), JOB)  # a redelivered event
    assert [e.revision for e in rig.announcements()] == [1, 2]
    assert [p.dedup_id for p in rig.publisher.attempts if p.name == subjects.REPORT_READY] == [
        f"{JOB}.1",
        f"{JOB}.2",
    ]
    job = await rig.record()
    assert (job.report_revision, job.announced_revision) == (2, 2)
    assert len(rig.bucket.objects) == writes  # rewritten in place, nothing added
