"""Coverage's composition root: what its use cases work with, built once when the service
starts. Unit tests call ``bootstrap`` with fakes; the service runs ``started``."""

import contextlib
from collections.abc import AsyncIterator

from services.coverage.store import LadderStore
from services.coverage.usecases import Collaborators
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
        ladders=LadderStore(state),
        publisher=publisher,
        settings=settings,
    )


@contextlib.asynccontextmanager
async def started(connections: Connections) -> AsyncIterator[Collaborators]:
    yield bootstrap(
        bucket=connections.bucket,
        state=connections.state,
        publisher=connections.publisher,
        settings=connections.settings,
    )
