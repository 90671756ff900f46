"""What intake does to one real-world PDF, held against what MuPDF itself reads of it: run in a
bounded child per file by the property test (``tests/faults/test_intake_property.py``).

A page is *readable* when MuPDF loads and interprets it without an error and it shows
something (text, or a render that is not one flat colour). Intake must never refuse a file
with a readable page, never name a readable page damaged, never raise past its handlers,
never change what a page shows when it strips active content, and answer within its
inspection limit.
"""

import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pymupdf

from services.ingest.refusals import Refusal
from services.ingest.source import check_and_prepare
from shared.pdf.damage import page_damage

# Pages looked at per file (the first ones and the last): enough to see what intake did to
# the file, cheap enough to run over seven hundred files in CI.
PAGES_PER_FILE = 6
# Renders are compared at this resolution: a page that lost or gained anything still differs.
RENDER_DPI = 9


@dataclass
class Verdict:
    """What went wrong with one file (``problems`` empty when nothing did)."""

    name: str
    opened: bool = True
    intake_s: float = 0.0
    problems: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class PageView:
    text: str
    render: bytes
    readable: bool


def sample_pages(count: int) -> list[int]:
    first = list(range(min(count, PAGES_PER_FILE - 1)))
    return sorted({*first, count - 1}) if count else []


def view(doc: pymupdf.Document, index: int) -> PageView | None:
    """What page ``index`` shows (its text and a small render), or None when MuPDF cannot
    load or interpret it."""
    try:
        page = doc.load_page(index)
        text = page.get_text()
        pixmap = page.get_pixmap(dpi=RENDER_DPI)
    except Exception:
        return None
    return PageView(text, pixmap.samples, bool(text.strip()) or not pixmap.is_unicolor)


def views(path: Path) -> tuple[pymupdf.Document, dict[int, PageView | None]] | None:
    try:
        doc = pymupdf.open(path, filetype="pdf")
        if not doc.is_pdf:
            return None
        if doc.needs_pass:
            return doc, {}
        count = doc.page_count
    except Exception:  # not opened, or no page count: no page of it is readable
        return None
    return doc, {i: view(doc, i) for i in sample_pages(count)}


def examine(path: Path, max_pages: int) -> Verdict:
    """Intake's checks and stripping on a copy of ``path``, held against MuPDF's reading."""
    pymupdf.TOOLS.mupdf_display_errors(False)
    verdict = Verdict(path.name)
    seen = views(path)
    if seen is None:
        verdict.opened = False
        return verdict
    doc, pages = seen
    readable = sorted(i + 1 for i, v in pages.items() if v and v.readable)
    with tempfile.TemporaryDirectory(prefix="intake-property-") as tmp:
        upload = Path(tmp) / "source.pdf"
        shutil.copyfile(path, upload)
        started = time.monotonic()
        try:
            accepted, source = check_and_prepare(
                upload, max_pages=max_pages, refuse_active_content=False
            )
        except Refusal as refusal:
            if readable:
                verdict.problems.append(f"refused ({refusal.error}) with readable {readable}")
            return verdict
        except Exception as exc:
            verdict.problems.append(f"raised {type(exc).__name__}: {exc}")
            return verdict
        finally:
            verdict.intake_s = time.monotonic() - started
        named = set(source.intake.damaged_pages) & set(readable)
        if named:
            verdict.problems.append(f"readable pages named damaged at intake: {sorted(named)}")
        # Extract looks for damage on a page of a repaired file, or one that reads empty;
        # a readable page is never damaged, wherever it is looked for.
        lost = [n for n in readable if page_damage(doc, n - 1)]
        if lost:
            verdict.problems.append(f"readable pages named damaged: {lost}")
        if source.path != upload:
            verdict.problems += changed_pages(pages, source.path, accepted.page_count)
    return verdict


def changed_pages(before: dict[int, PageView | None], stripped: Path, count: int) -> list[str]:
    """How the stripped copy shows the sampled pages differently from the upload."""
    after = views(stripped)
    if after is None:
        return ["the stripped copy does not open"]
    doc, _ = after
    if doc.page_count != count:
        return [f"the stripped copy has {doc.page_count} pages, the upload {count}"]
    problems = []
    for index, was in before.items():
        now = view(doc, index)
        if was is None or not was.readable:
            continue
        if now is None or now.text != was.text:
            problems.append(f"page {index + 1}'s text changed when stripped")
        elif now.render != was.render:
            problems.append(f"page {index + 1}'s render changed when stripped")
    return problems
