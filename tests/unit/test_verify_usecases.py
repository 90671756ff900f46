"""Verify's use case with in-memory stores and publisher, wired by the service's own
bootstrap: a covered page in, its verdict stored with the evidence crops a person reads and
announced after its progress; the page image read only when something needs it; the judge
asked only when configured and allowed by the job; the OCR check (its engine faked: it
reads what it is told) refuting a text layer the page does not show."""

from dataclasses import dataclass, field

import pymupdf
import pytest

from services.extract.guard import apply_grounding_guard
from services.extract.reading.textlayer import read_text_layer
from services.verify.bootstrap import bootstrap
from services.verify.usecases import Collaborators, verify
from shared.contracts import subjects
from shared.contracts.interfaces import ModelClient
from shared.contracts.messages import JobOptions, PageCovered
from shared.contracts.models import Coverage, CoveredPage, PageObject, VerifiedPage
from shared.infra.llm import LLMClient
from shared.infra.settings import Settings
from shared.infra.storage import Keys
from shared.pagetext import TextLayer
from shared.sheet.header import SheetHeader
from tests.support.fakes import MemoryBucket, MemoryStateStore, RecordingPublisher, ScriptedOcr
from tests.support.flows import lenient_judge
from tests.support.model_server import ScriptedModelServer, request_images

JOB = "j_ffeeddccbbaa99887766554433221100"
NOTES = ["GENERAL NOTES", "1. PROVIDE (5) 2X6 STUD PACK AT EACH END OF BEAM.", "SHEET NO. A101"]
MISREAD = PageObject(
    object_id="N1",
    source_text="(2) 2X6 STUD PACK",
    grounding="vision_unverified",
    attributes={"quantity": 2},
)
GOOD = PageObject(object_id="N2", source_text="GENERAL NOTES", grounding="source_text")
CITED = GOOD.model_copy(update={"evidence": [0, 1]})  # the words GENERAL NOTES


def notes_page() -> tuple[bytes, TextLayer]:
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    for i, line in enumerate(NOTES):
        page.insert_text((72, 100 + i * 20), line, fontsize=10)
    pdf = doc.tobytes()
    return pdf, read_text_layer(pymupdf.open(stream=pdf)[0], 1, min_chars=20)


@dataclass
class Rig:
    """One verify worker's world: its stores and publisher, and the collaborators its
    bootstrap wires from them."""

    settings: Settings = field(default_factory=lambda: Settings(_env_file=None))
    llm: ModelClient | None = None
    ocr: ScriptedOcr | None = None
    bucket: MemoryBucket = field(default_factory=MemoryBucket)
    state: MemoryStateStore = field(default_factory=MemoryStateStore)
    publisher: RecordingPublisher = field(default_factory=RecordingPublisher)

    def __post_init__(self) -> None:
        self.io: Collaborators = bootstrap(
            bucket=self.bucket,
            state=self.state,
            publisher=self.publisher,
            settings=self.settings,
            llm=self.llm,
            ocr=self.ocr,
        )

    async def covered(
        self, objects: list[PageObject], *, options: JobOptions | None = None
    ) -> PageCovered:
        """Coverage's output for the notes page stored (source, words, covered page, and
        the page image when ``image``), and its event."""
        pdf, layer = notes_page()
        kept, _ = apply_grounding_guard(objects, layer)
        coverage = Coverage(total_lines=3, covered_lines=2, ratio=2 / 3)
        page = CoveredPage(
            job_id=JOB,
            page_number=1,
            has_text_layer=True,
            objects=kept,
            sheet=SheetHeader(sheet_number="A101", sheet_number_source="extraction"),
            coverage_before=coverage,
            coverage=coverage,
            floor=0.6,
            below_floor=False,
        )
        await self.bucket.put_bytes(Keys.source(JOB), pdf, "application/pdf")
        await self.bucket.put_json(Keys.text(JOB, 1), layer)
        await self.bucket.put_json(Keys.covered(JOB, 1), page)
        return PageCovered(
            job_id=JOB,
            page_number=1,
            covered_key=Keys.covered(JOB, 1),
            text_key=Keys.text(JOB, 1),
            source_key=Keys.source(JOB),
            coverage=coverage,
            rungs=["vision"],
            sheet=page.sheet,
            options=options or JobOptions(),
        )

    async def image(self) -> None:
        pdf, _ = notes_page()
        png = pymupdf.open(stream=pdf)[0].get_pixmap(dpi=36).tobytes("png")
        await self.bucket.put_bytes(Keys.image(JOB, 1), png, "image/png")


