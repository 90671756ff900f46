"""Extract's subscribers: rung 1 per page, the coverage service's rung 2/3 requests, and the
report's requests to read a page again in one cell."""

from typing import Annotated

from faststream import Context
from faststream.nats.annotations import NatsMessage

from services.extract.usecases import Collaborators, extract, fallback, read_cell, structure
from shared.contracts import subjects
from shared.contracts.messages import ExtractPage, FallbackPage, ReadCell, StructurePage
from shared.infra.broker import deliveries, run_delivery
from shared.infra.service import COLLABORATORS, Subscriptions, run_stage

IoDep = Annotated[Collaborators, Context(COLLABORATORS)]


def register(subscriptions: Subscriptions, concurrency: int) -> None:
    subscribe = subscriptions.page_subscriber

    @subscribe(subjects.PAGE_EXTRACT, durable="extract", concurrency=concurrency)
    async def on_extract_page(task: ExtractPage, msg: NatsMessage, io: IoDep) -> None:
        await run_stage(msg, "extract", task, io, lambda: extract(io, task))

    @subscribe(subjects.PAGE_STRUCTURE, durable="extract-structure", concurrency=concurrency)
    async def on_structure_page(task: StructurePage, msg: NatsMessage, io: IoDep) -> None:
        await run_stage(msg, "text_structuring", task, io, lambda: structure(io, task))

    @subscribe(subjects.PAGE_FALLBACK, durable="extract-fallback", concurrency=concurrency)
    async def on_fallback_page(task: FallbackPage, msg: NatsMessage, io: IoDep) -> None:
        await run_stage(msg, "fallback", task, io, lambda: fallback(io, task))

    @subscribe(subjects.PAGE_READ_CELL, durable="extract-read-cell", concurrency=concurrency)
    async def on_read_cell(task: ReadCell, msg: NatsMessage, io: IoDep) -> None:
        # Not a page stage: the page is verified already, and a cell that cannot be read (or
        # whose reading crashed the worker past the bound) is answered with nothing found
        # (read_cell): the report always gets its answer.
        async def work() -> None:
            await read_cell(io, task, delivery=deliveries(msg))

        await run_delivery(msg, settings=io.settings, work=work)
