"""What the user sees: the two consoles, errors as one message and an exit code, the sheet
table and summary of a report, and documents written out."""

import contextlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from shared.contracts.models import checked_sentence
from shared.contracts.register import ProposedMatch, SheetOutcome, UnitCounts
from shared.contracts.report import PageReport, Report, VerificationSummary
from sheetflow.runtime import RuntimeStartError

stdout = Console(soft_wrap=True)  # long paths and URLs stay whole, for copy and paste
stderr = Console(stderr=True, soft_wrap=True)

EXIT_OK, EXIT_ERROR, EXIT_PAGES_FAILED, EXIT_INTERRUPTED = 0, 1, 2, 130


class CliError(Exception):
    """A failure the user can act on: printed as one message, exit code 1."""


@contextlib.contextmanager
def user_errors() -> Iterator[None]:
    """Turn CliError / RuntimeStartError into a message and exit 1; Ctrl-C into exit 130."""
    try:
        yield
    except (CliError, RuntimeStartError) as exc:
        stderr.print(f"[red]error:[/] {escape(str(exc))}")
        raise typer.Exit(EXIT_ERROR) from None
    except KeyboardInterrupt:
        stderr.print("interrupted; everything this command started is stopped")
        raise typer.Exit(EXIT_INTERRUPTED) from None


def supervisor_line(line: str) -> None:
    stderr.print(f"[yellow]supervisor:[/] {escape(line)}")


def verdict_text(page: PageReport) -> str:
    verdict = _verification_text(page)
    return f"{verdict}; DEGRADED" if page.degraded else verdict


def _verification_text(page: PageReport) -> str:
    verification = page.verification
    if page.status == "failed" and page.failure_stage == "canceled":
        return "canceled"
    if page.status == "failed" or verification is None:
        return "FAILED"
    if verification.skipped:
        return f"skipped ({verification.skipped})"
    if verification.unjudged:
        return "unjudged"
    if verification.ok:
        checked = verification.checked
        return f"ok ({checked.checked} of {checked.objects} checked)" if checked else "ok"
    return ", ".join(verification.kinds) or "problems"


def coverage_text(page: PageReport) -> str:
    """The page's coverage, and on a scan, that it was measured over the words OCR read."""
    coverage = page.coverage
    measured = coverage is not None and coverage.total_lines > 0
    if page.status == "verified" and not page.has_text_layer and not measured:
        return "- (no text layer)"
    if coverage is None or not measured:
        return "-"
    ocr = "" if page.has_text_layer else " OCR"
    return f"{coverage.ratio:.2f} ({coverage.covered_lines}/{coverage.total_lines}{ocr})"


def _marked(version: int | None, revision: str | None) -> str:
    """A version with the revision mark its title block prints: "v2 (rev C)"."""
    return f"v{version}" + (f" (rev {revision})" if revision else "")


def change_text(sheet: SheetOutcome) -> str:
    """What the job did to the sheet in its project's register, in a few words, each
    version beside the revision mark it prints."""
    if sheet.outcome == "revised":
        counts = sheet.changes or UnitCounts()
        what = f"+{counts.added} -{counts.removed} ~{counts.changed}"
        if counts.regions:
            what += f", {counts.regions} drawing region{'s' if counts.regions > 1 else ''}"
        if sheet.title_block_only:
            what += ", title block only"
        before = _marked(sheet.from_version, sheet.from_revision)
        return f"{before} -> {_marked(sheet.to_version, sheet.to_revision)} ({what})"
    if sheet.outcome == "reissued":
        return f"{_marked(sheet.to_version, sheet.to_revision)} re-issued unchanged"
    if sheet.outcome == "proposed" and sheet.proposed_match:
        return f"new v1; same drawing as {sheet.proposed_match.matches_number}? (proposed)"
    return "new v1"


def sheet_table(report: Report) -> Table:
    table = Table(title=f"{report.file_name} ({report.status})")
    columns = ["page", "sheet", "title", "discipline", "coverage", "verdict"]
    changes = {s.page_number: s for s in report.changes.sheets} if report.changes else None
    for column in [*columns, *(["change"] if changes is not None else [])]:
        table.add_column(column, justify="right" if column == "page" else "left", overflow="fold")
    for page in report.pages:
        sheet = page.sheet
        row = [
            str(page.page_number),
            escape(sheet.sheet_number or "-"),
            escape(sheet.sheet_title or "-"),
            escape(sheet.discipline or "-"),
            coverage_text(page),
            escape(verdict_text(page)),
        ]
        if changes is not None:
            change = changes.get(page.page_number)
            row.append(escape(change_text(change)) if change else "-")
        table.add_row(*row)
    return table


def proposals_table(project: str, proposals: list[ProposedMatch]) -> Table:
    """The matches a project's register proposed, each with its id and its status."""
    table = Table(title=f"proposed matches of project {project}")
    for column in ("id", "new sheet", "same drawing as?", "title", "similarity", "status"):
        table.add_column(column, overflow="fold")
    for p in proposals:
        status = f"{p.status} by {p.decided_by}: {p.reason or ''}" if p.decided_by else p.status
        table.add_row(
            escape(p.proposal_id),
            escape(p.sheet_number),
            escape(p.matches_number),
            escape(p.sheet_title or "-"),
            f"{p.similarity:.2f}",
            escape(status),
        )
    return table


