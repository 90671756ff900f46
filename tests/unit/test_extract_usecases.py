"""Extract's use cases with in-memory stores and publisher, wired by the service's own
bootstrap (no model; the page readers and the OCR engine faked: MuPDF's work runs in this
process, OCR reads what it is told): what rung 1 stores and announces, in which order, what
a canceled job, an unreadable page, a page past its limits or a scan leaves, and the answers
to coverage's rung 2/3 requests."""

from dataclasses import dataclass, field

import pymupdf
import pytest

from services.extract.bootstrap import bootstrap
from services.extract.reading.page import Readers
from services.extract.usecases import (
    CANCELED_REASON,
    Collaborators,
    extract,
    fallback,
    queue_next_page,
    structure,
)
from shared.contracts import subjects
from shared.contracts.messages import (
    ExtractPage,
    FallbackPage,
    JobOptions,
    PageExtracted,
    PageFailed,
    PageStructured,
    StructurePage,
)
from shared.contracts.models import ExtractionResult
from shared.infra.broker import PageFailure
from shared.infra.jobs import JobRecord, JobStore, now
from shared.infra.settings import Settings
from shared.infra.storage import Keys
from shared.pagetext import Box, TextLayer, Word
from tests.support.fakes import (
    InlinePageReader,
    MemoryBucket,
    MemoryStateStore,
    RecordingPublisher,
    ScriptedOcr,
)
from tests.support.pdfs import SCANNED_LINES, notes_pdf, scanned_pdf

JOB = "j_00112233445566778899aabbccddeeff"
PAGE_KEYS = ("text.json", "image.png", "thumb.jpg", "extracted.json")


@dataclass
class Rig:
    """One extract worker's world: its stores, publisher and page readers, and the
    collaborators its bootstrap wires from them."""

    pages: InlinePageReader = field(default_factory=InlinePageReader)
    ocr: ScriptedOcr = field(default_factory=ScriptedOcr)
    bucket: MemoryBucket = field(default_factory=MemoryBucket)
    state: MemoryStateStore = field(default_factory=MemoryStateStore)
    publisher: RecordingPublisher = field(default_factory=RecordingPublisher)

    def __post_init__(self) -> None:
        self.io: Collaborators = bootstrap(
            bucket=self.bucket,
            state=self.state,
            publisher=self.publisher,
            settings=Settings(_env_file=None),
            llm=None,
            readers=Readers(pages=self.pages, ocr=self.ocr),
            worker_id="extract@test:1",
        )

    async def job(self, pdf: bytes, *, canceled: bool = False) -> ExtractPage:
        """The job's source stored and its record created; the task for its page 1."""
        await self.bucket.put_bytes(Keys.source(JOB), pdf, "application/pdf")
        record = JobRecord(
            job_id=JOB,
            file_name="set.pdf",
            page_count=1,
            source_key=Keys.source(JOB),
            status="running",
            canceled=canceled,
            created_at=now(),
        )
        await JobStore(self.state).create_job(record)
        options = JobOptions(judge=False)
        return ExtractPage(job_id=JOB, page_number=1, source_key=Keys.source(JOB), options=options)

    def stored(self) -> set[str]:
        return set(self.bucket.objects) - {Keys.source(JOB)}


@pytest.fixture
def rig() -> Rig:
    return Rig()


async def test_a_page_is_stored_marked_then_announced(rig: Rig):
    """Rung 1 stores the page's words, image, thumbnail and result under its keys, marks it
    extracted (announced as progress) before page.extracted, which names what was stored."""
    task = await rig.job(notes_pdf())
    await extract(rig.io, task)

    assert rig.stored() == {Keys.page(JOB, 1, name) for name in PAGE_KEYS}
    layer = await rig.bucket.get_model(Keys.text(JOB, 1), TextLayer)
    assert layer.has_text_layer and layer.line_texts[0] == "GENERAL NOTES"
    result = await rig.bucket.get_model(Keys.extracted(JOB, 1), ExtractionResult)
    assert (result.rung, result.status, result.worker_id) == ("offline", "ok", "extract@test:1")
    assert result.objects and all(o.evidence for o in result.objects)
    assert rig.bucket.objects[Keys.image(JOB, 1)].startswith(b"\x89PNG")

    names = [p.name for p in rig.publisher.published]
    assert names == [subjects.JOB_PROGRESS, subjects.PAGE_EXTRACTED]
    [event] = rig.publisher.on(subjects.PAGE_EXTRACTED)
    assert event == PageExtracted(
        job_id=JOB,
        page_number=1,
        result_key=Keys.extracted(JOB, 1),
        text_key=Keys.text(JOB, 1),
        source_key=Keys.source(JOB),
        status="ok",
        rung="offline",
        has_text_layer=True,
        options=task.options,
    )
    states = await rig.io.jobs.page_states(JOB)
    assert states[1].stage == "extracted"


