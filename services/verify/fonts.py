"""The job's checked fonts: a font object's encoding is one per document, so the OCR check
reads a line of it once per job, and every later page set in it cites that reading.

The ledger is one document in the job state store (``fonts.{job}``), so every verify worker
sees it: by font object (its xref), either ``reading`` (a page has claimed it and is reading
it now) or ``agreed`` (a page read a line of it alike: which page, which line). A page claims
the fonts nobody has read, reads them, and records the ones that agreed; a font that did not
agree is released, so the next page reads it again. A page that finds a font being read
waits for that reading (in process on the claim's future, across processes on the document);
a claim older than ``stale_s`` (its worker died) is taken over. Every write is a
compare-and-set merge, so two workers reading one font at once is harmless: both readings
are true, the first one recorded stands.
"""

import asyncio
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from shared.contracts.interfaces import StateStore
from shared.contracts.models import FontCheck
from shared.infra.jobs import compare_and_set

READING, AGREED = "reading", "agreed"
POLL_S = 0.05


def _key(job_id: str) -> str:
    return f"fonts.{job_id}"


@dataclass
class FontLedger:
    """The ledger of every job a verify process works on (``state`` None: no ledger, every
    page reads its own fonts)."""

    state: StateStore | None
    wait_s: float = 10.0  # how long a page waits for another page's reading of a font
    stale_s: float = 60.0  # a claim this old is a dead worker's
    _claims: dict[tuple[str, int], asyncio.Future[FontCheck | None]] = field(default_factory=dict)

    async def claim(
        self, job_id: str, page: int, fonts: Iterable[int]
    ) -> tuple[dict[int, FontCheck], set[int], set[int]]:
        """For the page's fonts: those read alike already (their checks), those this page
        now reads (claimed), and those another page is reading."""
        wanted = set(fonts)
        if self.state is None or not wanted:
            return {}, wanted, set()
        now = time.time()
        mine: set[int] = set()
        checked: dict[int, FontCheck] = {}
        elsewhere: set[int] = set()

        def change(current: dict | None) -> dict | None:
            doc = dict(current or {})
            mine.clear()
            checked.clear()
            elsewhere.clear()
            for xref in wanted:
                entry = doc.get(str(xref))
                if entry and entry["state"] == AGREED:
                    checked[xref] = FontCheck.model_validate(entry["check"])
                elif entry and now - entry["since"] < self.stale_s:
                    elsewhere.add(xref)
                else:
                    doc[str(xref)] = {"state": READING, "page": page, "since": now}
                    mine.add(xref)
            return doc if mine else current

        await compare_and_set(self.state, _key(job_id), change, what="the job's fonts")
        for xref in mine:
            self._claims[(job_id, xref)] = asyncio.get_running_loop().create_future()
        return checked, mine, elsewhere

    async def settle(
        self, job_id: str, claimed: Iterable[int], agreed: dict[int, FontCheck]
    ) -> None:
        """Record the fonts read alike (claimed or not) and release the claimed ones that
        were not."""
        claimed = set(claimed)
        if self.state is None or not (claimed or agreed):
            return

        def change(current: dict | None) -> dict | None:
            doc = dict(current or {})
            for xref in claimed | set(agreed):
                entry = doc.get(str(xref))
                if entry and entry["state"] == AGREED:
                    continue  # the first reading recorded stands
                if xref in agreed:
                    doc[str(xref)] = {"state": AGREED, "check": agreed[xref].model_dump()}
                elif xref in claimed:
                    doc.pop(str(xref), None)
            return doc

        try:
            await compare_and_set(self.state, _key(job_id), change, what="the job's fonts")
        finally:
            for xref in claimed:
                future = self._claims.pop((job_id, xref), None)
                if future is not None and not future.done():
                    future.set_result(agreed.get(xref))

    async def wait(self, job_id: str, fonts: Iterable[int]) -> dict[int, FontCheck]:
        """The checks of ``fonts`` (being read on other pages) once their readings are
        settled, at most ``wait_s``: those read alike."""
        pending = set(fonts)
        found: dict[int, FontCheck] = {}
        if self.state is None or not pending:
            return found
        here = {x: f for x in pending if (f := self._claims.get((job_id, x))) is not None}
        if here:
            done, _ = await asyncio.wait(here.values(), timeout=self.wait_s)
            for xref, future in here.items():
                if future in done and (check := future.result()) is not None:
                    found[xref] = check
            pending -= set(here)
        deadline = time.monotonic() + self.wait_s
        while pending:
            got = await self.state.get(_key(job_id))
            doc = got[0] if got else {}
            for xref in list(pending):
                entry = doc.get(str(xref))
                if entry and entry["state"] == AGREED:
                    found[xref] = FontCheck.model_validate(entry["check"])
                    pending.discard(xref)
                elif not entry or entry["state"] != READING:
                    pending.discard(xref)
            if not pending or time.monotonic() > deadline:
                break
            await asyncio.sleep(POLL_S)
        return found
