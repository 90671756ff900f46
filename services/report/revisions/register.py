"""A project's register, brought up to date with a finished job's sheets (pure).

Each sheet of the job is matched to the register by its normalised number (``sheet_key``,
the form the set step compares numbers in):

- a number the register holds: a new version when its page differs from the current
  version's, or "re-issued unchanged" (recorded on the current version) when it does not;
- a number the register does not hold: version 1; when a register sheet the upload lacks has
  the same title and nearly the same words, the two are proposed as one drawing renumbered
  (recorded and shown, never merged: a person decides);
- a register sheet the upload lacks stays current (a partial issue replaces only what it
  carries).

The caller does the I/O: it diffs the pages :func:`plan_upload` names, keeps the new
versions' pages, and hands what it found to :func:`apply_upload`.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime

from services.report.revisions.matching import same_title
from shared.contracts.messages import SheetRevised
from shared.contracts.register import (
    ProposedMatch,
    Register,
    RegisterOutcome,
    RegisterSheet,
    Reissue,
    SheetOutcome,
    SheetVersion,
    UnitCounts,
)
from shared.contracts.report import Report
from shared.infra.storage import Keys
from shared.sheet.normal import ascii_number, date_order, iso_date
from shared.sheet.tokens import sheet_key


@dataclass(frozen=True)
class UploadedSheet:
    """A verified page of the job with a sheet number, as the set decided it."""

    key: str
    sheet_number: str  # as printed
    sheet_title: str | None
    revision: str | None
    issue_date: str | None  # as printed
    page_number: int
    issue_date_iso: str | None = None  # read in the set's day/month order


@dataclass(frozen=True)
class Upload:
    job_id: str
    file_name: str
    uploaded_at: datetime
    sheets: tuple[UploadedSheet, ...]
    unregistered_pages: tuple[int, ...] = ()
    duplicate_pages: tuple[int, ...] = ()
    issue: str | None = None
    issued_on: date | None = None


def upload_of(
    report: Report, uploaded_at: datetime, issue: str | None = None, issued_on: date | None = None
) -> Upload:
    """The job's sheets from its report: each verified page with a number, the first page of
    a number repeated (the set step names the duplicates); their dates read in the order
    the set's dates share."""
    order = date_order(p.sheet.issue_date for p in report.pages)
    sheets: dict[str, UploadedSheet] = {}
    unregistered: list[int] = []
    duplicates: list[int] = []
    for page in report.pages:
        number = page.sheet.sheet_number if page.status == "verified" else None
        key = sheet_key(number) if number else ""
        if not number or not key:
            unregistered.append(page.page_number)
        elif key in sheets:
            duplicates.append(page.page_number)
        else:
            sheets[key] = UploadedSheet(
                key=key,
                sheet_number=number,
                sheet_title=page.sheet.sheet_title,
                revision=page.sheet.revision,
                issue_date=page.sheet.issue_date,
                page_number=page.page_number,
                issue_date_iso=iso_date(page.sheet.issue_date, order),
            )
    return Upload(
        job_id=report.job_id,
        file_name=report.file_name,
        uploaded_at=uploaded_at,
        sheets=tuple(sheets.values()),
        unregistered_pages=tuple(unregistered),
        duplicate_pages=tuple(duplicates),
        issue=issue,
        issued_on=issued_on,
    )


@dataclass(frozen=True)
class Plan:
    """What the caller must look at before the register can be brought up to date."""

    known: tuple[tuple[UploadedSheet, SheetVersion], ...]
    """Sheets the register holds, each with its current version: diff the two pages."""
    new: tuple[UploadedSheet, ...]
    candidates: Mapping[str, tuple[str, ...]]
    """A new sheet's key → register sheets the upload lacks with the same title: compare the
    words of the pages to propose a match."""
    carried: tuple[str, ...]
    """Register sheets (keys) the upload lacks."""


