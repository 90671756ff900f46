"""The ingest API: FastAPI behind uvicorn, publishing through the project's NATS broker."""

import contextlib
import logging
import math
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlencode

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi_offline import FastAPIOffline
from starlette.exceptions import HTTPException as StarletteHTTPException

from services.ingest.accesslog import CallerContext
from services.ingest.bootstrap import Running, started
from services.ingest.deadline import RequestDeadline
from services.ingest.framing import FramingGuard
from services.ingest.handlers import router
from services.ingest.refusals import Refusal, RefusalKind, unavailable
from services.ingest.screen import routes as screen
from services.ingest.screen.render import page_response
from services.ingest.screen.routes import SignInFirst
from shared.infra.settings import Settings

log = logging.getLogger("sheetflow.ingest")


# How the API answers each kind of refusal: the one place its statuses are chosen.
STATUS: dict[RefusalKind, int] = {
    RefusalKind.NOT_PDF: 415,
    RefusalKind.TOO_LARGE: 413,
    RefusalKind.MALFORMED: 400,
    RefusalKind.INVALID: 422,
    RefusalKind.UNAUTHORIZED: 401,
    RefusalKind.FORBIDDEN: 403,
    RefusalKind.NOT_FOUND: 404,
    RefusalKind.CONFLICT: 409,
    RefusalKind.UNAVAILABLE: 503,
    RefusalKind.NO_SPACE: 507,
}


SCREEN_STATIC = Path(__file__).parent / "screen" / "static"


def on_screen(request: Request) -> bool:
    return request.url.path == "/app" or request.url.path.startswith("/app/")


def screen_error(request: Request, status: int, error: str, detail: str) -> Response:
    """A refusal on the screen: a page saying what went wrong, with the API's code."""
    return page_response(
        request, "error.html.j2", None, status_code=status, error=error, detail=detail
    )


def error_body(status: int, error: str, detail: str) -> JSONResponse:
    return JSONResponse({"error": error, "detail": detail}, status_code=status)


def refusal_response(refusal: Refusal) -> JSONResponse:
    """A refusal as the API says it: its status, ``{"error", "detail"}``, and the headers
    that tell a client when to retry or how to authenticate."""
    response = error_body(STATUS[refusal.kind], refusal.error, refusal.detail)
    if refusal.retry_after_s is not None:
        response.headers["Retry-After"] = str(math.ceil(refusal.retry_after_s))
    if refusal.kind is RefusalKind.UNAUTHORIZED:
        response.headers["WWW-Authenticate"] = "Bearer"
    return response


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if not settings.tokens:
            log.warning("no API token is set: the API requires none (loopback only)")
        async with started(settings) as running:
            app.state.running = running
            yield

    # The docs pages' scripts and styles are served by the API itself, not from a CDN:
    # /docs works on a machine without internet.
    app = FastAPIOffline(
        title="sheetflow ingest",
        version="0.1.0",
        description="Upload PDF drawing sets; follow their jobs; fetch their reports.",
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.running = Running()  # answers 503 until the lifespan has connected it
    app.include_router(router)
    app.include_router(screen.router)
    app.mount("/app/static", StaticFiles(directory=SCREEN_STATIC), name="screen-static")
    app.add_middleware(CallerContext)
    app.add_middleware(
        RequestDeadline,
        timeout_s=settings.request_timeout_s,
        late=lambda: refusal_response(
            unavailable("NATS or S3 did not answer in time; retry shortly.")
        ),
    )
    app.add_middleware(FramingGuard)

    @app.exception_handler(Refusal)
    async def _refusal(request: Request, exc: Refusal) -> Response:
        if on_screen(request):
            return screen_error(request, STATUS[exc.kind], exc.error, exc.detail)
        return refusal_response(exc)

    @app.exception_handler(SignInFirst)
    async def _sign_in_first(request: Request, exc: SignInFirst) -> Response:
        if request.method != "GET" or request.headers.get("HX-Request"):
            detail = "Your session has ended; sign in again."
            return screen_error(request, 401, "signed_out", detail)
        return RedirectResponse(f"/app/signin?{urlencode({'next': exc.next_path})}", 303)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> Response:
        # The framework's own answers: no such route, a method it does not take.
        error = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        if on_screen(request):
            return screen_error(request, exc.status_code, error, "There is no such page.")
        return error_body(exc.status_code, error, str(exc.detail))

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> Response:
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()))
        detail = f"{where}: {first.get('msg', 'invalid input')}"
        if on_screen(request):
            return screen_error(request, 422, "invalid_request", detail)
        return refusal_response(Refusal(RefusalKind.INVALID, "invalid_request", detail))

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error")
        return error_body(
            500, "internal_error", "The server hit an unexpected error; it was logged."
        )

    return app
