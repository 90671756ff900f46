"""The coverage service: no text-bearing page leaves it dark."""

from faststream import FastStream

from services.coverage.bootstrap import started
from services.coverage.handlers import register
from shared.infra.service import create_service_app
from shared.infra.settings import Settings


def create_app(settings: Settings | None = None) -> FastStream:
    return create_service_app("coverage", settings or Settings(), register, started)
