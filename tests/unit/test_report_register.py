"""A project's drawing register, brought up to date by the report service's use case with the
in-memory stores: new numbers become version 1, a changed page a new version with its delta
and overlay, an unchanged one is re-issued, a sheet the upload lacks stays current, a
renumbered sheet is proposed and never merged; a job applied twice, or two jobs at once,
leave the register as one application each would."""

import asyncio
from datetime import UTC, date, datetime

import imagecodecs
import numpy

from services.report.bootstrap import bootstrap
from services.report.projects import update_register
from services.report.usecases import announce_changes, on_verified, with_register_changes
from shared.contracts import subjects
from shared.contracts.messages import JobOptions, PageVerified, RegisterUpdated, SheetRevised
from shared.contracts.models import Coverage, PageVerdict, VerifiedPage
from shared.contracts.report import PageReport, Report
from shared.infra.jobs import JobRecord, JobStore
from shared.infra.register_store import head_key, read_register
from shared.infra.settings import Settings
from shared.infra.storage import Keys
from shared.pagetext import TextLayer, laid_out
from shared.sheet.header import SheetHeader
from tests.support.fakes import MemoryBucket, MemoryStateStore, RecordingPublisher

PROJECT = "tower-b"
NOTES = [
    "1. VERIFY ALL DIMENSIONS IN THE FIELD",
    "2. PROVIDE (5) 2X6 STUD PACK AT EACH BEAM BEARING",
    "3. ALL LUMBER TO BE DOUGLAS FIR NO. 2 OR BETTER",
    "4. FASTEN SHEATHING WITH 10D NAILS AT 6 IN O.C.",
    "5. HOLD DOWNS PER SCHEDULE ON SHEET S-501",
    "6. CONCRETE TO REACH 3000 PSI AT 28 DAYS",
]


def sheet_layer(page: int, number: str, title: str, notes: list[str], revision: str) -> TextLayer:
    lines = [*notes, title, f"SHEET NO. {number}", f"REV {revision}"]
    words = []
    for row, line in enumerate(lines):
        x = 40.0
        for text in line.split():
            width = 7.0 * len(text)
            words.append(
                {"text": text, "bbox": (x, 40 + 20 * row, x + width, 50 + 20 * row), "size": 10}
            )
            x += width + 5
    return laid_out(page_number=page, width=792, height=612, words=words, has_text_layer=True)


def png(seed: int) -> bytes:
    image = numpy.full((306, 396, 3), 255, numpy.uint8)
    image[10:12, 10:386] = 0
    image[40 + seed : 44 + seed, 40:200] = 0
    return bytes(imagecodecs.png_encode(image))


class World:
    def __init__(self) -> None:
        self.bucket = MemoryBucket()
        self.state = MemoryStateStore()
        self.jobs = 0

    async def upload(
        self, sheets: list[tuple[str, str, list[str], str]]
    ) -> tuple[JobRecord, Report]:
        """A finished job of the project whose pages are ``sheets`` (number, title, notes,
        revision): its words and images stored as extract stores them, and its report."""
        self.jobs += 1
        job_id = f"j_{self.jobs:032x}"
        pages = []
        for n, (number, title, notes, revision) in enumerate(sheets, start=1):
            await self.bucket.put_json(
                Keys.text(job_id, n), sheet_layer(n, number, title, notes, revision)
            )
            await self.bucket.put_bytes(Keys.image(job_id, n), png(len(notes)))
            header = SheetHeader(sheet_number=number, sheet_title=title, revision=revision)
            pages.append(PageReport(page_number=n, status="verified", sheet=header))
        job = JobRecord(
            job_id=job_id,
            file_name="set.pdf",
            page_count=len(sheets),
            source_key=Keys.source(job_id),
            options=JobOptions(project=PROJECT),
            created_at=datetime(2026, 1, self.jobs, tzinfo=UTC),
        )
        # Only what the register reads of a report: the rest is not built.
        report = Report.model_construct(  # type: ignore[call-arg]
            job_id=job_id, file_name="set.pdf", pages=pages
        )
        return job, report

    async def apply(self, sheets: list[tuple[str, str, list[str], str]]):
        job, report = await self.upload(sheets)
        return await update_register(self.bucket, self.state, job, report)

    async def register(self):
        return (await read_register(self.bucket, self.state, PROJECT))[0]


