"""Report's use case for a person's review of a project's register (it is the register's one
writer): a correction of a sheet's number or title in one of the project's jobs, and a
proposed match accepted or rejected (``shared.contracts.review``). The domain rules are
``services.report.revisions.review``.

Each review record is applied once, as one more change of the register (its sequence), by
compare-and-set as jobs are. What it did (the move's record, the events) is kept before the
register is committed, so that a crash after the commit sends the same events again; a
sheet moved is recorded (``SheetMoved``) in the project's review records.
"""

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from services.report.projects import JobPages, applied_upload, kept_change
from services.report.revisions.register import Upload, UploadedSheet, revised_events
from services.report.revisions.review import (
    Moved,
    corrected_version,
    decided,
    locate,
    move_sheet,
    next_register,
    with_version,
)
from shared.contracts import subjects
from shared.contracts.interfaces import Bucket, ObjectMissing, Publisher, StateStore
from shared.contracts.messages import ProposalDecided, RegisterUpdated, SheetCorrected, SheetRevised
from shared.contracts.models import VerifiedPage
from shared.contracts.register import (
    Register,
    RegisterOutcome,
    RegisterSheet,
    SheetOutcome,
    UnitCounts,
)
from shared.contracts.review import ProposalDecision, SheetMoved
from shared.infra.broker import msg_id
from shared.infra.jobs import CAS_ATTEMPTS, JobRecord, JobStore
from shared.infra.register_store import commit_register, read_register
from shared.infra.review_store import save_project_record
from shared.infra.storage import Keys
from shared.sheet.normal import iso_date
from shared.sheet.tokens import sheet_key

log = logging.getLogger("sheetflow.report")

# The fields of a correction the register keeps.
REGISTER_FIELDS = ("sheet_number", "sheet_title", "revision")


class ReviewApplied(BaseModel):
    """What a review record did to the register: the move it made, and the events that say
    so (sent again as they are after a crash)."""

    project: str
    record_id: str
    moved: SheetMoved | None = None
    revised: list[SheetRevised] = Field([], description="versions the move made or renamed")
    updated: RegisterUpdated
    joined: list[SheetOutcome] = Field(
        [], description="a page a person's number brought into the register: what it became"
    )


# A change of the register for a review: the register after it and what it did; None when
# the record changes nothing the register holds.
Change = Callable[[Register], Awaitable[tuple[Register, ReviewApplied] | None]]


@dataclass(frozen=True)
class _Cause:
    """The review record a move is for, and the page it was about."""

    kind: Literal["correction", "proposal"]
    record_id: str
    by: str
    at: datetime
    reason: str
    job_id: str
    page_number: int


async def follow_correction(
    bucket: Bucket, jobs: JobStore, publisher: Publisher, event: SheetCorrected
) -> None:
    """A correction of a page of a project's job: the register's version of the page takes
    the corrected number, title and revision; a new number moves the sheet (when the page
    is its current version, or a re-issue of it), its versions with it; a page the register
    lacks (its number was not read) joins it under the number a person gave."""
    values = {f: v for f, v in event.after.items() if f in REGISTER_FIELDS}
    job = await jobs.get_job(event.job_id)
    if not values or job is None or not job.options.project:
        return
    project = job.options.project
    cause = _Cause(
        "correction",
        event.record_id,
        event.by,
        event.at,
        event.reason,
        event.job_id,
        event.page_number,
    )

    async def change(register: Register) -> tuple[Register, ReviewApplied] | None:
        at = locate(register, event.job_id, event.page_number)
        if at is None:
            return await _joined(bucket, job, register, event, values)
        version = corrected_version(register.sheets[at.key].versions[at.index], values)
        register = with_version(register, at, version)
        number = values.get("sheet_number")
        to_key = sheet_key(number) if number else ""
        if not at.current or not to_key or to_key == at.key:
            return _unmoved(register, cause)
        moved = move_sheet(register, at.key, to_key, number or "")
        return await _moved(bucket, register, moved, at.key, to_key, cause)

    applied = await _apply(bucket, jobs.state, publisher, project, event.record_id, change)
    if applied is not None and applied.moved is not None:
        await _renumber_outcome(bucket, jobs.state, project, applied.moved)
    if applied is not None and applied.joined:
        await _joined_outcome(bucket, jobs.state, project, event.job_id, applied.joined)


