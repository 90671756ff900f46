"""Webhooks' subscribers: each event a webhook may want becomes deliveries; each delivery
command is one attempt, settled by when to try again (a nack with that delay: JetStream
keeps the delivery while this process is down, so a crash loses none)."""

import dataclasses
import logging
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from faststream import Context
from faststream.nats.annotations import NatsMessage
from nats.js.api import DeliverPolicy

from services.webhooks.usecases import Collaborators, StoredEvent, deliver, fan_out
from shared.contracts import subjects
from shared.contracts.messages import DeliverWebhook
from shared.infra.broker import consumer_config, describe
from shared.infra.service import COLLABORATORS, Subscriptions
from shared.infra.webhooks import EVENTS

log = logging.getLogger("sheetflow.webhooks")

# Seconds an attempt may take beyond the target's timeout (reading and writing its record).
ATTEMPT_MARGIN_S = 30.0

IoDep = Annotated[Collaborators, Context(COLLABORATORS)]


async def settle(
    msg: NatsMessage, io: Collaborators, work: Callable[[], Awaitable[float | None]]
) -> None:
    """Ack when ``work`` settled the message, nack with its delay when it asks for another
    try; NATS or S3 trouble is retried after the house backoff."""
    try:
        retry_in = await work()
    except Exception as exc:
        log.warning("webhook work failed, retrying: %s", describe(exc))
        await msg.nack(delay=io.settings.retry_backoff_s)
        return
    if retry_in is None:
        await msg.ack()
    else:
        await msg.nack(delay=retry_in)


def stored_event(name: str, data: dict[str, Any], msg: NatsMessage) -> StoredEvent:
    metadata = msg.raw_message.metadata
    return StoredEvent(
        name=name,
        data=data,
        sequence=metadata.sequence.stream,
        msg_id=(msg.headers or {}).get("Nats-Msg-Id", ""),
        published_at=metadata.timestamp,
    )


def event_handler(name: str) -> Callable[..., Awaitable[None]]:
    """The handler of the events published on ``name``: each becomes its deliveries."""

    async def on_event(data: dict[str, Any], msg: NatsMessage, io: IoDep) -> None:
        event = stored_event(name, data, msg)

        async def work() -> None:
            await fan_out(io, event)

        await settle(msg, io, work)

    return on_event


def register(subscriptions: Subscriptions) -> None:
    # Events from the first start of the service on (a durable consumer keeps its place
    # while the service is down); the stream's older history is not sent to anyone.
    from_now = dataclasses.replace(
        consumer_config(subscriptions.settings), deliver_policy=DeliverPolicy.NEW
    )
    for name in EVENTS:
        durable = f"webhooks-{name.replace('.', '-')}"
        subscribe = subscriptions.page_subscriber(
            name, durable=durable, concurrency=2, config=from_now
        )
        subscribe(event_handler(name))

    # An attempt is held no longer than the target's timeout (and two small writes): the
    # command must not come back to a second loop while the first still waits on the target.
    settings = subscriptions.settings
    attempt_wait = dataclasses.replace(
        consumer_config(settings),
        ack_wait=max(settings.ack_wait_s, settings.webhook_timeout_s + ATTEMPT_MARGIN_S),
    )

    @subscriptions.page_subscriber(
        subjects.WEBHOOK_DELIVER, durable="webhooks", concurrency=8, config=attempt_wait
    )
    async def on_deliver(command: DeliverWebhook, msg: NatsMessage, io: IoDep) -> None:
        await settle(msg, io, lambda: deliver(io, command))
