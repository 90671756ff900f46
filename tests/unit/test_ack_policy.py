"""run_delivery's ack policy, on a fake JetStream message and a publisher that records what
it publishes: a page's stage (bounded deliveries, dead letters, outages waited out) and a
delivery of no page (a webhook's: tried again until its work settles it)."""

import asyncio
from dataclasses import dataclass, field
from types import SimpleNamespace

import nats.errors
import pytest

from shared.contracts import subjects
from shared.contracts.messages import PageFailed
from shared.infra.broker import PageFailure, PageStage, run_delivery
from shared.infra.settings import Settings
from tests.support.fakes import RecordingPublisher


@dataclass
class FakeMsg:
    """The NatsMessage surface run_delivery uses: delivery count and the settle calls."""

    num_delivered: int
    settled: list[tuple[str, float | None]] = field(default_factory=list)

    @property
    def raw_message(self) -> SimpleNamespace:
        return SimpleNamespace(metadata=SimpleNamespace(num_delivered=self.num_delivered))

    async def ack(self) -> None:
        self.settled.append(("ack", None))

    async def nack(self, delay: float | None = None) -> None:
        self.settled.append(("nack", delay))

    async def in_progress(self) -> None:
        pass


@pytest.fixture
def settings() -> Settings:
    return Settings(
        _env_file=None,
        namespace="tack",
        max_deliver=3,
        retry_backoff_s=0.01,
        retry_backoff_max_s=0.05,
        outage_patience_s=5.0,
        in_progress_interval_s=60.0,
    )


async def run(msg: FakeMsg, settings: Settings, work) -> RecordingPublisher:
    publisher = RecordingPublisher()
    page = PageStage(stage="extract", job_id="j_1", page_number=2, publisher=publisher)
    await run_delivery(msg, settings=settings, work=work, page=page)
    return publisher


def failed_events(publisher: RecordingPublisher) -> list[PageFailed]:
    assert all(p.name == subjects.PAGE_FAILED for p in publisher.attempts)
    return [p.event for p in publisher.attempts if isinstance(p.event, PageFailed)]


def raising(exc: BaseException, calls: list[int] | None = None):
    async def work() -> None:
        if calls is not None:
            calls.append(1)
        raise exc

    return work


async def test_success_acks(settings):
    """Work that returns is acked once and publishes no failure."""
    calls: list[int] = []

    async def work() -> None:
        calls.append(1)

    msg = FakeMsg(num_delivered=1)
    publisher = await run(msg, settings, work)
    assert calls == [1]
    assert msg.settled == [("ack", None)]
    assert publisher.attempts == []


async def test_retryable_failure_nacks_with_backoff(settings):
    """A failure before the last delivery is nacked with the backoff delay, not dead-lettered."""
    msg = FakeMsg(num_delivered=1)
    publisher = await run(msg, settings, raising(ValueError("model said nonsense")))
    assert msg.settled == [("nack", settings.retry_backoff_s)]
    assert publisher.attempts == []

    msg = FakeMsg(num_delivered=2)
    await run(msg, settings, raising(ValueError("again")))
    assert msg.settled == [("nack", settings.retry_backoff_s * 2)]


async def test_failure_on_last_delivery_dead_letters(settings):
    """On delivery == max_deliver a failure becomes one named page.failed event, and is acked."""
    msg = FakeMsg(num_delivered=settings.max_deliver)
    publisher = await run(msg, settings, raising(ValueError("model said nonsense")))
    assert msg.settled == [("ack", None)]
    [event] = failed_events(publisher)
    assert (event.job_id, event.page_number, event.stage) == ("j_1", 2, "extract")
    assert event.deliveries == settings.max_deliver
    assert "ValueError: model said nonsense" in event.reason
    # A re-publication of the same page's failure is dropped by JetStream's dedup.
    assert publisher.attempts[0].dedup_id == "j_1.2.extract"


async def test_delivery_past_max_dead_letters_without_working(settings):
    """A message redelivered past max_deliver (a crashed worker) is dead-lettered, work not run."""
    calls: list[int] = []
    msg = FakeMsg(num_delivered=settings.max_deliver + 1)
    publisher = await run(msg, settings, raising(AssertionError("must not run"), calls))
    assert calls == []
    assert msg.settled == [("ack", None)]
    [event] = failed_events(publisher)
    assert "never finished" in event.reason and event.deliveries == settings.max_deliver + 1


