"""HTTP handlers of the ingest API; each translates HTTP into one use case call."""

import secrets
import tempfile
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from services.ingest import usecases
from services.ingest.bootstrap import Running
from services.ingest.refusals import Refusal, RefusalKind, unavailable
from services.ingest.responses import JobCanceling, JobCreated, JobStatusBody
from services.ingest.upload import receive_upload
from services.ingest.usecases import Collaborators
from shared.asyncapi import asyncapi_document
from shared.report import Report
from shared.settings import Settings

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


def get_settings(request: Request) -> Settings:
    return request.app.state.settings


def get_running(request: Request) -> Running:
    return request.app.state.running


def get_collaborators(running: Annotated[Running, Depends(get_running)]) -> Collaborators:
    if running.io is None:
        raise unavailable("The service is starting or cannot reach NATS/S3; retry shortly.")
    return running.io


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


IoDep = Annotated[Collaborators, Depends(get_collaborators)]
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
async def readyz(running: Annotated[Running, Depends(get_running)]) -> JSONResponse:
    readiness = await usecases.readiness(running.io) if running.io else None
    if readiness and readiness.ready:
        body = {"status": "ready", "nats": True, "s3": True, "instance": readiness.instance}
        return JSONResponse(body)
    return JSONResponse(
        {
            "error": "not_ready",
            "detail": "NATS or S3 is not reachable.",
            "nats": bool(readiness and readiness.nats),
            "s3": bool(readiness and readiness.s3),
        },
        status_code=503,
    )


@router.get("/asyncapi.json", include_in_schema=False)
async def asyncapi(settings: SettingsDep) -> JSONResponse:
    return JSONResponse(asyncapi_document(settings))


def _base_url(request: Request, settings: Settings) -> str:
    return (settings.public_url or str(request.base_url)).rstrip("/")


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
        507: {"description": "A disk that must hold the upload is full; nothing was kept"},
        415: {"description": "Not a PDF"},
        422: {
            "description": "Encrypted, corrupt (no page readable), empty, too many pages, or "
            "active content where the deployment refuses it"
        },
    },
)
async def create_job(request: Request, io: IoDep, settings: SettingsDep) -> JobCreated:
    """Upload a PDF (multipart field `file`, optional JSON field `options`); its pages are
    queued."""
    with tempfile.TemporaryDirectory(prefix="sheetflow-upload-") as tmp:
        upload = await receive_upload(
            request, Path(tmp) / "source.pdf", max_bytes=settings.max_upload_mb * 1024 * 1024
        )
        job = await usecases.accept_upload(io, upload)
    base = _base_url(request, settings)
    return JobCreated(
        job_id=job.job_id,
        status_url=f"{base}/v1/jobs/{job.job_id}",
        report_url=f"{base}/v1/jobs/{job.job_id}/report",
    )


@v1.get("/jobs/{job_id}")
async def get_job(job_id: str, io: IoDep) -> JobStatusBody:
    """The job with per-stage page counts (queued, extracted, covered, verified, failed,
    skipped)."""
    return await usecases.job_status(io, job_id)


# The stored report.json is sent as written; the model documents its shape in OpenAPI.
@v1.get("/jobs/{job_id}/report", response_model=Report)
async def get_report(job_id: str, io: IoDep) -> Response:
    """The job's report.json (404 with a JSON body until it exists)."""
    return Response(await usecases.report(io, job_id, "json"), media_type="application/json")


@v1.get("/jobs/{job_id}/report.html", response_class=HTMLResponse)
async def get_report_html(job_id: str, io: IoDep) -> Response:
    """The job's report as a page a person can read."""
    return HTMLResponse(await usecases.report(io, job_id, "html"))


@v1.get("/jobs/{job_id}/pages/{page_number}/image.png")
async def get_page_image(job_id: str, page_number: int, io: IoDep) -> Response:
    """A page's rendered image."""
    return Response(await usecases.page_image(io, job_id, page_number), media_type="image/png")


@v1.delete(
    "/jobs/{job_id}", status_code=202, responses={409: {"description": "Job already finished"}}
)
async def cancel_job(job_id: str, io: IoDep) -> JobCanceling:
    """Cancel a job: pages not yet extracted are skipped and the job ends `canceled`."""
    return await usecases.cancel_job(io, job_id)


router.include_router(v1)
