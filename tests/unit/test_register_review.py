"""A person's review reaches a project's register, with the in-memory stores: a proposed match
is accepted or rejected over ingest's use cases (a record each, announced; the same decision
again gives the record back, another is refused), and the register's writer applies it — the
old number's versions follow the new one, the version the move gave a predecessor is diffed
and announced, a move is recorded; a correction of a sheet's number renumbers (or merges) its
register sheet, a title corrected is kept; each is applied once however often it comes."""

import pytest

from services.ingest.bootstrap import bootstrap as ingest_bootstrap
from services.ingest.projects import (
    ProposalVerdict,
    decide,
    decide_proposal,
    list_proposals,
    project_review,
)
from services.ingest.refusals import Refusal, RefusalKind
from services.ingest.roles import Caller
from services.report.projects import update_register
from services.report.register_review import apply_decision, follow_correction
from shared.contracts import subjects
from shared.contracts.messages import ProposalDecided, RegisterUpdated, SheetCorrected, SheetRevised
from shared.contracts.models import Coverage, PageVerdict, VerifiedPage
from shared.contracts.register import RegisterOutcome
from shared.contracts.review import ProposalDecision, SheetMoved
from shared.infra.jobs import JobStore, now
from shared.infra.review_store import project_records
from shared.infra.settings import Settings
from shared.infra.storage import Keys
from shared.sheet.header import SheetHeader
from tests.support.fakes import RecordingPublisher
from tests.unit.test_report_register import FIRST, NOTES, PROJECT, World

REVIEWER = Caller("dana", "reviewer")
RENUMBERED = [("S-109", "FRAMING PLAN", NOTES[:4], "1"), FIRST[0], FIRST[2]]


async def proposed_world() -> World:
    """Two uploads: the first set, then one where S-102 came back as S-109."""
    world = World()
    await world.apply(FIRST)
    await world.apply(RENUMBERED)
    return world


def api(world: World):
    return ingest_bootstrap(
        bucket=world.bucket,
        state=world.state,
        publisher=RecordingPublisher(),
        settings=Settings(_env_file=None),
        inspector=None,  # type: ignore[arg-type]
        servers=None,  # type: ignore[arg-type]
        worker_id="ingest@test:1",
    )


async def writer_hears(world: World, api_publisher: RecordingPublisher) -> RecordingPublisher:
    """The report service applies every decision ingest announced (each twice: redelivered)."""
    heard = RecordingPublisher()
    for event in api_publisher.on(subjects.PROPOSAL_DECIDED):
        assert isinstance(event, ProposalDecided)
        await apply_decision(world.bucket, world.state, heard, event)
        await apply_decision(world.bucket, world.state, heard, event)
    return heard


async def test_a_proposal_is_accepted_once_and_the_old_numbers_versions_follow_the_new():
    world = await proposed_world()
    io = api(world)
    [proposal] = await list_proposals(io, PROJECT)
    assert (proposal.proposal_id, proposal.status) == ("S109--S102", "proposed")

    verdict = ProposalVerdict(decision="accepted", reason="renumbered in the addendum")
    record = await decide_proposal(io, REVIEWER, PROJECT, proposal.proposal_id, verdict)
    assert (record.by, record.decision, record.sheet_key, record.matches_key) == (
        "dana",
        "accepted",
        "S109",
        "S102",
    )
    again, made = await decide(io, REVIEWER, PROJECT, proposal.proposal_id, verdict)
    assert again == record and not made
    [announced] = io.publisher.on(subjects.PROPOSAL_DECIDED)
    assert announced.record_key == Keys.project_review(PROJECT, record.record_id)

    heard = await writer_hears(world, io.publisher)
    register = await world.register()
    assert "S102" not in register.sheets
    moved = register.sheets["S109"]
    assert [(v.version, v.sheet_number) for v in moved.versions] == [(1, "S-102"), (2, "S-109")]
    second = moved.versions[1]
    assert second.delta_key and second.changes is not None and second.overlay_key
    assert await world.bucket.exists(second.delta_key)
    [decided] = register.proposals
    assert (decided.status, decided.decided_by, decided.reason) == (
        "accepted",
        "dana",
        "renumbered in the addendum",
    )
    assert register.applied[-1] == record.record_id and register.sequence == 3

    # Applied once though heard twice; its events are sent the same each time (de-duplicated).
    [revised] = heard.on(subjects.SHEET_REVISED)
    assert isinstance(revised, SheetRevised)
    assert (revised.sheet_number, revised.from_version, revised.to_version) == ("S-109", 1, 2)
    assert revised.delta_key == second.delta_key
    [updated] = heard.on(subjects.REGISTER_UPDATED)
    assert isinstance(updated, RegisterUpdated)
    assert (updated.record_id, updated.moved, updated.revised) == (record.record_id, 1, 1)
    assert updated.sheets_current == 3 and len(heard.attempts) == 4

    records = await project_review(io, PROJECT)
    assert [type(r) for r in records] == [ProposalDecision, SheetMoved]
    move = records[1]
    assert isinstance(move, SheetMoved)
    assert (move.from_key, move.to_key, move.cause, move.versions) == (
        "S102",
        "S109",
        "proposal",
        2,
    )
    assert (move.from_number, move.to_number, move.by) == ("S-102", "S-109", "dana")

    with pytest.raises(Refusal) as refused:
        await decide_proposal(
            io,
            REVIEWER,
            PROJECT,
            proposal.proposal_id,
            ProposalVerdict(decision="rejected", reason="no no"),
        )
    assert (refused.value.kind, refused.value.error) == (RefusalKind.CONFLICT, "already_decided")


