"""The verify service: no number is trusted without the page's own text layer behind it."""

from faststream import FastStream

from services.verify.bootstrap import started
from services.verify.handlers import register
from shared.infra.service import create_service_app
from shared.infra.settings import Settings


def create_app(settings: Settings | None = None) -> FastStream:
    return create_service_app("verify", settings or Settings(), register, started)
