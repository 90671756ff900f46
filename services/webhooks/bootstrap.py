"""Webhooks' composition root: the bucket, the publisher and one HTTP client (redirects never
followed, no proxy settings from the environment), built when the service starts and closed
when it stops."""

import contextlib
import logging
from collections.abc import AsyncIterator

import httpx

from services.webhooks.usecases import USER_AGENT, Collaborators
from shared.infra.service import Connections
from shared.infra.webhooks import EVENTS

log = logging.getLogger("sheetflow.webhooks")


@contextlib.asynccontextmanager
async def started(connections: Connections) -> AsyncIterator[Collaborators]:
    for target in connections.settings.webhooks:
        unknown = sorted(set(target.events) - set(EVENTS))
        if unknown:  # a typo would otherwise mean a webhook that silently never fires
            log.warning(
                "webhook %s wants events that do not exist: %s (known: %s)",
                target.name,
                ", ".join(unknown),
                ", ".join(EVENTS),
            )
    async with httpx.AsyncClient(
        follow_redirects=False,
        trust_env=False,
        timeout=connections.settings.webhook_timeout_s,
        headers={"User-Agent": USER_AGENT},
    ) as client:
        yield Collaborators(
            bucket=connections.bucket,
            publisher=connections.publisher,
            settings=connections.settings,
            client=client,
        )