async def test_page_failure_dead_letters_at_once(settings):
    """PageFailure on the first delivery dead-letters immediately with its message as reason."""
    calls: list[int] = []
    msg = FakeMsg(num_delivered=1)
    publisher = await run(msg, settings, raising(PageFailure("cannot open broken document"), calls))
    assert calls == [1]
    assert msg.settled == [("ack", None)]
    [event] = failed_events(publisher)
    assert event.reason == "cannot open broken document" and event.deliveries == 1


async def test_outage_is_waited_out_within_the_delivery(settings):
    """A NATS outage is retried inside the same delivery (no nack spent) until the work succeeds."""
    attempts: list[int] = []

    async def work() -> None:
        attempts.append(1)
        if len(attempts) < 3:
            raise nats.errors.ConnectionClosedError()

    msg = FakeMsg(num_delivered=settings.max_deliver)
    publisher = await run(msg, settings, work)
    assert len(attempts) == 3
    assert msg.settled == [("ack", None)]
    assert publisher.attempts == []


async def test_a_message_too_large_is_no_outage(settings):
    """NATS refusing a message as too large fails the delivery at once (it is retried with
    backoff, then named), instead of being waited out as if the server were gone."""
    calls: list[int] = []
    msg = FakeMsg(num_delivered=1)
    await run(msg, settings, raising(nats.errors.MaxPayloadError(), calls))
    assert calls == [1] and msg.settled == [("nack", settings.retry_backoff_s)]


async def test_outage_past_patience_counts_as_a_failed_delivery(settings):
    """An outage outlasting outage_patience_s falls back to the normal nack-with-backoff."""
    settings = settings.model_copy(update={"outage_patience_s": 0.05})
    attempts: list[int] = []
    msg = FakeMsg(num_delivered=1)
    publisher = await run(msg, settings, raising(nats.errors.ConnectionClosedError(), attempts))
    assert len(attempts) > 1
    assert msg.settled == [("nack", settings.retry_backoff_s)]
    assert publisher.attempts == []


async def test_a_long_page_sends_heartbeats_with_its_in_progress_acks(settings):
    """While the work runs, each in-progress ack also runs the heartbeat (so the job's
    status sees the page being worked on); once settled, no more heartbeats."""
    beats: list[int] = []

    async def heartbeat() -> None:
        beats.append(1)

    async def work() -> None:
        await asyncio.sleep(0.35)

    msg = FakeMsg(num_delivered=1)
    page = PageStage("extract", "j_1", 2, RecordingPublisher(), heartbeat=heartbeat)
    await run_delivery(
        msg,
        settings=settings.model_copy(update={"in_progress_interval_s": 0.1}),
        work=work,
        page=page,
    )
    assert msg.settled == [("ack", None)] and 2 <= len(beats) <= 4
    settled_with = len(beats)
    await asyncio.sleep(0.2)
    assert len(beats) == settled_with


async def test_a_delivery_of_no_page_is_settled_as_its_work_says(settings):
    """Work that settles its delivery acks it; work that asks to be tried later nacks it
    with the delay it names, however many deliveries it has had."""
    done = FakeMsg(num_delivered=1)
    await run_delivery(done, settings=settings, work=raising_nothing(None))
    later = FakeMsg(num_delivered=7)
    await run_delivery(later, settings=settings, work=raising_nothing(30.0))
    assert done.settled == [("ack", None)] and later.settled == [("nack", 30.0)]


async def test_a_failed_delivery_of_no_page_is_tried_again_without_bound(settings):
    """A failure (NATS or S3 trouble) of a delivery that is no page's is nacked after the
    house backoff even past the delivery bound: nothing is dead-lettered."""
    msg = FakeMsg(num_delivered=settings.max_deliver + 5)
    await run_delivery(msg, settings=settings, work=raising(nats.errors.TimeoutError()))
    assert msg.settled == [("nack", settings.retry_backoff_s)]


def raising_nothing(retry_in: float | None):
    async def work() -> float | None:
        return retry_in

    return work


async def test_a_delivery_that_gives_up_is_retried_with_backoff_then_acked(settings):
    """With give_up (a report rebuilt after a review), a failure is nacked with the growing
    backoff within the bound and acked on the last delivery; nothing is dead-lettered."""
    failing = raising(RuntimeError("S3 said no"))
    first, last = FakeMsg(num_delivered=1), FakeMsg(num_delivered=settings.max_deliver)
    for msg in (first, last):
        await run_delivery(msg, settings=settings, work=failing, give_up="rebuilding a report")
    assert first.settled == [("nack", settings.retry_backoff_s)]
    assert last.settled == [("ack", None)]
