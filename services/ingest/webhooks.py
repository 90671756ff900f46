"""Ingest's webhook use cases (an admin's): subscribe a target, list and remove
subscriptions, read a subscription's delivery log, replay a delivery. The webhooks service
does the delivering."""

import secrets

from pydantic import BaseModel, Field

from services.ingest.refusals import Refusal, RefusalKind, not_found, refusing_outages
from services.ingest.roles import Caller
from services.ingest.usecases import Collaborators
from shared.contracts import subjects
from shared.contracts.messages import DeliverWebhook
from shared.infra.jobs import now
from shared.infra.storage import Keys
from shared.infra.webhooks import (
    EVENTS,
    SETTINGS_PREFIX,
    Delivery,
    Subscription,
    find_delivery,
    find_subscription,
    resolve_target,
    subscriptions,
)

DELIVERY_LOG_MAX = 500


class NewWebhook(BaseModel):
    url: str = Field(pattern=r"^https?://[^/?#]+", examples=["https://erp.example.com/hooks"])
    events: list[str] = Field(min_length=1, examples=[["report.ready", "sheet.corrected"]])
    secret: str | None = Field(
        None,
        min_length=16,
        description="the signing secret; when left out, one is made and returned once",
    )


class WebhookView(BaseModel):
    """A subscription as the API shows it: its secret only in the answer that created it."""

    id: str
    url: str
    events: list[str]
    source: str
    created_by: str | None
    created_at: str | None
    secret: str | None = Field(None, description="only in the answer to its creation")

    @classmethod
    def of(cls, subscription: Subscription, *, with_secret: bool = False) -> "WebhookView":
        return cls(
            id=subscription.id,
            url=subscription.url,
            events=subscription.events,
            source=subscription.source,
            created_by=subscription.created_by,
            created_at=subscription.created_at.isoformat() if subscription.created_at else None,
            secret=subscription.secret if with_secret else None,
        )


class DeliveryView(BaseModel):
    """A delivery in the log: where it stands and every attempt (its body is not repeated)."""

    delivery_id: str
    event: str
    state: str
    round: int
    created_at: str
    attempts: list[dict]

    @classmethod
    def of(cls, delivery: Delivery) -> "DeliveryView":
        return cls(
            delivery_id=delivery.delivery_id,
            event=delivery.event,
            state=delivery.state,
            round=delivery.round,
            created_at=delivery.created_at.isoformat(),
            attempts=[a.model_dump(mode="json") for a in delivery.attempts],
        )


class Replaying(BaseModel):
    delivery_id: str
    round: int = Field(description="the new round of attempts the replay starts")


def _invalid(error: str, detail: str) -> Refusal:
    return Refusal(RefusalKind.INVALID, error, detail)


@refusing_outages
async def create_webhook(io: Collaborators, caller: Caller, new: NewWebhook) -> WebhookView:
    unknown = sorted(set(new.events) - set(EVENTS))
    if unknown:
        raise _invalid(
            "unknown_event",
            f"No such event: {', '.join(unknown)}; choose from {', '.join(EVENTS)}.",
        )
    _, refused = await resolve_target(new.url, io.settings.webhook_allow_networks)
    if refused:
        raise _invalid("target_not_allowed", f"The target is refused: {refused}.")
    subscription = Subscription(
        id=f"wh_{secrets.token_hex(8)}",
        url=new.url,
        events=list(dict.fromkeys(new.events)),
        secret=new.secret or f"whsec_{secrets.token_urlsafe(32)}",
        created_by=caller.name,
        created_at=now(),
    )
    await io.bucket.put_json(Keys.webhook(subscription.id), subscription)
    return WebhookView.of(subscription, with_secret=True)


@refusing_outages
async def list_webhooks(io: Collaborators) -> list[WebhookView]:
    return [WebhookView.of(s) for s in await subscriptions(io.bucket, io.settings)]


async def _subscription(io: Collaborators, subscription_id: str) -> Subscription:
    found = await find_subscription(io.bucket, io.settings, subscription_id)
    if found is None:
        raise not_found("No webhook has that id.")
    return found


@refusing_outages
async def delete_webhook(io: Collaborators, subscription_id: str) -> None:
    subscription = await _subscription(io, subscription_id)
    if subscription.id.startswith(SETTINGS_PREFIX):
        raise Refusal(
            RefusalKind.CONFLICT,
            "fixed_by_settings",
            "This webhook comes from SHEETFLOW_WEBHOOKS; change the settings to remove it.",
        )
    await io.bucket.delete_prefix(Keys.webhook(subscription.id))


@refusing_outages
async def delivery_log(io: Collaborators, subscription_id: str, limit: int) -> list[DeliveryView]:
    """The subscription's latest ``limit`` deliveries, newest first."""
    subscription = await _subscription(io, subscription_id)
    keys = await io.bucket.list_keys(Keys.deliveries(subscription.id))
    latest = sorted(keys, reverse=True)[: min(limit, DELIVERY_LOG_MAX)]
    return [DeliveryView.of(await io.bucket.get_model(k, Delivery)) for k in latest]


@refusing_outages
async def replay(io: Collaborators, subscription_id: str, delivery_id: str) -> Replaying:
    """Send a delivery again, as a new round of attempts with the same idempotency key."""
    subscription = await _subscription(io, subscription_id)
    delivery = await find_delivery(io.bucket, subscription.id, delivery_id)
    if delivery is None:
        raise not_found("The webhook has no delivery with that id.")
    round_ = delivery.round + 1
    command = DeliverWebhook(subscription_id=subscription.id, delivery_id=delivery_id, round=round_)
    await io.publisher.publish(
        subjects.WEBHOOK_DELIVER, command, dedup_id=f"{delivery_id}.{round_}"
    )
    return Replaying(delivery_id=delivery_id, round=round_)
