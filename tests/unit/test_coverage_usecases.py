"""The coverage ladder's state machine, driven through its use cases with in-memory stores
and publisher: which requests go out, when a page leaves, and what redeliveries change."""

from dataclasses import dataclass, field

import pytest

from services.coverage.bootstrap import bootstrap
from services.coverage.ladder import LadderRung
from services.coverage.store import LadderStore
from services.coverage.usecases import Collaborators, LadderNotStarted, on_extracted, on_structured
from shared.contracts import subjects
from shared.contracts.messages import (
    FallbackPage,
    JobOptions,
    PageCovered,
    PageExtracted,
    PageStructured,
    StructurePage,
)
from shared.contracts.models import CoveredPage, ExtractionResult, PageObject, Rung
from shared.infra.jobs import JobStore
from shared.infra.settings import Settings
from shared.infra.storage import Keys
from shared.pagetext import TextLayer
from tests.support.fakes import MemoryBucket, MemoryStateStore, RecordingPublisher
from tests.support.pdfs import text_layer_of

JOB = "j_0123456789abcdef0123456789abcdef"
NOTES = [
    "1. ALL DIMENSIONS SHALL BE VERIFIED IN THE FIELD.",
    "2. PROVIDE FIRE BLOCKING AT EACH FLOOR LEVEL.",
    "3. (5) 2X6 STUD PACK AT EACH GIRDER BEARING.",
]
TEXT_KEY = Keys.page(JOB, 1, "text.json")
EXTRACTED_KEY = Keys.page(JOB, 1, "extracted.json")
COVERED_KEY = Keys.page(JOB, 1, "covered.json")


@dataclass
class Rig:
    """One coverage service's world: its bucket, state store and publisher, and the use
    cases' collaborators wired from them by the service's own bootstrap, once, as the
    service wires them (they hold nothing of a page but what the stores keep)."""

    settings: Settings
    bucket: MemoryBucket = field(default_factory=MemoryBucket)
    state: MemoryStateStore = field(default_factory=MemoryStateStore)
    publisher: RecordingPublisher = field(default_factory=RecordingPublisher)

    def __post_init__(self) -> None:
        self.collaborators = bootstrap(
            bucket=self.bucket, state=self.state, publisher=self.publisher, settings=self.settings
        )

    def io(self) -> Collaborators:
        return self.collaborators

    async def extracted(self, layer: TextLayer, rung: Rung, lines: list[int]) -> PageExtracted:
        """Rung 1's result citing ``lines`` stored, and its event."""
        await self.bucket.put_json(TEXT_KEY, layer)
        await self.bucket.put_json(EXTRACTED_KEY, result(layer, rung, lines))
        return PageExtracted(
            job_id=JOB,
            page_number=1,
            result_key=EXTRACTED_KEY,
            text_key=TEXT_KEY,
            source_key=Keys.source(JOB),
            status="ok",
            rung=rung,
            has_text_layer=layer.has_text_layer,
        )

    async def answered(self, layer: TextLayer, rung: LadderRung, lines: list[int]):
        """Extract's answer to a rung 2/3 request, citing ``lines``, stored; its event."""
        key = Keys.page(JOB, 1, f"structured-{rung}.json")
        await self.bucket.put_json(key, result(layer, rung, lines))
        return PageStructured(job_id=JOB, page_number=1, rung=rung, result_key=key, status="ok")

    def requests(self) -> list[str]:
        """The subjects published, in order, live progress left out."""
        return [p.name for p in self.publisher.published if p.name != subjects.JOB_PROGRESS]


def result(layer: TextLayer, rung: Rung, lines: list[int]) -> ExtractionResult:
    objects = [
        PageObject(
            object_id=f"{rung}-{i}",
            source_text=layer.line_texts[i],
            evidence=list(layer.lines[i]),
            rung=rung,
        )
        for i in lines
    ]
    return ExtractionResult(
        job_id=JOB, page_number=1, rung=rung, status="ok", has_text_layer=True, objects=objects
    )


def with_model(settings: Settings) -> Settings:
    return settings.model_copy(
        update={"llm_base_url": "http://127.0.0.1:9/v1", "llm_extract_model": "scripted"}
    )


@pytest.fixture
def layer() -> TextLayer:
    return text_layer_of(NOTES)


async def test_a_covered_page_leaves_the_ladder_at_once(layer):
    """Rung 1 citing every line: covered.json written, the page marked covered, then
    page.covered announced; no rung asked for."""
    rig = Rig(Settings(_env_file=None))
    await on_extracted(rig.io(), await rig.extracted(layer, "offline", [0, 1, 2]))

    assert rig.requests() == [subjects.PAGE_COVERED]
    covered = await rig.bucket.get_model(COVERED_KEY, CoveredPage)
    assert covered.rungs == ["offline"] and covered.coverage.ratio == 1.0
    assert not covered.below_floor
    event = rig.publisher.on(subjects.PAGE_COVERED)[0]
    assert isinstance(event, PageCovered) and event.covered_key == COVERED_KEY
    assert event.source_key == Keys.source(JOB)  # what verify renders evidence crops from
    # Progress is recorded before the event that announces it.
    names = [p.name for p in rig.publisher.published]
    assert names.index(subjects.JOB_PROGRESS) < names.index(subjects.PAGE_COVERED)
    states = await JobStore(rig.state).page_states(JOB)
    assert states[1].stage == "covered"
    ladder = await LadderStore(rig.state).load(JOB, 1)
    assert ladder is not None and ladder.done


