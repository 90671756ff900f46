"""Report's composition root: what its use cases work with, built once when the service
starts. Unit tests call ``bootstrap`` with fakes; the service runs ``started``."""

import asyncio
import contextlib
from collections.abc import AsyncIterator

from services.report.linking import LinkingPublisher
from services.report.store import CellWaits, TerminalPages
from services.report.usecases import Collaborators, supervise
from shared.contracts.interfaces import Bucket, Publisher, StateStore
from shared.infra.jobs import JobStore
from shared.infra.service import Connections
from shared.infra.settings import Settings


def bootstrap(
    *, bucket: Bucket, state: StateStore, publisher: Publisher, settings: Settings
) -> Collaborators:
    return Collaborators(
        bucket=bucket,
        jobs=JobStore(state),
        terminal=TerminalPages(state),
        cell_waits=CellWaits(state),
        publisher=LinkingPublisher(publisher, settings.public_url),
        settings=settings,
        finishing={},
    )


@contextlib.asynccontextmanager
async def started(connections: Connections) -> AsyncIterator[Collaborators]:
    """The collaborators, with the supervision of abandoned intakes and of reports waiting
    past their time for cells read again running beside them."""
    io = bootstrap(
        bucket=connections.bucket,
        state=connections.state,
        publisher=connections.publisher,
        settings=connections.settings,
    )
    supervising = asyncio.create_task(supervise(io))
    try:
        yield io
    finally:
        supervising.cancel()
