"""The API's side of a project's drawing register (``shared.contracts.register``; the report service
writes it): the project's current sheets, a sheet's versions, and what changed between any
two of them, in words (the delta) and in a picture (the overlay); the matches it proposes,
and a reviewer's decision on one (a record, announced: the report service applies it). What
they refuse is a ``Refusal``."""

import asyncio
import json
import re
from datetime import date, datetime
from functools import partial
from typing import Literal

from pydantic import BaseModel, Field

from services.ingest.refusals import Refusal, RefusalKind, not_found, refusing_outages
from services.ingest.roles import Caller
from services.ingest.usecases import Collaborators
from shared.contracts import subjects
from shared.contracts.interfaces import ObjectMissing
from shared.contracts.messages import PROJECT_ID_PATTERN, ProposalDecided
from shared.contracts.register import ProposedMatch, Register, RegisterSheet, SheetVersion
from shared.contracts.review import ProposalDecision, SheetMoved
from shared.infra.jobs import now
from shared.infra.register_store import kept_reading, read_register
from shared.infra.review_store import new_record_id, project_records, save_project_record
from shared.pagetext import TextLayer
from shared.revisions.delta import SheetDelta, sheet_delta
from shared.revisions.drawing import PageImage
from shared.revisions.overlay import overlay_png
from shared.sheet.tokens import sheet_key

PROJECT_ID = re.compile(PROJECT_ID_PATTERN)


class CurrentSheet(BaseModel):
    """A sheet of the project as its current version stands."""

    sheet_number: str = Field(description="with ASCII hyphens", examples=["A-201"])
    sheet_number_printed: str = Field("", description="as its current version prints it")
    sheet_key: str = Field(description="the number as compared", examples=["A201"])
    sheet_title: str | None = None
    version: int = Field(description="the current version", examples=[2])
    versions: int = Field(description="versions the register holds", examples=[2])
    revision: str | None = Field(
        None, description="the current version's revision mark, as printed", examples=["C"]
    )
    issue_date: str | None = Field(None, description="ISO 8601", examples=["2016-04-12"])
    issue_date_printed: str | None = Field(None, examples=["04/12/16"])
    issue: str | None = Field(
        None, description="the issue the current version came in", examples=["Addendum 2"]
    )
    issued_on: date | None = None
    job_id: str = Field(description="the upload the current version came from")
    page_number: int
    uploaded_at: datetime
    reissued: int = Field(0, description="later uploads of the current version, unchanged")
    proposed_match: ProposedMatch | None = Field(
        None, description="a sheet this one may be, renumbered (proposed, not decided yet)"
    )


class ProjectSheets(BaseModel):
    project: str
    sequence: int = Field(description="uploads the register holds")
    sheets: list[CurrentSheet]
    proposals: list[ProposedMatch] = []


def valid_project(project: str) -> str:
    """``project`` when it is a project id, else a refusal saying what one is."""
    if not PROJECT_ID.fullmatch(project):
        raise Refusal(
            RefusalKind.INVALID,
            "bad_project",
            "A project id is 1 to 64 letters, digits, '-' or '_', starting with a letter or "
            "a digit.",
        )
    return project


async def _register(io: Collaborators, project: str) -> Register:
    register, _ = await read_register(io.bucket, io.jobs.state, valid_project(project))
    if not register.jobs:
        raise not_found(f"The project {project!r} has no register yet.", "no_such_project")
    return register


def _sheet(register: Register, sheet: str) -> RegisterSheet:
    found = register.sheets.get(sheet_key(sheet))
    if found is None:
        raise not_found(f"The project has no sheet {sheet!r}.", "no_such_sheet")
    return found


def _version(entry: RegisterSheet, number: int) -> SheetVersion:
    if not 1 <= number <= len(entry.versions):
        raise not_found(
            f"{entry.sheet_number} has versions 1 to {len(entry.versions)}.", "no_such_version"
        )
    return entry.versions[number - 1]


