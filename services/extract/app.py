"""The extract service: horizontally scaled workers sharing one durable consumer per subject."""

from faststream import FastStream

from services.extract.handlers import register
from services.extract.isolation import warm_readers
from shared.service import ServiceContext, create_service_app
from shared.settings import Settings


def create_app(
    settings: Settings | None = None, *, concurrency: int | None = None
) -> tuple[FastStream, ServiceContext]:
    settings = settings or Settings()
    in_flight = concurrency or settings.extract_concurrency
    app, ctx = create_service_app("extract", settings, lambda ctx: register(ctx, in_flight))
    app.after_startup(warm_readers)
    return app, ctx
