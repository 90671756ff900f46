"""Webhooks' use cases: turn an event into one delivery per subscription that wants it
(recorded once, then queued), and attempt a delivery, recording the attempt and saying when
to try again. Delivery is at least once: a retry or replay carries the same idempotency key."""

import hashlib
import json
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import httpx

from services.webhooks.sender import Limits, Outcome, post
from services.webhooks.signing import SIGNATURE_HEADER, sign
from shared.contracts import subjects
from shared.contracts.interfaces import Bucket, Publisher
from shared.contracts.messages import DeliverWebhook
from shared.infra.jobs import now
from shared.infra.settings import Settings
from shared.infra.storage import Keys
from shared.infra.webhooks import Attempt, Delivery, find_delivery, find_subscription, subscriptions

USER_AGENT = "sheetflow-webhooks/0.1"


@dataclass(frozen=True)
class Collaborators:
    bucket: Bucket
    publisher: Publisher
    settings: Settings
    client: httpx.AsyncClient


@dataclass(frozen=True)
class StoredEvent:
    """An event as the stream holds it: its subject name, payload, and where it sits."""

    name: str
    data: dict[str, Any]
    sequence: int  # the stream's sequence: unique, and in publishing order
    msg_id: str  # its Nats-Msg-Id (empty when none)
    published_at: datetime


def delivery_id(subscription_id: str, event: StoredEvent) -> str:
    """The same for the same event and subscription however often the event is handled, so
    a redelivered event makes no second delivery; sorts in event order."""
    digest = hashlib.sha256(f"{subscription_id}|{event.msg_id}|{event.sequence}".encode())
    return f"{event.sequence:012d}-{digest.hexdigest()[:16]}"


async def fan_out(io: Collaborators, event: StoredEvent) -> list[str]:
    """Record and queue one delivery of ``event`` per subscription that wants it and existed
    when it was published; the deliveries' ids."""
    queued: list[str] = []
    for subscription in await subscriptions(io.bucket, io.settings):
        created = subscription.created_at
        if not subscription.wants(event.name) or (created and created > event.published_at):
            continue
        did = delivery_id(subscription.id, event)
        key = Keys.delivery(subscription.id, did)
        if not await io.bucket.exists(key):
            body = {
                "event": event.name,
                "delivery_id": did,
                "occurred_at": event.published_at.isoformat(),
                "data": event.data,
            }
            delivery = Delivery(
                delivery_id=did,
                subscription_id=subscription.id,
                event=event.name,
                body=json.dumps(body, separators=(",", ":")),
                created_at=now(),
                round_started_at=now(),
            )
            await io.bucket.put_json(key, delivery)
        command = DeliverWebhook(subscription_id=subscription.id, delivery_id=did, round=1)
        await io.publisher.publish(subjects.WEBHOOK_DELIVER, command, dedup_id=f"{did}.1")
        queued.append(did)
    return queued


def backoff_s(settings: Settings, attempt: int) -> float:
    return min(settings.webhook_backoff_s * 2 ** (attempt - 1), settings.webhook_backoff_max_s)


async def deliver(io: Collaborators, command: DeliverWebhook) -> float | None:
    """Attempt the delivery once; the seconds to wait before the next attempt, or None when
    it is settled (delivered, failed for good, or nothing left to do)."""
    delivery = await find_delivery(io.bucket, command.subscription_id, command.delivery_id)
    if delivery is None or command.round < delivery.round:
        return None
    if command.round > delivery.round:  # a replay: a new round of attempts, its own deadline
        delivery = delivery.model_copy(
            update={"round": command.round, "round_started_at": now(), "state": "pending"}
        )
    elif delivery.state != "pending":
        return None  # a duplicate command for a settled round
    subscription = await find_subscription(io.bucket, io.settings, delivery.subscription_id)
    attempt = 1 + sum(a.round == delivery.round for a in delivery.attempts)
    if subscription is None:
        outcome = Outcome(None, 0.0, "the subscription no longer exists", final=True)
    else:
        timestamp = int(time.time())
        body = delivery.body.encode()
        headers = {
            "Content-Type": "application/json",
            "User-Agent": USER_AGENT,
            "Sheetflow-Event": delivery.event,
            "Sheetflow-Delivery": delivery.delivery_id,
            "Sheetflow-Attempt": str(attempt),
            "Idempotency-Key": delivery.delivery_id,
            SIGNATURE_HEADER: sign(subscription.secret, body, timestamp),
        }
        limits = Limits(
            allow_networks=io.settings.webhook_allow_networks,
            timeout_s=io.settings.webhook_timeout_s,
            max_response_bytes=io.settings.webhook_max_response_bytes,
        )
        outcome = await post(io.client, subscription.url, body, headers, limits)
    wait = backoff_s(io.settings, attempt)
    deadline = delivery.round_started_at + timedelta(seconds=io.settings.webhook_retry_for_s)
    if outcome.error is None:
        state = "delivered"
    elif outcome.final or now() + timedelta(seconds=wait) > deadline:
        state = "failed"
    else:
        state = "pending"
    record = Attempt(
        attempt=attempt,
        round=delivery.round,
        at=now(),
        status_code=outcome.status_code,
        latency_ms=outcome.latency_ms,
        error=outcome.error,
    )
    settled = delivery.model_copy(update={"state": state, "attempts": [*delivery.attempts, record]})
    await io.bucket.put_json(Keys.delivery(delivery.subscription_id, delivery.delivery_id), settled)
    return wait if state == "pending" else None
