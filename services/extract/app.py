"""The extract service: horizontally scaled workers sharing one durable consumer per subject."""

from faststream import FastStream

from services.extract.bootstrap import started
from services.extract.handlers import register
from shared.infra.service import create_service_app
from shared.infra.settings import Settings


def create_app(settings: Settings | None = None, *, concurrency: int | None = None) -> FastStream:
    settings = settings or Settings()
    in_flight = concurrency or settings.extract_concurrency
    return create_service_app(
        "extract", settings, lambda subscriptions: register(subscriptions, in_flight), started
    )
