"""`python -m sheetflow.host NAME...`: several services in one process and one event loop, as
`sheetflow run` starts them on one machine.

Each service still runs its own app (its FastStream app, or ingest's API under uvicorn) with
its own connections to NATS and S3, exactly as ``python -m services.<name>`` runs it; only the
process is shared, so the modules they all import (FastStream, pydantic, the message models,
the S3 client, PyMuPDF in the page-reading forkserver) are imported once instead of once per
service, and the stack is ready sooner. Page reading and upload inspection still run in the
bounded child processes of ``shared.infra.bounded``. SIGTERM or SIGINT stops every service
gracefully; a service that fails stops the others, and the process exits non-zero so that
its supervisor restarts it."""

import argparse
import asyncio
import importlib
import logging
import signal
import sys

import uvicorn
from faststream import FastStream

from shared.infra.exiting import exit_now
from shared.infra.settings import Settings
from sheetflow.services import SERVICES

log = logging.getLogger("sheetflow.host")


async def run_app(name: str, app: FastStream, stopping: asyncio.Event) -> None:
    """What ``FastStream.run`` does, but stopped by ``stopping``: its lifespan (connections,
    the service's bootstrap), its broker's subscribers, until the host stops."""
    async with app.lifespan_context():
        await app.start()
        log.info("%s started", name)
        try:
            await stopping.wait()
        finally:
            await app.stop()


async def run_api(server: uvicorn.Server, stopping: asyncio.Event) -> None:
    """Ingest's API until the host stops. While it serves, uvicorn holds SIGTERM and SIGINT
    itself: when it returns, for whatever reason, the host stops."""
    serving = asyncio.ensure_future(server.serve())
    stop = asyncio.ensure_future(stopping.wait())
    await asyncio.wait({serving, stop}, return_when=asyncio.FIRST_COMPLETED)
    server.should_exit = True
    stop.cancel()
    try:
        await serving
    finally:
        stopping.set()
    if not server.started:
        raise RuntimeError("the ingest API did not start")


async def host(names: list[str], settings: Settings) -> None:
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stopping.set)
    tasks = []
    try:
        for name in names:
            # Imported in a thread: the services already started (ingest, given first) go on
            # connecting and warming up in the event loop meanwhile.
            if name == "ingest":
                server = await asyncio.to_thread(_ingest_server, settings)
                tasks.append(asyncio.ensure_future(run_api(server, stopping)))
            else:
                module = await asyncio.to_thread(importlib.import_module, f"services.{name}.app")
                app = module.create_app(settings)
                tasks.append(asyncio.ensure_future(run_app(name, app, stopping)))
        # The first failure stops every other service gracefully, then ends the process.
        for done in asyncio.as_completed(tasks):
            await done
    finally:
        stopping.set()
        await asyncio.gather(*tasks, return_exceptions=True)


def _ingest_server(settings: Settings) -> uvicorn.Server:
    from services.ingest.server import api_server

    return api_server(settings)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m sheetflow.host")
    parser.add_argument("names", nargs="+", choices=SERVICES, help="the services to run")
    names = parser.parse_args(argv).names
    settings = Settings()
    # One format for every hosted service (the first basicConfig wins): the logger's name
    # says which service wrote a line.
    logging.basicConfig(
        level=settings.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    try:
        asyncio.run(host(names, settings))
    except Exception:
        log.exception("a hosted service failed; stopping the others")
        sys.exit(1)
    exit_now()


if __name__ == "__main__":
    main()
