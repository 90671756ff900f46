"""Ingest's use cases with in-memory stores and publisher, wired by the service's own
bootstrap: a job accepted is stored, recorded and fanned out page by page; its status counts
what the page states say; what a route refuses is a refusal of the right kind."""

import asyncio
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

import pytest
from pydantic import BaseModel

from services.ingest.bootstrap import bootstrap
from services.ingest.projects import valid_project
from services.ingest.refusals import Refusal, RefusalKind
from services.ingest.roles import Caller
from services.ingest.source import PreparedSource, check_and_prepare
from services.ingest.upload import ReceivedUpload
from services.ingest.usecases import (
    READY_CACHE_S,
    Collaborators,
    accept_job,
    accept_upload,
    cancel_job,
    job_status,
    page_image,
    readiness,
    report,
)
from services.ingest.validation import AcceptedPdf
from shared.contracts import subjects
from shared.contracts.messages import ExtractPage, JobAccepted, JobOptions
from shared.contracts.subjects import Subject
from shared.infra.jobs import now
from shared.infra.settings import Settings
from shared.infra.storage import Keys
from tests.support.fakes import MemoryBucket, MemoryStateStore, RecordingPublisher
from tests.support.pdfs import add_notes_page, make_pdf


class InProcessInspector:
    """The inspection's checks run in this process instead of a bounded child."""

    async def inspect(self, path: Path) -> tuple[AcceptedPdf, PreparedSource]:
        return check_and_prepare(path, max_pages=10, refuse_active_content=False)


class Servers:
    def __init__(
        self,
        *,
        nats: bool = True,
        s3: bool = True,
        nats_writes: bool = True,
        s3_writes: bool = True,
    ) -> None:
        self.nats, self.s3 = nats, s3
        self.writes = {"nats": nats_writes, "s3": s3_writes}

    async def nats_answers(self, timeout_s: float) -> bool:
        return self.nats

    async def s3_answers(self, timeout_s: float) -> bool:
        return self.s3

    async def nats_writes(self, timeout_s: float) -> bool:
        return self.nats and self.writes["nats"]

    async def s3_writes(self, timeout_s: float) -> bool:
        return self.s3 and self.writes["s3"]


def collaborators(servers: Servers | None = None, **settings: Any) -> Collaborators:
    return bootstrap(
        bucket=MemoryBucket(),
        state=MemoryStateStore(),
        publisher=RecordingPublisher(),
        settings=Settings(_env_file=None, **settings),
        inspector=InProcessInspector(),
        servers=servers or Servers(),
        worker_id="ingest@test:1",
    )


def upload(tmp_path: Path, data: bytes, options: bytes | None = None) -> ReceivedUpload:
    path = tmp_path / "source.pdf"
    path.write_bytes(data)
    return ReceivedUpload(path=path, file_name="../a set?.pdf", options=options, received=True)


async def test_an_accepted_job_is_stored_recorded_and_fanned_out(tmp_path):
    """The source under the job's key, the job record, then job.accepted and one
    page.extract per page carrying the source key and the options."""
    io = collaborators()
    source = tmp_path / "set.pdf"
    source.write_bytes(b"%PDF-1.7 a drawing set")
    options = JobOptions(judge=False)
    job = await accept_job(io, source, file_name="set.pdf", page_count=3, options=options)

    assert await io.bucket.get_bytes(Keys.source(job.job_id)) == source.read_bytes()
    assert await io.jobs.get_job(job.job_id) == job and job.status == "running"
    assert isinstance(io.publisher, RecordingPublisher)
    accepted, *pages = io.publisher.published
    assert accepted.name == subjects.JOB_ACCEPTED and isinstance(accepted.event, JobAccepted)
    assert [p.name for p in pages] == [subjects.PAGE_EXTRACT] * 3
    tasks = [p.event for p in pages]
    assert all(isinstance(t, ExtractPage) for t in tasks)
    assert sorted(t.page_number for t in tasks if isinstance(t, ExtractPage)) == [1, 2, 3]
    assert {(t.source_key, t.options.judge) for t in tasks if isinstance(t, ExtractPage)} == {
        (Keys.source(job.job_id), False)
    }


