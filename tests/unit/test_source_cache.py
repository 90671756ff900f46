"""The source PDFs a worker keeps: every page of a job reads its file once, and a file no
page has asked for in a while is let go, so a worker's memory does not grow with the jobs it
has seen."""

import asyncio

import pymupdf
import pytest

from shared.pdf.sources import OPEN_DOCUMENTS, SourceCache, open_pdf
from tests.support.fakes import MemoryBucket


class ReadCountingBucket(MemoryBucket):
    def __init__(self) -> None:
        super().__init__()
        self.reads: list[str] = []

    async def get_bytes(self, key: str) -> bytes:
        self.reads.append(key)
        return await super().get_bytes(key)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _bucket(*keys: str, size: int = 10) -> ReadCountingBucket:
    bucket = ReadCountingBucket()
    bucket.objects = {key: key.encode() * size for key in keys}
    return bucket


def test_pages_of_one_job_read_its_source_once_even_at_once():
    bucket = _bucket("a")
    cache = SourceCache(bucket)

    async def pages() -> list[bytes]:
        return await asyncio.gather(*(cache.get("a") for _ in range(5)))

    assert asyncio.run(pages()) == [b"a" * 10] * 5
    assert bucket.reads == ["a"]


def test_a_source_no_page_asked_for_in_a_while_is_let_go():
    bucket, clock = _bucket("done", "running"), Clock()
    cache = SourceCache(bucket, idle_s=60, clock=clock)

    async def run() -> None:
        await cache.get("done")
        clock.now += 50
        await cache.get("running")
        clock.now += 50  # "done" idle 100 s, "running" 50 s
        await cache.get("running")
        await cache.get("done")

    asyncio.run(run())
    assert bucket.reads == ["done", "running", "done"]


def test_the_least_recently_used_goes_first_past_the_size_bound():
    bucket = _bucket("a", "b", "c", size=10)
    cache = SourceCache(bucket, max_bytes=25)

    async def run() -> None:
        for key in ("a", "b", "a", "c", "a", "b"):
            await cache.get(key)

    asyncio.run(run())
    # "b" was the least recent when "c" came; "a", used last, stayed.
    assert bucket.reads == ["a", "b", "c", "b"]


def test_the_newest_source_is_kept_whatever_its_size():
    bucket = _bucket("big", size=100)
    cache = SourceCache(bucket, max_bytes=10)

    async def run() -> None:
        await cache.get("big")
        await cache.get("big")

    asyncio.run(run())
    assert bucket.reads == ["big"]


def _pdf(text: str) -> bytes:
    with pymupdf.open() as doc:
        doc.new_page().insert_text((72, 72), text)
        return doc.tobytes()


def test_documents_stay_open_for_the_jobs_in_flight_and_the_store_is_emptied_of_one_let_go(
    monkeypatch: pytest.MonkeyPatch,
):
    """Pages of a job get the one open document; opening one past ``OPEN_DOCUMENTS`` lets
    the least recently used go and empties MuPDF's store of what it had decoded."""
    shrunk: list[int] = []
    monkeypatch.setattr(pymupdf.TOOLS, "store_shrink", shrunk.append)
    sources = [_pdf(f"job {n}") for n in range(OPEN_DOCUMENTS + 1)]
    first = [open_pdf(pdf) for pdf in sources[:OPEN_DOCUMENTS]]
    shrunk.clear()  # documents other tests left open were let go on the way
    assert open_pdf(sources[1]) is first[1]
    assert not shrunk
    open_pdf(sources[-1])  # the least recently used, job 0, goes
    assert shrunk == [100]
    assert open_pdf(sources[1]) is first[1]
    assert open_pdf(sources[0]) is not first[0]
    assert open_pdf(sources[0]).load_page(0).get_text().strip() == "job 0"
