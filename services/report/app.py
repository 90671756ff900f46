"""The report service: one report per job, once every page is verified or failed."""

from faststream import FastStream

from services.report.bootstrap import started
from services.report.handlers import register
from shared.infra.service import create_service_app
from shared.infra.settings import Settings


def create_app(settings: Settings | None = None) -> FastStream:
    return create_service_app("report", settings or Settings(), register, started)