async def test_only_a_window_of_a_large_job_is_queued_at_intake(tmp_path):
    """A job larger than SHEETFLOW_JOB_WINDOW_PAGES has its first window of pages queued, each
    carrying the window and the page count (extract queues the rest as it starts pages)."""
    io = collaborators(job_window_pages=4)
    source = tmp_path / "set.pdf"
    source.write_bytes(b"%PDF-1.7 a drawing set")
    await accept_job(io, source, file_name="set.pdf", page_count=10, options=JobOptions())
    assert isinstance(io.publisher, RecordingPublisher)
    tasks = io.publisher.on(subjects.PAGE_EXTRACT)
    assert sorted(t.page_number for t in tasks) == [1, 2, 3, 4]
    assert {(t.window, t.page_count) for t in tasks} == {(4, 10)}


async def test_an_upload_is_inspected_and_accepted_with_its_options(tmp_path):
    """A PDF upload becomes a job of its page count, under a safe file name, with the
    options it sent."""
    io = collaborators()
    job = await accept_upload(
        io, upload(tmp_path, make_pdf(add_notes_page, add_notes_page), b'{"judge": false}')
    )
    assert (job.page_count, job.file_name, job.options.judge) == (2, "a set_.pdf", False)
    assert await io.bucket.exists(Keys.source(job.job_id))


@pytest.mark.parametrize(
    ("data", "options", "kind", "error"),
    [
        (b"hello, not a PDF", None, RefusalKind.NOT_PDF, "not_a_pdf"),
        (
            make_pdf(add_notes_page),
            b'{"coverage_floor": "high"}',
            RefusalKind.INVALID,
            "bad_options",
        ),
    ],
    ids=["not_a_pdf", "bad_options"],
)
async def test_a_refused_upload_keeps_nothing(tmp_path, data, options, kind, error):
    """Content that is not a PDF, or options that do not parse, are refused by kind, and
    nothing is stored or announced."""
    io = collaborators()
    with pytest.raises(Refusal) as refused:
        await accept_upload(io, upload(tmp_path, data, options))
    assert (refused.value.kind, refused.value.error) == (kind, error)
    assert isinstance(io.bucket, MemoryBucket) and io.bucket.objects == {}
    assert isinstance(io.publisher, RecordingPublisher) and io.publisher.attempts == []


async def test_the_status_counts_pages_by_stage_and_names_a_stall(tmp_path):
    """Pages never marked count as queued; a running job whose pages last moved longer ago
    than the stall limit is stalled, with a sentence saying what to start."""
    io = collaborators()
    source = tmp_path / "set.pdf"
    source.write_bytes(b"%PDF-1.7")
    job = await accept_job(io, source, file_name="set.pdf", page_count=4, options=JobOptions())
    await io.jobs.mark_page(job.job_id, 1, "verified")
    await io.jobs.mark_page(job.job_id, 2, "covered")
    await io.jobs.mark_page(job.job_id, 3, "failed")

    status = await job_status(io, job.job_id)
    assert status.pages.model_dump() == {
        "queued": 1,
        "extracted": 0,
        "covered": 1,
        "verified": 1,
        "failed": 1,
        "skipped": 0,
    }
    assert status.pages_terminal == 2 and not status.stalled

    other = collaborators()
    await other.jobs.create_job(job.model_copy(update={"created_at": now() - timedelta(hours=1)}))
    status = await job_status(other, job.job_id)
    assert status.stalled and status.detail and "sheetflow worker" in status.detail


async def test_a_page_being_worked_on_is_no_stall_and_a_stall_names_its_stage(tmp_path):
    """A job whose pages have not changed stage for long, but whose worker still sends a
    page's heartbeat, is moving; without heartbeats it is stalled, and the detail names the
    stage its waiting pages need a worker for."""
    io = collaborators()
    source = tmp_path / "set.pdf"
    source.write_bytes(b"%PDF-1.7")
    job = await accept_job(io, source, file_name="set.pdf", page_count=3, options=JobOptions())
    old = job.model_copy(update={"created_at": now() - timedelta(hours=1)})
    await io.jobs.create_job(old)
    await io.jobs.mark_working(job.job_id, 2, "extract")
    status = await job_status(io, job.job_id)
    assert not status.stalled and status.idle_seconds < 60

    idle = collaborators()
    await idle.jobs.create_job(old)
    await idle.jobs.mark_page(job.job_id, 1, "extracted")
    await idle.jobs.state.put(
        f"page.{job.job_id}.1", {"stage": "extracted", "updated_at": old.created_at.isoformat()}
    )
    status = await job_status(idle, job.job_id)
    assert status.stalled and status.detail
    assert "2 pages queued, waiting for extract" in status.detail
    assert "sheetflow worker extract" in status.detail


