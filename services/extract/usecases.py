"""Extract's use cases: rung 1 for a page (its words, image, thumbnail and objects stored,
then announced), the coverage service's rung 2/3 requests answered, and the report's set
step's request to read a page again in one cell."""

import asyncio
from dataclasses import dataclass

from services.extract.model.structuring import structure_text
from services.extract.offline.fallback import fallback_result
from services.extract.reading.page import PageUnreadable, Readers
from services.extract.reading.reread import reread_number, with_cell_words
from services.extract.rung1 import extract_rung1
from shared.contracts import subjects
from shared.contracts.interfaces import Bucket, ModelClient, ObjectMissing, Publisher
from shared.contracts.messages import (
    CellRead,
    ExtractPage,
    FallbackPage,
    PageExtracted,
    PageFailed,
    PageStructured,
    ReadCell,
    StructurePage,
)
from shared.contracts.models import CellReading, ExtractionResult
from shared.infra.broker import PageFailure, is_outage, msg_id
from shared.infra.jobs import JobStore, record_progress
from shared.infra.settings import Settings
from shared.infra.storage import Keys
from shared.pagetext import TextLayer
from shared.pdf.sources import SourceCache
from shared.sheet.reading import SheetReading

CANCELED_REASON = "the job was canceled before this page was extracted"


@dataclass(frozen=True)
class Collaborators:
    """What extract's use cases work with (built by ``services.extract.bootstrap``): the real
    stores, publisher and model client in the service, in-memory fakes in unit tests.
    ``sources`` keeps the source PDFs of the jobs in flight, ``readers`` read their pages;
    ``worker_id`` names this worker in the results it writes."""

    bucket: Bucket
    jobs: JobStore
    publisher: Publisher
    settings: Settings
    llm: ModelClient | None
    sources: SourceCache
    readers: Readers
    worker_id: str


async def queue_next_page(io: Collaborators, task: ExtractPage) -> None:
    """Fair turns between jobs: a job has only a window of pages queued at once (ingest
    queues the first), and each page started queues the page a window further, at the back
    of the queue, behind any other job's pages. Queued before the page is worked on, whatever
    comes of it (a failed or skipped page still hands its turn on); a redelivery queues it
    again under the same id (a duplicate the stream drops), unless that page has moved
    already. A job that has ended (its abandoned intake failed every page) queues no more."""
    after = task.page_number + task.window
    if not task.window or after > task.page_count:
        return
    if await io.jobs.page_stage(task.job_id, after) is not None:
        return
    job = await io.jobs.get_job(task.job_id)
    if job is not None and job.finished_at:
        return
    nxt = task.model_copy(update={"page_number": after})
    await io.publisher.publish(subjects.PAGE_EXTRACT, nxt, dedup_id=msg_id(task.job_id, after))


async def extract(io: Collaborators, task: ExtractPage) -> None:
    await queue_next_page(io, task)
    if await io.jobs.is_canceled(task.job_id):
        await io.jobs.mark_page(task.job_id, task.page_number, "skipped")
        skipped = PageFailed(
            job_id=task.job_id,
            page_number=task.page_number,
            stage="canceled",
            reason=CANCELED_REASON,
        )
        await io.publisher.publish(
            subjects.PAGE_FAILED,
            skipped,
            dedup_id=msg_id(task.job_id, task.page_number, "canceled"),
        )
        return
    pdf = await io.sources.get(task.source_key)
    try:
        out = await extract_rung1(
            pdf,
            task.page_number,
            io.settings,
            io.llm,
            readers=io.readers,
            use_vision=task.options.vision is not False,
            worker_id=io.worker_id,
            job_id=task.job_id,
        )
    except PageUnreadable as exc:
        raise PageFailure(exc.reason) from exc
    text_key = Keys.text(task.job_id, task.page_number)
    result_key = Keys.extracted(task.job_id, task.page_number)
    await asyncio.gather(
        io.bucket.put_json(text_key, out.text_layer),
        io.bucket.put_bytes(Keys.image(task.job_id, task.page_number), out.png, "image/png"),
        io.bucket.put_bytes(
            Keys.thumbnail(task.job_id, task.page_number), out.thumbnail, "image/jpeg"
        ),
        io.bucket.put_json(result_key, out.result),
    )
    event = PageExtracted(
        job_id=task.job_id,
        page_number=task.page_number,
        result_key=result_key,
        text_key=text_key,
        source_key=task.source_key,
        status=out.result.status,
        rung=out.result.rung,
        has_text_layer=out.text_layer.has_text_layer,
        usage=out.result.usage,
        options=task.options,
    )
    # Marked before announced: whoever sees the event also sees the page's progress.
    await record_progress(io.jobs, io.publisher, task.job_id, task.page_number, "extracted")
    await io.publisher.publish(
        subjects.PAGE_EXTRACTED, event, dedup_id=msg_id(task.job_id, task.page_number)
    )


