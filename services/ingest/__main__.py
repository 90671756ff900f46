"""`python -m services.ingest`: the ingest API behind uvicorn."""

import logging
import sys

from uvicorn.config import STARTUP_FAILURE

from services.ingest.server import api_server
from shared.infra.exiting import exit_now
from shared.infra.settings import Settings, warn_unknown_variables


def main() -> None:
    settings = Settings()
    logging.basicConfig(
        level=settings.log_level, format="%(asctime)s ingest %(levelname)s %(name)s: %(message)s"
    )
    warn_unknown_variables(logging.getLogger("sheetflow.ingest"))
    server = api_server(settings)
    server.run()
    if not server.started:  # as uvicorn.run: a failed start (port taken, lifespan) exits 3
        sys.exit(STARTUP_FAILURE)
    exit_now()


if __name__ == "__main__":
    main()