FIRST = [
    ("S-101", "FOUNDATION PLAN", NOTES, "1"),
    ("S-102", "FRAMING PLAN", NOTES[:4], "1"),
    ("S-201", "DETAILS", NOTES[2:], "1"),
]


async def test_a_first_upload_makes_version_1_of_every_sheet_and_keeps_its_page():
    world = World()
    outcome = await world.apply(FIRST)
    assert [(s.sheet_number, s.outcome, s.to_version) for s in outcome.sheets] == [
        ("S-101", "added", 1),
        ("S-102", "added", 1),
        ("S-201", "added", 1),
    ]
    register = await world.register()
    assert register.sequence == 1 and set(register.sheets) == {"S101", "S102", "S201"}
    version = register.sheets["S101"].current
    assert version.text_key.startswith(Keys.project(PROJECT)) and version.image_key
    # Kept apart from the job: its own keys may go.
    await world.bucket.delete_prefix("jobs/")
    assert await world.bucket.exists(version.text_key) and await world.bucket.exists(
        version.image_key
    )


async def test_a_changed_note_is_a_new_version_and_the_rest_are_reissued_or_carried():
    world = World()
    await world.apply(FIRST)
    await world.bucket.delete_prefix("jobs/")  # what a later diff needs is the project's
    edited = [n.replace("(5)", "(6)") for n in NOTES]
    outcome = await world.apply([("S-101", "FOUNDATION PLAN", edited, "2"), FIRST[1]])
    by_number = {s.sheet_number: s for s in outcome.sheets}
    revised = by_number["S-101"]
    assert (revised.outcome, revised.from_version, revised.to_version) == ("revised", 1, 2)
    assert (revised.from_revision, revised.to_revision) == ("1", "2")
    assert revised.changes and revised.changes.changed >= 1 and not revised.title_block_only
    assert revised.delta_key and await world.bucket.exists(revised.delta_key)
    assert revised.overlay_key and (await world.bucket.get_bytes(revised.overlay_key)).startswith(
        b"\x89PNG"
    )
    assert by_number["S-102"].outcome == "reissued" and by_number["S-102"].to_version == 1
    assert outcome.carried == ["S-201"]
    register = await world.register()
    assert len(register.sheets["S101"].versions) == 2
    assert [r.job_id for r in register.sheets["S102"].current.reissued] == [outcome.job_id]
    assert len(register.sheets["S201"].versions) == 1  # a partial issue replaces what it carries

    publisher = RecordingPublisher()
    io = bootstrap(
        bucket=world.bucket,
        state=world.state,
        publisher=publisher,
        settings=Settings(_env_file=None),
    )
    await announce_changes(io, outcome)
    await announce_changes(io, outcome)  # redelivered: the same events, dropped as duplicates
    [event] = publisher.on(subjects.SHEET_REVISED)
    assert isinstance(event, SheetRevised) and (
        event.sheet_number,
        event.from_version,
        event.to_version,
    ) == ("S-101", 1, 2)
    assert event.changed == revised.changes.changed and event.delta_key == revised.delta_key
    [updated] = publisher.on(subjects.REGISTER_UPDATED)
    assert isinstance(updated, RegisterUpdated)
    assert (
        updated.revised,
        updated.reissued_unchanged,
        updated.carried,
        updated.sheets_current,
    ) == (1, 1, 1, 3)


async def test_only_the_revision_mark_changed_is_said_so():
    world = World()
    await world.apply(FIRST)
    outcome = await world.apply([("S-101", "FOUNDATION PLAN", NOTES, "2")])
    [sheet] = outcome.sheets
    assert sheet.outcome == "revised" and sheet.title_block_only is True


async def test_the_same_job_applied_twice_leaves_the_register_as_once():
    world = World()
    job, report = await world.upload(FIRST)
    first = await update_register(world.bucket, world.state, job, report)
    head = await world.state.get(head_key(PROJECT))
    again = await update_register(world.bucket, world.state, job, report)
    assert again == first and await world.state.get(head_key(PROJECT)) == head
    assert (await world.register()).jobs == [job.job_id]


