"""The screen's pages rendered from its Jinja2 templates (autoescaped), with what every page
needs: who is signed in, their CSRF token, where they are."""

from datetime import datetime
from functools import cache
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment, PackageLoader, select_autoescape

from services.ingest.sessions import CSRF_FIELD, Session


@cache
def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("services.ingest.screen", "templates"),
        autoescape=select_autoescape(["html", "j2"], default=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["when"] = when
    return env


def when(moment: datetime | None) -> str:
    """A timestamp as a reviewer reads it (``2026-05-29 09:00 UTC``)."""
    return moment.strftime("%Y-%m-%d %H:%M %Z").strip() if moment else ""


def page_response(
    request: Request,
    template: str,
    session: Session | None,
    *,
    status_code: int = 200,
    **context: Any,
) -> HTMLResponse:
    html = (
        environment()
        .get_template(template)
        .render(
            session=session,
            me=session.caller if session else None,
            csrf=session.csrf if session else "",
            csrf_field=CSRF_FIELD,
            path=request.url.path,
            query=dict(request.query_params),
            **context,
        )
    )
    # A page of the screen is never cached by a proxy, nor framed by another site.
    headers = {"Cache-Control": "no-store", "X-Frame-Options": "DENY"}
    return HTMLResponse(html, status_code=status_code, headers=headers)
