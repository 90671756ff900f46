"""What every service process shares: its connections to NATS and S3, its page consumers, and
how its FastStream app boots around its composition root (the service's ``bootstrap.py``)."""

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Concatenate, NoReturn, ParamSpec, Protocol, TypeVar

from faststream import AckPolicy, ContextRepo, FastStream
from faststream.nats import JStream, NatsBroker, NatsMessage, PullSub
from nats.js.api import ConsumerConfig, StorageType, StreamConfig
from nats.js.errors import BadRequestError
from pydantic import BaseModel

from shared.contracts.interfaces import Publisher
from shared.contracts.subjects import Subject
from shared.infra.broker import (
    DUPLICATE_WINDOW_S,
    NatsPublisher,
    PageStage,
    consumer_config,
    make_broker,
    run_delivery,
    worker_id,
)
from shared.infra.exiting import exit_now
from shared.infra.jobs import JobStore, KvStateStore
from shared.infra.settings import Settings, warn_unknown_variables
from shared.infra.storage import ObjectStore

log = logging.getLogger("sheetflow.service")

# How long an idle pull waits for a message before asking again: a message arriving sooner
# is delivered at once, so this only paces the idle polling of every loop.
PULL_IDLE_S = 5.0
# The FastStream context key a service's collaborators are kept under while it runs; its
# handlers take them as ``Annotated[Collaborators, Context(COLLABORATORS)]``.
COLLABORATORS = "collaborators"
# Where readiness writes its probes (overwritten by each: one key, one object in all).
READY_PROBE_KEY = "ready.probe"
READY_PROBE_OBJECT = "ready/probe"

E = TypeVar("E", bound=BaseModel)
P = ParamSpec("P")
# A handler of the events of one subject: the event first (FastStream parses the message into
# its type), then whatever else it takes (the message, its collaborators).
Handler = Callable[Concatenate[E, P], Awaitable[None]]


class PageRef(Protocol):
    job_id: str
    page_number: int


class StageIo(Protocol):
    """What settling a page needs of a service's collaborators."""

    @property
    def settings(self) -> Settings: ...

    @property
    def publisher(self) -> Publisher: ...

    @property
    def jobs(self) -> JobStore: ...


@dataclass(frozen=True)
class Connections:
    """NATS (the stream, the job state store, a publisher) and S3, connected: what each
    service's bootstrap builds its collaborators from."""

    settings: Settings
    broker: NatsBroker
    bucket: ObjectStore
    state: KvStateStore
    publisher: NatsPublisher
    worker_id: str

    async def nats_answers(self, timeout_s: float) -> bool:
        """Whether NATS and its JetStream answer a round trip within ``timeout_s`` (a frozen
        server keeps the connection open, so being connected says nothing); never raises."""
        connection = self.broker.connection
        if connection is None or not connection.is_connected:
            return False
        try:
            js = connection.jetstream(timeout=timeout_s)
            await asyncio.wait_for(js.account_info(), timeout_s)
        except Exception:
            return False
        return True

    async def s3_answers(self, timeout_s: float) -> bool:
        return await self.bucket.ping(timeout_s)

    async def nats_writes(self, timeout_s: float) -> bool:
        """Whether the job store stores a small write within ``timeout_s``: JetStream on a
        full disk answers every read and stores nothing; never raises."""
        probe = {"by": self.worker_id, "at": datetime.now(UTC).isoformat()}
        try:
            await asyncio.wait_for(self.state.put(READY_PROBE_KEY, probe), timeout_s)
        except Exception:
            return False
        return True

    async def s3_writes(self, timeout_s: float) -> bool:
        """Whether S3 stores a small object within ``timeout_s``; never raises."""
        try:
            put = self.bucket.put_bytes(READY_PROBE_OBJECT, b"ready", retry=False)
            await asyncio.wait_for(put, timeout_s)
        except Exception:
            return False
        return True


async def ensure_stream(broker: NatsBroker, settings: Settings) -> None:
    """Declare the one stream (file storage, every subject under the namespace); idempotent."""
    js = broker.connection.jetstream()
    config = StreamConfig(
        name=settings.stream_name,
        subjects=[f"{settings.namespace}.>"],
        storage=StorageType.FILE,
        duplicate_window=DUPLICATE_WINDOW_S,
        max_age=settings.retention_days * 86400,
        num_replicas=settings.stream_replicas,
    )
    try:
        await js.add_stream(config)
    except BadRequestError:
        await js.update_stream(config)


async def open_state_store(broker: NatsBroker, settings: Settings) -> KvStateStore:
    """The job state bucket, made (or, made by an older version, changed) to answer direct
    gets, which read it without creating consumers."""

    async def bucket() -> Any:
        return await broker.key_value(
            settings.kv_bucket,
            storage=StorageType.FILE,
            ttl=settings.retention_days * 86400,
            replicas=settings.stream_replicas,
            direct=True,
        )

    try:
        kv = await bucket()
    except BadRequestError:  # the bucket exists without direct gets
        js = broker.connection.jetstream()
        info = await js.stream_info(f"KV_{settings.kv_bucket}")
        info.config.allow_direct = True
        await js.update_stream(info.config)
        kv = await bucket()
    return KvStateStore(kv, broker.connection, settings.kv_bucket)