async def test_a_renumbered_sheet_is_proposed_never_merged_nor_taken_for_new():
    world = World()
    await world.apply(FIRST)
    renumbered = [("S-109", "FRAMING PLAN", NOTES[:4], "1"), FIRST[0], FIRST[2]]
    outcome = await world.apply(renumbered)
    proposed = outcome.sheets[0]
    assert proposed.outcome == "proposed" and proposed.proposed_match
    assert proposed.proposed_match.matches_number == "S-102"
    assert proposed.proposed_match.similarity >= 0.9
    register = await world.register()
    assert len(register.sheets["S102"].versions) == 1 and "S109" in register.sheets
    assert [p.sheet_number for p in register.proposals] == ["S-109"]


async def test_a_new_number_with_a_shared_title_but_other_words_is_just_new():
    world = World()
    await world.apply(FIRST)
    other = ["1. ROOF TRUSSES AT 24 IN O.C.", "2. BLOCKING AT MID SPAN", "3. SEE TRUSS LAYOUT"]
    outcome = await world.apply([("S-103", "FRAMING PLAN", other, "1")])
    assert [s.outcome for s in outcome.sheets] == ["added"] and not (
        await world.register()
    ).proposals


async def test_two_jobs_of_a_project_at_once_both_land():
    world = World()
    await world.apply(FIRST)
    a = await world.upload([("S-101", "FOUNDATION PLAN", NOTES[:5], "2")])
    b = await world.upload([("S-102", "FRAMING PLAN", NOTES[:3], "2")])
    await asyncio.gather(
        update_register(world.bucket, world.state, *a),
        update_register(world.bucket, world.state, *b),
    )
    register = await world.register()
    assert register.sequence == 3 and set(register.jobs[1:]) == {a[0].job_id, b[0].job_id}
    assert len(register.sheets["S101"].versions) == 2 and len(register.sheets["S102"].versions) == 2
    snapshots = await world.bucket.list_keys(Keys.register_snapshots(PROJECT))
    assert len(snapshots) == 3  # the loser's attempt left nothing behind


async def test_a_register_whose_head_the_job_store_forgot_goes_on_from_its_newest_document():
    world = World()
    await world.apply(FIRST)
    await world.state.delete(head_key(PROJECT))  # the job state's retention passed
    outcome = await world.apply([("S-101", "FOUNDATION PLAN", NOTES, "2")])
    assert outcome.sequence == 2 and outcome.sheets[0].outcome == "revised"


async def test_a_register_that_cannot_take_the_job_is_said_in_a_report_still_written():
    """The job's words are gone (a failure of the register's own, not NATS's or S3's): the
    report is written and announced all the same, saying why the register lacks the job."""
    world = World()
    publisher = RecordingPublisher()
    io = bootstrap(
        bucket=world.bucket,
        state=world.state,
        publisher=publisher,
        settings=Settings(_env_file=None),
    )
    job, _ = await world.upload(FIRST[:1])
    await JobStore(world.state).create_job(job.model_copy(update={"status": "running"}))
    page = VerifiedPage(
        job_id=job.job_id,
        page_number=1,
        has_text_layer=True,
        sheet=SheetHeader(sheet_number="S-101", sheet_title="FOUNDATION PLAN"),
        coverage_before=Coverage(total_lines=1, covered_lines=1, ratio=1.0),
        coverage=Coverage(total_lines=1, covered_lines=1, ratio=1.0),
        floor=0.6,
        below_floor=False,
        rungs=["offline"],
        verdict=PageVerdict(ok=True),
    )
    key = Keys.verified(job.job_id, 1)
    await world.bucket.put_json(key, page)
    await world.bucket.delete_prefix(Keys.text(job.job_id, 1))
    await on_verified(
        io, PageVerified(job_id=job.job_id, page_number=1, verified_key=key, verdict=page.verdict)
    )
    report = await world.bucket.get_model(Keys.report(job.job_id), Report)
    assert report.changes is None and report.changes_error and "text.json" in report.changes_error
    assert len(publisher.on(subjects.REPORT_READY)) == 1 and not publisher.on(
        subjects.REGISTER_UPDATED
    )
    assert (
        "could not join" in (await world.bucket.get_bytes(Keys.report(job.job_id, "html"))).decode()
    )


async def test_a_canceled_job_of_a_project_leaves_its_register_alone():
    world = World()
    io = bootstrap(
        bucket=world.bucket,
        state=world.state,
        publisher=RecordingPublisher(),
        settings=Settings(_env_file=None),
    )
    job, report = await world.upload(FIRST)
    canceled = report.model_copy(update={"status": "canceled"})
    done, revisions = await with_register_changes(io, job, canceled)
    assert done.changes is None and done.changes_error and "canceled" in done.changes_error
    assert revisions == {} and (await world.register()).sequence == 0


