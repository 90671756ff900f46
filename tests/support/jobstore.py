"""The job store (the JetStream key-value bucket) as a test sees it from outside the services:
what it holds under a key family, and the moment a key of a family first appears."""

import json
from collections.abc import Awaitable, Callable

from shared.infra.settings import Settings
from tests.support.stack import nats_client


async def kv_keys(settings: Settings, prefix: str) -> dict[str, dict]:
    """Every document under ``{prefix}.`` now, by key (removed keys left out)."""
    async with nats_client(settings) as nc:
        kv = await nc.jetstream().key_value(settings.kv_bucket)
        watcher = await kv.watch(f"{prefix}.>")
        found: dict[str, dict] = {}
        async for entry in watcher:
            if entry is None:
                break
            if entry.value:
                found[entry.key] = json.loads(entry.value)
        await watcher.stop()
        return found


def first_kv_key(prefix: str) -> Callable[[Settings], Awaitable[None]]:
    """A wait that returns once a key under ``{prefix}.`` holds a document (at once if one
    does already)."""

    async def seen(settings: Settings) -> None:
        async with nats_client(settings) as nc:
            kv = await nc.jetstream().key_value(settings.kv_bucket)
            watcher = await kv.watch(f"{prefix}.>")
            async for entry in watcher:
                if entry is not None and entry.value:
                    return

    return seen
