"""HTTP handlers of the ingest API; each translates HTTP into one use case or lookup call."""

import asyncio
import logging
import re
import secrets
import tempfile
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import ValidationError

from services.ingest.inspection import InspectorsBusy, inspect_upload
from services.ingest.refusals import Refusal, RefusalKind, not_found, unavailable
from services.ingest.responses import JobCanceling, JobCreated, JobStatusBody
from services.ingest.upload import receive_upload
from services.ingest.usecases import Collaborators, Unavailable, accept_job, job_status
from services.ingest.validation import safe_file_name
from shared.asyncapi import asyncapi_document
from shared.jobs import JobRecord
from shared.messages import JobOptions
from shared.report import Report
from shared.service import ServiceContext
from shared.settings import Settings
from shared.storage import Keys, ObjectMissing

JOB_ID_RE = re.compile(r"^j_[0-9a-f]{32}$")
QUERY_TOKEN_NAMES = {"token", "access_token", "api_key", "apikey"}
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    code: {
        "description": text,
        "content": {"application/json": {"example": {"error": err, "detail": text}}},
    }
    for code, err, text in (
        (401, "unauthorized", "A bearer token is required."),
        (404, "not_found", "No such job."),
        (503, "unavailable", "NATS or S3 is not reachable."),
    )
}

log = logging.getLogger("sheetflow.ingest")


def get_settings(request: Request) -> Settings:
    return request.app.state.settings


def get_ctx(request: Request) -> ServiceContext:
    if not request.app.state.ready.is_set():
        raise unavailable("The service is starting or cannot reach NATS/S3; retry shortly.")
    return request.app.state.ctx


def collaborators(ctx: ServiceContext) -> Collaborators:
    return Collaborators(
        bucket=ctx.store, jobs=ctx.jobs, publisher=ctx.publisher, settings=ctx.settings
    )


def refuse_query_token(request: Request) -> None:
    """A token in the URL would be written to access logs and proxies' histories: refuse it
    rather than let a client learn to send it there."""
    if any(name.lower() in QUERY_TOKEN_NAMES for name in request.query_params):
        raise Refusal(
            RefusalKind.UNAUTHORIZED,
            "token_in_url",
            "Send the token in an 'Authorization: Bearer <token>' header, never in the URL.",
        )


# Declares the bearer token in OpenAPI (docs get an "Authorize" button); the check is ours.
bearer = HTTPBearer(
    auto_error=False, description="SHEETFLOW_API_TOKEN, when the deployment sets one"
)


def require_token(
    settings: Annotated[Settings, Depends(get_settings)],
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)] = None,
) -> None:
    if not settings.api_token:
        return
    expected = settings.api_token.get_secret_value().encode()
    given = credentials.credentials.encode() if credentials else b""
    if not secrets.compare_digest(given, expected):
        raise Refusal(
            RefusalKind.UNAUTHORIZED, "unauthorized", "Send 'Authorization: Bearer <token>'."
        )


CtxDep = Annotated[ServiceContext, Depends(get_ctx)]
SettingsDep = Annotated[Settings, Depends(get_settings)]

router = APIRouter()
v1 = APIRouter(
    prefix="/v1",
    dependencies=[Depends(refuse_query_token), Depends(require_token)],
    responses=ERROR_RESPONSES,
)


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/readyz", responses={503: ERROR_RESPONSES[503]})
async def readyz(request: Request) -> JSONResponse:
    ready = request.app.state.ready.is_set()
    ctx: ServiceContext = request.app.state.ctx
    nats_ok = ready and ctx.broker.connection is not None and ctx.broker.connection.is_connected
    s3_ok = ready and await ctx.store.ping()
    if nats_ok and s3_ok:
        # "instance" lets a launcher tell its own ingest from another one on the same port.
        body = {"status": "ready", "nats": True, "s3": True, "instance": ctx.worker_id}
        return JSONResponse(body)
    return JSONResponse(
        {
            "error": "not_ready",
            "detail": "NATS or S3 is not reachable.",
            "nats": nats_ok,
            "s3": s3_ok,
        },
        status_code=503,
    )


@router.get("/asyncapi.json", include_in_schema=False)
async def asyncapi(settings: SettingsDep) -> JSONResponse:
    return JSONResponse(asyncapi_document(settings))


def _base_url(request: Request, settings: Settings) -> str:
    return (settings.public_url or str(request.base_url)).rstrip("/")


async def _job(ctx: ServiceContext, job_id: str) -> JobRecord:
    if not JOB_ID_RE.match(job_id):
        raise not_found("No job has that id.")
    try:
        job = await asyncio.wait_for(ctx.jobs.get_job(job_id), timeout=5)
    except Exception as exc:
        raise unavailable("The job store (NATS) is not reachable; retry shortly.") from exc
    if not job:
        raise not_found("No job has that id.")
    return job


UPLOAD_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["file"],
                    "properties": {
                        "file": {"type": "string", "format": "binary", "description": "the PDF"},
                        "options": {
                            "type": "string",
                            "description": "JSON object of job options",
                            "example": '{"coverage_floor": 0.6}',
                        },
                    },
                }
            }
        },
    }
}


