"""The screen's use cases: what each page reads (jobs, a set, a sheet, a project's register),
through the same use cases and stores as the API, and what a person's form does."""

import asyncio
import contextlib
import json
from dataclasses import dataclass

from services.ingest import projects, usecases
from services.ingest.refusals import not_found, refusing_outages
from services.ingest.responses import JobStatusBody
from services.ingest.usecases import Collaborators
from shared.contracts.interfaces import ObjectMissing
from shared.contracts.models import VerifiedPage
from shared.contracts.register import Register
from shared.contracts.report import PageReport, Report
from shared.infra.jobs import JobRecord
from shared.infra.register_store import read_register
from shared.infra.storage import Keys
from shared.pagetext import TextLayer

# Jobs the jobs page lists, newest first, and how many of them follow their progress live.
JOBS_LISTED = 50


@dataclass
class JobLine:
    job: JobRecord
    status: JobStatusBody | None  # a running job's progress


@refusing_outages
async def recent_jobs(io: Collaborators) -> list[JobLine]:
    """The newest jobs, each running one with its page counts."""
    documents = await io.jobs.state.scan("job.")
    jobs = sorted(
        (JobRecord.model_validate(d) for d in documents.values()),
        key=lambda j: j.created_at,
        reverse=True,
    )[:JOBS_LISTED]
    running = [j for j in jobs if j.status in ("accepted", "running")]
    statuses = await asyncio.gather(*(usecases.job_status(io, j.job_id) for j in running))
    progress = {s.job_id: s for s in statuses}
    return [JobLine(j, progress.get(j.job_id)) for j in jobs]


async def finished_report(io: Collaborators, job_id: str) -> Report | None:
    """The job's report once it is written; None while the job runs."""
    job = await usecases.find_job(io, job_id)
    if job.status not in ("complete", "partial", "canceled") or not job.finished_at:
        return None
    try:
        return Report.model_validate_json(await io.bucket.get_bytes(Keys.report(job_id, "json")))
    except ObjectMissing:
        return None


@dataclass
class SheetPage:
    report: Report
    page: PageReport
    verified: VerifiedPage | None
    layer: TextLayer | None


@refusing_outages
async def sheet_page(io: Collaborators, job_id: str, page_number: int) -> SheetPage:
    report = await finished_report(io, job_id)
    if report is None:
        raise not_found("The job's report is not written yet.", "report_not_ready")
    page = next((p for p in report.pages if p.page_number == page_number), None)
    if page is None:
        raise not_found(f"The job has pages 1 to {report.page_count}.")
    verified: VerifiedPage | None = None
    layer: TextLayer | None = None
    if page.status == "verified":
        with contextlib.suppress(ObjectMissing):  # shown without its reading
            verified, layer = await asyncio.gather(
                io.bucket.get_model(Keys.verified(job_id, page_number), VerifiedPage),
                io.bucket.get_model(Keys.text(job_id, page_number), TextLayer),
            )
    return SheetPage(report, page, verified, layer)


@refusing_outages
async def project_names(io: Collaborators) -> list[str]:
    """Every project with a register, by name."""
    keys = await io.bucket.list_keys(Keys.projects())
    return sorted({key.split("/")[1] for key in keys if key.count("/") >= 3})


@refusing_outages
async def register(io: Collaborators, project: str) -> Register:
    found, _ = await read_register(io.bucket, io.jobs.state, projects.valid_project(project))
    if not found.jobs:
        raise not_found(f"The project {project!r} has no register yet.", "no_such_project")
    return found


@refusing_outages
async def version_image(io: Collaborators, project: str, sheet: str, version: int) -> bytes:
    versions = await projects.sheet_versions(io, project, sheet)
    if not 1 <= version <= len(versions) or versions[version - 1].image_key is None:
        raise not_found("That version has no image.", "no_such_version")
    return await io.bucket.get_bytes(versions[version - 1].image_key or "")


def upload_options(fields: dict[str, str]) -> bytes | None:
    """The upload form's project and issue (its label and date) as the upload's ``options``
    (JSON); the project checked as the API checks it, the rest where the API reads them."""
    project = fields.get("project", "").strip()
    given = {
        "project": projects.valid_project(project) if project else None,
        "issue": fields.get("issue", "").strip() or None,
        "issue_date": fields.get("issue_date", "").strip() or None,
    }
    chosen = {name: value for name, value in given.items() if value is not None}
    return json.dumps(chosen).encode() if chosen else None
