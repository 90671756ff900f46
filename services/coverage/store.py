"""Each page's coverage ladder, kept in the job state store so a restarted coverage service
resumes a page's climb instead of forgetting it."""

from services.coverage.ladder import LadderState, ladder_key
from shared.contracts.interfaces import StateStore


class LadderStore:
    """The ladder states under ``ladder.{job_id}.{page}``; coverage is their one writer."""

    def __init__(self, state: StateStore) -> None:
        self._state = state

    async def load(self, job_id: str, page_number: int) -> LadderState | None:
        found = await self._state.get(ladder_key(job_id, page_number))
        return LadderState.model_validate(found[0]) if found else None

    async def save(self, state: LadderState) -> None:
        await self._state.put(ladder_key(state.job_id, state.page_number), state)
