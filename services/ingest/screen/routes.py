"""The screen's HTTP routes under ``/app/``: pages a person reads (server-rendered, usable
without JavaScript) and the forms they post. A page needs a session (else: the sign-in
page); every form carries the session's CSRF token; roles are the API's (a reader reads, a
submitter uploads and cancels, a reviewer corrects and decides, an admin does everything)."""

import tempfile
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Depends, Query, Request, Response
from fastapi.responses import RedirectResponse
from pydantic import ValidationError

from services.ingest import corrections, downloads, projects, sessions, usecases
from services.ingest.bootstrap import Running
from services.ingest.corrections import ProblemDecision, SheetFix
from services.ingest.refusals import Refusal, RefusalKind
from services.ingest.roles import Caller, identify
from services.ingest.screen import pages, views
from services.ingest.screen.render import page_response
from services.ingest.sessions import Session
from services.ingest.upload import receive_upload
from services.ingest.usecases import Collaborators
from shared.contracts.review import SHEET_FIELDS
from shared.infra.settings import Role, Settings


class SignInFirst(Exception):
    """The page needs a session: the person is sent to sign in, then back to ``next``."""

    def __init__(self, next_path: str) -> None:
        self.next_path = next_path


def _settings(request: Request) -> Settings:
    return request.app.state.settings


def _io(request: Request) -> Collaborators:
    running: Running = request.app.state.running
    if running.io is None:
        raise Refusal(
            RefusalKind.UNAVAILABLE,
            "unavailable",
            "The service is starting or cannot reach NATS/S3; retry shortly.",
            10.0,
        )
    return running.io


async def _session(request: Request) -> Session:
    io, settings = _io(request), _settings(request)
    found = await sessions.find_session(
        io.jobs.state, settings, request.cookies.get(sessions.COOKIE)
    )
    if found is None:
        raise SignInFirst(request.url.path + (f"?{request.url.query}" if request.url.query else ""))
    return found


Person = Annotated[Session, Depends(_session)]
Io = Annotated[Collaborators, Depends(_io)]
SettingsDep = Annotated[Settings, Depends(_settings)]

router = APIRouter(prefix="/app", include_in_schema=False)


def _may(session: Session, role: Role, what: str) -> Caller:
    caller = session.caller
    if not caller.may(role):
        raise Refusal(
            RefusalKind.FORBIDDEN,
            "forbidden",
            f"{caller.name} has the role {caller.role}; {what} takes {role}.",
        )
    return caller


def _check_csrf(session: Session, given: str | None) -> None:
    if not sessions.csrf_matches(session.csrf, given):
        raise Refusal(
            RefusalKind.FORBIDDEN,
            "csrf_refused",
            "The form is out of date or did not come from this screen; reload the page and "
            "send it again.",
        )


async def _form(request: Request, session: Session) -> dict[str, str]:
    """The posted form's fields, once its CSRF token is the session's."""
    form = {k: v for k, v in (await request.form()).items() if isinstance(v, str)}
    _check_csrf(session, form.get(sessions.CSRF_FIELD) or request.headers.get(sessions.CSRF_HEADER))
    return form


def _back(path: str, **query: Any) -> RedirectResponse:
    given = {k: v for k, v in query.items() if v is not None}
    return RedirectResponse(f"{path}?{urlencode(given)}" if given else path, status_code=303)


def _safe_next(next_path: str | None) -> str:
    """Where to go after signing in: a page of the screen, never another site."""
    if next_path and next_path.startswith("/app/") and not next_path.startswith("//"):
        return next_path
    return "/app/"


# Sign-in and sign-out


@router.get("")
async def app_root() -> RedirectResponse:
    return RedirectResponse("/app/", status_code=307)


@router.get("/signin")
async def signin_page(request: Request, settings: SettingsDep, next: str = "/app/") -> Response:
    return _signin(request, settings, next, None, 200)


def _signin(
    request: Request, settings: Settings, next_path: str, error: str | None, status: int
) -> Response:
    nonce = sessions.new_token()
    response = page_response(
        request,
        "signin.html.j2",
        None,
        status_code=status,
        next=_safe_next(next_path),
        signin_csrf=nonce,
        error=error,
        open_deployment=not settings.tokens,
    )
    response.set_cookie(
        sessions.SIGNIN_COOKIE,
        nonce,
        max_age=3600,
        path="/app/",
        httponly=True,
        samesite="strict",
        secure=_secure(settings),
    )
    return response


def _secure(settings: Settings) -> bool:
    return bool(settings.public_url and settings.public_url.startswith("https://"))