async def test_starting_a_page_queues_the_page_a_window_further(rig: Rig):
    """Fair turns: page n of a windowed job queues page n + window (same source, options,
    window), before it is read; the last window queues nothing; a page already under way is
    not queued again."""
    task = await rig.job(notes_pdf())
    windowed = task.model_copy(update={"window": 3, "page_count": 5})
    await queue_next_page(rig.io, windowed)
    await queue_next_page(rig.io, windowed.model_copy(update={"page_number": 3}))
    [queued] = rig.publisher.on(subjects.PAGE_EXTRACT)
    assert queued == windowed.model_copy(update={"page_number": 4})
    await rig.io.jobs.mark_page(JOB, 5, "extracted")
    await queue_next_page(rig.io, windowed.model_copy(update={"page_number": 2}))
    assert len(rig.publisher.on(subjects.PAGE_EXTRACT)) == 1


async def test_an_ended_job_queues_no_more_pages(rig: Rig):
    """A job that has ended (every page failed by report's intake supervision) queues no
    further page when one of its queued pages starts."""
    task = await rig.job(notes_pdf())
    await rig.io.jobs.update_job(JOB, finished_at=now(), status="partial")
    await queue_next_page(rig.io, task.model_copy(update={"window": 1, "page_count": 2}))
    assert rig.publisher.on(subjects.PAGE_EXTRACT) == []


async def test_a_canceled_jobs_page_still_hands_its_turn_on(rig: Rig):
    """A skipped page (canceled job) queues the next one too: every page of the job ends."""
    task = await rig.job(notes_pdf(), canceled=True)
    await extract(rig.io, task.model_copy(update={"window": 1, "page_count": 2}))
    [queued] = rig.publisher.on(subjects.PAGE_EXTRACT)
    assert queued.page_number == 2


async def test_a_redelivered_page_is_announced_once(rig: Rig):
    """A second delivery of the same task (at-least-once) writes the same keys again and
    its announcement is dropped as a duplicate."""
    task = await rig.job(notes_pdf())
    await extract(rig.io, task)
    first = dict(rig.bucket.objects)
    await extract(rig.io, task)

    assert set(rig.bucket.objects) == set(first)
    assert rig.bucket.objects[Keys.text(JOB, 1)] == first[Keys.text(JOB, 1)]
    assert len(rig.publisher.on(subjects.PAGE_EXTRACTED)) == 1
    assert [p.name for p in rig.publisher.attempts].count(subjects.PAGE_EXTRACTED) == 2


async def test_a_canceled_job_skips_its_page_without_reading_it(rig: Rig):
    """The page of a canceled job is marked skipped and named as a canceled page; nothing
    of it is stored and it is never announced as extracted."""
    task = await rig.job(notes_pdf(), canceled=True)
    await extract(rig.io, task)

    assert rig.stored() == set()
    assert rig.publisher.on(subjects.PAGE_EXTRACTED) == []
    [skipped] = rig.publisher.on(subjects.PAGE_FAILED)
    assert skipped == PageFailed(
        job_id=JOB, page_number=1, stage="canceled", reason=CANCELED_REASON
    )
    assert (await rig.io.jobs.page_states(JOB))[1].stage == "skipped"


async def test_an_unreadable_page_fails_for_good_and_stores_nothing(rig: Rig):
    """A page the PDF does not hold is a PageFailure (dead-lettered at once by the stage
    runner, not retried), with the reason a person reads; nothing is stored or announced."""
    task = await rig.job(notes_pdf())
    missing = task.model_copy(update={"page_number": 2})
    with pytest.raises(PageFailure, match="page 2 does not exist"):
        await extract(rig.io, missing)
    assert rig.stored() == set()
    assert rig.publisher.attempts == []


def huge_image_pdf() -> bytes:
    """A page holding an image whose dictionary says 60,000 x 60,000 pixels."""
    doc = pymupdf.open()
    page = doc.new_page()
    pixmap = pymupdf.Pixmap(pymupdf.csGRAY, pymupdf.IRect(0, 0, 4, 4), False)
    xref = page.insert_image(pymupdf.Rect(72, 72, 144, 144), pixmap=pixmap)
    doc.xref_set_key(xref, "Width", "60000")
    doc.xref_set_key(xref, "Height", "60000")
    return doc.tobytes()


