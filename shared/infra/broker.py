"""Broker, stream and consumer setup, event publishing, and the deliberate ack policy.

FastStream's default would terminate a message whose handler raised: that is a
lost page. Every handler settles its delivery through :func:`run_delivery`: a
page's stage acks on success, nacks with backoff on a failure worth retrying, and
on the last delivery turns the page into a named ``page.failed`` event; any other
delivery (a webhook's) is tried again until its work settles it.
"""

import asyncio
import contextlib
import logging
import os
import socket
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import nats.errors
import nats.js.errors
from faststream import BaseMiddleware
from faststream.nats import NatsBroker
from faststream.nats.security import (
    NatsCredentials,
    NatsNKey,
    NatsSecurity,
    NatsToken,
    NatsUserPassword,
)
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy
from pydantic import BaseModel, ValidationError

from shared.contracts import subjects
from shared.contracts.interfaces import Publisher
from shared.contracts.messages import PageFailed
from shared.contracts.subjects import Subject
from shared.infra.full_disk import DISK_FULL, is_disk_full
from shared.infra.settings import Settings
from shared.infra.storage import is_storage_outage
from shared.infra.tls import tls_context

log = logging.getLogger("sheetflow.broker")

E = TypeVar("E", bound=BaseModel)

DUPLICATE_WINDOW_S = 120.0


class RejectMalformed(BaseMiddleware):
    """A message that does not parse as its contract can never succeed: terminate it (and
    log it) instead of letting JetStream redeliver it forever. Everything after parsing is
    settled by ``run_delivery``."""

    async def consume_scope(self, call_next, msg):
        try:
            return await call_next(msg)
        except ValidationError as exc:
            subject = getattr(msg.raw_message, "subject", "?")
            log.error("terminated a malformed message on %s: %s", subject, exc.errors()[:3])
            await msg.reject()


class PageMessage(Protocol):
    """What settling a page's message takes of it (FastStream's ``NatsMessage``)."""

    @property
    def raw_message(self) -> Any: ...

    async def ack(self) -> None: ...

    async def nack(self, delay: float | None = None) -> None: ...

    async def in_progress(self) -> None: ...


class PageFailure(Exception):
    """A failure retrying cannot fix (unreadable page, refused input): dead-letter now."""


def worker_id(service: str) -> str:
    return f"{service}@{socket.gethostname()}:{os.getpid()}"


def _security(settings: Settings) -> NatsSecurity | None:
    ctx = tls_context(settings)
    if settings.nats_creds_file:
        return NatsCredentials(credentials=str(settings.nats_creds_file), ssl_context=ctx)
    if settings.nats_nkey_seed_file:
        return NatsNKey(seed_file=settings.nats_nkey_seed_file, ssl_context=ctx)
    if settings.nats_token:
        return NatsToken(token=settings.nats_token.get_secret_value(), ssl_context=ctx)
    if settings.nats_user:
        password = settings.nats_password.get_secret_value() if settings.nats_password else ""
        return NatsUserPassword(username=settings.nats_user, password=password, ssl_context=ctx)
    if ctx:
        return NatsSecurity(ssl_context=ctx, use_ssl=True)
    return None


class RepeatedStartFilter(logging.Filter):
    """Keeps one "`Handler` waiting for messages" line per handler: a consumer runs one pull
    loop per page in flight (``Subscriptions.page_subscriber``) and each would say so."""

    def __init__(self) -> None:
        super().__init__()
        self._seen: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if not message.endswith("waiting for messages"):
            return True
        if message in self._seen:
            return False
        self._seen.add(message)
        return True


def faststream_logger(name: str) -> logging.Logger:
    logger = logging.getLogger(f"sheetflow.{name}.faststream")
    if not any(isinstance(f, RepeatedStartFilter) for f in logger.filters):
        logger.addFilter(RepeatedStartFilter())
    return logger


