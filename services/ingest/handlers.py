"""HTTP handlers of the ingest API; each translates HTTP into one use case call."""

import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request, Response, Security
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.routing import APIRoute
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer, SecurityScopes

from services.ingest import (
    corrections,
    downloads,
    projects,
    sessions,
    signing,
    usecases,
    webhooks,
)
from services.ingest.accesslog import record_caller
from services.ingest.bootstrap import Running
from services.ingest.corrections import ProblemDecision, SheetFix
from services.ingest.downloads import attachment
from services.ingest.refusals import Refusal, RefusalKind, not_found, unavailable
from services.ingest.responses import JobCanceling, JobCreated, JobStatusBody, SignedLink
from services.ingest.roles import Caller, identify
from services.ingest.sheetlog import SheetLog, SheetOrder, to_csv
from services.ingest.upload import receive_upload
from services.ingest.usecases import Collaborators
from services.ingest.webhooks import DeliveryView, NewWebhook, Replaying, WebhookView
from shared.contracts import links
from shared.contracts.register import ProposedMatch, SheetVersion
from shared.contracts.report import Report
from shared.contracts.review import (
    ProblemReview,
    ProjectRecord,
    ProposalDecision,
    ReviewRecord,
    SheetCorrection,
)
from shared.infra.asyncapi import asyncapi_document
from shared.infra.settings import Settings

QUERY_TOKEN_NAMES = {"token", "access_token", "api_key", "apikey"}
# How a signed link's caller is named (then who made the link), in logs and records.
LINK_CALLER = "link:"
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    code: {
        "description": text,
        "content": {"application/json": {"example": {"error": err, "detail": text}}},
    }
    for code, err, text in (
        (401, "unauthorized", "A bearer token is required."),
        (403, "forbidden", "The token's role does not allow this request."),
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
# Each route names the least role it takes as the requirement's scope (OpenAPI 3.1 lets a
# bearer requirement list role names), so /docs shows who may call it.
bearer = HTTPBearer(
    auto_error=False,
    description="A token from SHEETFLOW_API_TOKENS (or SHEETFLOW_API_TOKEN, an admin), when "
    "the deployment sets any. Roles: reader < submitter < reviewer < admin; each route's "
    "security requirement names the least role it takes.",
)


async def authorize(
    required: SecurityScopes,
    request: Request,
    settings: Annotated[Settings, Depends(get_settings)],
    running: Annotated[Running, Depends(get_running)],
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)] = None,
) -> Caller:
    """The caller, if its role is at least the route's: the bearer token's; else, on a read,
    a signed link's (a reader) or a signed-in person's session (its cookie)."""
    caller = await _caller(request, settings, running, credentials)
    if caller is None:
        raise Refusal(
            RefusalKind.UNAUTHORIZED, "unauthorized", "Send 'Authorization: Bearer <token>'."
        )
    record_caller(caller.name)
    needed = required.scopes[0] if required.scopes else "admin"
    if not caller.may(needed):  # type: ignore[arg-type]
        raise Refusal(
            RefusalKind.FORBIDDEN,
            "forbidden",
            f"The token {caller.name!r} has the role {caller.role}; this takes {needed}.",
        )
    return caller


async def _caller(
    request: Request,
    settings: Settings,
    running: Running,
    credentials: HTTPAuthorizationCredentials | None,
) -> Caller | None:
    if credentials or not settings.tokens:
        return identify(settings, credentials.credentials if credentials else None)
    reading = request.method in ("GET", "HEAD")
    query = dict(request.query_params)
    if reading and signing.is_signed(query):
        return Caller(f"{LINK_CALLER}{_signed_by(settings, request.url.path, query)}", "reader")
    session_id = request.cookies.get(sessions.COOKIE)
    if reading and session_id:
        io = get_collaborators(running)
        session = await sessions.find_session(io.jobs.state, settings, session_id)
        return session.caller if session else None
    return None


def _signed_by(settings: Settings, path: str, query: dict[str, str]) -> str:
    """Who made the signed link to ``path`` in ``query``; a refusal when it does not open."""
    key = settings.link_key.get_secret_value() if settings.link_key else ""
    try:
        if not key:
            raise signing.LinkRefused("bad_signature", "This deployment signs no links.")
        return signing.verify(key, path, query, time.time())
    except signing.LinkRefused as refused:
        raise Refusal(RefusalKind.UNAUTHORIZED, refused.error, refused.detail) from None