async def test_a_rejected_proposal_keeps_both_sheets_and_says_so():
    world = await proposed_world()
    io = api(world)
    verdict = ProposalVerdict(decision="rejected", reason="two framing plans, two levels")
    record = await decide_proposal(io, REVIEWER, PROJECT, "S109--S102", verdict)
    heard = await writer_hears(world, io.publisher)
    register = await world.register()
    assert {"S102", "S109"} <= set(register.sheets)
    assert len(register.sheets["S109"].versions) == 1
    [decided] = register.proposals
    assert (decided.status, decided.decided_by) == ("rejected", "dana")
    assert not heard.on(subjects.SHEET_REVISED)
    [updated] = heard.on(subjects.REGISTER_UPDATED)
    assert isinstance(updated, RegisterUpdated)
    assert (updated.record_id, updated.moved) == (record.record_id, 0)
    assert [r.record_id for r in await project_records(world.bucket, PROJECT)] == [record.record_id]


async def test_a_decision_on_what_is_not_there_is_refused_by_name():
    world = await proposed_world()
    io = api(world)
    verdict = ProposalVerdict(decision="accepted", reason="same drawing")
    with pytest.raises(Refusal) as refused:
        await decide_proposal(io, REVIEWER, PROJECT, "S999--S102", verdict)
    assert (refused.value.kind, refused.value.error) == (RefusalKind.NOT_FOUND, "no_such_proposal")
    with pytest.raises(Refusal) as refused:
        await decide_proposal(io, REVIEWER, "nobody", "S109--S102", verdict)
    assert refused.value.error == "no_such_project"
    with pytest.raises(ValueError):
        ProposalVerdict(decision="maybe", reason="hmm hmm")
    assert not io.publisher.on(subjects.PROPOSAL_DECIDED)


async def correct(
    world: World, job_id: str, page: int, after: dict[str, str | None]
) -> RecordingPublisher:
    """A reviewer's correction of a finished job's page, as the report service hears it
    (twice: redelivered)."""
    jobs = JobStore(world.state)
    record_id = f"{now():%Y%m%dT%H%M%S%f}-c0ffee00"
    event = SheetCorrected(
        job_id=job_id,
        page_number=page,
        record_id=record_id,
        before={},
        after=after,
        by="dana",
        reason="the title block says so",
        at=now(),
    )
    heard = RecordingPublisher()
    await follow_correction(world.bucket, jobs, heard, event)
    await follow_correction(world.bucket, jobs, heard, event)
    return heard


async def registered(world: World, sheets):
    """A job applied to the register, its record kept as the job store keeps it."""
    job, report = await world.upload(sheets)
    await JobStore(world.state).create_job(job)
    return job, await update_register(world.bucket, world.state, job, report)


async def test_a_corrected_number_moves_the_sheet_with_its_versions():
    world = World()
    await registered(world, FIRST)
    edited = [n.replace("(5)", "(6)") for n in NOTES]
    job, _ = await registered(world, [("S-101", "FOUNDATION PLAN", edited, "2")])

    heard = await correct(world, job.job_id, 1, {"sheet_number": "S-105"})
    register = await world.register()
    assert "S101" not in register.sheets
    sheet = register.sheets["S105"]
    assert sheet.sheet_number == "S-105" and len(sheet.versions) == 2
    assert [v.sheet_number for v in sheet.versions] == ["S-101", "S-105"]
    [moved] = [r for r in await project_records(world.bucket, PROJECT) if isinstance(r, SheetMoved)]
    assert (moved.from_key, moved.to_key, moved.cause, moved.job_id) == (
        "S101",
        "S105",
        "correction",
        job.job_id,
    )
    # Its change is announced again under its new number; the register's update says why.
    revised = {
        (e.sheet_number, e.from_version, e.to_version) for e in heard.on(subjects.SHEET_REVISED)
    }
    assert revised == {("S-105", 1, 2)}
    assert {e.moved for e in heard.on(subjects.REGISTER_UPDATED)} == {1}
    # The job's changes, as its report shows them, name the sheet as corrected.
    sequence = register.sequence_of(job.job_id)
    assert sequence is not None
    outcome = await world.bucket.get_model(
        Keys.register_outcome(PROJECT, job.job_id, sequence), RegisterOutcome
    )
    assert [(s.sheet_key, s.sheet_number) for s in outcome.sheets] == [("S105", "S-105")]


