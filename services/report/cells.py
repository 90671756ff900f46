"""The set's template re-reads what one page missed.

Before a job's report is first written, each verified page that read no sheet number (or a
scanned one whose number no label vouches for, read outside that cell), where
the set's confident pages agree on the cell that prints theirs, or the one page that read
its number's label names it (``cells_to_reread``), is read again there by extract
(``page.read_cell``); the report waits for every answer (``page.cell_read``), then decides
the set with the pages' readings as read again. The template only names the cell: a number
found there is the page's own printed text, chosen by its own reader, with the word ids
extract added to its text.json.
"""

import asyncio
import logging
from datetime import timedelta

from services.report.assemble import PageOutcome
from services.report.store import CellWaits
from shared.contracts import subjects
from shared.contracts.interfaces import Bucket, ObjectMissing, Publisher
from shared.contracts.messages import ReadCell
from shared.contracts.models import CellReading, VerifiedPage
from shared.infra.broker import msg_id
from shared.infra.jobs import JobRecord, now
from shared.infra.storage import Keys
from shared.sheet.identity import decide_identity
from shared.sheet.template import cells_to_reread

log = logging.getLogger("sheetflow.report")


async def ask_for_cells(
    bucket: Bucket,
    publisher: Publisher,
    waits: CellWaits,
    job: JobRecord,
    outcomes: list[PageOutcome | None],
    wait_s: float,
) -> bool:
    """Whether the job's report waits for cells read again: ``page.read_cell`` sent for each
    page the set's template names whose answer is not stored yet (sent again on a later
    call: the stream drops the duplicate). The wait is bounded: ``wait_s`` after the job
    first waited (``CellWaits``), the report is written without the answers still out
    (``supervise_cells`` calls the finish then). A canceled job asks for nothing."""
    if job.canceled:
        return False
    readings = {
        o.page_number: o.reading for o in outcomes if isinstance(o, VerifiedPage) and o.reading
    }
    cells = cells_to_reread(readings)
    stored = await asyncio.gather(*(bucket.exists(Keys.cell_read(job.job_id, n)) for n in cells))
    waiting = [n for n, done in zip(cells, stored, strict=True) if not done]
    if not waiting:
        return False
    if now() - await waits.since(job.job_id) >= timedelta(seconds=wait_s):
        log.warning(
            "report of %s written without the cells of pages %s read again: no answer in %s s",
            job.job_id,
            waiting,
            wait_s,
        )
        return False
    for n in waiting:
        cell = cells[n]
        ask = ReadCell(
            job_id=job.job_id,
            page_number=n,
            source_key=job.source_key,
            cell=cell.box,
            label=cell.label,
            pages=cell.pages,
        )
        await publisher.publish(
            subjects.PAGE_READ_CELL, ask, dedup_id=msg_id(job.job_id, n, "read-cell")
        )
    return True


async def with_cells_read(
    bucket: Bucket, job_id: str, outcomes: list[PageOutcome | None]
) -> list[PageOutcome | None]:
    """The job's outcomes with each page whose cell was read again to a number carrying
    that reading, and the header it decides (``decide_identity``, over the page's header)."""

    async def read_again(outcome: PageOutcome | None) -> PageOutcome | None:
        if not isinstance(outcome, VerifiedPage) or outcome.reading is None:
            return outcome
        if outcome.reading.number is not None:
            return outcome
        try:
            answer = await bucket.get_model(
                Keys.cell_read(job_id, outcome.page_number), CellReading
            )
        except ObjectMissing:
            return outcome
        if answer.reading is None:
            return outcome
        sheet = decide_identity(answer.reading, header=outcome.sheet)
        return outcome.model_copy(update={"reading": answer.reading, "sheet": sheet})

    return list(await asyncio.gather(*(read_again(o) for o in outcomes)))