def project_id(project: str) -> str:
    """The route's project id, refused (422 ``bad_project``) before anything else is done
    when it is not one."""
    return projects.valid_project(project)


Reader = Annotated[Caller, Security(authorize, scopes=["reader"])]
Submitter = Annotated[Caller, Security(authorize, scopes=["submitter"])]
Reviewer = Annotated[Caller, Security(authorize, scopes=["reviewer"])]
Admin = Annotated[Caller, Security(authorize, scopes=["admin"])]
# Routes take their caller first: the role is checked before anything else is resolved.
IoDep = Annotated[Collaborators, Depends(get_collaborators)]
SettingsDep = Annotated[Settings, Depends(get_settings)]
ProjectId = Annotated[str, Depends(project_id)]

router = APIRouter()
v1 = APIRouter(
    prefix="/v1",
    dependencies=[Depends(refuse_query_token)],
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
            "detail": readiness.detail if readiness else "NATS or S3 is not reachable yet.",
            "nats": bool(readiness and readiness.nats),
            "s3": bool(readiness and readiness.s3),
            "nats_writes": bool(readiness and readiness.nats_writes),
            "s3_writes": bool(readiness and readiness.s3_writes),
        },
        status_code=503,
    )


@router.get("/asyncapi.json", include_in_schema=False)
async def asyncapi(settings: SettingsDep) -> JSONResponse:
    return JSONResponse(asyncapi_document(settings))


def _base_url(settings: Settings) -> str:
    """Where links start: the deployment's public URL, else nothing (relative links); never
    the request's Host header, which a client chooses."""
    return (settings.public_url or "").rstrip("/")


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
                            "description": "JSON object of job options (JobOptions); "
                            "`project` joins the job to a project's drawing register",
                            "example": '{"coverage_floor": 0.6, "project": "tower-b"}',
                        },
                    },
                }
            }
        },
    }
}


UPLOAD_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {"description": "Malformed upload"},
    413: {"description": "Upload too large"},
    507: {"description": "A disk that must hold the upload is full; nothing was kept"},
    415: {"description": "Not a PDF"},
    422: {
        "description": "Encrypted, corrupt (no page readable), empty, too many pages, active "
        "content where the deployment refuses it, invalid options or project id"
    },
}


@v1.post("/jobs", status_code=202, openapi_extra=UPLOAD_BODY, responses=UPLOAD_RESPONSES)
async def create_job(
    caller: Submitter, request: Request, io: IoDep, settings: SettingsDep
) -> JobCreated:
    """Upload a PDF (multipart field `file`, optional JSON field `options`); its pages are
    queued."""
    return await _upload(caller, request, io, settings, None)


@v1.post(
    "/projects/{project}/jobs",
    status_code=202,
    openapi_extra=UPLOAD_BODY,
    responses=UPLOAD_RESPONSES,
)
async def create_project_job(
    caller: Submitter, project: ProjectId, request: Request, io: IoDep, settings: SettingsDep
) -> JobCreated:
    """Upload a PDF of a project (as `POST /v1/jobs` with `options.project`): once its
    report is written its sheets join the project's drawing register."""
    return await _upload(caller, request, io, settings, project)


async def _upload(
    caller: Caller, request: Request, io: Collaborators, settings: Settings, project: str | None
) -> JobCreated:
    with tempfile.TemporaryDirectory(prefix="sheetflow-upload-") as tmp:
        upload = await receive_upload(
            request, Path(tmp) / "source.pdf", max_bytes=settings.max_upload_mb * 1024 * 1024
        )
        job = await usecases.accept_upload(io, upload, submitted_by=caller.name, project=project)
    base = _base_url(settings)
    return JobCreated(
        job_id=job.job_id,
        status_url=f"{base}/v1/jobs/{job.job_id}",
        report_url=f"{base}/v1/jobs/{job.job_id}/report",
    )


@v1.get("/jobs/{job_id}")
async def get_job(_: Reader, job_id: str, io: IoDep) -> JobStatusBody:
    """The job with per-stage page counts (queued, extracted, covered, verified, failed,
    skipped)."""
    return await usecases.job_status(io, job_id)


# The stored report.json is sent as written; the model documents its shape in OpenAPI.
@v1.get("/jobs/{job_id}/report", response_model=Report)
async def get_report(_: Reader, job_id: str, io: IoDep) -> Response:
    """The job's report.json (404 with a JSON body until it exists)."""
    return Response(await usecases.report(io, job_id, "json"), media_type="application/json")