async def _joined(
    bucket: Bucket,
    job: JobRecord,
    register: Register,
    event: SheetCorrected,
    values: dict[str, str | None],
) -> tuple[Register, ReviewApplied] | None:
    """A page the register lacks (its number was not read, or repeated another page's)
    given a number: it joins the register as the job's sheet would have (a new sheet, a new
    version of the sheet under that number, or that version re-issued), from its pages kept
    by the job; None when they are gone or the job gives the number another page already."""
    number = values.get("sheet_number")
    key = sheet_key(number) if number else ""
    held = register.sheets.get(key)
    if not number or not key or (held and any(v.job_id == job.job_id for v in held.versions)):
        log.info(
            "correction %s: page %s of %s joins no sheet",
            event.record_id,
            event.page_number,
            job.job_id,
        )
        return None
    try:
        page = await bucket.get_model(Keys.verified(job.job_id, event.page_number), VerifiedPage)
    except ObjectMissing:
        log.info(
            "correction %s: page %s of %s was not read",
            event.record_id,
            event.page_number,
            job.job_id,
        )
        return None
    printed = page.sheet
    sheet = UploadedSheet(
        key=key,
        sheet_number=number,
        sheet_title=values.get("sheet_title", printed.sheet_title),
        revision=values.get("revision", printed.revision),
        issue_date=printed.issue_date,
        page_number=event.page_number,
        issue_date_iso=iso_date(printed.issue_date, None),
    )
    upload = Upload(
        job_id=job.job_id,
        file_name=job.file_name,
        uploaded_at=job.created_at,
        sheets=(sheet,),
        issue=job.options.issue,
        issued_on=job.options.issue_date,
    )
    pages = JobPages(bucket, job, register.project)
    updated, outcome = await applied_upload(pages, register, upload, applied_as=event.record_id)
    registered = RegisterUpdated(
        project=register.project,
        job_id=job.job_id,
        sequence=updated.sequence,
        added=outcome.count("added"),
        revised=outcome.count("revised"),
        reissued_unchanged=outcome.count("reissued"),
        proposed=outcome.count("proposed"),
        carried=0,
        sheets_current=len(updated.sheets),
        register_key=outcome.register_key,
        record_id=event.record_id,
    )
    return updated, ReviewApplied(
        project=register.project,
        record_id=event.record_id,
        revised=revised_events(outcome),
        updated=registered,
        joined=outcome.sheets,
    )


async def _joined_outcome(
    bucket: Bucket, state: StateStore, project: str, job_id: str, joined: list[SheetOutcome]
) -> None:
    """What the job did to the register, as its report shows it, with the pages a person's
    number brought into the register."""
    register, _ = await read_register(bucket, state, project)
    sequence = register.sequence_of(job_id)
    if sequence is None:
        return
    key = Keys.register_outcome(project, job_id, sequence)
    outcome = await bucket.get_model(key, RegisterOutcome)
    pages = {s.page_number for s in joined}
    kept = [s for s in outcome.sheets if s.page_number not in pages]
    update = {
        "sheets": sorted([*kept, *joined], key=lambda s: s.page_number),
        "unregistered_pages": [n for n in outcome.unregistered_pages if n not in pages],
        "duplicate_pages": [n for n in outcome.duplicate_pages if n not in pages],
    }
    await bucket.put_json(key, outcome.model_copy(update=update))


async def apply_decision(
    bucket: Bucket, state: StateStore, publisher: Publisher, event: ProposalDecided
) -> None:
    """A proposal decided: recorded on the register's proposal; accepted, the old number's
    sheet moves under the new number, its versions before the new one's."""
    record = await bucket.get_model(event.record_key, ProposalDecision)

    async def change(register: Register) -> tuple[Register, ReviewApplied] | None:
        proposal = next(
            (p for p in register.proposals if p.proposal_id == record.proposal_id), None
        )
        if proposal is None or proposal.status != "proposed":
            log.warning(
                "decision %s on %s of %s: the proposal is %s; not applied",
                record.record_id,
                record.proposal_id,
                record.project,
                proposal.status if proposal else "not in the register",
            )
            return None
        register = register.model_copy(update={"proposals": decided(register.proposals, record)})
        new = register.sheets.get(proposal.sheet_key)
        current = new.current if new else None
        cause = _Cause(
            "proposal",
            record.record_id,
            record.by,
            record.at,
            record.reason,
            current.job_id if current else proposal.job_id,
            current.page_number if current else 1,
        )
        if (
            record.decision == "rejected"
            or new is None
            or proposal.matches_key not in register.sheets
        ):
            return _unmoved(register, cause)
        moved = move_sheet(
            register,
            proposal.matches_key,
            proposal.sheet_key,
            new.sheet_number,
            moved_first=True,
        )
        return await _moved(
            bucket, register, moved, proposal.matches_key, proposal.sheet_key, cause
        )

    await _apply(bucket, state, publisher, record.project, record.record_id, change)


async def _apply(
    bucket: Bucket,
    state: StateStore,
    publisher: Publisher,
    project: str,
    record_id: str,
    change: Change,
) -> ReviewApplied | None:
    """Apply a review record to the project's register once, and announce what it did
    (again, when it was applied before); None when it changes nothing there."""
    for _ in range(CAS_ATTEMPTS):
        register, revision = await read_register(bucket, state, project)
        if record_id in register.applied:
            try:
                applied = await bucket.get_model(
                    Keys.review_applied(project, record_id), ReviewApplied
                )
            except ObjectMissing:
                return None
            break
        made = await change(register)
        if made is None:
            return None
        updated, applied = made
        await bucket.put_json(Keys.review_applied(project, record_id), applied)
        if await commit_register(bucket, state, updated, revision=revision, applied=record_id):
            log.info(
                "register of %s: review %s applied%s",
                project,
                record_id,
                f", {applied.moved.from_key} moved to {applied.moved.to_key}"
                if applied.moved
                else "",
            )
            break
        log.info("register of %s moved under review %s; applying again", project, record_id)
    else:
        raise RuntimeError(f"could not update the register of {project}: too much contention")
    if applied.moved is not None:
        await save_project_record(bucket, applied.moved)
    for revised in applied.revised:
        dedup = msg_id(project, record_id, revised.sheet_key, "revised")
        await publisher.publish(subjects.SHEET_REVISED, revised, dedup_id=dedup)
    dedup = msg_id(project, record_id, "register")
    await publisher.publish(subjects.REGISTER_UPDATED, applied.updated, dedup_id=dedup)
    return applied


