"""Webhook subscriptions and deliveries, as ingest's API manages and reads them and the
webhooks service works them: the records kept in the bucket, and which targets may be called.

A subscription comes from the settings (``SHEETFLOW_WEBHOOKS``, id ``settings-{name}``) or
from the API (``webhooks/subscriptions/{id}.json``). A delivery is one event for one
subscription (``webhooks/deliveries/{subscription}/{delivery}.json``): its body as sent, its
state and every attempt; the webhooks service is its one writer.
"""

import asyncio
import ipaddress
from datetime import datetime
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, Field

from shared.contracts import subjects
from shared.contracts.interfaces import Bucket, ObjectMissing
from shared.contracts.subjects import Subject
from shared.infra.settings import Settings
from shared.infra.storage import Keys

# The events a webhook may ask for, by subject (a name relative to the namespace). Any
# event's: each is forwarded as it was published.
EVENTS: tuple[Subject[Any], ...] = (
    subjects.REPORT_READY,
    subjects.SHEET_CORRECTED,
    subjects.PROBLEM_REVIEWED,
    subjects.SHEET_REVISED,
    subjects.REGISTER_UPDATED,
    subjects.PROPOSAL_DECIDED,
)
SETTINGS_PREFIX = "settings-"

DeliveryState = Literal["pending", "delivered", "failed"]


class Subscription(BaseModel):
    id: str = Field(examples=["wh_5d41402abc4b2a76"])
    url: str = Field(examples=["https://erp.example.com/hooks/sheetflow"])
    events: list[str] = Field(examples=[["report.ready", "sheet.corrected"]])
    secret: str = Field(description="the key deliveries are signed with")
    source: Literal["api", "settings"] = "api"
    created_by: str | None = Field(None, description="the token's name (API subscriptions)")
    created_at: datetime | None = None

    def wants(self, event: str) -> bool:
        return event in self.events


class Attempt(BaseModel):
    """One POST of a delivery to its target."""

    attempt: int = Field(description="the attempt's number within its round")
    round: int = Field(description="1, then one more for each replay")
    at: datetime
    status_code: int | None = Field(description="the target's answer; null when none came")
    latency_ms: float
    error: str | None = Field(description="why the attempt did not deliver; null when it did")


class Delivery(BaseModel):
    """One event for one subscription: its body as sent, where it stands, every attempt."""

    delivery_id: str = Field(
        description="also the Idempotency-Key header: the same on every attempt and replay"
    )
    subscription_id: str
    event: str = Field(examples=["report.ready"])
    body: str = Field(description="the JSON body POSTed (the signature covers it)")
    created_at: datetime
    state: DeliveryState = "pending"
    round: int = 1
    round_started_at: datetime
    attempts: list[Attempt] = []


async def subscriptions(bucket: Bucket, settings: Settings) -> list[Subscription]:
    """Every subscription: the settings' first, then the API's in id order."""
    fixed = [
        Subscription(
            id=f"{SETTINGS_PREFIX}{target.name}",
            url=target.url,
            events=target.events,
            secret=target.secret.get_secret_value(),
            source="settings",
        )
        for target in settings.webhooks
    ]
    keys = await bucket.list_keys(Keys.WEBHOOKS)
    made = await asyncio.gather(*(bucket.get_model(key, Subscription) for key in keys))
    return fixed + list(made)


async def find_subscription(
    bucket: Bucket, settings: Settings, subscription_id: str
) -> Subscription | None:
    if subscription_id.startswith(SETTINGS_PREFIX):
        fixed = await subscriptions(bucket, settings)
        return next((s for s in fixed if s.id == subscription_id), None)
    try:
        return await bucket.get_model(Keys.webhook(subscription_id), Subscription)
    except ObjectMissing:
        return None


async def find_delivery(bucket: Bucket, subscription_id: str, delivery_id: str) -> Delivery | None:
    try:
        return await bucket.get_model(Keys.delivery(subscription_id, delivery_id), Delivery)
    except ObjectMissing:
        return None


def _allowed(ip: ipaddress.IPv4Address | ipaddress.IPv6Address, allow: list[str]) -> bool:
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    if any(ip in ipaddress.ip_network(net, strict=False) for net in allow):
        return True
    return ip.is_global and not ip.is_multicast


async def resolve_target(url: str, allow: list[str]) -> tuple[list[str], str | None]:
    """The addresses ``url``'s host resolves to, and why it may not be called (None: it may).

    Only public addresses may be called, and those in ``allow`` (the
    ``SHEETFLOW_WEBHOOK_ALLOW_NETWORKS`` setting): a webhook must not become a way to reach
    the deployment's own network (its NATS, S3, cloud metadata). Every address the name
    resolves to is checked, and the caller connects to one of these, never resolving again
    (a name that answers public once and private the next time gains nothing)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return [], "the target must be an http(s) URL with a host"
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return [], "the target's port is not a number"
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(parts.hostname, port)
    except OSError as exc:
        return [], f"the target's host does not resolve ({exc.strerror or exc})"
    addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
    refused = [a for a in addresses if not _allowed(ipaddress.ip_address(a), allow)]
    if refused or not addresses:
        return addresses, (
            f"the target resolves to {', '.join(refused) or 'nothing'}: not a public address "
            "nor in SHEETFLOW_WEBHOOK_ALLOW_NETWORKS"
        )
    return addresses, None