@v1.post(
    "/jobs",
    status_code=202,
    openapi_extra=UPLOAD_BODY,
    responses={
        400: {"description": "Malformed upload"},
        413: {"description": "Upload too large"},
        415: {"description": "Not a PDF"},
        422: {
            "description": "Encrypted, corrupt (no page readable), empty, too many pages, or "
            "active content where the deployment refuses it"
        },
    },
)
async def create_job(request: Request, ctx: CtxDep, settings: SettingsDep) -> JobCreated:
    """Upload a PDF (multipart field `file`, optional JSON field `options`); its pages are
    queued."""
    with tempfile.TemporaryDirectory(prefix="sheetflow-upload-") as tmp:
        upload = await receive_upload(
            request, Path(tmp) / "source.pdf", max_bytes=settings.max_upload_mb * 1024 * 1024
        )
        try:
            options = (
                JobOptions.model_validate_json(upload.options) if upload.options else JobOptions()
            )
        except ValidationError as exc:
            raise Refusal(
                RefusalKind.INVALID,
                "bad_options",
                f"The 'options' field is not valid: {exc.errors()[0]['msg']}.",
            ) from exc
        try:
            accepted, source = await inspect_upload(
                request.app.state.inspectors, upload.path, settings
            )
        except InspectorsBusy as exc:
            raise unavailable(
                "Every upload inspector is busy with other uploads; retry shortly.",
                retry_after_s=settings.inspect_timeout_s,
            ) from exc
        try:
            job = await accept_job(
                collaborators(ctx),
                source.path,
                file_name=safe_file_name(upload.file_name),
                page_count=accepted.page_count,
                options=options,
                intake=source.intake,
                original=upload.path if settings.keep_original_upload else None,
            )
        except Unavailable as exc:
            # The client gets the outcome; the log keeps the cause for whoever runs the stack.
            log.warning("upload not accepted, NATS or S3 unavailable: %s", exc)
            raise unavailable(
                "NATS or S3 is not reachable; nothing was kept. Retry shortly."
            ) from exc
    base = _base_url(request, settings)
    return JobCreated(
        job_id=job.job_id,
        status_url=f"{base}/v1/jobs/{job.job_id}",
        report_url=f"{base}/v1/jobs/{job.job_id}/report",
    )


@v1.get("/jobs/{job_id}")
async def get_job(job_id: str, ctx: CtxDep) -> JobStatusBody:
    """The job with per-stage page counts (queued, extracted, covered, verified, failed,
    skipped)."""
    job = await _job(ctx, job_id)
    try:
        status = await asyncio.wait_for(
            job_status(ctx.jobs, job, ctx.settings.stall_after_s), timeout=10
        )
        return JobStatusBody.model_validate(status)
    except TimeoutError as exc:
        raise unavailable("The job store (NATS) did not answer in time.") from exc


async def _report_bytes(ctx: ServiceContext, job: JobRecord, ext: str) -> bytes:
    if job.status not in ("complete", "partial", "canceled") or not job.finished_at:
        raise not_found(f"The report is not ready yet (job is {job.status}).", "report_not_ready")
    try:
        return await ctx.store.get_bytes(Keys.report(job.job_id, ext))
    except ObjectMissing as exc:
        raise not_found("The report is not ready yet.", "report_not_ready") from exc
    except Exception as exc:
        raise unavailable("S3 is not reachable; retry shortly.") from exc


# The stored report.json is sent as written; the model documents its shape in OpenAPI.
@v1.get("/jobs/{job_id}/report", response_model=Report)
async def get_report(job_id: str, ctx: CtxDep) -> Response:
    """The job's report.json (404 with a JSON body until it exists)."""
    job = await _job(ctx, job_id)
    return Response(await _report_bytes(ctx, job, "json"), media_type="application/json")


@v1.get("/jobs/{job_id}/report.html", response_class=HTMLResponse)
async def get_report_html(job_id: str, ctx: CtxDep) -> Response:
    """The job's report as a page a person can read."""
    job = await _job(ctx, job_id)
    return HTMLResponse(await _report_bytes(ctx, job, "html"))


@v1.get("/jobs/{job_id}/pages/{page_number}/image.png")
async def get_page_image(job_id: str, page_number: int, ctx: CtxDep) -> Response:
    """A page's rendered image."""
    job = await _job(ctx, job_id)
    if not 1 <= page_number <= job.page_count:
        raise not_found(f"The job has pages 1 to {job.page_count}.")
    try:
        data = await ctx.store.get_bytes(Keys.image(job_id, page_number))
    except ObjectMissing as exc:
        raise not_found("That page has not been rendered yet.") from exc
    return Response(data, media_type="image/png")


@v1.delete(
    "/jobs/{job_id}", status_code=202, responses={409: {"description": "Job already finished"}}
)
async def cancel_job(job_id: str, ctx: CtxDep) -> JobCanceling:
    """Cancel a job: pages not yet extracted are skipped and the job ends `canceled`."""
    job = await _job(ctx, job_id)
    if job.status in ("complete", "partial") or job.finished_at:
        raise Refusal(
            RefusalKind.CONFLICT, "already_finished", f"The job already finished ({job.status})."
        )
    updated = await ctx.jobs.update_job(job_id, canceled=True)
    return JobCanceling(job_id=job_id, canceled=bool(updated and updated.canceled))


router.include_router(v1)
