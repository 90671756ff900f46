"""`python -m sheetflow.host`: the services it hosts start side by side in one event loop; a
stop signal stops each gracefully, and one that fails to start stops the others and ends the
host with its error (so that a supervisor restarts the whole process)."""

import asyncio
import contextlib
import importlib
import os
import signal
import types
from collections.abc import AsyncIterator

import pytest

from shared.infra.settings import Settings
from sheetflow import host


class FakeApp:
    """What the host uses of a FastStream app: its lifespan, start and stop."""

    def __init__(self, name: str, events: list[str], *, fails: bool = False) -> None:
        self.name, self.events, self.fails = name, events, fails

    @contextlib.asynccontextmanager
    async def lifespan_context(self) -> AsyncIterator[None]:
        self.events.append(f"{self.name} connected")
        try:
            yield
        finally:
            self.events.append(f"{self.name} closed")

    async def start(self) -> None:
        if self.fails:
            raise RuntimeError(f"{self.name} cannot start")
        self.events.append(f"{self.name} started")

    async def stop(self) -> None:
        self.events.append(f"{self.name} stopped")


def hosting(monkeypatch: pytest.MonkeyPatch, events: list[str], failing: str = "") -> None:
    def import_module(module: str) -> types.SimpleNamespace:
        name = module.split(".")[1]
        return types.SimpleNamespace(
            create_app=lambda settings: FakeApp(name, events, fails=name == failing)
        )

    monkeypatch.setattr(importlib, "import_module", import_module)


def test_a_stop_signal_stops_every_hosted_service(monkeypatch):
    events: list[str] = []
    hosting(monkeypatch, events)

    async def run() -> None:
        serving = asyncio.ensure_future(host.host(["coverage", "report"], Settings(_env_file=None)))
        while events.count("coverage started") + events.count("report started") < 2:
            await asyncio.sleep(0.01)
        os.kill(os.getpid(), signal.SIGTERM)
        await asyncio.wait_for(serving, 10)

    asyncio.run(run())
    for name in ("coverage", "report"):
        started, stopped = events.index(f"{name} started"), events.index(f"{name} stopped")
        assert started < stopped < events.index(f"{name} closed")


def test_a_service_that_fails_to_start_stops_the_others_and_the_host(monkeypatch):
    events: list[str] = []
    hosting(monkeypatch, events, failing="verify")
    with pytest.raises(RuntimeError, match="verify cannot start"):
        asyncio.run(
            asyncio.wait_for(host.host(["coverage", "verify"], Settings(_env_file=None)), 10)
        )
    assert "coverage started" in events and "coverage stopped" in events
    assert events.index("coverage stopped") < events.index("coverage closed")
    assert "verify started" not in events and "verify closed" in events