@router.post("/signin")
async def sign_in(request: Request, settings: SettingsDep) -> Response:
    form = {k: v for k, v in (await request.form()).items() if isinstance(v, str)}
    next_path = _safe_next(form.get("next"))
    if not sessions.csrf_matches(request.cookies.get(sessions.SIGNIN_COOKIE), form.get("csrf")):
        return _signin(request, settings, next_path, "The sign-in form expired; try again.", 403)
    caller = identify(settings, form.get("token") or None)
    if caller is None:
        return _signin(request, settings, next_path, "That token is not known here.", 401)
    io = _io(request)
    session_id, _ = await sessions.open_session(io.jobs.state, caller, settings.session_ttl_s)
    response = RedirectResponse(next_path, status_code=303)
    response.set_cookie(
        sessions.COOKIE,
        session_id,
        max_age=int(settings.session_ttl_s),
        path="/",
        httponly=True,
        samesite="strict",
        secure=_secure(settings),
    )
    response.delete_cookie(sessions.SIGNIN_COOKIE, path="/app/")
    return response


@router.post("/signout")
async def sign_out(request: Request, session: Person, io: Io) -> Response:
    await _form(request, session)
    await sessions.close_session(io.jobs.state, request.cookies.get(sessions.COOKIE))
    response = RedirectResponse("/app/signin", status_code=303)
    response.delete_cookie(sessions.COOKIE, path="/")
    return response


# Jobs


@router.get("/")
async def jobs_page(request: Request, session: Person, io: Io) -> Response:
    lines = await pages.recent_jobs(io)
    return page_response(request, "jobs.html.j2", session, lines=lines)


@router.get("/jobs-table")
async def jobs_table(request: Request, session: Person, io: Io) -> Response:
    lines = await pages.recent_jobs(io)
    return page_response(request, "_jobs_table.html.j2", session, lines=lines)


@router.post("/upload")
async def upload(request: Request, session: Person, io: Io, settings: SettingsDep) -> Response:
    caller = _may(session, "submitter", "uploading")
    with tempfile.TemporaryDirectory(prefix="sheetflow-upload-") as tmp:
        received = await receive_upload(
            request, Path(tmp) / "source.pdf", max_bytes=settings.max_upload_mb * 1024 * 1024
        )
        _check_csrf(
            session,
            received.fields.get(sessions.CSRF_FIELD) or request.headers.get(sessions.CSRF_HEADER),
        )
        received.options = pages.upload_options(received.fields)
        job = await usecases.accept_upload(io, received, submitted_by=caller.name)
    return _back(f"/app/jobs/{job.job_id}")


# A set


@router.get("/jobs/{job_id}")
async def job_page(request: Request, job_id: str, session: Person, io: Io) -> Response:
    status = await usecases.job_status(io, job_id)
    report = await pages.finished_report(io, job_id)
    chosen = views.Filter.of(dict(request.query_params))
    rows = views.filtered(views.sheet_rows(report), chosen) if report else []
    template = "_sheets.html.j2" if request.headers.get("HX-Target") == "sheets" else None
    return page_response(
        request,
        template or "job.html.j2",
        session,
        status=status,
        report=report,
        rows=rows,
        chosen=chosen,
        sorts=views.SORTS,
        verdicts=views.VERDICTS,
        disciplines=views.disciplines(report) if report else [],
        may_cancel=status.status in ("accepted", "running")
        and (status.submitted_by == session.name or session.caller.may("admin"))
        and session.caller.may("submitter"),
    )


@router.get("/jobs/{job_id}/progress")
async def job_progress(request: Request, job_id: str, session: Person, io: Io) -> Response:
    status = await usecases.job_status(io, job_id)
    response = page_response(request, "_progress.html.j2", session, status=status)
    if status.status not in ("accepted", "running"):
        response.headers["HX-Refresh"] = "true"  # the finished set replaces the progress
    return response


@router.post("/jobs/{job_id}/cancel")
async def cancel(request: Request, job_id: str, session: Person, io: Io) -> Response:
    await _form(request, session)
    await usecases.cancel_job(io, job_id, _may(session, "submitter", "canceling"))
    return _back(f"/app/jobs/{job_id}")


# A sheet


@router.get("/jobs/{job_id}/pages/{page_number}")
async def sheet_page(
    request: Request,
    job_id: str,
    page_number: int,
    session: Person,
    io: Io,
    after: Annotated[int | None, Query(description="the report revision a form awaits")] = None,
) -> Response:
    found = await pages.sheet_page(io, job_id, page_number)
    before, following = views.neighbours(found.report, page_number)
    block = (
        views.title_block(found.page, found.verified.reading, found.layer)
        if found.verified and found.layer
        else None
    )
    return page_response(
        request,
        "sheet.html.j2",
        session,
        report=found.report,
        page=found.page,
        verdict=views.verdict(found.page),
        block=block,
        previous=before,
        next_page=following,
        pending=after is not None and found.report.revision < after,
        problem_states={p.number: p for p in found.page.review.problems}
        if found.page.review
        else {},
    )