async def test_a_corrected_number_the_register_holds_joins_its_history():
    """A page misread as S-112 (a new sheet) is corrected to S-102: it becomes S-102's next
    version, diffed against it; S-112 is gone."""
    world = World()
    await registered(world, FIRST)
    edited = [n.replace("(5)", "(7)") for n in NOTES[:4]]
    job, _ = await registered(world, [("S-112", "FRAMING PLAN", edited, "2")])
    heard = await correct(world, job.job_id, 1, {"sheet_number": "S-102"})
    register = await world.register()
    assert "S112" not in register.sheets
    versions = register.sheets["S102"].versions
    assert [(v.version, v.job_id) for v in versions] == [
        (1, register.jobs[0]),
        (2, job.job_id),
    ]
    assert versions[1].changes and versions[1].changes.total >= 1 and versions[1].delta_key
    [event] = heard.on(subjects.SHEET_REVISED)
    assert (event.sheet_number, event.from_version, event.to_version) == ("S-102", 1, 2)
    assert event.job_id == job.job_id and event.changed + event.added + event.removed >= 1


async def test_a_corrected_title_is_kept_and_moves_nothing():
    world = World()
    job, _ = await registered(world, FIRST)
    heard = await correct(world, job.job_id, 2, {"sheet_title": "ROOF FRAMING PLAN"})
    register = await world.register()
    assert register.sheets["S102"].sheet_title == "ROOF FRAMING PLAN"
    assert register.sheets["S102"].current.sheet_title == "ROOF FRAMING PLAN"
    assert not heard.on(subjects.SHEET_REVISED)
    [updated] = heard.on(subjects.REGISTER_UPDATED)
    assert (updated.moved, updated.sequence) == (0, 2)
    assert not await project_records(world.bucket, PROJECT)


async def test_a_correction_of_a_page_the_register_lacks_changes_nothing():
    world = World()
    job, _ = await registered(world, FIRST)
    heard = await correct(world, job.job_id, 9, {"sheet_number": "S-999"})
    assert not heard.published and (await world.register()).sequence == 1


async def test_an_accepted_proposal_keeps_the_new_number_whatever_order_the_uploads_came_in():
    """The renumbered set was uploaded after the original, yet reached the register first:
    the original's S-102 is proposed as S-109. Accepted, the sheet stands under S-102's key
    with S-102's number (the proposal's new number), S-109's version first."""
    world = World()
    original = await world.upload(FIRST)
    renumbered = await world.upload(RENUMBERED)  # uploaded later ...
    await update_register(world.bucket, world.state, *renumbered)  # ... applied first
    await update_register(world.bucket, world.state, *original)
    io = api(world)
    [proposal] = await list_proposals(io, PROJECT)
    assert (proposal.sheet_number, proposal.matches_number) == ("S-102", "S-109")
    verdict = ProposalVerdict(decision="accepted", reason="the same framing plan")
    await decide_proposal(io, REVIEWER, PROJECT, proposal.proposal_id, verdict)
    await writer_hears(world, io.publisher)
    register = await world.register()
    sheet = register.sheets["S102"]
    assert sheet.sheet_number == "S-102" and "S109" not in register.sheets
    assert [v.sheet_number for v in sheet.versions] == ["S-109", "S-102"]


async def test_a_page_without_a_number_joins_the_register_under_the_number_a_person_gives():
    """The set step read no number on page 2, so the register left it out; a reviewer gives
    it S-102: it joins the register (version 1 of S-102, its page kept), the job's changes
    list it, and register.updated counts it added."""
    world = World()
    job, report = await world.upload(FIRST[:2])
    unread = report.pages[1].model_copy(
        update={"sheet": report.pages[1].sheet.model_copy(update={"sheet_number": None})}
    )
    report = report.model_copy(update={"pages": [report.pages[0], unread]})
    await JobStore(world.state).create_job(job)
    outcome = await update_register(world.bucket, world.state, job, report)
    assert outcome.unregistered_pages == [2] and "S102" not in (await world.register()).sheets
    coverage = Coverage(total_lines=1, covered_lines=1, ratio=1.0)
    page = VerifiedPage(
        job_id=job.job_id,
        page_number=2,
        has_text_layer=True,
        sheet=SheetHeader(sheet_title="FRAMING PLAN", revision="1"),
        coverage_before=coverage,
        coverage=coverage,
        floor=0.6,
        below_floor=False,
        verdict=PageVerdict(ok=True),
    )
    await world.bucket.put_json(Keys.verified(job.job_id, 2), page)

    heard = await correct(world, job.job_id, 2, {"sheet_number": "S-102"})
    register = await world.register()
    [version] = register.sheets["S102"].versions
    assert (version.job_id, version.page_number, version.sheet_title) == (
        job.job_id,
        2,
        "FRAMING PLAN",
    )
    assert version.text_key.startswith(Keys.project(PROJECT))
    assert register.jobs == [job.job_id] and register.sequence == 2
    [updated] = heard.on(subjects.REGISTER_UPDATED)
    assert (updated.added, updated.record_id is not None) == (1, True)
    changes = await world.bucket.get_model(
        Keys.register_outcome(PROJECT, job.job_id, 1), RegisterOutcome
    )
    assert [(s.page_number, s.outcome) for s in changes.sheets] == [(1, "added"), (2, "added")]
    assert changes.unregistered_pages == []