async def test_a_job_is_found_only_by_a_real_id(tmp_path):
    """An id of the wrong shape and an unknown one are both 'not found', never a lookup
    of whatever key the client sent."""
    io = collaborators()
    for job_id in ("../etc", "j_" + "0" * 32):
        with pytest.raises(Refusal) as refused:
            await job_status(io, job_id)
        assert refused.value.kind is RefusalKind.NOT_FOUND


async def test_reports_and_images_are_handed_out_once_they_exist(tmp_path):
    """A running job's report is not ready; its pages' images are there once rendered, and
    a page outside the job is not found; a finished job's report is its stored bytes."""
    io = collaborators()
    source = tmp_path / "set.pdf"
    source.write_bytes(b"%PDF-1.7")
    job = await accept_job(io, source, file_name="set.pdf", page_count=2, options=JobOptions())

    with pytest.raises(Refusal) as refused:
        await report(io, job.job_id, "json")
    assert refused.value.error == "report_not_ready"
    for page in (1, 3):
        with pytest.raises(Refusal) as refused:
            await page_image(io, job.job_id, page)
        assert refused.value.kind is RefusalKind.NOT_FOUND
    await io.bucket.put_bytes(Keys.image(job.job_id, 1), b"png")
    assert await page_image(io, job.job_id, 1) == b"png"

    await io.jobs.update_job(job.job_id, status="complete", finished_at=now())
    with pytest.raises(Refusal) as refused:
        await report(io, job.job_id, "json")
    assert refused.value.error == "report_not_ready"  # finished, but not written yet
    await io.bucket.put_bytes(Keys.report(job.job_id, "json"), b"{}")
    assert await report(io, job.job_id, "json") == b"{}"


ADMIN = Caller("ops", "admin")


async def test_a_running_job_is_canceled_and_a_finished_one_refuses(tmp_path):
    """Cancel marks a running job canceled; a finished job is a conflict."""
    io = collaborators()
    source = tmp_path / "set.pdf"
    source.write_bytes(b"%PDF-1.7")
    job = await accept_job(io, source, file_name="set.pdf", page_count=1, options=JobOptions())
    assert (await cancel_job(io, job.job_id, ADMIN)).canceled
    assert await io.jobs.is_canceled(job.job_id)

    await io.jobs.update_job(job.job_id, status="complete", finished_at=now())
    with pytest.raises(Refusal) as refused:
        await cancel_job(io, job.job_id, ADMIN)
    assert (refused.value.kind, refused.value.error) == (RefusalKind.CONFLICT, "already_finished")


async def test_a_submitter_cancels_its_own_jobs_and_only_an_admin_others(tmp_path):
    """The token that uploaded a job may cancel it; another submitter may not, an admin may."""
    io = collaborators()
    source = tmp_path / "set.pdf"
    source.write_bytes(b"%PDF-1.7")

    async def submitted_by(name: str):
        return await accept_job(
            io, source, file_name="set.pdf", page_count=1, options=JobOptions(), submitted_by=name
        )

    mine, theirs = await submitted_by("ci"), await submitted_by("other")
    assert (await cancel_job(io, mine.job_id, Caller("ci", "submitter"))).canceled
    with pytest.raises(Refusal) as refused:
        await cancel_job(io, theirs.job_id, Caller("ci", "reviewer"))
    assert refused.value.kind is RefusalKind.FORBIDDEN
    assert not await io.jobs.is_canceled(theirs.job_id)
    assert (await cancel_job(io, theirs.job_id, ADMIN)).canceled