@refusing_outages
async def project_sheets(io: Collaborators, project: str) -> ProjectSheets:
    register = await _register(io, project)
    proposed = {p.sheet_key: p for p in register.proposals if p.status == "proposed"}
    sheets = [
        CurrentSheet(
            sheet_number=entry.sheet_number,
            sheet_number_printed=entry.current.sheet_number_printed,
            sheet_key=entry.key,
            sheet_title=entry.sheet_title,
            version=entry.current.version,
            versions=len(entry.versions),
            revision=entry.current.revision,
            issue_date=entry.current.issue_date,
            issue_date_printed=entry.current.issue_date_printed,
            issue=entry.current.issue,
            issued_on=entry.current.issued_on,
            job_id=entry.current.job_id,
            page_number=entry.current.page_number,
            uploaded_at=entry.current.uploaded_at,
            reissued=len(entry.current.reissued),
            proposed_match=proposed.get(entry.key),
        )
        for entry in sorted(register.sheets.values(), key=lambda e: e.key)
    ]
    return ProjectSheets(
        project=register.project,
        sequence=register.sequence,
        sheets=sheets,
        proposals=register.proposals,
    )


@refusing_outages
async def sheet_versions(io: Collaborators, project: str, sheet: str) -> list[SheetVersion]:
    return _sheet(await _register(io, project), sheet).versions


async def _pair(
    io: Collaborators, project: str, sheet: str, before: int, after: int
) -> tuple[SheetVersion, SheetVersion]:
    entry = _sheet(await _register(io, project), sheet)
    if before == after:
        raise Refusal(
            RefusalKind.INVALID, "same_version", "Name two different versions to compare."
        )
    return _version(entry, before), _version(entry, after)


@refusing_outages
async def sheet_delta_json(
    io: Collaborators, project: str, sheet: str, before: int, after: int
) -> bytes:
    """The delta from version ``before`` to ``after`` (JSON): the one stored for
    consecutive versions, else worked out from the two kept pages."""
    old, new = await _pair(io, project, sheet, before, after)
    if new.delta_key and new.version == old.version + 1:
        return await io.bucket.get_bytes(new.delta_key)
    before_layer, after_layer = await _layers(io, old, new)
    images = await _images(io, old, new, before_layer, after_layer)
    delta = await _delta(io, old, new, before_layer, after_layer, images)
    return json.dumps(delta.to_json()).encode()


async def _images(
    io: Collaborators, old: SheetVersion, new: SheetVersion, before: TextLayer, after: TextLayer
) -> tuple[PageImage, PageImage] | None:
    """The two versions' kept images; None when one has none."""
    if old.image_key is None or new.image_key is None:
        return None
    pngs = await asyncio.gather(
        io.bucket.get_bytes(old.image_key), io.bucket.get_bytes(new.image_key)
    )
    return (
        PageImage(png=pngs[0], width=before.width, height=before.height),
        PageImage(png=pngs[1], width=after.width, height=after.height),
    )


async def _delta(
    io: Collaborators,
    old: SheetVersion,
    new: SheetVersion,
    before: TextLayer,
    after: TextLayer,
    images: tuple[PageImage, PageImage] | None,
) -> SheetDelta:
    readings = await asyncio.gather(kept_reading(io.bucket, old), kept_reading(io.bucket, new))
    work = partial(
        sheet_delta,
        before,
        after,
        before_reading=readings[0],
        after_reading=readings[1],
        images=images,
    )
    return await asyncio.to_thread(work)


async def _layers(
    io: Collaborators, old: SheetVersion, new: SheetVersion
) -> tuple[TextLayer, TextLayer]:
    before, after = await asyncio.gather(
        io.bucket.get_model(old.text_key, TextLayer), io.bucket.get_model(new.text_key, TextLayer)
    )
    return before, after