def plan_upload(register: Register, upload: Upload) -> Plan:
    uploaded = {s.key for s in upload.sheets}
    carried = tuple(k for k in register.sheets if k not in uploaded)
    known = tuple(
        (s, register.sheets[s.key].current) for s in upload.sheets if s.key in register.sheets
    )
    new = tuple(s for s in upload.sheets if s.key not in register.sheets)
    candidates = {
        s.key: found
        for s in new
        if (
            found := tuple(
                k for k in carried if same_title(register.sheets[k].sheet_title, s.sheet_title)
            )
        )
    }
    return Plan(known=known, new=new, candidates=candidates, carried=carried)


@dataclass(frozen=True)
class Change:
    """A known sheet's page against its current version's, when they differ."""

    counts: UnitCounts
    title_block_only: bool
    delta_key: str
    overlay_key: str | None


@dataclass(frozen=True)
class Kept:
    """Where a new version's page is kept, under the project's keys."""

    text_key: str
    image_key: str | None
    reading_key: str | None = None


def apply_upload(
    register: Register,
    upload: Upload,
    *,
    changes: Mapping[str, Change | None],
    matches: Mapping[str, tuple[str, float]],
    kept: Mapping[str, Kept],
    applied_as: str | None = None,
) -> tuple[Register, RegisterOutcome]:
    """The register with the upload applied, and what the upload did to it.

    ``changes`` holds, for every known sheet, its change (None: unchanged); ``matches`` a
    new sheet's proposed match (key, similarity); ``kept`` every new version's page. A job
    the register already holds leaves it as it is (a redelivered job), unless the upload is
    a page of it a person gave a number since (``applied_as``: the correction's record)."""
    if applied_as is None and upload.job_id in register.jobs:
        raise ValueError(f"the register already holds job {upload.job_id}")
    applied = applied_as or upload.job_id
    sequence = register.sequence + 1
    sheets = dict(register.sheets)
    proposals = list(register.proposals)
    outcomes: list[SheetOutcome] = []
    for sheet in upload.sheets:
        current = sheets.get(sheet.key)
        if current is None:
            outcome, entry, proposal = _added(register, upload, sheet, matches.get(sheet.key), kept)
            proposals += [proposal] if proposal else []
        elif (change := changes[sheet.key]) is None:
            outcome, entry = _reissued(upload, sheet, current)
        else:
            outcome, entry = _revised(upload, sheet, current, change, kept[sheet.key])
        sheets[sheet.key] = entry
        outcomes.append(outcome)
    uploaded = {s.key for s in upload.sheets}
    updated = Register(
        project=register.project,
        sequence=sequence,
        jobs=register.jobs if applied_as else [*register.jobs, upload.job_id],
        applied=[*register.applied, applied],
        sheets=sheets,
        proposals=proposals,
        updated_at=upload.uploaded_at,
    )
    return updated, RegisterOutcome(
        project=register.project,
        job_id=upload.job_id,
        sequence=sequence,
        register_key=Keys.register_snapshot(register.project, sequence, applied),
        issue=upload.issue,
        issued_on=upload.issued_on,
        sheets=outcomes,
        carried=[s.sheet_number for k, s in register.sheets.items() if k not in uploaded],
        unregistered_pages=list(upload.unregistered_pages),
        duplicate_pages=list(upload.duplicate_pages),
    )


def _version(upload: Upload, sheet: UploadedSheet, number: int, kept: Kept) -> SheetVersion:
    return SheetVersion(
        version=number,
        job_id=upload.job_id,
        page_number=sheet.page_number,
        file_name=upload.file_name,
        sheet_number=ascii_number(sheet.sheet_number) or sheet.sheet_number,
        sheet_number_printed=sheet.sheet_number,
        sheet_title=sheet.sheet_title,
        revision=sheet.revision,
        issue_date=sheet.issue_date_iso,
        issue_date_printed=sheet.issue_date,
        issue=upload.issue,
        issued_on=upload.issued_on,
        uploaded_at=upload.uploaded_at,
        text_key=kept.text_key,
        image_key=kept.image_key,
        reading_key=kept.reading_key,
    )


