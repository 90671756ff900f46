"""Webhooks' use cases with the in-memory bucket and publisher and an in-process HTTP
target (httpx's mock transport): an event becomes one delivery per subscription that wants
it, once; an attempt is signed as the README says, carries one idempotency key, and is
retried, failed or settled as its answer says; targets are checked before any call."""

import asyncio
import json
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from services.webhooks.sender import Limits, post
from services.webhooks.usecases import Collaborators, StoredEvent, deliver, fan_out
from shared.contracts import subjects
from shared.infra.jobs import now
from shared.infra.settings import Settings, WebhookTarget
from shared.infra.storage import Keys
from shared.infra.webhooks import Delivery, Subscription, resolve_target
from tests.support.fakes import MemoryBucket, RecordingPublisher
from tests.support.webhook_receiver import verify_signature as verify

SECRET = "whsec_test_0123456789abcdef"
LOOPBACK = ["127.0.0.0/8"]


def collaborators(answer, **settings) -> tuple[Collaborators, list[httpx.Request]]:
    seen: list[httpx.Request] = []

    async def target(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return await answer(request) if asyncio.iscoroutinefunction(answer) else answer(request)

    target_settings: dict[str, Any] = {
        "webhooks": [
            WebhookTarget(
                name="erp",
                url="http://127.0.0.1:9/hook",
                events=["report.ready"],
                secret=SecretStr(SECRET),
            )
        ],
        "webhook_allow_networks": LOOPBACK,
        "webhook_backoff_s": 1.0,
        "webhook_retry_for_s": 60.0,
        "webhook_timeout_s": 0.5,
    }
    configured = Settings(_env_file=None, **(target_settings | settings))
    client = httpx.AsyncClient(transport=httpx.MockTransport(target), follow_redirects=False)
    return Collaborators(MemoryBucket(), RecordingPublisher(), configured, client), seen


def event(sequence: int = 7, at: datetime | None = None) -> StoredEvent:
    return StoredEvent(
        name="report.ready",
        data={"job_id": "j_1", "status": "complete"},
        sequence=sequence,
        msg_id="report.ready:j_1.1",
        published_at=at or now(),
    )


async def test_an_event_becomes_one_delivery_per_wanting_subscription_once():
    """A subscription that wants the event gets a delivery, recorded and queued; handling
    the event again makes no second one; a subscription made after the event gets none."""
    io, _ = collaborators(lambda r: httpx.Response(200))
    later = Subscription(
        id="wh_later",
        url="http://127.0.0.1:9/",
        events=["report.ready"],
        secret="x" * 16,
        created_at=now() + timedelta(minutes=1),
    )
    await io.bucket.put_json(Keys.webhook(later.id), later)
    first = await fan_out(io, event())
    again = await fan_out(io, event())
    assert first == again and len(first) == 1
    delivery = await io.bucket.get_model(Keys.delivery("settings-erp", first[0]), Delivery)
    body = json.loads(delivery.body)
    assert body["event"] == "report.ready" and body["data"]["job_id"] == "j_1"
    assert body["delivery_id"] == first[0]
    commands = io.publisher.on(subjects.WEBHOOK_DELIVER)  # type: ignore[attr-defined]
    assert [c.delivery_id for c in commands] == first  # de-duplicated by its id


async def test_a_delivery_is_signed_and_keyed_and_retried_after_a_500():
    """Each attempt is signed over timestamp.body and carries the delivery id as its
    idempotency key; a 500 asks for another try after the backoff, which doubles; a 200
    settles it; the log keeps every attempt."""
    answers = iter([500, 500, 200])
    io, seen = collaborators(lambda r: httpx.Response(next(answers)))
    [did] = await fan_out(io, event())
    [command] = io.publisher.on(subjects.WEBHOOK_DELIVER)  # type: ignore[attr-defined]
    assert await deliver(io, command) == 1.0
    assert await deliver(io, command) == 2.0
    assert await deliver(io, command) is None
    assert await deliver(io, command) is None  # settled: a duplicate command sends nothing
    assert len(seen) == 3
    for request in seen:
        assert verify(SECRET, request.content, request.headers["Sheetflow-Signature"])
        assert request.headers["Idempotency-Key"] == did
        assert request.headers["Sheetflow-Event"] == "report.ready"
        assert request.headers["Host"] == "127.0.0.1:9"
    assert not verify("wrong-secret", seen[0].content, seen[0].headers["Sheetflow-Signature"])
    log = await io.bucket.get_model(Keys.delivery("settings-erp", did), Delivery)
    assert log.state == "delivered"
    assert [(a.attempt, a.status_code) for a in log.attempts] == [(1, 500), (2, 500), (3, 200)]
    assert log.attempts[0].error == "answered 500" and log.attempts[2].error is None


async def test_a_redirect_is_not_followed_and_fails_the_delivery_at_once():
    """A 3xx is not followed: the delivery fails without retrying."""
    io, seen = collaborators(
        lambda r: httpx.Response(302, headers={"Location": "http://10.0.0.1/"})
    )
    [did] = await fan_out(io, event())
    [command] = io.publisher.on(subjects.WEBHOOK_DELIVER)  # type: ignore[attr-defined]
    assert await deliver(io, command) is None
    log = await io.bucket.get_model(Keys.delivery("settings-erp", did), Delivery)
    assert log.state == "failed" and "redirect (302) not followed" in (log.attempts[0].error or "")
    assert len(seen) == 1


async def test_a_delivery_is_failed_once_its_retry_time_is_spent_and_a_replay_restarts_it():
    """Past SHEETFLOW_WEBHOOK_RETRY_FOR_S the delivery is marked failed; a replay starts a
    new round with the same idempotency key."""
    io, seen = collaborators(lambda r: httpx.Response(503), webhook_retry_for_s=1.5)
    [did] = await fan_out(io, event())
    [command] = io.publisher.on(subjects.WEBHOOK_DELIVER)  # type: ignore[attr-defined]
    assert await deliver(io, command) == 1.0
    assert await deliver(io, command) is None  # the next wait (2s) would pass the deadline
    log = await io.bucket.get_model(Keys.delivery("settings-erp", did), Delivery)
    assert log.state == "failed" and len(log.attempts) == 2
    replay = command.model_copy(update={"round": 2})
    assert await deliver(io, replay) == 1.0
    log = await io.bucket.get_model(Keys.delivery("settings-erp", did), Delivery)
    assert (log.round, log.state, log.attempts[-1].round, log.attempts[-1].attempt) == (
        2,
        "pending",
        2,
        1,
    )
    assert {r.headers["Idempotency-Key"] for r in seen} == {did}


async def test_a_slow_target_is_cut_off_by_the_timeout():
    """A target that does not answer within the timeout is an attempt that failed."""

    async def slow(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(5)
        return httpx.Response(200)

    client = httpx.AsyncClient(transport=httpx.MockTransport(slow))
    started = time.monotonic()
    outcome = await post(client, "http://127.0.0.1:9/", b"{}", {}, Limits(LOOPBACK, 0.3, 64))
    assert time.monotonic() - started < 2
    assert outcome.error == "no answer within 0.3s" and not outcome.final


async def test_no_more_of_an_answer_is_read_than_the_cap():
    """An endless answer is read to the cap and no further."""
    produced = []

    async def endless():
        while True:
            produced.append(1)
            yield b"x" * 1024

    client = httpx.AsyncClient(
        transport=httpx.MockTransport(lambda r: httpx.Response(200, content=endless()))
    )
    outcome = await post(client, "http://127.0.0.1:9/", b"{}", {}, Limits(LOOPBACK, 5, 4096))
    assert outcome.error is None and outcome.status_code == 200
    assert len(produced) <= 5


@pytest.mark.parametrize(
    ("url", "allow", "refused"),
    [
        ("http://127.0.0.1:8000/h", [], True),
        ("http://localhost/h", [], True),
        ("http://10.1.2.3/h", [], True),
        ("http://169.254.169.254/latest", [], True),
        ("http://[::1]/h", [], True),
        ("http://[::ffff:10.0.0.1]/h", [], True),
        ("http://127.0.0.1:8000/h", LOOPBACK, False),
        ("http://10.1.2.3/h", ["10.0.0.0/8"], False),
        ("https://93.184.216.34/h", [], False),
        ("ftp://93.184.216.34/h", [], True),
    ],
)
async def test_targets_are_public_addresses_or_allowed_networks(url, allow, refused):
    """Private, loopback and link-local addresses are refused unless allowed by network."""
    _, reason = await resolve_target(url, allow)
    assert (reason is not None) == refused, reason


async def test_a_refused_target_fails_the_delivery_without_a_call():
    """A settings subscription to a private address is never called; its delivery fails."""
    io, seen = collaborators(lambda r: httpx.Response(200), webhook_allow_networks=[])
    [did] = await fan_out(io, event(at=datetime.now(UTC)))
    [command] = io.publisher.on(subjects.WEBHOOK_DELIVER)  # type: ignore[attr-defined]
    assert await deliver(io, command) is None
    log = await io.bucket.get_model(Keys.delivery("settings-erp", did), Delivery)
    assert log.state == "failed" and "target refused" in (log.attempts[0].error or "")
    assert seen == []
