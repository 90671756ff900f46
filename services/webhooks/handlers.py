"""Webhooks' subscribers: each event a webhook may want becomes deliveries; each delivery
command is one attempt, settled by when to try again (a nack with that delay: JetStream
keeps the delivery while this process is down, so a crash loses none). Both settle through
the house runner (``shared.infra.broker.run_delivery``) as deliveries of no page: a
failure (NATS or S3 trouble) is tried again after the house backoff."""

import dataclasses
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from faststream import Context
from faststream.nats.annotations import NatsMessage
from nats.js.api import DeliverPolicy

from services.webhooks.usecases import Collaborators, StoredEvent, deliver, fan_out
from shared.contracts import subjects
from shared.contracts.messages import DeliverWebhook
from shared.infra.broker import consumer_config, run_delivery
from shared.infra.service import COLLABORATORS, Subscriptions
from shared.infra.webhooks import EVENTS

# Seconds an attempt may take beyond the target's timeout (reading and writing its record).
ATTEMPT_MARGIN_S = 30.0

IoDep = Annotated[Collaborators, Context(COLLABORATORS)]


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

        await run_delivery(msg, settings=io.settings, work=work)

    return on_event


def register(subscriptions: Subscriptions) -> None:
    # Events from the first start of the service on (a durable consumer keeps its place
    # while the service is down); the stream's older history is not sent to anyone.
    from_now = dataclasses.replace(
        consumer_config(subscriptions.settings), deliver_policy=DeliverPolicy.NEW
    )
    for subject in EVENTS:
        durable = f"webhooks-{subject.replace('.', '-')}"
        subscriptions.page_subscriber(subject, durable=durable, concurrency=2, config=from_now)(
            # The event as it was published (its JSON), not as this version's model reads it.
            event_handler(str(subject))
        )

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
        await run_delivery(msg, settings=io.settings, work=lambda: deliver(io, command))
