"""Which pages of a job are terminal (verified or failed), kept in the job state store so the
report service knows, without counting messages, when every page is; and since when a job's
report has waited for pages read again in their set's template cell."""

from datetime import datetime
from typing import Any, Literal

from shared.contracts.interfaces import StateStore
from shared.infra.jobs import compare_and_set, now

Outcome = Literal["verified", "failed"]


class TerminalPages:
    """The terminal pages of each job under ``terminal.{job_id}``; report is their one
    writer, compare-and-set so that replicas recording pages of one job lose none."""

    def __init__(self, state: StateStore) -> None:
        self._state = state

    async def add(self, job_id: str, page_number: int, outcome: Outcome) -> dict[int, str]:
        """Record a terminal page (a verified outcome is never downgraded to failed); every
        terminal page of the job so far."""

        def change(current: Any) -> dict[str, str]:
            pages: dict[str, str] = current or {}
            if pages.get(str(page_number)) in ("verified", outcome):
                return pages
            return {**pages, str(page_number): outcome}

        pages = await compare_and_set(
            self._state,
            f"terminal.{job_id}",
            change,
            what=f"terminal page {job_id}/{page_number}",
        )
        return {int(k): v for k, v in (pages or {}).items()}

    async def all(self, job_id: str) -> dict[int, str]:
        found = await self._state.get(f"terminal.{job_id}")
        return {int(k): v for k, v in found[0].items()} if found else {}


class CellWaits:
    """Since when each job's report has waited for pages read again in their set's template
    cell, under ``cells.{job_id}``; report is its one writer. The first to ask records the
    time (create-only), so every replica counts the wait from the same moment."""

    def __init__(self, state: StateStore) -> None:
        self._state = state

    async def since(self, job_id: str) -> datetime:
        """When the job's report first waited (now, when it is first asked)."""
        key = f"cells.{job_id}"
        found = await self._state.get(key)
        if found is None:
            at = now()
            if await self._state.put_if(key, {"since": at.isoformat()}, revision=None):
                return at
            found = await self._state.get(key)
        return datetime.fromisoformat(found[0]["since"]) if found else now()

    async def waiting(self) -> list[str]:
        """The jobs whose reports are waiting (or were, until their record is cleared)."""
        return [key.removeprefix("cells.") for key in await self._state.scan("cells.")]

    async def done(self, job_id: str) -> None:
        await self._state.delete(f"cells.{job_id}")
