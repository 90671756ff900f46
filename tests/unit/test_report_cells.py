"""The report waits for the set's re-reads: a page that read no number, where the set's
confident pages agree on the cell that prints theirs, is asked of extract
(``page.read_cell``); once its answer is in (``page.cell_read``), the report is written with
the number the page's own reader found there, and never with a number the template made."""

import asyncio
from datetime import UTC, datetime

from services.report.bootstrap import bootstrap
from services.report.usecases import on_cell_read, on_verified, supervise_cells
from shared.contracts import subjects
from shared.contracts.messages import CellRead, PageVerified, ReadCell, ReportReady
from shared.contracts.models import CellReading, Coverage, PageVerdict, VerifiedPage
from shared.contracts.report import Report
from shared.infra.jobs import JobRecord, JobStore
from shared.infra.settings import Settings
from shared.infra.storage import Keys
from shared.pagetext import Box
from shared.sheet.identity import decide_identity
from shared.sheet.reader import Evidence
from shared.sheet.reading import Candidate, FieldReading, SheetReading
from tests.support.fakes import MemoryBucket, MemoryStateStore, RecordingPublisher

JOB = "j_0123456789abcdef0123456789abcdef"
PASSED = PageVerdict(ok=True)
NUMBER_BOX = Box(1100.0, 740.0, 1160.0, 760.0)
FULL = Coverage(total_lines=1, covered_lines=1, ratio=1.0)


def _numbered(number: str, word: int = 0) -> SheetReading:
    chosen = Candidate(
        text=number,
        word_ids=[word],
        box=NUMBER_BOX,
        size=20,
        label="SHEET NO.",
        evidence=Evidence.LABEL_IN_TITLE_BLOCK,
        chosen=True,
    )
    return SheetReading(number=FieldReading(text=number, word_ids=[word]), candidates=[chosen])


class Rig:
    def __init__(self, wait_s: float = 60.0) -> None:
        self.bucket = MemoryBucket()
        self.state = MemoryStateStore()
        self.publisher = RecordingPublisher()
        self.io = bootstrap(
            bucket=self.bucket,
            state=self.state,
            publisher=self.publisher,
            settings=Settings(_env_file=None, report_cell_wait_s=wait_s),
        )

    async def job(self, pages: int, canceled: bool = False) -> None:
        job = JobRecord(
            job_id=JOB,
            file_name="set.pdf",
            page_count=pages,
            source_key=Keys.source(JOB),
            status="running",
            created_at=datetime(2026, 1, 1, tzinfo=UTC),
            canceled=canceled,
        )
        await JobStore(self.state).create_job(job)

    async def verify(self, n: int, reading: SheetReading) -> None:
        key = Keys.verified(JOB, n)
        page = VerifiedPage(
            job_id=JOB,
            page_number=n,
            has_text_layer=False,
            coverage_before=FULL,
            coverage=FULL,
            floor=0.6,
            below_floor=False,
            verdict=PASSED,
            reading=reading,
            sheet=decide_identity(reading),
        )
        await self.bucket.put_json(key, page)
        event = PageVerified(job_id=JOB, page_number=n, verified_key=key, verdict=PASSED)
        await on_verified(self.io, event)

    async def answer(self, n: int, reading: SheetReading | None) -> None:
        """Extract's answer for page ``n``: stored, then announced."""
        key = Keys.cell_read(JOB, n)
        answer = CellReading(cell=Box(1040, 700, 1220, 790), first_word=5, reading=reading)
        await self.bucket.put_json(key, answer)
        number = reading.sheet_number if reading else None
        await on_cell_read(
            self.io, CellRead(job_id=JOB, page_number=n, result_key=key, number=number)
        )

    def asked(self) -> list[ReadCell]:
        return [e for e in self.publisher.on(subjects.PAGE_READ_CELL) if isinstance(e, ReadCell)]

    def ready(self) -> list[ReportReady]:
        return [e for e in self.publisher.on(subjects.REPORT_READY) if isinstance(e, ReportReady)]

    async def report(self) -> Report:
        return await self.bucket.get_model(Keys.report(JOB, "json"), Report)


