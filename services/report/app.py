"""The report service: one report per job, once every page is verified or failed."""

from faststream import FastStream

from services.report.handlers import register
from shared.service import ServiceContext, create_service_app
from shared.settings import Settings


def create_app(settings: Settings | None = None) -> tuple[FastStream, ServiceContext]:
    return create_service_app("report", settings or Settings(), register)
