"""Verify's composition root: what its use case works with, built once when the service
starts (the model client among them) and closed when it stops. Unit tests call
``bootstrap`` with fakes; the service runs ``started``."""

import asyncio
import contextlib
from collections.abc import AsyncIterator

from services.verify.fonts import FontLedger
from services.verify.usecases import Collaborators
from shared.contracts.interfaces import Bucket, ModelClient, Ocr, Publisher, StateStore
from shared.infra.jobs import JobStore
from shared.infra.llm import model_client
from shared.infra.service import Connections
from shared.infra.settings import Settings
from shared.ocr.engine import OcrEngine
from shared.pdf.sources import SourceCache

# The source PDFs kept for evidence crops: verify renders small crops of a few pages at once.
SOURCE_CACHE_BYTES = 256 * 1024 * 1024


def bootstrap(
    *,
    bucket: Bucket,
    state: StateStore,
    publisher: Publisher,
    settings: Settings,
    llm: ModelClient | None,
    ocr: Ocr | None = None,
) -> Collaborators:
    return Collaborators(
        bucket=bucket,
        jobs=JobStore(state),
        publisher=publisher,
        settings=settings,
        llm=llm,
        sources=SourceCache(bucket, max_bytes=SOURCE_CACHE_BYTES),
        ocr=ocr,
        fonts=FontLedger(state),
    )


@contextlib.asynccontextmanager
async def started(connections: Connections) -> AsyncIterator[Collaborators]:
    # Verify reads lines, not pages: an arena would only keep its largest batch's memory.
    ocr = OcrEngine(arena=False) if connections.settings.verify_ocr_check else None
    # The OCR check reads lines of every text page: its model loads while the consumers
    # start, not when the first page waits for it.
    loading = asyncio.create_task(asyncio.to_thread(ocr.load_recogniser)) if ocr else None
    try:
        async with model_client(connections.settings) as llm:
            yield bootstrap(
                bucket=connections.bucket,
                state=connections.state,
                publisher=connections.publisher,
                settings=connections.settings,
                llm=llm,
                ocr=ocr,
            )
    finally:
        if loading is not None:
            await asyncio.gather(loading, return_exceptions=True)
