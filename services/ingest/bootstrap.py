"""Ingest's composition root: what the API is made of, built once when it starts and closed
when it stops. Unit tests call ``bootstrap`` with fakes; the API runs ``started``."""

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass

from faststream.nats import NatsBroker

from services.ingest.downloads import ChildPdfWork, InlinePdfWork
from services.ingest.inspection import Inspectors
from services.ingest.usecases import Collaborators, Inspector, PdfWork, Servers
from shared.contracts.interfaces import Bucket, Publisher, StateStore
from shared.infra.broker import make_broker
from shared.infra.jobs import JobStore
from shared.infra.service import Connections, connect
from shared.infra.settings import Settings
from shared.infra.storage import ObjectStore

log = logging.getLogger("sheetflow.ingest")


def bootstrap(
    *,
    bucket: Bucket,
    state: StateStore,
    publisher: Publisher,
    settings: Settings,
    inspector: Inspector,
    servers: Servers,
    worker_id: str,
    pdf_work: PdfWork | None = None,
) -> Collaborators:
    return Collaborators(
        bucket=bucket,
        jobs=JobStore(state),
        publisher=publisher,
        settings=settings,
        inspector=inspector,
        servers=servers,
        worker_id=worker_id,
        pdf_work=pdf_work or InlinePdfWork(),
    )


@dataclass
class Running:
    """The running API's collaborators: None until NATS and S3 have answered once."""

    io: Collaborators | None = None


@contextlib.asynccontextmanager
async def started(settings: Settings) -> AsyncIterator[Running]:
    """The API's collaborators, connected in the background: the API must come up (and say
    503) even while NATS or S3 is still starting. The inspectors start at once, so the first
    upload does not wait for their imports."""
    # Every S3 call of the API has a client waiting on it: a stalled S3 is given up on in
    # time for the request to answer 503 (the background cleanup of a refused upload retries
    # on its own).
    wait = settings.request_timeout_s
    store = ObjectStore(settings, retry_for_s=wait / 2, read_timeout_s=wait)
    broker = make_broker(settings, "ingest")
    inspectors = Inspectors(settings)
    pdf_work = ChildPdfWork(settings)
    running = Running()

    async def connected() -> None:
        connections = await _connect_until_up(broker, store, settings)
        running.io = bootstrap(
            bucket=connections.bucket,
            state=connections.state,
            publisher=connections.publisher,
            settings=settings,
            inspector=inspectors,
            servers=connections,
            worker_id=connections.worker_id,
            pdf_work=pdf_work,
        )

    connecting = asyncio.create_task(connected())
    warming = asyncio.create_task(inspectors.warm())
    try:
        yield running
    finally:
        connecting.cancel()
        warming.cancel()
        inspectors.close()
        pdf_work.close()
        if running.io is not None:
            await broker.stop()


async def _connect_until_up(
    broker: NatsBroker, store: ObjectStore, settings: Settings
) -> Connections:
    delay = 0.5
    while True:
        try:
            return await connect(broker, store, settings, "ingest")
        except Exception as exc:
            log.warning("NATS/S3 not reachable yet (%s); retrying", type(exc).__name__)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 5.0)