async def test_a_misread_is_stored_refuted_with_its_crop_and_announced():
    """The oracle refutes the misread against the words it cites; the verified page is
    stored with a crop of its evidence under the job's folder, the page marked verified
    (progress announced first), then page.verified carries the verdict."""
    rig = Rig()
    await verify(rig.io, await rig.covered([MISREAD, GOOD]))

    verified = await rig.bucket.get_model(Keys.verified(JOB, 1), VerifiedPage)
    assert verified.verdict.kinds == ["content_wrong"] and not verified.verdict.ok
    [crop] = verified.evidence_crops
    assert crop.object_id == "N1"
    assert rig.bucket.objects[Keys.job(JOB) + crop.key].startswith(b"\xff\xd8")  # a JPEG

    assert [p.name for p in rig.publisher.published] == [
        subjects.JOB_PROGRESS,
        subjects.PAGE_VERIFIED,
    ]
    [event] = rig.publisher.on(subjects.PAGE_VERIFIED)
    assert (event.verified_key, event.verdict) == (Keys.verified(JOB, 1), verified.verdict)
    assert (await rig.io.jobs.page_states(JOB))[1].stage == "verified"


async def test_without_a_judge_the_page_image_is_not_needed():
    """A text page checked by the oracle alone is verified before its image is stored (the
    image is read only for the judge or to tell a blank page from a scan)."""
    rig = Rig()
    await verify(rig.io, await rig.covered([GOOD]))
    assert Keys.image(JOB, 1) not in rig.bucket.objects
    [event] = rig.publisher.on(subjects.PAGE_VERIFIED)
    assert event.verdict.ok and not event.verdict.kinds


@pytest.fixture(scope="module")
def judge_server():
    with ScriptedModelServer(lenient_judge) as server:
        yield server


@pytest.fixture
async def judge(judge_server):
    """The real model client against a scripted judge that confirms what it is shown."""
    judge_server.requests.clear()
    settings = Settings(
        _env_file=None, llm_base_url=judge_server.base_url, llm_verify_model="judge-m"
    )
    client = LLMClient(settings)
    yield settings, client, judge_server
    await client.aclose()


async def test_the_judge_sees_the_page_only_when_the_job_allows_it(judge):
    """With a judge configured the page image and evidence crops are shown to it; a job
    that says judge=false is checked by the oracle alone, and the judge never hears of it."""
    settings, client, server = judge
    rig = Rig(settings=settings, llm=client)
    await rig.image()
    await verify(rig.io, await rig.covered([GOOD], options=JobOptions(judge=False)))
    assert server.requests == []
    alone = await rig.bucket.get_model(Keys.verified(JOB, 1), VerifiedPage)
    assert "verify" not in alone.usage

    await verify(rig.io, await rig.covered([GOOD]))
    assert server.requests and request_images(server.requests[0])
    judged = await rig.bucket.get_model(Keys.verified(JOB, 1), VerifiedPage)
    assert judged.usage["verify"].calls == len(server.requests) and judged.verdict.ok


async def test_the_ocr_check_refutes_what_the_sheet_does_not_show():
    """Given an OCR engine, a sample of the page's claims is read from its render: a line
    that reads otherwise than its words (a shifted font encoding) is refuted as
    text_layer_mismatch (basis ocr), citing the reading, with its evidence crop stored."""
    ocr = ScriptedOcr(crop_text="HFOFSBM OPUFT")
    rig = Rig(ocr=ocr)
    await verify(rig.io, await rig.covered([CITED]))

    verified = await rig.bucket.get_model(Keys.verified(JOB, 1), VerifiedPage)
    assert not verified.verdict.ok and "text_layer_mismatch" in verified.verdict.kinds
    [good] = verified.objects
    assert good.verification and good.verification.basis == "ocr"
    assert good.verification.kind == "text_layer_mismatch"
    assert '"HFOFSBM OPUFT"' in (good.verification.problem or "")
    assert [c.object_id for c in verified.evidence_crops] == ["N2"]
    assert ocr.crops_read == 1  # the one object's line: the page has no title block
    [event] = rig.publisher.on(subjects.PAGE_VERIFIED)
    assert event.verdict == verified.verdict


async def test_with_the_ocr_check_off_the_engine_reads_nothing():
    """SHEETFLOW_VERIFY_OCR_CHECK=false: the engine is given, never asked."""
    settings = Settings(_env_file=None, verify_ocr_check=False)
    ocr = ScriptedOcr(crop_text="HFOFSBM OPUFT")
    rig = Rig(settings=settings, ocr=ocr)
    await verify(rig.io, await rig.covered([CITED]))
    assert ocr.crops_read == 0
    [event] = rig.publisher.on(subjects.PAGE_VERIFIED)
    assert event.verdict.ok