async def test_a_page_with_a_huge_image_fails_as_image_too_large_at_once(rig: Rig):
    """A 60,000 x 60,000 image is a PageFailure named image_too_large on its first delivery
    (dead-lettered, not retried, never decoded); nothing is stored."""
    task = await rig.job(huge_image_pdf())
    with pytest.raises(PageFailure, match=r"^image_too_large: .*60000 x 60000"):
        await extract(rig.io, task)
    assert rig.stored() == set()


async def test_a_page_past_its_limits_fails_by_name_and_stores_nothing(rig: Rig):
    """A page whose reading goes past its time or memory limit fails for good, saying so
    in words a person reads; nothing is stored or announced."""
    rig.pages.over_limit = {"read_page"}
    task = await rig.job(notes_pdf())
    with pytest.raises(PageFailure, match="page 1 is too complex to render within 60 s"):
        await extract(rig.io, task)
    assert rig.stored() == set()
    assert rig.publisher.attempts == []


async def test_a_scan_is_read_by_ocr_and_its_words_stand_in_for_a_text_layer(rig: Rig):
    """A page that is only a picture of text is read by the OCR engine: its words are stored
    as the page's words (marked OCR, not a text layer), read once from the area that holds
    them, and the objects cite them."""
    rig.ocr.words = [
        Word(text=text, bbox=Box(60, 85 + 30 * i, 60 + 12 * len(text), 103 + 30 * i), size=18)
        for i, text in enumerate(SCANNED_LINES)
    ]
    task = await rig.job(scanned_pdf())
    await extract(rig.io, task)

    layer = await rig.bucket.get_model(Keys.text(JOB, 1), TextLayer)
    assert (layer.source, layer.has_text_layer) == ("ocr", False)
    assert layer.line_texts == SCANNED_LINES
    assert {w.origin for w in layer.words} == {"ocr"}
    # The page read once, then the area holding its lines rendered closer for OCR.
    assert rig.pages.calls[:2] == ["read_page", "render_area"]
    assert rig.pages.calls.count("read_page") == 1
    result = await rig.bucket.get_model(Keys.extracted(JOB, 1), ExtractionResult)
    assert result.status == "ok" and result.objects
    cited = {i for o in result.objects for i in o.evidence}
    assert cited and cited <= {w.id for w in layer.words}
    [event] = rig.publisher.on(subjects.PAGE_EXTRACTED)
    assert not event.has_text_layer


async def test_fallback_cites_the_lines_asked_for_and_answers_coverage(rig: Rig):
    """Rung 3 reads the stored words, stores one stub per line asked for, and answers on
    page.structured with the result's key."""
    task = await rig.job(notes_pdf())
    await extract(rig.io, task)
    layer = await rig.bucket.get_model(Keys.text(JOB, 1), TextLayer)
    request = FallbackPage(job_id=JOB, page_number=1, text_key=Keys.text(JOB, 1), lines=[0])
    await fallback(rig.io, request)

    key = Keys.structured(JOB, 1, "fallback")
    result = await rig.bucket.get_model(key, ExtractionResult)
    assert (result.rung, result.status) == ("fallback", "ok")
    assert [o.source_text for o in result.objects] == [layer.line_texts[0]]
    [answer] = rig.publisher.on(subjects.PAGE_STRUCTURED)
    assert answer == PageStructured(
        job_id=JOB, page_number=1, rung="fallback", result_key=key, status="ok"
    )


async def test_structuring_without_a_model_answers_that_it_failed(rig: Rig):
    """Rung 2 with no model configured stores and announces a failed result naming why, so
    the ladder moves on instead of waiting."""
    task = await rig.job(notes_pdf())
    await extract(rig.io, task)
    await structure(rig.io, StructurePage(job_id=JOB, page_number=1, text_key=Keys.text(JOB, 1)))

    key = Keys.structured(JOB, 1, "text_structuring")
    result = await rig.bucket.get_model(key, ExtractionResult)
    assert (
        result.status == "failed" and result.reason == "no model is configured for text structuring"
    )
    [answer] = rig.publisher.on(subjects.PAGE_STRUCTURED)
    assert (answer.rung, answer.status, answer.result_key) == ("text_structuring", "failed", key)