@refusing_outages
async def sheet_overlay(
    io: Collaborators, project: str, sheet: str, before: int, after: int
) -> bytes:
    """The overlay of version ``before`` (red) and ``after`` (blue) as PNG: the one stored
    for consecutive versions, else drawn from the two kept pages."""
    old, new = await _pair(io, project, sheet, before, after)
    if new.overlay_key and new.version == old.version + 1:
        try:
            return await io.bucket.get_bytes(new.overlay_key)
        except ObjectMissing:
            pass  # drawn again below
    before_layer, after_layer = await _layers(io, old, new)
    images = await _images(io, old, new, before_layer, after_layer)
    if images is None:
        raise not_found("A version of the sheet has no image to overlay.", "no_image")
    delta = await _delta(io, old, new, before_layer, after_layer, images)
    return await asyncio.to_thread(overlay_png, *images, delta)


class ProposalVerdict(BaseModel):
    """A reviewer's decision on a proposed match, and why."""

    decision: Literal["accepted", "rejected"] = Field(
        description="accepted: the same drawing (the old number's versions follow the new "
        "one); rejected: two drawings"
    )
    reason: str = Field(min_length=3, max_length=2000, description="why: kept in the record")


@refusing_outages
async def list_proposals(io: Collaborators, project: str) -> list[ProposedMatch]:
    """Every match the register proposed, whatever its status, oldest first."""
    return (await _register(io, project)).proposals


@refusing_outages
async def project_review(io: Collaborators, project: str) -> list[ProposalDecision | SheetMoved]:
    """The project's review records, oldest first: decisions, and the moves they (and
    corrections of its jobs' sheets) made."""
    await _register(io, project)
    return await project_records(io.bucket, project)


@refusing_outages
async def decide_proposal(
    io: Collaborators, caller: Caller, project: str, proposal_id: str, verdict: ProposalVerdict
) -> ProposalDecision:
    """Accept or reject a proposed match: the decision, recorded and announced (the same
    decision again gives back the record made first)."""
    record, _ = await decide(io, caller, project, proposal_id, verdict)
    return record


async def decide(
    io: Collaborators, caller: Caller, project: str, proposal_id: str, verdict: ProposalVerdict
) -> tuple[ProposalDecision, bool]:
    """:func:`decide_proposal`, and whether the record is new (False: the same decision was
    made before)."""
    register = await _register(io, project)
    proposal = next((p for p in register.proposals if p.proposal_id == proposal_id), None)
    if proposal is None:
        raise not_found(f"The project has no proposal {proposal_id!r}.", "no_such_proposal")
    earlier = [
        r
        for r in await project_records(io.bucket, project)
        if isinstance(r, ProposalDecision) and r.proposal_id == proposal_id
    ]
    decided = earlier[0].decision if earlier else None
    if proposal.status != "proposed" and decided is None:
        decided = proposal.status
    if decided == verdict.decision and earlier:
        return earlier[0], False
    if decided is not None:
        raise Refusal(
            RefusalKind.CONFLICT,
            "already_decided",
            f"The proposal was {decided} already; a decision is not changed.",
        )
    if verdict.decision == "accepted" and not {proposal.sheet_key, proposal.matches_key} <= set(
        register.sheets
    ):
        raise Refusal(
            RefusalKind.CONFLICT,
            "proposal_stale",
            "A sheet of the proposal has moved since it was proposed; it cannot be accepted.",
        )
    at = now()
    record = ProposalDecision(
        record_id=new_record_id(at),
        project=project,
        by=caller.name,
        at=at,
        reason=verdict.reason,
        proposal_id=proposal_id,
        sheet_key=proposal.sheet_key,
        matches_key=proposal.matches_key,
        decision=verdict.decision,
    )
    key = await save_project_record(io.bucket, record)
    event = ProposalDecided(
        project=project,
        proposal_id=proposal_id,
        decision=verdict.decision,
        record_id=record.record_id,
        record_key=key,
        by=caller.name,
        at=at,
    )
    await io.publisher.publish(subjects.PROPOSAL_DECIDED, event, dedup_id=record.record_id)
    return record, True
