"""Ingest's use cases with in-memory stores and publisher: a job accepted is stored, recorded
and fanned out page by page; its status counts what the page states say."""

from datetime import timedelta

from services.ingest.usecases import Collaborators, accept_job, job_status
from shared import subjects
from shared.jobs import JobStore, now
from shared.messages import ExtractPage, JobAccepted, JobOptions
from shared.settings import Settings
from shared.storage import Keys
from tests.support.fakes import MemoryBucket, MemoryStateStore, RecordingPublisher


def collaborators() -> Collaborators:
    return Collaborators(
        bucket=MemoryBucket(),
        jobs=JobStore(MemoryStateStore()),
        publisher=RecordingPublisher(),
        settings=Settings(_env_file=None),
    )


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

    status = await job_status(io.jobs, job, stall_after_s=60)
    assert status["pages"] == {
        "queued": 1,
        "extracted": 0,
        "covered": 1,
        "verified": 1,
        "failed": 1,
        "skipped": 0,
    }
    assert status["pages_terminal"] == 2 and not status["stalled"]

    later = job.model_copy(update={"created_at": now() - timedelta(hours=1)})
    status = await job_status(JobStore(MemoryStateStore()), later, stall_after_s=60)
    assert status["stalled"] and "sheetflow worker" in status["detail"]