@pytest.mark.parametrize(("nats", "s3"), [(True, True), (True, False), (False, True)])
async def test_readiness_names_each_server_and_this_process(nats, s3):
    """Ready only when both servers answer; each is reported on its own."""
    found = await readiness(collaborators(Servers(nats=nats, s3=s3)))
    assert (found.nats, found.s3, found.ready) == (nats, s3, nats and s3)
    assert found.instance == "ingest@test:1"


@pytest.mark.parametrize("full", ["nats", "s3"])
async def test_readiness_names_the_store_that_answers_but_cannot_write(full):
    """A store that answers reads but stores nothing (its disk is full) is not ready, named."""
    servers = Servers(nats_writes=full != "nats", s3_writes=full != "s3")
    found = await readiness(collaborators(servers))
    assert found.nats and found.s3 and not found.ready
    assert (
        found.detail
        == {
            "nats": "NATS JetStream answers but stores nothing (is its disk full?).",
            "s3": "S3 answers but stores nothing (is its disk full?).",
        }[full]
    )


class CountingServers(Servers):
    def __init__(self) -> None:
        super().__init__()
        self.asked = 0

    async def nats_answers(self, timeout_s: float) -> bool:
        self.asked += 1
        await asyncio.sleep(0.05)
        return self.nats


async def test_a_burst_of_readiness_probes_costs_one_round_trip():
    """Probes at once, or within the cache's life, share one answer; a later one asks again."""
    servers = CountingServers()
    io = collaborators(servers)
    await asyncio.gather(*(readiness(io) for _ in range(10)))
    assert servers.asked == 1
    io.last_check.at -= READY_CACHE_S
    servers.nats = False
    assert not (await readiness(io)).ready and servers.asked == 2


E = TypeVar("E", bound=BaseModel)


class FailsAfter(RecordingPublisher):
    """A publisher that stops answering after ``ok`` publications, as NATS frozen
    mid-announcement does."""

    def __init__(self, ok: int) -> None:
        super().__init__()
        self.ok = ok

    async def publish(self, subject: Subject[E], event: E, *, dedup_id: str) -> None:
        if len(self.attempts) >= self.ok:
            raise ConnectionError("NATS is gone")
        await super().publish(subject, event, dedup_id=dedup_id)


async def test_an_accepted_intake_leaves_no_marker_and_a_refused_one_leaves_nothing(tmp_path):
    """An intake is marked under way until its pages are announced; one refused half-way
    (503) has its source, its record and its marker removed: nothing was kept."""
    io = collaborators()
    source = tmp_path / "set.pdf"
    source.write_bytes(b"%PDF-1.7 a drawing set")
    job = await accept_job(io, source, file_name="a.pdf", page_count=3, options=JobOptions())
    assert await io.jobs.intakes() == [] and await io.jobs.get_job(job.job_id)

    refusing = bootstrap(
        bucket=MemoryBucket(),
        state=MemoryStateStore(),
        publisher=FailsAfter(ok=2),
        settings=Settings(_env_file=None),
        inspector=InProcessInspector(),
        servers=Servers(),
        worker_id="ingest@test:1",
    )
    with pytest.raises(Refusal) as refused:
        await accept_job(refusing, source, file_name="a.pdf", page_count=3, options=JobOptions())
    assert refused.value.kind is RefusalKind.UNAVAILABLE
    await asyncio.gather(*refusing.rollbacks)
    assert isinstance(refusing.bucket, MemoryBucket) and refusing.bucket.objects == {}
    assert isinstance(refusing.jobs.state, MemoryStateStore)
    assert refusing.jobs.state.documents == {}


async def test_a_job_id_or_project_with_a_trailing_line_break_is_refused():
    """An id is matched whole: a trailing line break (which ``$`` lets by) is no job id and no
    project, so it never reaches a store key or a NATS subject."""
    io = collaborators()
    with pytest.raises(Refusal) as refused:
        await job_status(io, "j_" + "0" * 32 + "\n")
    assert refused.value.kind is RefusalKind.NOT_FOUND
    with pytest.raises(Refusal) as bad:
        valid_project("site-a\n")
    assert bad.value.error == "bad_project"
    assert valid_project("site-a") == "site-a"
