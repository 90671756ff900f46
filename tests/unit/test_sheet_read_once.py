"""A job's pages read once: extract reads each page's title block, drawing index and
references into its ``SheetReading`` (with the file's page label and bookmarks), and coverage,
verify and the report work from that reading. The whole job runs in process through every
service's use cases, wired by their own bootstraps over in-memory stores."""

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pytest

import shared.sheet.reader
import shared.sheet.view
from services.coverage import usecases as coverage
from services.coverage.bootstrap import bootstrap as coverage_bootstrap
from services.extract import usecases as extract
from services.extract.bootstrap import bootstrap as extract_bootstrap
from services.extract.reading.page import Readers
from services.report import usecases as report
from services.report.bootstrap import bootstrap as report_bootstrap
from services.verify import usecases as verify
from services.verify.bootstrap import bootstrap as verify_bootstrap
from shared.contracts import subjects
from shared.contracts.messages import ExtractPage, JobOptions
from shared.contracts.models import CoveredPage, ExtractionResult, VerifiedPage
from shared.contracts.report import Report
from shared.infra.jobs import JobRecord, JobStore, now
from shared.infra.settings import Settings
from shared.infra.storage import Keys
from tests.support.fakes import MemoryBucket, MemoryStateStore, RecordingPublisher
from tests.support.sets import SHEETS, indexed_set

JOB = "j_0123456789abcdef0123456789abcdef"
PAGES = 3


def _set_pdf() -> bytes:
    """The first pages of the indexed set (a cover with its drawing index, sheets with
    references), with page labels and an outline naming two of the sheets."""
    doc = indexed_set()
    doc.select(list(range(PAGES)))
    doc.set_page_labels([{"startpage": 0, "prefix": "S-", "style": "D", "firstpagenum": 1}])
    doc.set_toc([[1, "Drawings", 1], [2, "A-101 FIRST FLOOR PLAN", 2], [2, "A-201", 3]])
    return doc.tobytes()


@dataclass
class Job:
    """Every service's use cases over one set of in-memory stores, and the events between
    them delivered in the order they were published."""

    readers: Readers
    settings: Settings = field(default_factory=lambda: Settings(_env_file=None))
    bucket: MemoryBucket = field(default_factory=MemoryBucket)
    state: MemoryStateStore = field(default_factory=MemoryStateStore)
    publisher: RecordingPublisher = field(default_factory=RecordingPublisher)

    async def run(self, pdf: bytes, pages: int) -> None:
        common: dict[str, Any] = {
            "bucket": self.bucket,
            "state": self.state,
            "publisher": self.publisher,
        }
        ex = extract_bootstrap(
            **common, settings=self.settings, llm=None, readers=self.readers, worker_id="x:1"
        )
        cov = coverage_bootstrap(**common, settings=self.settings)
        ver = verify_bootstrap(**common, settings=self.settings, llm=None)
        rep = report_bootstrap(**common, settings=self.settings)
        await self.bucket.put_bytes(Keys.source(JOB), pdf, "application/pdf")
        await JobStore(self.state).create_job(
            JobRecord(
                job_id=JOB,
                file_name="set.pdf",
                page_count=pages,
                source_key=Keys.source(JOB),
                status="running",
                created_at=now(),
            )
        )
        options = JobOptions(judge=False)
        for n in range(1, pages + 1):
            task = ExtractPage(job_id=JOB, page_number=n, source_key=Keys.source(JOB))
            await extract.extract(ex, task.model_copy(update={"options": options}))
        handlers = {
            subjects.PAGE_EXTRACTED: lambda e: coverage.on_extracted(cov, e),
            subjects.PAGE_STRUCTURE: lambda e: extract.structure(ex, e),
            subjects.PAGE_FALLBACK: lambda e: extract.fallback(ex, e),
            subjects.PAGE_STRUCTURED: lambda e: coverage.on_structured(cov, e),
            subjects.PAGE_COVERED: lambda e: verify.verify(ver, e),
            subjects.PAGE_VERIFIED: lambda e: report.on_verified(rep, e),
            subjects.PAGE_FAILED: lambda e: report.on_failed(rep, e),
        }
        delivered = 0
        while delivered < len(self.publisher.published):
            message = self.publisher.published[delivered]
            delivered += 1
            if handle := handlers.get(message.name):
                await handle(message.event)


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> Counter[int]:
    """The title-block reader's readings of a page, by page: however it is called (every
    reading of a title block starts by laying out the page's views)."""
    counted: Counter[int] = Counter()
    real = shared.sheet.view.views

    def counting(layer):
        counted[layer.page_number] += 1
        return real(layer)

    monkeypatch.setattr(shared.sheet.reader, "views", counting)
    return counted


async def test_a_job_reads_each_title_block_once_and_every_stage_keeps_the_reading(
    readers: Readers, calls: Counter[int]
):
    """Over a whole job (extract, coverage and its ladder, verify, report), the title block
    is read once per page; the reading travels from extracted.json to covered.json and
    verified.json, fills the sheet header, and hands coverage the page's drawing index and
    references, as the set step expects them."""
    job = Job(readers)
    await job.run(_set_pdf(), PAGES)

    assert calls == dict.fromkeys(range(1, PAGES + 1), 1)
    built = await job.bucket.get_model(Keys.report(JOB, "json"), Report)
    assert [p.status for p in built.pages] == ["verified"] * PAGES
    for n, (number, *_) in enumerate(SHEETS[:PAGES], start=1):
        extracted = await job.bucket.get_model(Keys.extracted(JOB, n), ExtractionResult)
        covered = await job.bucket.get_model(Keys.covered(JOB, n), CoveredPage)
        verified = await job.bucket.get_model(Keys.verified(JOB, n), VerifiedPage)
        reading = extracted.reading
        assert reading is not None and reading.sheet_number == number
        assert covered.reading == reading and verified.reading == reading
        assert covered.drawing_index == reading.index_rows
        assert covered.references == reading.references
        assert built.pages[n - 1].sheet.sheet_number == number
    cover = await job.bucket.get_model(Keys.covered(JOB, 1), CoveredPage)
    assert ("A-101", "FLOOR PLAN") in cover.drawing_index
    assert built.summary.set.has_index


async def test_the_reading_keeps_the_files_page_label_and_bookmarks(readers: Readers):
    """Each page's reading has the page label the file gives it and the titles of the
    bookmarks that point at it (none where none does)."""
    job = Job(readers)
    await job.run(_set_pdf(), PAGES)

    hints = []
    for n in range(1, PAGES + 1):
        reading = (await job.bucket.get_model(Keys.extracted(JOB, n), ExtractionResult)).reading
        assert reading is not None
        hints.append((reading.page_label, reading.bookmarks))
    assert hints == [
        ("S-1", ["Drawings"]),
        ("S-2", ["A-101 FIRST FLOOR PLAN"]),
        ("S-3", ["A-201"]),
    ]
