"""A person's review, applied to a project's register (pure): a correction of a sheet's
number or title, a proposed match accepted or rejected.

A sheet moved to another number takes its versions with it. Where the number is free the
sheet is renamed; where the register holds a sheet under it already the two histories become
one (an accepted proposal: the old number's first; a correction: the one whose current
version was uploaded earlier first), numbered on: the first version of the later history
then has a new predecessor, which the caller diffs it against (``Moved.diff``). The sheet is
known by the number the review gives it; each version keeps the number it printed.
"""

from dataclasses import dataclass
from datetime import datetime

from shared.contracts.register import ProposedMatch, Register, RegisterSheet, SheetVersion
from shared.contracts.review import ProposalDecision
from shared.sheet.normal import ascii_number


@dataclass(frozen=True)
class Moved:
    """The register's sheets after a move, and the version (index into the moved-to sheet's
    versions) that has a new predecessor to diff against; None for a rename."""

    sheets: dict[str, RegisterSheet]
    diff: int | None


@dataclass(frozen=True)
class Located:
    """Where a job's page stands in the register: the sheet, the index of its version, and
    whether that version is the sheet's current one."""

    key: str
    index: int
    current: bool


def locate(register: Register, job_id: str, page_number: int) -> Located | None:
    """The register's version of a job's page: the version the page gave, or the current
    version a re-issue of the page left unchanged; None when the page is not in it."""
    for key, sheet in register.sheets.items():
        last = len(sheet.versions) - 1
        for index, version in enumerate(sheet.versions):
            if version.job_id == job_id and version.page_number == page_number:
                return Located(key, index, index == last)
        reissues = sheet.current.reissued
        if any(r.job_id == job_id and r.page_number == page_number for r in reissues):
            return Located(key, last, True)
    return None


def corrected_version(version: SheetVersion, values: dict[str, str | None]) -> SheetVersion:
    """``version`` with the printed fields a person corrected (a number cleared is kept)."""
    update = {
        field: value for field, value in values.items() if field in ("sheet_title", "revision")
    }
    if number := values.get("sheet_number"):
        update |= {"sheet_number": ascii_number(number) or number, "sheet_number_printed": number}
    return version.model_copy(update=update)


def with_version(register: Register, at: Located, version: SheetVersion) -> Register:
    """``register`` with the version ``at`` replaced (the sheet's title and number follow its
    current version)."""
    sheet = register.sheets[at.key]
    versions = [*sheet.versions]
    versions[at.index] = version
    current = versions[-1]
    entry = sheet.model_copy(
        update={
            "versions": versions,
            "sheet_number": current.sheet_number,
            "sheet_title": current.sheet_title,
        }
    )
    return register.model_copy(update={"sheets": {**register.sheets, at.key: entry}})


def move_sheet(
    register: Register, from_key: str, to_key: str, number: str, *, moved_first: bool = False
) -> Moved:
    """The sheet under ``from_key`` moved under ``to_key`` with its versions, the sheet
    then known by ``number``. Where ``to_key`` holds a sheet already, the moved sheet's
    versions come first when ``moved_first`` (a proposal accepted: the old number's history
    before the new one's), else the history whose current version was uploaded earlier."""
    sheets = dict(register.sheets)
    moving = sheets.pop(from_key)
    held = sheets.get(to_key)
    if held is None:
        named = {"key": to_key, "sheet_number": ascii_number(number) or number}
        sheets[to_key] = moving.model_copy(update=named)
        return Moved(sheets, None)
    if moved_first:
        first, then = moving, held
    else:
        first, then = sorted((held, moving), key=lambda s: s.current.uploaded_at)
    following = [
        version.model_copy(update={"version": len(first.versions) + n})
        for n, version in enumerate(then.versions, start=1)
    ]
    # Its change was from nothing (a first version): the caller diffs it anew.
    following[0] = following[0].model_copy(
        update={
            "changes": None,
            "title_block_only": False,
            "delta_key": None,
            "overlay_key": None,
        }
    )
    versions = [*first.versions, *following]
    sheets[to_key] = RegisterSheet(
        key=to_key,
        sheet_number=ascii_number(number) or number,
        sheet_title=versions[-1].sheet_title,
        versions=versions,
    )
    return Moved(sheets, len(first.versions))


def decided(proposals: list[ProposedMatch], record: ProposalDecision) -> list[ProposedMatch]:
    """The proposals with ``record``'s decided."""
    return [
        p.model_copy(
            update={
                "status": record.decision,
                "decided_by": record.by,
                "decided_at": record.at,
                "reason": record.reason,
            }
        )
        if p.proposal_id == record.proposal_id
        else p
        for p in proposals
    ]


def next_register(register: Register, record_id: str, at: datetime, **update: object) -> Register:
    """``register`` with a review record applied: one more in sequence."""
    return register.model_copy(
        update={
            "sequence": register.sequence + 1,
            "applied": [*register.applied, record_id],
            "updated_at": at,
            **update,
        }
    )
