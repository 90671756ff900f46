"""Access log lines without query strings (a token or other secret sent in a URL must never
reach a log file), naming the API token that made the request by its name, never its value."""

import contextvars
import copy
import logging
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.config import LOGGING_CONFIG

PATH_ARG = 2  # uvicorn logs (client, method, path with query, http version, status)
NO_TOKEN = "-"

# One holder per request, set before the app runs: the auth check fills it in wherever it
# runs (a child task or thread copies the context, so it shares the same holder), and
# uvicorn's access line, written while the response starts, reads it.
_caller: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar(
    "sheetflow_caller", default=None
)


def record_caller(name: str) -> None:
    """Name the token of the request being served, for its access log line."""
    holder = _caller.get()
    if holder is not None:
        holder["name"] = name


class CallerContext:
    """ASGI middleware giving each request the holder its caller's name is kept in."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        token = _caller.set({})
        try:
            await self.app(scope, receive, send)
        finally:
            _caller.reset(token)


class DropQueryStrings(logging.Filter):
    """Drops the query string from the access line's path, and gives the line the name of
    the token that made the request (``-``: none, or none that matched)."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        path = args[PATH_ARG] if isinstance(args, tuple) and len(args) > PATH_ARG else None
        if isinstance(args, tuple) and isinstance(path, str):
            record.args = (*args[:PATH_ARG], path.split("?", 1)[0], *args[PATH_ARG + 1 :])
        holder = _caller.get()
        record.token_name = (holder or {}).get("name", NO_TOKEN)
        return True


def log_config() -> dict[str, Any]:
    """uvicorn's own logging configuration with the access log's query strings dropped and
    the token's name added."""
    config = copy.deepcopy(LOGGING_CONFIG)
    config.setdefault("filters", {})["drop_query_strings"] = {"()": DropQueryStrings}
    config["handlers"]["access"]["filters"] = ["drop_query_strings"]
    access = config["formatters"]["access"]
    access["fmt"] = f"{access['fmt']} token=%(token_name)s"
    return config