def _unmoved(register: Register, cause: _Cause) -> tuple[Register, ReviewApplied]:
    """The register with a record applied that moved nothing."""
    updated = next_register(register, cause.record_id, cause.at)
    return updated, ReviewApplied(
        project=register.project,
        record_id=cause.record_id,
        updated=_updated(updated, cause, revised=0, moved=0),
    )


async def _moved(
    bucket: Bucket, register: Register, moved: Moved, from_key: str, to_key: str, cause: _Cause
) -> tuple[Register, ReviewApplied]:
    """The register with ``from_key``'s sheet moved under ``to_key``: the version the move
    gave a new predecessor diffed against it and announced; a renamed sheet's current
    change announced again under its new number."""
    sheet = moved.sheets[to_key]
    versions = list(sheet.versions)
    if moved.diff is not None:
        before, after = versions[moved.diff - 1], versions[moved.diff]
        change = await kept_change(bucket, register.project, to_key, before, after)
        versions[moved.diff] = after.model_copy(
            update={
                "changes": change.counts,
                "title_block_only": change.title_block_only,
                "delta_key": change.delta_key,
                "overlay_key": change.overlay_key,
            }
        )
        sheet = sheet.model_copy(update={"versions": versions})
        announced = [moved.diff]
    else:
        announced = [len(versions) - 1] if len(versions) > 1 and versions[-1].delta_key else []
    sheets = {**moved.sheets, to_key: sheet}
    updated = next_register(register, cause.record_id, cause.at, sheets=sheets)
    record = SheetMoved(
        record_id=f"{cause.record_id}-moved",
        project=register.project,
        by=cause.by,
        at=cause.at,
        reason=cause.reason,
        from_key=from_key,
        to_key=to_key,
        from_number=register.sheets[from_key].sheet_number,
        to_number=sheet.sheet_number,
        job_id=cause.job_id,
        page_number=cause.page_number,
        cause=cause.kind,
        cause_record_id=cause.record_id,
        versions=len(versions),
    )
    revised = [_revised(register.project, sheet, n) for n in announced]
    return updated, ReviewApplied(
        project=register.project,
        record_id=cause.record_id,
        moved=record,
        revised=revised,
        updated=_updated(updated, cause, revised=int(moved.diff is not None), moved=1),
    )


def _revised(project: str, sheet: RegisterSheet, index: int) -> SheetRevised:
    before, after = sheet.versions[index - 1], sheet.versions[index]
    counts = after.changes or UnitCounts()
    return SheetRevised(
        project=project,
        job_id=after.job_id,
        page_number=after.page_number,
        sheet_number=sheet.sheet_number,
        sheet_key=sheet.key,
        from_version=before.version,
        to_version=after.version,
        from_revision=before.revision,
        to_revision=after.revision,
        added=counts.added,
        removed=counts.removed,
        changed=counts.changed,
        regions=counts.regions,
        title_block_only=after.title_block_only,
        delta_key=after.delta_key or "",
        overlay_key=after.overlay_key,
    )


def _updated(register: Register, cause: _Cause, *, revised: int, moved: int) -> RegisterUpdated:
    return RegisterUpdated(
        project=register.project,
        job_id=cause.job_id,
        sequence=register.sequence,
        added=0,
        revised=revised,
        reissued_unchanged=0,
        proposed=0,
        carried=0,
        sheets_current=len(register.sheets),
        register_key=Keys.register_snapshot(register.project, register.sequence, cause.record_id),
        record_id=cause.record_id,
        moved=moved,
    )


async def _renumber_outcome(
    bucket: Bucket, state: StateStore, project: str, moved: SheetMoved
) -> None:
    """What the corrected page's job did to the register, as its report shows it, with the
    page under its corrected number."""
    register, _ = await read_register(bucket, state, project)
    sequence = register.sequence_of(moved.job_id)
    if sequence is None:
        return
    key = Keys.register_outcome(project, moved.job_id, sequence)
    outcome = await bucket.get_model(key, RegisterOutcome)
    sheets = [
        s.model_copy(update={"sheet_key": moved.to_key, "sheet_number": moved.to_number})
        if s.page_number == moved.page_number
        else s
        for s in outcome.sheets
    ]
    await bucket.put_json(key, outcome.model_copy(update={"sheets": sheets}))