async def test_a_job_redelivered_after_the_register_took_it_is_applied_once():
    """The report service stopped after the register took the job and before the report was
    written: the redelivered last page writes the report with the same changes, and the
    register holds the job once."""
    world = World()
    await world.apply(FIRST)
    publisher = RecordingPublisher()
    io = bootstrap(
        bucket=world.bucket,
        state=world.state,
        publisher=publisher,
        settings=Settings(_env_file=None),
    )
    edited = [n.replace("(5)", "(6)") for n in NOTES]
    job, report = await world.upload([("S-101", "FOUNDATION PLAN", edited, "2")])
    await JobStore(world.state).create_job(job.model_copy(update={"status": "running"}))
    first = await update_register(world.bucket, world.state, job, report)  # then it stopped
    coverage = Coverage(total_lines=1, covered_lines=1, ratio=1.0)
    page = VerifiedPage(
        job_id=job.job_id,
        page_number=1,
        has_text_layer=True,
        sheet=SheetHeader(sheet_number="S-101", sheet_title="FOUNDATION PLAN", revision="2"),
        coverage_before=coverage,
        coverage=coverage,
        floor=0.6,
        below_floor=False,
        rungs=["offline"],
        verdict=PageVerdict(ok=True),
    )
    key = Keys.verified(job.job_id, 1)
    await world.bucket.put_json(key, page)
    event = PageVerified(job_id=job.job_id, page_number=1, verified_key=key, verdict=page.verdict)
    await on_verified(io, event)
    register = await world.register()
    assert register.jobs.count(job.job_id) == 1 and len(register.sheets["S101"].versions) == 2
    written = await world.bucket.get_model(Keys.report(job.job_id), Report)
    assert written.changes == first
    [revised] = publisher.on(subjects.SHEET_REVISED)
    assert isinstance(revised, SheetRevised) and revised.delta_key == first.sheets[0].delta_key
    assert len(publisher.on(subjects.REGISTER_UPDATED)) == 1


async def test_an_uploads_issue_label_and_date_are_kept_with_its_versions():
    """The upload's options name its issue ("Addendum 2", its date): each version it gives
    the register keeps them, with its printed date in ISO beside the printed form."""
    world = World()
    job, report = await world.upload([("S\u2010101", "FOUNDATION PLAN", NOTES, "1")])
    issued = JobOptions(project=PROJECT, issue="Addendum 2", issue_date=date(2026, 3, 14))
    pages = [
        p.model_copy(update={"sheet": p.sheet.model_copy(update={"issue_date": "14/03/2026"})})
        for p in report.pages
    ]
    report = report.model_copy(update={"pages": pages})
    outcome = await update_register(
        world.bucket, world.state, job.model_copy(update={"options": issued}), report
    )
    assert (outcome.issue, outcome.issued_on) == ("Addendum 2", date(2026, 3, 14))
    version = (await world.register()).sheets["S101"].current
    assert (version.issue, version.issued_on) == ("Addendum 2", date(2026, 3, 14))
    assert (version.issue_date, version.issue_date_printed) == ("2026-03-14", "14/03/2026")
    assert (version.sheet_number, version.sheet_number_printed) == ("S-101", "S\u2010101")


async def test_a_register_document_newer_than_the_head_is_current_and_the_next_job_follows_it():
    """One register per data dir: a `sheetflow run` moved the register on (its documents
    copied into the bucket of a `sheetflow up` whose job state still names an older head).
    The newest document is current, and the next job is applied after it."""
    world = World()
    await world.apply(FIRST)
    stale_head = await world.state.get(head_key(PROJECT))
    await world.apply([("S-101", "FOUNDATION PLAN", NOTES[:5], "2")])
    assert stale_head is not None
    await world.state.put(head_key(PROJECT), stale_head[0])  # the up's job state, behind
    register, _ = await read_register(world.bucket, world.state, PROJECT)
    assert register.sequence == 2 and len(register.sheets["S101"].versions) == 2
    outcome = await world.apply([("S-102", "FRAMING PLAN", NOTES[:3], "2")])
    assert outcome.sequence == 3
    assert (await world.register()).sequence == 3
