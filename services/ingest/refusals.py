"""Why ingest refuses an upload or a request, in its own words: each refusal has a kind (what
is wrong), the code a client can branch on and a sentence a person can act on. The HTTP API
turns kinds into statuses in one table (``services.ingest.app``); ``sheetflow run`` prints
the sentence and the code."""

import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import ParamSpec, TypeVar

from shared.infra.broker import is_outage

P = ParamSpec("P")
T = TypeVar("T")

# What a refusal for want of NATS or S3 suggests by default: their restarts take seconds.
RETRY_AFTER_S = 10.0


class RefusalKind(StrEnum):
    NOT_PDF = "not_pdf"  # the content is not a PDF at all
    TOO_LARGE = "too_large"  # over the deployment's size limit
    MALFORMED = "malformed"  # the request itself is not what the API takes
    INVALID = "invalid"  # a well-formed request or PDF this deployment will not process
    UNAUTHORIZED = "unauthorized"  # no valid token, or a token where it must not be
    FORBIDDEN = "forbidden"  # a valid token whose role does not allow the request
    NOT_FOUND = "not_found"  # no such job, page or report (yet)
    CONFLICT = "conflict"  # the job is past what was asked (already finished)
    UNAVAILABLE = "unavailable"  # NATS, S3 or every inspector cannot serve it now
    NO_SPACE = "no_space"  # a disk that must hold the upload is full


@dataclass
class Refusal(Exception):
    kind: RefusalKind
    error: str  # the code a client sees, e.g. "encrypted_pdf"
    detail: str  # the sentence a person reads; it never names a server path
    retry_after_s: float | None = None  # when worth trying again (UNAVAILABLE)

    def __str__(self) -> str:
        return f"{self.detail} ({self.error})"


def unavailable(detail: str, *, retry_after_s: float = RETRY_AFTER_S) -> Refusal:
    """A refusal for now, saying when to try again."""
    return Refusal(RefusalKind.UNAVAILABLE, "unavailable", detail, retry_after_s)


def not_found(detail: str, error: str = "not_found") -> Refusal:
    return Refusal(RefusalKind.NOT_FOUND, error, detail)


def disk_full(where: str) -> Refusal:
    """A refusal naming a full disk: retrying will not help until space is freed."""
    return Refusal(
        RefusalKind.NO_SPACE,
        "disk_full",
        f"The disk {where} is full; nothing was kept. Free space there, then retry.",
        RETRY_AFTER_S,
    )


def refusing_outages(use_case: Callable[P, Awaitable[T]]) -> Callable[P, Awaitable[T]]:
    """``use_case`` with a NATS or S3 outage met on its way answered as a 503 refusal, not
    an internal error."""

    @functools.wraps(use_case)
    async def refusing(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return await use_case(*args, **kwargs)
        except Refusal:
            raise
        except Exception as exc:
            if is_outage(exc):
                raise unavailable("NATS or S3 is not reachable; retry shortly.") from exc
            raise

    return refusing