@v1.get("/jobs/{job_id}/report.html", response_class=HTMLResponse)
async def get_report_html(_: Reader, job_id: str, io: IoDep) -> Response:
    """The job's report as a page a person can read."""
    return HTMLResponse(await usecases.report(io, job_id, "html"))


@v1.get("/jobs/{job_id}/sheets.json")
async def get_sheets(_: Reader, job_id: str, io: IoDep, order: SheetOrder = "page") -> SheetLog:
    """The sheet log: one row per page (number, title, discipline, revision, date, where the
    number came from, coverage, verdict, problems, what a person corrected, review priority
    and what was checked); ``order=review_priority`` lists the pages to look at first."""
    return await usecases.sheets(io, job_id, order)


@v1.get(
    "/jobs/{job_id}/sheets.csv",
    response_class=Response,
    responses={200: {"content": {"text/csv": {}}, "description": "the sheet log as CSV"}},
)
async def get_sheets_csv(_: Reader, job_id: str, io: IoDep, order: SheetOrder = "page") -> Response:
    """The sheet log as a CSV file a spreadsheet opens (UTF-8 with a byte-order mark), in
    page order or by review priority (``order=review_priority``)."""
    log = await usecases.sheets(io, job_id, order)
    return Response(
        to_csv(log),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{job_id}-sheets.csv"'},
    )


PDF_FILE: dict[int | str, dict[str, Any]] = {
    200: {"content": {"application/pdf": {}}, "description": "the PDF, named to be saved"}
}


@v1.get("/jobs/{job_id}/sheets/{sheet}.pdf", response_class=Response, responses=PDF_FILE)
async def get_sheet_pdf(_: Reader, job_id: str, sheet: str, io: IoDep) -> Response:
    """One sheet as its own PDF (the page with its annotations), saved as "A101 - FLOOR
    PLAN.pdf". `{sheet}` is its number as printed or compared (`A-101`, `a101`), or `page-N`;
    409 `ambiguous_sheet` when two pages carry the number."""
    data, name = await downloads.sheet_download(io, job_id, sheet)
    return Response(data, media_type="application/pdf", headers=attachment(name))


@v1.get(
    "/jobs/{job_id}/sheets.zip",
    response_class=Response,
    responses={200: {"content": {"application/zip": {}}, "description": "every sheet's PDF"}},
)
async def get_sheets_zip(_: Reader, job_id: str, io: IoDep) -> Response:
    """Every page as its own PDF named by number and title, in one zip."""
    data, name = await downloads.zip_download(io, job_id)
    return Response(data, media_type="application/zip", headers=attachment(name))


@v1.get("/jobs/{job_id}/set.pdf", response_class=Response, responses=PDF_FILE)
async def get_set_pdf(_: Reader, job_id: str, io: IoDep) -> Response:
    """The set bookmarked and linked: an outline of its sheets grouped by discipline, page
    labels set to sheet numbers, each cross-reference a link to the sheet it names, and the
    references to sheets it does not hold listed in the outline. Nothing active is added."""
    data, name = await downloads.set_download(io, job_id)
    return Response(data, media_type="application/pdf", headers=attachment(name))


@v1.get("/jobs/{job_id}/pages/{page_number}/image.png")
async def get_page_image(_: Reader, job_id: str, page_number: int, io: IoDep) -> Response:
    """A page's rendered image."""
    return Response(await usecases.page_image(io, job_id, page_number), media_type="image/png")


@v1.delete(
    "/jobs/{job_id}", status_code=202, responses={409: {"description": "Job already finished"}}
)
async def cancel_job(caller: Submitter, job_id: str, io: IoDep) -> JobCanceling:
    """Cancel a job: pages not yet extracted are skipped and the job ends `canceled`. A
    submitter or reviewer cancels the jobs its token submitted; an admin any job."""
    return await usecases.cancel_job(io, job_id, caller)


@v1.post(
    "/jobs/{job_id}/pages/{page_number}/sheet",
    status_code=201,
    responses={409: {"description": "The report is not written yet"}},
)
async def correct_sheet(
    caller: Reviewer, job_id: str, page_number: int, fix: SheetFix, io: IoDep
) -> SheetCorrection:
    """Correct a page's sheet identity (number, title, discipline, revision) with a reason:
    stored as a record of its own; the report is rebuilt and `report.ready` sent again."""
    return await corrections.correct_sheet(io, caller, job_id, page_number, fix)