async def test_a_low_page_climbs_structuring_then_fallback_each_once(layer):
    """With a model: rung 2 asked, then (still low) rung 3 for exactly the lines nothing
    covers, then the merged page leaves with every rung and its coverage before and after."""
    rig = Rig(with_model(Settings(_env_file=None)))
    extracted = await rig.extracted(layer, "vision", [])
    await on_extracted(rig.io(), extracted)
    await on_extracted(rig.io(), extracted)  # redelivered: the same request, dropped
    assert rig.requests() == [subjects.PAGE_STRUCTURE]
    assert len([p for p in rig.publisher.attempts if p.name == subjects.PAGE_STRUCTURE]) == 2
    structure = rig.publisher.on(subjects.PAGE_STRUCTURE)[0]
    assert isinstance(structure, StructurePage) and structure.text_key == TEXT_KEY

    await on_structured(rig.io(), await rig.answered(layer, "text_structuring", [0]))
    assert rig.requests() == [subjects.PAGE_STRUCTURE, subjects.PAGE_FALLBACK]
    fallback = rig.publisher.on(subjects.PAGE_FALLBACK)[0]
    assert isinstance(fallback, FallbackPage) and fallback.lines == [1, 2]

    await on_structured(rig.io(), await rig.answered(layer, "fallback", [1, 2]))
    assert rig.requests()[-1] == subjects.PAGE_COVERED
    covered = await rig.bucket.get_model(COVERED_KEY, CoveredPage)
    assert covered.rungs == ["vision", "text_structuring", "fallback"]
    assert (covered.coverage_before.ratio, covered.coverage.ratio) == (0.0, 1.0)
    assert [o.object_id for o in covered.objects] == [
        "text_structuring-0",
        "fallback-1",
        "fallback-2",
    ]


async def test_without_a_model_a_low_page_goes_to_fallback(layer):
    """No model to structure text: rung 3 is asked for every uncovered line at once."""
    rig = Rig(Settings(_env_file=None))
    await on_extracted(rig.io(), await rig.extracted(layer, "offline", [1]))
    assert rig.requests() == [subjects.PAGE_FALLBACK]
    fallback = rig.publisher.on(subjects.PAGE_FALLBACK)[0]
    assert isinstance(fallback, FallbackPage) and fallback.lines == [0, 2]


async def test_job_options_turn_rungs_off(layer):
    """A job that turns fallback off leaves below the floor, named so, with rung 1 only."""
    rig = Rig(Settings(_env_file=None))
    extracted = await rig.extracted(layer, "offline", [1])
    await on_extracted(
        rig.io(), extracted.model_copy(update={"options": JobOptions(fallback=False)})
    )
    assert rig.requests() == [subjects.PAGE_COVERED]
    covered = await rig.bucket.get_model(COVERED_KEY, CoveredPage)
    assert covered.below_floor and covered.rungs == ["offline"]


async def test_an_answer_before_the_ladder_started_is_retried(layer):
    """A rung answer for a page coverage never saw raises (the delivery is retried) and
    publishes nothing."""
    rig = Rig(Settings(_env_file=None))
    with pytest.raises(LadderNotStarted):
        await on_structured(rig.io(), await rig.answered(layer, "fallback", [0]))
    assert rig.publisher.attempts == []


async def test_a_redelivered_answer_re_announces_the_stored_page(layer):
    """After the page left the ladder, a redelivered answer merges nothing again: the stored
    covered page is announced under the same de-duplication id, unchanged."""
    rig = Rig(Settings(_env_file=None))
    await on_extracted(rig.io(), await rig.extracted(layer, "offline", [0]))
    answer = await rig.answered(layer, "fallback", [1, 2])
    await on_structured(rig.io(), answer)
    stored = rig.bucket.objects[COVERED_KEY]

    await on_structured(rig.io(), answer)
    await on_extracted(rig.io(), await rig.extracted(layer, "offline", [0]))
    assert rig.bucket.objects[COVERED_KEY] == stored
    covered_events = [p for p in rig.publisher.attempts if p.name == subjects.PAGE_COVERED]
    assert len(covered_events) == 3 and len({p.dedup_id for p in covered_events}) == 1
    assert rig.requests() == [subjects.PAGE_FALLBACK, subjects.PAGE_COVERED]


async def test_a_page_without_words_has_nothing_to_climb():
    """A page with no text layer and no OCR words leaves at once, not below the floor."""
    rig = Rig(with_model(Settings(_env_file=None)))
    blank = text_layer_of([])
    await on_extracted(rig.io(), await rig.extracted(blank, "vision", []))
    assert rig.requests() == [subjects.PAGE_COVERED]
    covered = await rig.bucket.get_model(COVERED_KEY, CoveredPage)
    assert not covered.below_floor and covered.coverage.total_lines == 0
