"""The webhooks service: sheetflow's events delivered over HTTP, signed, at least once."""

from faststream import FastStream

from services.webhooks.bootstrap import started
from services.webhooks.handlers import register
from shared.infra.service import create_service_app
from shared.infra.settings import Settings


def create_app(settings: Settings | None = None) -> FastStream:
    return create_service_app("webhooks", settings or Settings(), register, started)