def make_broker(settings: Settings, name: str) -> NatsBroker:
    if not settings.nats_url:
        raise ValueError("SHEETFLOW_NATS_URL is not set (run `sheetflow up` for an embedded one)")
    return NatsBroker(
        settings.nats_servers,
        name=f"sheetflow-{name}",
        security=_security(settings),
        max_reconnect_attempts=-1,  # ride out a NATS restart instead of dying
        reconnect_time_wait=1,
        connect_timeout=5,
        logger=faststream_logger(name),
        middlewares=[RejectMalformed],
    )


def consumer_config(settings: Settings, *, max_ack_pending: int = 1000) -> ConsumerConfig:
    # No server-side delivery cap: if a worker dies mid-page on its last delivery the page
    # must still come back once more, to be dead-lettered by run_delivery.
    return ConsumerConfig(
        ack_policy=AckPolicy.EXPLICIT,
        ack_wait=settings.ack_wait_s,
        max_deliver=-1,
        max_ack_pending=max_ack_pending,
        deliver_policy=DeliverPolicy.ALL,
    )


def msg_id(*parts: object) -> str:
    return ".".join(str(p) for p in parts)


@dataclass(frozen=True)
class NatsPublisher:
    """The publisher on the project's JetStream stream."""

    broker: NatsBroker
    settings: Settings

    async def publish(self, subject: Subject[E], event: E, *, dedup_id: str) -> None:
        """Publish ``event`` on the stream; ``dedup_id`` lets JetStream drop a
        re-publication."""
        await self.broker.publish(
            event,
            self.settings.subject(subject),
            headers={"Nats-Msg-Id": f"{subject}:{dedup_id}"},
            stream=self.settings.stream_name,
            timeout=10.0,
        )


def deliveries(msg: PageMessage) -> int:
    with contextlib.suppress(Exception):
        return int(msg.raw_message.metadata.num_delivered)
    return 1


def backoff_s(settings: Settings, delivery: int) -> float:
    return min(settings.retry_backoff_s * 2 ** (delivery - 1), settings.retry_backoff_max_s)


async def _keep_alive(
    msg: PageMessage, interval: float, heartbeat: Callable[[], Awaitable[None]] | None
) -> None:
    while True:
        await asyncio.sleep(interval)
        with contextlib.suppress(Exception):
            await msg.in_progress()
        if heartbeat is not None:
            with contextlib.suppress(Exception):
                await heartbeat()


def is_outage(exc: BaseException) -> bool:
    """NATS or S3 unreachable or failing server-side (as opposed to a problem with the page)."""
    if isinstance(exc, nats.js.errors.ServiceUnavailableError):
        return True
    if isinstance(exc, (nats.js.errors.APIError, nats.errors.MaxPayloadError)):
        return False  # the server answered; a message too large stays too large
    return isinstance(exc, (nats.errors.Error, asyncio.TimeoutError)) or is_storage_outage(exc)


def describe(exc: BaseException) -> str:
    """The error as a page's reason and the logs say it; a full disk is named first."""
    text = str(exc).strip() or "no detail"
    said = f"{type(exc).__name__}: {text}"
    return (f"{DISK_FULL} ({said})" if is_disk_full(exc) else said)[:500]


@dataclass(frozen=True)
class PageStage:
    """The page a delivery is one stage of: failed for good, it is published on
    ``page.failed`` by ``publisher``; ``heartbeat`` runs with each in-progress ack, so others
    can see the page is being worked on."""

    stage: str
    job_id: str
    page_number: int
    publisher: Publisher
    heartbeat: Callable[[], Awaitable[None]] | None = None


# What a delivery's work returns: None when it is settled, or the seconds after which it asks
# to be tried again (a webhook target that answered "later").
Work = Callable[[], Awaitable[float | None]]