@router.get("/jobs/{job_id}/pages/{page_number}/full.png")
async def full_image(job_id: str, page_number: int, session: Person, io: Io) -> Response:
    png = await downloads.full_render(io, job_id, page_number)
    return Response(png, media_type="image/png", headers={"Cache-Control": "private, max-age=3600"})


@router.post("/jobs/{job_id}/pages/{page_number}/sheet")
async def correct(
    request: Request, job_id: str, page_number: int, session: Person, io: Io
) -> Response:
    form = await _form(request, session)
    caller = _may(session, "reviewer", "correcting a sheet")
    found = await pages.sheet_page(io, job_id, page_number)
    changed = {
        f: form[f].strip()
        for f in SHEET_FIELDS
        if f in form and form[f].strip() != (getattr(found.page.sheet, f, None) or "")
    }
    try:
        fix = SheetFix.model_validate({**changed, "reason": form.get("reason", "")})
    except ValidationError as exc:
        raise _invalid(exc) from None
    await corrections.correct_sheet(io, caller, job_id, page_number, fix)
    return _back(request.url.path.rsplit("/", 1)[0], after=found.report.revision + 1)


@router.post("/jobs/{job_id}/pages/{page_number}/problems/{problem}")
async def decide_problem(
    request: Request, job_id: str, page_number: int, problem: int, session: Person, io: Io
) -> Response:
    form = await _form(request, session)
    caller = _may(session, "reviewer", "reviewing a problem")
    try:
        decision = ProblemDecision.model_validate(
            {"decision": form.get("decision"), "reason": form.get("reason", "")}
        )
    except ValidationError as exc:
        raise _invalid(exc) from None
    found = await pages.sheet_page(io, job_id, page_number)
    await corrections.review_problem(io, caller, job_id, page_number, problem, decision)
    path = f"/app/jobs/{job_id}/pages/{page_number}"
    return _back(path, after=found.report.revision + 1)


def _invalid(exc: ValidationError) -> Refusal:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first.get("loc", ()))
    message = first.get("msg", "invalid")
    if where == "reason":
        message = "say why in a few words (3 characters at least)"
    elif not where:
        message = "change at least one field"
    return Refusal(RefusalKind.INVALID, "invalid_form", f"{where or 'the form'}: {message}.")


# A project


@router.get("/projects")
async def projects_page(request: Request, session: Person, io: Io) -> Response:
    names = await pages.project_names(io)
    return page_response(request, "projects.html.j2", session, names=names)


@router.get("/projects/{project}")
async def project_page(request: Request, project: str, session: Person, io: Io) -> Response:
    register = await pages.register(io, project)
    current = await projects.project_sheets(io, project)
    return page_response(
        request,
        "project.html.j2",
        session,
        register=register,
        current=current,
        proposals=register.proposals,
        records=await projects.project_review(io, project),
        quote=quote,
    )


@router.post("/projects/{project}/proposals/{proposal_id}")
async def decide_proposal(
    request: Request, project: str, proposal_id: str, session: Person, io: Io
) -> Response:
    form = await _form(request, session)
    caller = _may(session, "reviewer", "deciding a proposal")
    try:
        verdict = projects.ProposalVerdict.model_validate(
            {"decision": form.get("decision"), "reason": form.get("reason", "")}
        )
    except ValidationError as exc:
        raise _invalid(exc) from None
    await projects.decide_proposal(io, caller, project, proposal_id, verdict)
    return _back(f"/app/projects/{project}", decided=proposal_id)


@router.get("/projects/{project}/sheets/{sheet}")
async def versions_page(
    request: Request, project: str, sheet: str, session: Person, io: Io
) -> Response:
    versions = await projects.sheet_versions(io, project, sheet)
    return page_response(
        request,
        "versions.html.j2",
        session,
        project=project,
        sheet=sheet,
        versions=versions,
        quote=quote,
    )


@router.get("/projects/{project}/sheets/{sheet}/versions/{version}/image.png")
async def version_image(
    project: str, sheet: str, version: int, session: Person, io: Io
) -> Response:
    png = await pages.version_image(io, project, sheet, version)
    return Response(png, media_type="image/png", headers={"Cache-Control": "private, max-age=3600"})


@router.get("/projects/{project}/sheets/{sheet}/change")
async def change_page(
    request: Request,
    project: str,
    sheet: str,
    session: Person,
    io: Io,
    before: Annotated[int, Query(alias="from", ge=1)],
    after: Annotated[int, Query(alias="to", ge=1)],
) -> Response:
    versions = await projects.sheet_versions(io, project, sheet)
    delta = await projects.sheet_delta_json(io, project, sheet, before, after)
    return page_response(
        request,
        "change.html.j2",
        session,
        project=project,
        sheet=sheet,
        versions=versions,
        before=versions[before - 1],
        after=versions[after - 1],
        delta=views.delta_rows(delta),
        regions=views.region_rows(delta),
        quote=quote,
    )
