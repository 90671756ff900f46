"""`python -m services.ingest`: the ingest API behind uvicorn."""

import logging

import uvicorn

from services.ingest.accesslog import log_config
from services.ingest.app import create_app
from shared.settings import Settings

LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def main() -> None:
    settings = Settings()
    logging.basicConfig(
        level=settings.log_level, format="%(asctime)s ingest %(levelname)s %(name)s: %(message)s"
    )
    host = settings.api_host
    if not settings.tokens and host not in LOOPBACK:
        # Without a token the API is open: never expose it beyond this machine.
        logging.getLogger("sheetflow.ingest").warning(
            "no API token is set: binding to 127.0.0.1 instead of %s", host
        )
        host = "127.0.0.1"
    uvicorn.run(
        create_app(settings),
        host=host,
        port=settings.api_port,
        log_level=settings.log_level.lower(),
        log_config=log_config(),
    )


if __name__ == "__main__":
    main()