async def run_delivery(
    msg: PageMessage,
    *,
    settings: Settings,
    work: Work,
    page: PageStage | None = None,
    give_up: str | None = None,
) -> None:
    """Run one delivery's ``work`` and settle the message by the house policy: acked when
    the work settled it, nacked with the delay it asked for. A failure of a ``page``'s stage
    is retried with backoff within the bounded deliveries (outages of NATS or S3 waited out
    while the message is kept in progress) and then dead-lettered as the page's
    ``page.failed``, at once for a ``PageFailure``. A failure of any other delivery is
    retried after the house backoff without bound (its work decides when it is done: a
    webhook's), or, given ``give_up`` (what the work does, for the log), with backoff within
    the bounded deliveries and then given up (a report rebuilt after a review: the next
    review rebuilds it with every record anyway)."""
    if page is not None:
        await _run_page_stage(msg, settings, page, work)
        return
    try:
        retry_in = await work()
    except Exception as exc:
        await _retry(msg, settings, exc, give_up)
        return
    await _settle(msg, retry_in)


async def _retry(msg: PageMessage, settings: Settings, exc: Exception, give_up: str | None) -> None:
    """A failed delivery of no page: tried again, or, past the bound, given up."""
    if give_up is None:
        log.warning("delivery failed, retrying: %s", describe(exc))
        await msg.nack(delay=settings.retry_backoff_s)
        return
    delivery = deliveries(msg)
    if delivery >= settings.max_deliver:
        log.error("gave up %s: %s", give_up, describe(exc))
        await msg.ack()
    else:
        await msg.nack(delay=backoff_s(settings, delivery))


async def _settle(msg: PageMessage, retry_in: float | None) -> None:
    if retry_in is None:
        await msg.ack()
    else:
        await msg.nack(delay=retry_in)


async def _run_page_stage(
    msg: PageMessage, settings: Settings, page: PageStage, work: Work
) -> None:
    stage, job_id, page_number = page.stage, page.job_id, page.page_number
    delivery = deliveries(msg)

    async def dead_letter(reason: str) -> None:
        failed = PageFailed(
            job_id=job_id, page_number=page_number, stage=stage, reason=reason, deliveries=delivery
        )
        await page.publisher.publish(
            subjects.PAGE_FAILED, failed, dedup_id=msg_id(job_id, page_number, stage)
        )
        log.warning("page %s/%s failed in %s: %s", job_id, page_number, stage, reason)

    if delivery > settings.max_deliver:
        await dead_letter(
            f"gave up after {delivery - 1} deliveries: earlier attempts never finished "
            "(the worker crashed or timed out)"
        )
        await msg.ack()
        return

    async def work_through_outages() -> float | None:
        # An outage of NATS or S3 is not the page's fault: wait it out while holding the
        # message (kept alive), instead of spending the page's bounded deliveries on it.
        deadline = time.monotonic() + settings.outage_patience_s
        attempt = 0
        while True:
            try:
                return await work()
            except Exception as exc:
                if not is_outage(exc) or time.monotonic() > deadline:
                    raise
                attempt += 1
                log.warning(
                    "%s page %s/%s waits out an outage: %s",
                    stage,
                    job_id,
                    page_number,
                    describe(exc),
                )
                await asyncio.sleep(backoff_s(settings, attempt))

    keep_alive = asyncio.create_task(
        _keep_alive(msg, settings.in_progress_interval_s, page.heartbeat)
    )
    try:
        retry_in = await work_through_outages()
    except PageFailure as exc:
        keep_alive.cancel()
        await dead_letter(str(exc))
        await msg.ack()
    except Exception as exc:
        keep_alive.cancel()
        if delivery >= settings.max_deliver:
            await dead_letter(f"{describe(exc)} (after {delivery} deliveries)")
            await msg.ack()
        else:
            delay = backoff_s(settings, delivery)
            log.warning(
                "%s page %s/%s delivery %s failed, retrying in %.1fs: %s",
                stage,
                job_id,
                page_number,
                delivery,
                delay,
                describe(exc),
            )
            await msg.nack(delay=delay)
    else:
        keep_alive.cancel()
        await _settle(msg, retry_in)
