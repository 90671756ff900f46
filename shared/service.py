"""What every service process shares: its resources and how its FastStream app boots."""

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from faststream import AckPolicy, FastStream
from faststream.nats import JStream, NatsBroker, NatsMessage, PullSub
from nats.js.api import StorageType, StreamConfig
from nats.js.errors import BadRequestError

from shared.broker import (
    DUPLICATE_WINDOW_S,
    NatsPublisher,
    consumer_config,
    make_broker,
    run_page_stage,
    worker_id,
)
from shared.jobs import JobStore, KvStateStore
from shared.settings import Settings
from shared.storage import ObjectStore

if TYPE_CHECKING:
    from shared.llm import LLMClient

log = logging.getLogger("sheetflow.service")

# How long an idle pull waits for a message before asking again: a message arriving sooner
# is delivered at once, so this only paces the idle polling of every loop.
PULL_IDLE_S = 5.0


class PageRef(Protocol):
    job_id: str
    page_number: int


@dataclass
class ServiceContext:
    """Resources a service's handlers hand its use cases; filled in at startup (the state
    store and job store once NATS answers), closed at shutdown."""

    name: str
    settings: Settings
    broker: NatsBroker
    stream: JStream
    store: ObjectStore
    publisher: NatsPublisher
    worker_id: str
    state: KvStateStore = field(init=False)
    jobs: JobStore = field(init=False)
    llm: "LLMClient | None" = None

    def subject(self, name: str) -> str:
        return self.settings.subject(name)

    async def run_stage(
        self, msg: NatsMessage, stage: str, page: PageRef, work: Callable[[], Awaitable[None]]
    ) -> None:
        """Settle ``msg`` by the house ack policy around ``work`` for one page."""
        await run_page_stage(
            msg,
            stage=stage,
            job_id=page.job_id,
            page_number=page.page_number,
            settings=self.settings,
            broker=self.broker,
            work=work,
        )

    def page_subscriber(self, name: str, *, durable: str, concurrency: int = 16):
        """A durable pull consumer on ``name`` shared by every replica of this service,
        worked by ``concurrency`` pull loops that each take one message at a time.

        A loop fetches its next page the moment its last one is settled, so one slow page
        never holds up the others (as waiting for a whole fetched batch would), and no
        fetched message waits unstarted in a local buffer while its ack deadline runs out.
        Manual acks: handlers settle through ``shared.broker.run_page_stage``.
        """
        loops = [
            self.broker.subscriber(
                self.subject(name),
                stream=self.stream,
                durable=durable,
                pull_sub=PullSub(batch_size=1, timeout=PULL_IDLE_S),
                config=consumer_config(self.settings),
                ack_policy=AckPolicy.MANUAL,
                title=f"{durable}#{slot}:{self.subject(name)}",
            )
            for slot in range(concurrency)
        ]

        def register(handler: Callable[..., Awaitable[None]]) -> Callable[..., Awaitable[None]]:
            for loop in loops:
                loop(handler)
            return handler

        return register


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

    def nats_connected(self) -> bool:
        return self.broker.connection is not None and self.broker.connection.is_connected

    async def s3_answers(self) -> bool:
        return await self.bucket.ping()


async def connect(
    broker: NatsBroker, store: ObjectStore, settings: Settings, name: str
) -> Connections:
    """Connect ``broker`` (declaring the stream and opening the job state store) and wait for
    ``store`` to answer (declaring the bucket); ``name`` is the service's."""
    await broker.connect()
    await ensure_stream(broker, settings)
    kv = await broker.key_value(
        settings.kv_bucket,
        storage=StorageType.FILE,
        ttl=settings.retention_days * 86400,
        replicas=settings.stream_replicas,
    )
    # S3 may start beside the services (`sheetflow up`): wait for it at a quick pace.
    await store.wait_until_up(timeout=settings.outage_patience_s)
    await store.ensure_bucket()
    return Connections(
        settings=settings,
        broker=broker,
        bucket=store,
        state=KvStateStore(kv),
        publisher=NatsPublisher(broker, settings),
        worker_id=worker_id(name),
    )


async def open_resources(ctx: ServiceContext) -> None:
    await ctx.broker.connect()
    await ensure_stream(ctx.broker, ctx.settings)
    kv = await ctx.broker.key_value(
        ctx.settings.kv_bucket,
        storage=StorageType.FILE,
        ttl=ctx.settings.retention_days * 86400,
        replicas=ctx.settings.stream_replicas,
    )
    ctx.state = KvStateStore(kv)
    ctx.jobs = JobStore(ctx.state)
    # S3 may start beside the services (`sheetflow up`): wait for it at a quick pace.
    await ctx.store.wait_until_up(timeout=ctx.settings.outage_patience_s)
    await ctx.store.ensure_bucket()
    if ctx.settings.llm_base_url:
        from shared.llm import LLMClient  # pulls in httpx/tenacity only where a model is used

        ctx.llm = LLMClient(ctx.settings)


async def close_resources(ctx: ServiceContext) -> None:
    if ctx.llm:
        await ctx.llm.aclose()


def new_context(name: str, settings: Settings) -> ServiceContext:
    broker = make_broker(settings, name)
    return ServiceContext(
        name=name,
        settings=settings,
        broker=broker,
        publisher=NatsPublisher(broker, settings),
        # declared by ensure_stream with every subject, not by FastStream from one subscriber's
        stream=JStream(settings.stream_name, declare=False),
        store=ObjectStore(settings),
        worker_id=worker_id(name),
    )


def create_service_app(
    name: str, settings: Settings, register: Callable[[ServiceContext], None]
) -> tuple[FastStream, ServiceContext]:
    """A FastStream app whose handlers ``register`` declares on the context's broker."""
    logging.basicConfig(
        level=settings.log_level, format=f"%(asctime)s {name} %(levelname)s %(name)s: %(message)s"
    )
    ctx = new_context(name, settings)
    register(ctx)

    @contextlib.asynccontextmanager
    async def lifespan() -> AsyncIterator[None]:
        await open_resources(ctx)
        try:
            yield
        finally:
            await close_resources(ctx)

    # The app's own lines ("started successfully") through the plain log format above:
    # FastStream's default logger writes ANSI colour codes even into a log file.
    app_logger = logging.getLogger(f"sheetflow.{name}.app")
    return FastStream(ctx.broker, lifespan=lifespan, logger=app_logger), ctx


def run_service(app: FastStream) -> None:
    """Run until SIGINT/SIGTERM (FastStream installs the signal handlers)."""
    asyncio.run(app.run())