async def _three_pages_one_missed(rig: Rig) -> None:
    await rig.job(3)
    await rig.verify(1, _numbered("A-101"))
    await rig.verify(2, _numbered("A-102"))
    await rig.verify(3, SheetReading())


async def test_the_report_waits_for_the_cell_then_takes_the_pages_own_number():
    """All pages terminal: page 3's cell is asked for and no report is written; its answer
    in, the report is written once, page 3 numbered by what its own reader found."""
    rig = Rig()
    await _three_pages_one_missed(rig)
    [asked] = rig.asked()
    assert (asked.page_number, asked.label, asked.pages) == (3, "SHEET NO.", 2)
    assert asked.cell.contains(NUMBER_BOX.centre) and asked.source_key == Keys.source(JOB)
    assert rig.ready() == []
    await rig.answer(3, _numbered("A-103", word=5))
    assert len(rig.ready()) == 1
    report = await rig.report()
    numbers = {p.page_number: p.sheet.sheet_number for p in report.pages}
    assert numbers == {1: "A-101", 2: "A-102", 3: "A-103"}
    assert len(rig.asked()) == 1  # answered: not asked again


async def test_a_cell_that_named_no_number_leaves_the_page_without_one():
    """Extract found no number in the cell: the report is written, the page unnumbered; the
    template supplied nothing."""
    rig = Rig()
    await _three_pages_one_missed(rig)
    await rig.answer(3, None)
    assert len(rig.ready()) == 1
    report = await rig.report()
    assert {p.page_number: p.sheet.sheet_number for p in report.pages}[3] is None


async def test_a_set_without_a_template_is_written_at_once():
    """A page whose number no label vouches for names no cell: nothing is asked, the
    report is written."""
    rig = Rig()
    await rig.job(2)
    unlabelled = _numbered("A-101").model_copy(deep=True)
    unlabelled.candidates[0].evidence = Evidence.LARGEST
    unlabelled.candidates[0].label = None
    await rig.verify(1, unlabelled)
    await rig.verify(2, SheetReading())
    assert rig.asked() == [] and len(rig.ready()) == 1


async def test_the_only_labelled_page_names_the_cell_for_one_pages_word():
    """One page whose title block labels its number names its cell for the others, and
    says it is one page's word (``pages`` 1: extract takes only a labelled number there)."""
    rig = Rig()
    await rig.job(2)
    await rig.verify(1, _numbered("A-101"))
    await rig.verify(2, SheetReading(ocr=True))
    [ask] = rig.asked()
    assert (ask.page_number, ask.pages, ask.label) == (2, 1, "SHEET NO.")
    assert rig.ready() == []


async def test_a_canceled_job_asks_for_nothing():
    """A canceled job's report is not held up by re-reads."""
    rig = Rig()
    await rig.job(3, canceled=True)
    await rig.verify(1, _numbered("A-101"))
    await rig.verify(2, _numbered("A-102"))
    await rig.verify(3, SheetReading())
    assert rig.asked() == [] and len(rig.ready()) == 1


async def test_a_cell_never_answered_holds_the_report_back_only_so_long():
    """Extract never answers (down, or the request lost): before the wait's end the report
    waits; after it, the report's supervisor writes it without the answer, page 3
    unnumbered, and forgets the wait."""
    rig = Rig(wait_s=0.2)
    await _three_pages_one_missed(rig)
    await supervise_cells(rig.io)
    assert rig.ready() == [] and await rig.io.cell_waits.waiting() == [JOB]
    await asyncio.sleep(0.25)
    await supervise_cells(rig.io)
    assert len(rig.ready()) == 1
    report = await rig.report()
    assert {p.page_number: p.sheet.sheet_number for p in report.pages}[3] is None
    assert await rig.io.cell_waits.waiting() == []
    await rig.answer(3, _numbered("A-103", word=5))  # a late answer changes nothing
    assert len(rig.ready()) == 1


async def test_a_late_page_event_past_the_wait_writes_the_report():
    """A redelivered page event after the wait's end writes the report too (the deadline
    is checked wherever the job is finished, not only by the supervisor)."""
    rig = Rig(wait_s=0.1)
    await _three_pages_one_missed(rig)
    await asyncio.sleep(0.15)
    await rig.verify(3, SheetReading())
    assert len(rig.ready()) == 1
