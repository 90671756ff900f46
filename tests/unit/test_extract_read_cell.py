"""Extract answers the report's ``page.read_cell``: the page read again in the named cell, the
answer stored, the cell's words added to text.json after the page's own (whose ids stay), and
``page.cell_read`` announced; asked twice, the same answer; a cell that cannot be read is
answered with nothing found."""

from dataclasses import dataclass, field

import pymupdf

from services.extract.bootstrap import bootstrap
from services.extract.reading.page import Readers, ocr_layer
from services.extract.usecases import read_cell
from shared.contracts import subjects
from shared.contracts.interfaces import Raster
from shared.contracts.messages import CellRead, ReadCell
from shared.contracts.models import CellReading, ExtractionResult
from shared.infra.settings import Settings
from shared.infra.storage import Keys
from shared.pagetext import Box, TextLayer, Word
from shared.sheet.reading import read_sheet
from tests.support.fakes import (
    InlinePageReader,
    MemoryBucket,
    MemoryStateStore,
    RecordingPublisher,
    ScriptedOcr,
)
from tests.support.glued import CELL_WORDS, PAGE_WORDS

JOB = "j_aabbccddeeff00112233445566778899"
W, H = 1224.0, 792.0
CELL = Box(1040.0, 700.0, 1220.0, 790.0)


@dataclass
class CellOcr(ScriptedOcr):
    """OCR that reads ``cell_words`` from any region it is given, or fails as told."""

    cell_words: list[Word] = field(default_factory=list)
    broken: bool = False
    regions: int = 0

    def ocr_raster(self, raster: Raster, turn: int = 0, *, detection_zoom=None, skip=None):
        self.regions += 1
        if self.broken:
            raise RuntimeError("the recogniser's model is damaged")
        return list(self.cell_words)


@dataclass
class Rig:
    ocr: CellOcr = field(default_factory=CellOcr)
    bucket: MemoryBucket = field(default_factory=MemoryBucket)
    publisher: RecordingPublisher = field(default_factory=RecordingPublisher)

    def __post_init__(self) -> None:
        self.io = bootstrap(
            bucket=self.bucket,
            state=MemoryStateStore(),
            publisher=self.publisher,
            settings=Settings(_env_file=None),
            llm=None,
            readers=Readers(pages=InlinePageReader(), ocr=self.ocr),
            worker_id="extract@test:1",
        )

    async def page(self) -> ReadCell:
        """An OCR'd page stored as rung 1 leaves it (its number unread: label and value
        glued), and the report's request for its cell."""
        doc = pymupdf.open()
        doc.new_page(width=W, height=H)
        await self.bucket.put_bytes(Keys.source(JOB), doc.tobytes(), "application/pdf")
        empty = TextLayer(page_number=1, width=W, height=H, has_text_layer=False, source="ocr")
        layer = ocr_layer(PAGE_WORDS, empty)
        result = ExtractionResult(
            job_id=JOB,
            page_number=1,
            rung="offline",
            status="ok",
            has_text_layer=False,
            reading=read_sheet(layer),
        )
        assert result.reading is not None and result.reading.number is None
        await self.bucket.put_json(Keys.text(JOB, 1), layer)
        await self.bucket.put_json(Keys.extracted(JOB, 1), result)
        return ReadCell(job_id=JOB, page_number=1, source_key=Keys.source(JOB), cell=CELL, pages=2)

    def answers(self) -> list[CellRead]:
        return [e for e in self.publisher.on(subjects.PAGE_CELL_READ) if isinstance(e, CellRead)]


async def test_the_cell_read_again_gives_the_page_its_number_with_its_own_word_ids():
    """The number is read in the cell; text.json keeps the page's words at their ids and
    holds the cell's after them; the stored reading cites those; page.cell_read names it."""
    rig = Rig(ocr=CellOcr(cell_words=CELL_WORDS))
    await read_cell(rig.io, await rig.page())
    [event] = rig.answers()
    assert event.number == "A-103" and event.result_key == Keys.cell_read(JOB, 1)
    answer = await rig.bucket.get_model(Keys.cell_read(JOB, 1), CellReading)
    layer = await rig.bucket.get_model(Keys.text(JOB, 1), TextLayer)
    assert answer.first_word == 3 and answer.reading is not None
    assert answer.reading.number is not None
    assert [w.text for w in layer.words[:3]] == [w.text for w in PAGE_WORDS]
    assert [layer.words[i].text for i in answer.reading.number.word_ids] == ["A-103"]
    assert min(answer.reading.number.word_ids) >= 3


async def test_asked_twice_the_stored_answer_is_given_again():
    """A redelivered request reads nothing again and adds no words twice."""
    rig = Rig(ocr=CellOcr(cell_words=CELL_WORDS))
    task = await rig.page()
    await read_cell(rig.io, task)
    words = len((await rig.bucket.get_model(Keys.text(JOB, 1), TextLayer)).words)
    await read_cell(rig.io, task)
    assert rig.ocr.regions == 1
    assert len((await rig.bucket.get_model(Keys.text(JOB, 1), TextLayer)).words) == words
    assert [e.number for e in rig.answers()] == ["A-103"]  # the duplicate dropped


async def test_a_cell_that_reads_nothing_is_answered_and_the_page_left_alone():
    """No number in the cell: the answer says so, text.json is as rung 1 left it."""
    rig = Rig(ocr=CellOcr(cell_words=[]))
    await read_cell(rig.io, await rig.page())
    [event] = rig.answers()
    answer = await rig.bucket.get_model(Keys.cell_read(JOB, 1), CellReading)
    assert event.number is None and answer.reading is None and answer.why
    layer = await rig.bucket.get_model(Keys.text(JOB, 1), TextLayer)
    assert len(layer.words) == 3


async def test_a_cell_that_cannot_be_read_is_answered_with_nothing_found():
    """OCR failing on the cell is no failure of the page: the report gets its answer."""
    rig = Rig(ocr=CellOcr(broken=True))
    await read_cell(rig.io, await rig.page())
    [event] = rig.answers()
    answer = await rig.bucket.get_model(Keys.cell_read(JOB, 1), CellReading)
    assert event.number is None and "not read" in answer.why


async def test_a_cell_whose_reading_crashed_the_worker_past_the_bound_is_not_read_again():
    """A delivery past the bound (earlier attempts ended with the worker) answers at once."""
    rig = Rig(ocr=CellOcr(cell_words=CELL_WORDS))
    task = await rig.page()
    await read_cell(rig.io, task, delivery=rig.io.settings.max_deliver + 1)
    [event] = rig.answers()
    assert event.number is None and rig.ocr.regions == 0
