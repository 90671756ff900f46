"""The webhooks service SIGKILLed while a delivery waits for its next attempt loses nothing:
the delivery command stays in JetStream, and the restarted service delivers it, under the
same idempotency key (one event, however many attempts)."""

import asyncio
import json
import time

import pytest
from pydantic import SecretStr

from shared.infra.settings import WebhookTarget
from tests.support.stack import nats_client, stack
from tests.support.webhook_receiver import receiver, verify_signature

pytestmark = pytest.mark.slow

SECRET = "whsec_fault_test_secret_0123456789"


async def wait_for_consumer(settings, durable: str, timeout: float = 60) -> None:
    """The webhooks service subscribes from its first start on: wait until it has."""
    async with nats_client(settings) as nc:
        js = nc.jetstream()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                await js.consumer_info(settings.stream_name, durable)
                return
            except Exception:
                await asyncio.sleep(0.2)
    raise AssertionError(f"no consumer {durable} in {timeout}s")


async def publish_report_ready(settings, job_id: str) -> None:
    async with nats_client(settings) as nc:
        event = {"job_id": job_id, "file_name": "set.pdf", "page_count": 1, "status": "complete"}
        await nc.jetstream().publish(
            settings.subject("report.ready"),
            json.dumps(event).encode(),
            stream=settings.stream_name,
            headers={"Nats-Msg-Id": f"report.ready:{job_id}.1"},
        )


async def test_a_delivery_survives_the_webhooks_service_killed_mid_retry(settings):
    """The target answers 500 three times; the service is SIGKILLed after the first, and the
    restarted one keeps trying until the 200: every attempt signed, one idempotency key."""
    with receiver() as hook:
        hook.answers["/flaky"] = [500, 500, 500, 200]
        settings = settings.model_copy(
            update={
                "webhooks": [
                    WebhookTarget(
                        name="erp",
                        url=f"{hook.url}/flaky",
                        events=["report.ready"],
                        secret=SecretStr(SECRET),
                    )
                ],
                "webhook_allow_networks": ["127.0.0.0/8"],
                "webhook_backoff_s": 1.0,
                "webhook_backoff_max_s": 2.0,
                "webhook_retry_for_s": 120.0,
            }
        )
        with stack(settings, "webhooks") as s:
            await wait_for_consumer(settings, "webhooks-report-ready")
            await publish_report_ready(settings, "j_" + "a" * 32)
            hook.wait_for("/flaky", 1, timeout=60)
            s.procs["webhooks"].kill()
            killed_at = len(hook.on("/flaky"))
            time.sleep(1.5)
            assert len(hook.on("/flaky")) == killed_at, "a killed service delivered"
            s.start("webhooks")
            posts = hook.wait_for("/flaky", 4, timeout=90)
    keys = hook.events_by_key("/flaky")
    assert len(keys) == 1, list(keys)
    assert all(verify_signature(SECRET, p.body, p.headers["sheetflow-signature"]) for p in posts)
    assert posts[0].event["data"]["job_id"] == "j_" + "a" * 32