@v1.post(
    "/jobs/{job_id}/pages/{page_number}/problems/{problem}",
    status_code=201,
    responses={409: {"description": "The report is not written yet"}},
)
async def review_problem(
    caller: Reviewer,
    job_id: str,
    page_number: int,
    problem: int,
    decision: ProblemDecision,
    io: IoDep,
) -> ProblemReview:
    """Dismiss or confirm a reported problem (numbered from 1 in the page's `problems`),
    with a reason; a dismissed problem stays in the report, marked dismissed."""
    return await corrections.review_problem(io, caller, job_id, page_number, problem, decision)


@v1.get("/jobs/{job_id}/review")
async def get_review(_: Reader, job_id: str, io: IoDep) -> list[ReviewRecord]:
    """The job's review records, oldest first: who, when, before, after, why."""
    return await corrections.review_log(io, job_id)


NOT_FOUND_PROJECT: dict[int | str, dict[str, Any]] = {
    404: {"description": "No such project, sheet or version"}
}


@v1.get("/projects/{project}/sheets", responses=NOT_FOUND_PROJECT)
async def get_project_sheets(_: Reader, project: ProjectId, io: IoDep) -> projects.ProjectSheets:
    """The project's drawing register: every sheet as its current version stands (a sheet
    a later upload lacked stays current), with the matches proposed for renumbered sheets."""
    return await projects.project_sheets(io, project)


@v1.get("/projects/{project}/sheets/{sheet}/versions", responses=NOT_FOUND_PROJECT)
async def get_sheet_versions(
    _: Reader, project: ProjectId, sheet: str, io: IoDep
) -> list[SheetVersion]:
    """A sheet's versions, oldest first: the upload and page, revision mark, issue date,
    what changed against the version before, and the uploads that re-issued it unchanged."""
    return await projects.sheet_versions(io, project, sheet)


@v1.get("/projects/{project}/sheets/{sheet}/delta", responses=NOT_FOUND_PROJECT)
async def get_sheet_delta(
    _: Reader,
    project: ProjectId,
    sheet: str,
    io: IoDep,
    before: Annotated[int, Query(alias="from", ge=1, description="the earlier version")],
    after: Annotated[int, Query(alias="to", ge=1, description="the later version")],
) -> Response:
    """What changed on the sheet from one version to another, in its text units: added,
    removed and changed, each with its text and its box on both sheets."""
    body = await projects.sheet_delta_json(io, project, sheet, before, after)
    return Response(body, media_type="application/json")


@v1.get(
    "/projects/{project}/sheets/{sheet}/overlay.png",
    response_class=Response,
    responses={
        200: {"content": {"image/png": {}}, "description": "the overlay"},
        **NOT_FOUND_PROJECT,
    },
)
async def get_sheet_overlay(
    _: Reader,
    project: ProjectId,
    sheet: str,
    io: IoDep,
    before: Annotated[int, Query(alias="from", ge=1, description="the earlier version (red)")],
    after: Annotated[int, Query(alias="to", ge=1, description="the later version (blue)")],
) -> Response:
    """The two versions overlaid: the earlier in red, the later in blue, unchanged in grey,
    the changed regions boxed."""
    png = await projects.sheet_overlay(io, project, sheet, before, after)
    return Response(png, media_type="image/png")


@v1.get("/projects/{project}/proposals", responses=NOT_FOUND_PROJECT)
async def get_proposals(_: Reader, project: ProjectId, io: IoDep) -> list[ProposedMatch]:
    """Every match the register proposed for a sheet that looks renumbered, oldest first,
    whatever its status (proposed, accepted, rejected: who decided, when and why)."""
    return await projects.list_proposals(io, project)


@v1.post(
    "/projects/{project}/proposals/{proposal_id}",
    status_code=201,
    responses={
        200: {"description": "The same decision was made before: its record"},
        404: {"description": "No such project or proposal"},
        409: {"description": "Decided otherwise already, or its sheets moved since"},
    },
)
async def decide_proposal(
    caller: Reviewer,
    project: ProjectId,
    proposal_id: str,
    verdict: projects.ProposalVerdict,
    io: IoDep,
    response: Response,
) -> ProposalDecision:
    """Accept or reject a proposed match, with a reason: stored as a record; accepted, the
    register moves the old number's versions under the new one and sends `sheet.revised`
    and `register.updated`; rejected, the two stay apart."""
    record, made = await projects.decide(io, caller, project, proposal_id, verdict)
    if not made:
        response.status_code = 200
    return record


