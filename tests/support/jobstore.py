"""The job store (the JetStream key-value bucket) as a test sees it from outside the services:
what it holds under a key family, and the moment a key of a family first appears."""

import asyncio
from collections.abc import Awaitable, Callable

from shared.infra.jobs import KvStateStore
from shared.infra.settings import Settings
from tests.support.stack import nats_client


async def kv_keys(settings: Settings, prefix: str) -> dict[str, dict]:
    """Every document under ``{prefix}.`` now, by key (removed keys left out), read as the
    services read it: without a consumer."""
    async with nats_client(settings) as nc:
        kv = await nc.jetstream().key_value(settings.kv_bucket)
        return await KvStateStore(kv, nc, settings.kv_bucket).scan(f"{prefix}.")


def first_kv_key(
    prefix: str, besides: frozenset[str] = frozenset(), watching: asyncio.Event | None = None
) -> Callable[[Settings], Awaitable[None]]:
    """A wait that returns once a key under ``{prefix}.`` other than ``besides`` holds a
    document (at once if one does already); ``watching`` is set once the watch is on, so a
    caller can start what writes the key only then and see it the moment it is written."""

    async def seen(settings: Settings) -> None:
        async with nats_client(settings) as nc:
            kv = await nc.jetstream().key_value(settings.kv_bucket)
            watcher = await kv.watch(f"{prefix}.>")
            if watching is not None:
                watching.set()
            try:
                async for entry in watcher:
                    if entry is not None and entry.value and entry.key not in besides:
                        return
            finally:
                await watcher.stop()

    return seen