def changes_lines(report: Report) -> list[str]:
    """What the job did to its project's register, counted."""
    changes = report.changes
    if changes is None:
        return []
    issue = ", ".join(str(x) for x in (changes.issue, changes.issued_on) if x)
    line = (
        f"project {changes.project} (upload {changes.sequence}{f', {issue}' if issue else ''}): "
        f"revised {changes.count('revised')}, new {changes.count('added')}, "
        f"re-issued unchanged {changes.count('reissued')}, "
        f"proposed as renumbered {changes.count('proposed')}"
    )
    if changes.carried:
        line += f"; not in this upload, still current: {', '.join(changes.carried)}"
    return [line]


def summary_lines(report: Report) -> list[str]:
    summary = report.summary
    coverage = summary.extraction_coverage
    verification = summary.verification
    guard = summary.guard
    mean = coverage.mean_ratio
    rate = verification.problem_rate
    failed_structuring = coverage.text_structuring_failed_pages
    return [
        (
            f"pages: {report.page_count}, failed: {len(summary.failed_pages)}, "
            f"degraded: {len(summary.degraded_pages)}, "
            f"model failures: {len(summary.model_failures)}"
        ),
        f"coverage: mean {mean if mean is not None else '-'}, "
        f"below floor {coverage.pages_below_floor_count}, "
        f"text-structured {coverage.text_structured_pages}"
        + (f" ({failed_structuring} failed)" if failed_structuring else "")
        + f", fallback {coverage.fallback_pages_count}",
        (
            f"verification: verified {verification.pages_verified} = "
            f"passed {verification.pages_passed} + with problems {verification.verify_failed} + "
            f"unjudged {verification.pages_unjudged} "
            f"(skipped blank {verification.pages_skipped_blank}), "
            f"problem rate {f'{rate:.0%}' if rate is not None else '-'}; "
            + checked_sentence(
                verification.objects_checked, verification.objects, verification.ocr_lines
            )
        ),
        (
            f"guard: kept {guard.kept}, rescued {guard.rescued}, "
            f"vision unverified {guard.vision_unverified}, dropped {guard.dropped}"
        ),
        *_honesty_lines(verification),
        *_unjudged_lines(report),
    ]


# Unjudged pages named in the summary, at most; report.html names every one.
UNJUDGED_NAMED = 5


def _unjudged_lines(report: Report) -> list[str]:
    """The unjudged pages (blank ones aside), each with why."""
    why = [w for p in report.pages if (w := p.unjudged_why())]
    if not why:
        return []
    more = len(why) - UNJUDGED_NAMED
    tail = [f"and {more} more (report.html names them)"] if more > 0 else []
    return ["unjudged: " + "; ".join(why[:UNJUDGED_NAMED] + tail)]


def _honesty_lines(verification: VerificationSummary) -> list[str]:
    """What a reader of the counts above must not miss: pages no independent check read,
    and pages whose text layer holds text they do not show."""
    lines = []
    if count := verification.pages_self_read:
        pages = "1 page" if count == 1 else f"{count} pages"
        lines.append(
            f"not judged: {pages}, whose objects are the page's own text; nothing independent "
            "read it (a model, the judge or the OCR check could)"
        )
    if hidden := verification.hidden_text_pages:
        pages = ", ".join(map(str, hidden))
        lines.append(f"hidden text (not shown on the page, never read as its text): pages {pages}")
    return lines


def model_failure_lines(report: Report) -> list[str]:
    """One line per model call that failed for good: the page, the stage and why."""
    return [f"page {f.page_number} ({f.stage}): {f.reason}" for f in report.summary.model_failures]


def intake_lines(report: Report) -> list[str]:
    """What ingest did to the upload: active content removed, a damaged file repaired."""
    intake = report.summary.intake
    lines = []
    if intake.removed:
        kinds = ", ".join(f"{k.replace('_', ' ')} ({n})" for k, n in intake.removed.items())
        lines.append(f"intake: removed {kinds} (never run)")
    if intake.repaired:
        lost = intake.damaged_pages
        pages = f"; lost pages {', '.join(map(str, lost))}" if lost else ""
        lines.append(f"intake: the file was damaged and repaired{pages}")
    return lines


def conclude(report: Report, out_dir: Path) -> int:
    """Print the summary; the exit code: 0 complete, 2 when a page failed or a configured
    model call failed for good (its pages were read offline or left unjudged), 1 canceled."""
    stdout.print(sheet_table(report))
    for line in [*summary_lines(report), *intake_lines(report), *changes_lines(report)]:
        stdout.print(escape(line))
    stdout.print(f"report: {out_dir / 'report.json'}  {out_dir / 'report.html'}")
    stdout.print(f"sheet log: {out_dir / 'sheets.csv'}")
    stdout.print(f"linked set: {out_dir / 'set.pdf'}")
    failed = report.summary.failed_pages
    if report.status == "canceled":
        stderr.print("[red]error:[/] the job was canceled")
        return EXIT_ERROR
    for f in failed:
        where = f"page {f.page_number} ({f.stage})"
        stderr.print(f"[red]failed:[/] {escape(where)}: {escape(f.reason)}")
    model_failures = model_failure_lines(report)
    for line in model_failures:
        stderr.print(f"[yellow]model failed:[/] {escape(line)}")
    return EXIT_PAGES_FAILED if failed or model_failures else EXIT_OK


def write_document(document: dict[str, Any], out: Path | None) -> None:
    """``document`` as indented JSON to ``out``, or to stdout without one."""
    text = json.dumps(document, indent=2)
    if out is None:
        sys.stdout.write(text + "\n")
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text + "\n")
    stderr.print(f"wrote {out}")