async def connect(
    broker: NatsBroker, store: ObjectStore, settings: Settings, name: str
) -> Connections:
    """Connect ``broker`` (declaring the stream and opening the job state store) and wait for
    ``store`` to answer (declaring the bucket); ``name`` is the service's."""
    await broker.connect()
    await ensure_stream(broker, settings)
    state = await open_state_store(broker, settings)
    # S3 may start beside the services (`sheetflow up`): wait for it at a quick pace.
    await store.wait_until_up(timeout=settings.outage_patience_s)
    await store.ensure_bucket()
    return Connections(
        settings=settings,
        broker=broker,
        bucket=store,
        state=state,
        publisher=NatsPublisher(broker, settings),
        worker_id=worker_id(name),
    )


async def run_stage(
    msg: NatsMessage, stage: str, page: PageRef, io: StageIo, work: Callable[[], Awaitable[None]]
) -> None:
    """Settle ``msg`` by the house ack policy (``shared.infra.broker.run_delivery``) around
    ``work``, one page's ``stage``."""
    await run_delivery(
        msg,
        settings=io.settings,
        work=work,
        page=PageStage(
            stage=stage,
            job_id=page.job_id,
            page_number=page.page_number,
            publisher=io.publisher,
            heartbeat=lambda: io.jobs.mark_working(page.job_id, page.page_number, stage),
        ),
    )


@dataclass(frozen=True)
class Subscriptions:
    """Where a service's handlers subscribe: its broker, on the project's stream."""

    broker: NatsBroker
    settings: Settings
    # declared by ensure_stream with every subject, not by FastStream from one subscriber's
    stream: JStream

    def page_subscriber(
        self,
        subject: Subject[E],
        *,
        durable: str,
        concurrency: int = 16,
        config: ConsumerConfig | None = None,
    ) -> Callable[[Handler[E, P]], Handler[E, P]]:
        """A durable pull consumer on ``subject`` shared by every replica of this service,
        worked by ``concurrency`` pull loops that each take one message at a time. The
        handler it registers takes the subject's event first: a handler of another event
        is a type error.

        A loop fetches its next page the moment its last one is settled, so one slow page
        never holds up the others (as waiting for a whole fetched batch would), and no
        fetched message waits unstarted in a local buffer while its ack deadline runs out.
        Manual acks: handlers settle through :func:`run_stage`. ``config`` replaces the
        house consumer configuration (``shared.infra.broker.consumer_config``).
        """
        name = self.settings.subject(subject)
        loops = [
            self.broker.subscriber(
                name,
                stream=self.stream,
                durable=durable,
                pull_sub=PullSub(batch_size=1, timeout=PULL_IDLE_S),
                config=config or consumer_config(self.settings),
                ack_policy=AckPolicy.MANUAL,
                title=f"{durable}#{slot}:{name}",
            )
            for slot in range(concurrency)
        ]

        def register(handler: Handler[E, P]) -> Handler[E, P]:
            for loop in loops:
                loop(handler)
            return handler

        return register


# A service's composition root: its collaborators built from the connections when it starts,
# closed when the context ends.
Start = Callable[[Connections], AbstractAsyncContextManager[Any]]


def create_service_app(
    name: str,
    settings: Settings,
    register: Callable[[Subscriptions], None],
    start: Start,
) -> FastStream:
    """A FastStream app whose handlers ``register`` declares, and whose lifespan connects to
    NATS and S3, enters ``start`` (the service's bootstrap) and keeps what it yields in the
    app's context under ``COLLABORATORS`` for the handlers."""
    logging.basicConfig(
        level=settings.log_level, format=f"%(asctime)s {name} %(levelname)s %(name)s: %(message)s"
    )
    warn_unknown_variables(logging.getLogger(f"sheetflow.{name}"))
    broker, store = make_broker(settings, name), ObjectStore(settings)
    register(Subscriptions(broker, settings, JStream(settings.stream_name, declare=False)))

    @contextlib.asynccontextmanager
    async def lifespan(context: ContextRepo) -> AsyncIterator[None]:
        connections = await connect(broker, store, settings, name)
        async with start(connections) as collaborators:
            context.set_global(COLLABORATORS, collaborators)
            yield

    # The app's own lines ("started successfully") through the plain log format above:
    # FastStream's default logger writes ANSI colour codes even into a log file.
    app_logger = logging.getLogger(f"sheetflow.{name}.app")
    return FastStream(broker, lifespan=lifespan, logger=app_logger)


def run_service(app: FastStream) -> NoReturn:
    """Run until SIGINT/SIGTERM (FastStream installs the signal handlers), then exit."""
    asyncio.run(app.run())
    exit_now()
