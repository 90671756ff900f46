"""The ingest API's HTTP server: uvicorn, bound where the settings say (loopback when no token
is set), logging its access lines without query strings."""

import logging

import uvicorn

from services.ingest.accesslog import log_config
from services.ingest.app import create_app
from services.ingest.framing import JsonRefusingH11Protocol
from shared.infra.settings import Settings

LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def api_server(settings: Settings) -> uvicorn.Server:
    host = settings.api_host
    if not settings.tokens and host not in LOOPBACK:
        # Without a token the API is open: never expose it beyond this machine.
        logging.getLogger("sheetflow.ingest").warning(
            "no API token is set: binding to 127.0.0.1 instead of %s", host
        )
        host = "127.0.0.1"
    config = uvicorn.Config(
        create_app(settings),
        host=host,
        port=settings.api_port,
        log_level=settings.log_level.lower(),
        log_config=log_config(),
        http=JsonRefusingH11Protocol,
    )
    return uvicorn.Server(config)