@v1.get("/projects/{project}/review", responses=NOT_FOUND_PROJECT)
async def get_project_review(_: Reader, project: ProjectId, io: IoDep) -> list[ProjectRecord]:
    """The project's review records, oldest first: proposals decided, and sheets the register
    moved to another number (for a correction or an accepted proposal)."""
    return await projects.project_review(io, project)


@v1.post(
    "/webhooks",
    status_code=201,
    responses={422: {"description": "Unknown event, or a target the deployment refuses"}},
)
async def create_webhook(caller: Admin, new: NewWebhook, io: IoDep) -> WebhookView:
    """Subscribe a URL to events; deliveries are signed with the secret (made here and shown
    once when none is given)."""
    return await webhooks.create_webhook(io, caller, new)


@v1.get("/webhooks")
async def list_webhooks(_: Admin, io: IoDep) -> list[WebhookView]:
    """Every subscription, those from the settings first; secrets are never shown."""
    return await webhooks.list_webhooks(io)


@v1.delete("/webhooks/{webhook_id}", status_code=204)
async def delete_webhook(_: Admin, webhook_id: str, io: IoDep) -> Response:
    """Remove a subscription made over the API."""
    await webhooks.delete_webhook(io, webhook_id)
    return Response(status_code=204)


@v1.get("/webhooks/{webhook_id}/deliveries")
async def get_deliveries(
    _: Admin, webhook_id: str, io: IoDep, limit: Annotated[int, Query(ge=1, le=500)] = 50
) -> list[DeliveryView]:
    """The subscription's delivery log, newest first: state, and each attempt's status code,
    latency and error."""
    return await webhooks.delivery_log(io, webhook_id, limit)


@v1.post("/webhooks/{webhook_id}/deliveries/{delivery_id}/replay", status_code=202)
async def replay_delivery(_: Admin, webhook_id: str, delivery_id: str, io: IoDep) -> Replaying:
    """Send a delivery again (a new round of attempts, the same idempotency key)."""
    return await webhooks.replay(io, webhook_id, delivery_id)


# The routes a signed link may open: what a reader may read.
LINKABLE = {
    "get_job",
    "get_report",
    "get_report_html",
    "get_sheets",
    "get_sheets_csv",
    "get_sheet_pdf",
    "get_sheets_zip",
    "get_set_pdf",
    "get_page_image",
    "get_review",
    "get_project_sheets",
    "get_sheet_versions",
    "get_sheet_delta",
    "get_sheet_overlay",
}


@v1.get(
    "/{resource:path}/link",
    responses={
        404: {"description": "Nothing a signed link may open there"},
        503: {"description": "The deployment has no link key"},
    },
)
async def create_link(
    caller: Reader,
    resource: str,
    request: Request,
    settings: SettingsDep,
    expires: Annotated[
        int, Query(ge=60, description="seconds the link stays valid (at most SHEETFLOW_LINK_MAX_S)")
    ] = 3600,
) -> SignedLink:
    """A signed link to the resource before `/link` (e.g. `GET /v1/jobs/{id}/set.pdf/link`)
    that opens without a token until it expires: for someone who has none. Its query is the
    resource's own (any other parameter given here), then `expires`, `by`, `signature`."""
    return signed_link(caller, f"/v1/{resource}", request, settings, expires)


def signed_link(
    caller: Caller, path: str, request: Request, settings: Settings, lifetime_s: int
) -> SignedLink:
    if caller.name.startswith(LINK_CALLER):
        raise Refusal(RefusalKind.FORBIDDEN, "forbidden", "A signed link cannot make another.")
    if not settings.link_key:
        raise unavailable("This deployment has no link key (SHEETFLOW_LINK_KEY): no signed links.")
    if lifetime_s > settings.link_max_s:
        raise Refusal(
            RefusalKind.INVALID,
            "expires_too_far",
            f"A signed link stays valid {settings.link_max_s} s at most.",
        )
    linkable = any(
        isinstance(route, APIRoute) and route.name in LINKABLE and route.path_regex.match(path)
        for route in v1.routes
    )
    if not linkable:
        raise not_found(f"A signed link cannot open {path}.", "not_linkable")
    query = {k: v for k, v in request.query_params.items() if k != signing.EXPIRES}
    expires_at = int(time.time()) + lifetime_s
    key = settings.link_key.get_secret_value()
    signed = signing.signed_query(key, path, query, expires_at, caller.name)
    return SignedLink(
        url=f"{links.base(settings.public_url)}{path}?{signed}",
        expires_at=datetime.fromtimestamp(expires_at, UTC),
    )


router.include_router(v1)