def _added(
    register: Register,
    upload: Upload,
    sheet: UploadedSheet,
    match: tuple[str, float] | None,
    kept: Mapping[str, Kept],
) -> tuple[SheetOutcome, RegisterSheet, ProposedMatch | None]:
    proposal = None
    if match is not None:
        matched = register.sheets[match[0]]
        proposal = ProposedMatch(
            sheet_key=sheet.key,
            sheet_number=sheet.sheet_number,
            matches_key=matched.key,
            matches_number=matched.sheet_number,
            sheet_title=sheet.sheet_title,
            similarity=match[1],
            job_id=upload.job_id,
        )
    entry = RegisterSheet(
        key=sheet.key,
        sheet_number=ascii_number(sheet.sheet_number) or sheet.sheet_number,
        sheet_title=sheet.sheet_title,
        versions=[_version(upload, sheet, 1, kept[sheet.key])],
    )
    outcome = SheetOutcome(
        sheet_key=sheet.key,
        sheet_number=sheet.sheet_number,
        sheet_title=sheet.sheet_title,
        page_number=sheet.page_number,
        outcome="proposed" if proposal else "added",
        to_version=1,
        to_revision=sheet.revision,
        proposed_match=proposal,
    )
    return outcome, entry, proposal


def _reissued(
    upload: Upload, sheet: UploadedSheet, current: RegisterSheet
) -> tuple[SheetOutcome, RegisterSheet]:
    version = current.current
    reissue = Reissue(
        job_id=upload.job_id, page_number=sheet.page_number, uploaded_at=upload.uploaded_at
    )
    version = version.model_copy(update={"reissued": [*version.reissued, reissue]})
    entry = current.model_copy(update={"versions": [*current.versions[:-1], version]})
    outcome = SheetOutcome(
        sheet_key=sheet.key,
        sheet_number=sheet.sheet_number,
        sheet_title=sheet.sheet_title,
        page_number=sheet.page_number,
        outcome="reissued",
        from_version=version.version,
        to_version=version.version,
        from_revision=version.revision,
        to_revision=sheet.revision,
    )
    return outcome, entry


def _revised(
    upload: Upload, sheet: UploadedSheet, current: RegisterSheet, change: Change, kept: Kept
) -> tuple[SheetOutcome, RegisterSheet]:
    before = current.current
    version = _version(upload, sheet, before.version + 1, kept).model_copy(
        update={
            "changes": change.counts,
            "title_block_only": change.title_block_only,
            "delta_key": change.delta_key,
            "overlay_key": change.overlay_key,
        }
    )
    entry = RegisterSheet(
        key=sheet.key,
        sheet_number=ascii_number(sheet.sheet_number) or sheet.sheet_number,
        sheet_title=sheet.sheet_title,
        versions=[*current.versions, version],
    )
    outcome = SheetOutcome(
        sheet_key=sheet.key,
        sheet_number=sheet.sheet_number,
        sheet_title=sheet.sheet_title,
        page_number=sheet.page_number,
        outcome="revised",
        from_version=before.version,
        to_version=version.version,
        from_revision=before.revision,
        to_revision=sheet.revision,
        changes=change.counts,
        title_block_only=change.title_block_only,
        delta_key=change.delta_key,
        overlay_key=change.overlay_key,
    )
    return outcome, entry


def revised_events(changes: RegisterOutcome) -> list[SheetRevised]:
    """``sheet.revised`` for each sheet an upload gave a new version."""
    events = []
    for sheet in changes.sheets:
        if sheet.outcome != "revised" or sheet.from_version is None or sheet.delta_key is None:
            continue
        counts = sheet.changes or UnitCounts()
        events.append(
            SheetRevised(
                project=changes.project,
                job_id=changes.job_id,
                page_number=sheet.page_number,
                sheet_number=sheet.sheet_number,
                sheet_key=sheet.sheet_key,
                from_version=sheet.from_version,
                to_version=sheet.to_version,
                from_revision=sheet.from_revision,
                to_revision=sheet.to_revision,
                added=counts.added,
                removed=counts.removed,
                changed=counts.changed,
                regions=counts.regions,
                title_block_only=sheet.title_block_only,
                delta_key=sheet.delta_key,
                overlay_key=sheet.overlay_key,
            )
        )
    return events
