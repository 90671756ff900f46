"""Extract's composition root: what its use cases work with, built once when a worker
starts (the model client, the page-reading children and the OCR engine among them) and
closed when it stops. Unit tests call ``bootstrap`` with fakes and ``page_readers`` for the
real readers; the service runs ``started``."""

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator

from services.extract.reading.isolation import PageReaders
from services.extract.reading.page import Readers
from services.extract.usecases import Collaborators
from shared.contracts.interfaces import Bucket, ModelClient, Publisher, StateStore
from shared.infra.jobs import JobStore
from shared.infra.llm import model_client
from shared.infra.service import Connections
from shared.infra.settings import Settings
from shared.ocr.engine import OcrEngine
from shared.pdf.sources import SourceCache


def bootstrap(
    *,
    bucket: Bucket,
    state: StateStore,
    publisher: Publisher,
    settings: Settings,
    llm: ModelClient | None,
    readers: Readers,
    worker_id: str,
) -> Collaborators:
    return Collaborators(
        bucket=bucket,
        jobs=JobStore(state),
        publisher=publisher,
        settings=settings,
        llm=llm,
        sources=SourceCache(bucket),
        readers=readers,
        worker_id=worker_id,
    )


@contextlib.contextmanager
def page_readers() -> Iterator[Readers]:
    """A worker's page readers: bounded children (killed on the way out) and the OCR
    engine."""
    with contextlib.closing(PageReaders()) as children:
        yield Readers(pages=children, ocr=OcrEngine())


@contextlib.asynccontextmanager
async def started(connections: Connections) -> AsyncIterator[Collaborators]:
    with contextlib.closing(PageReaders()) as children:
        readers = Readers(pages=children, ocr=OcrEngine())
        # The readers' forkserver and first child start while the consumers do, instead of
        # on the first page (their imports take a second or two).
        warming = asyncio.create_task(children.warm())
        try:
            async with model_client(connections.settings) as llm:
                yield bootstrap(
                    bucket=connections.bucket,
                    state=connections.state,
                    publisher=connections.publisher,
                    settings=connections.settings,
                    llm=llm,
                    readers=readers,
                    worker_id=connections.worker_id,
                )
        finally:
            warming.cancel()
