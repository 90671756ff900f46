"""A worker's small caches of source PDFs: every page of a job reads the same file."""

import asyncio
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

import pymupdf

from shared.contracts.interfaces import Bucket


class SourceCache:
    """Keeps the most recent source PDFs in memory, bounded by total size; a source no page
    asked for in ``idle_s`` is let go, since its job is done or stalled (kept until the
    size bound, a worker's memory grew with every job it had seen)."""

    def __init__(
        self,
        store: Bucket,
        max_bytes: int = 512 * 1024 * 1024,
        idle_s: float = 120.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._store = store
        self._max_bytes = max_bytes
        self._idle_s = idle_s
        self._clock = clock
        self._items: OrderedDict[str, tuple[bytes, float]] = OrderedDict()
        self._locks: dict[str, asyncio.Lock] = {}

    async def get(self, key: str) -> bytes:
        if key in self._items:
            self._items.move_to_end(key)
            self._items[key] = (self._items[key][0], self._clock())
            self._evict()
            return self._items[key][0]
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:  # concurrent pages of one job download it once
            if key not in self._items:
                self._items[key] = (await self._store.get_bytes(key), self._clock())
            self._evict()
        self._locks.pop(key, None)
        return self._items[key][0]

    def _evict(self) -> None:
        """The least recently used first while over the size, and every idle one; the
        newest is always kept."""
        stale = self._clock() - self._idle_s
        while len(self._items) > 1:
            _, used = next(iter(self._items.values()))
            if used >= stale and sum(len(d) for d, _ in self._items.values()) <= self._max_bytes:
                break
            self._items.popitem(last=False)


# PyMuPDF does not support use from several threads at once (its docs: it "may cause
# incorrect behaviour or even crash"). PDFs and page images are handled in worker threads to
# keep the event loop free, so every stretch of PyMuPDF work in a process holds this lock.
PDF_LOCK = threading.Lock()


# Documents kept open at once: the jobs a worker has in flight.
OPEN_DOCUMENTS = 4
_open: OrderedDict[bytes, pymupdf.Document] = OrderedDict()


def open_pdf(pdf: bytes) -> pymupdf.Document:
    """One open document per source for the pages of a job in flight: reopening parses the
    whole cross-reference table again, a cost that grows with the page count. Keyed by the
    bytes themselves (the source cache hands every page the same object, whose hash Python
    keeps). Callers use it under ``PDF_LOCK`` and must not close it.

    When a document is let go, MuPDF's store of what it decoded (fonts, images: up to
    256 MB, shrunk only when full) is emptied: it held on to the resources of every document
    a process had seen (rendering the corpus three times: 332, 419, 432 MB; emptied: 316)."""
    doc = _open.get(pdf)
    if doc is not None:
        _open.move_to_end(pdf)
        return doc
    doc = _open[pdf] = pymupdf.open(stream=pdf, filetype="pdf")
    if len(_open) > OPEN_DOCUMENTS:
        _open.popitem(last=False)
        pymupdf.TOOLS.store_shrink(100)
    return doc