async def structure(io: Collaborators, task: StructurePage) -> None:
    text_layer = await io.bucket.get_model(task.text_key, TextLayer)
    result = await structure_text(
        text_layer,
        io.settings,
        io.llm,
        job_id=task.job_id,
        worker_id=io.worker_id,
        sheet=task.sheet,
    )
    await _answer(io, task, result)


async def fallback(io: Collaborators, task: FallbackPage) -> None:
    text_layer = await io.bucket.get_model(task.text_key, TextLayer)
    result = await asyncio.to_thread(
        fallback_result,
        text_layer,
        io.settings,
        lines=task.lines,
        job_id=task.job_id,
        worker_id=io.worker_id,
    )
    await _answer(io, task, result)


async def _answer(
    io: Collaborators, task: StructurePage | FallbackPage, result: ExtractionResult
) -> None:
    key = Keys.structured(task.job_id, task.page_number, result.rung)
    await io.bucket.put_json(key, result)
    event = PageStructured(
        job_id=task.job_id,
        page_number=task.page_number,
        rung=result.rung,
        result_key=key,
        status=result.status,
        usage=result.usage,
    )
    await io.publisher.publish(
        subjects.PAGE_STRUCTURED, event, dedup_id=msg_id(task.job_id, task.page_number, result.rung)
    )


async def read_cell(io: Collaborators, task: ReadCell, *, delivery: int = 1) -> None:
    """The page read again in the cell the report's set step names (``reread_number``),
    its answer stored (``pages/{n}/cell-read.json``), the cell's words added to the page's
    text.json when the page's own reader chose a number there, then announced. Asked again,
    the stored answer is announced again (text.json completed if it was not yet written).
    A cell that cannot be read is answered with nothing found: the report is waiting, and
    the page keeps its own reading; so is one whose ``delivery`` is past the bound (earlier
    attempts crashed the worker): it is not read again."""
    key = Keys.cell_read(task.job_id, task.page_number)
    text_key = Keys.text(task.job_id, task.page_number)
    layer = await io.bucket.get_model(text_key, TextLayer)
    try:
        answer = await io.bucket.get_model(key, CellReading)
    except ObjectMissing:
        if delivery > io.settings.max_deliver:
            answer = CellReading(
                cell=task.cell,
                first_word=len(layer.words),
                why=f"not read: {delivery - 1} attempts to read the cell ended with the worker",
            )
        else:
            answer = await _read_cell(io, task, layer)
        await io.bucket.put_json(key, answer)
    if answer.reading is not None and len(layer.words) == answer.first_word:
        await io.bucket.put_json(text_key, with_cell_words(layer, answer.cell, answer.words))
    event = CellRead(
        job_id=task.job_id,
        page_number=task.page_number,
        result_key=key,
        number=answer.reading.sheet_number if answer.reading else None,
    )
    await io.publisher.publish(
        subjects.PAGE_CELL_READ, event, dedup_id=msg_id(task.job_id, task.page_number, "cell")
    )


async def _read_cell(io: Collaborators, task: ReadCell, layer: TextLayer) -> CellReading:
    first = len(layer.words)
    try:
        pdf = await io.sources.get(task.source_key)
        result = await io.bucket.get_model(
            Keys.extracted(task.job_id, task.page_number), ExtractionResult
        )
        reading = result.reading or SheetReading()
        found = await reread_number(
            pdf, layer, reading, task.cell, task.label, io.settings, io.readers, pages=task.pages
        )
    except Exception as exc:
        if is_outage(exc):
            raise
        return CellReading(cell=task.cell, first_word=first, why=f"not read: {exc}")
    if found is None:
        return CellReading(cell=task.cell, first_word=first, why="no number read in the cell")
    return CellReading(cell=task.cell, first_word=first, words=found.words, reading=found.reading)
