"""Real drawing sets end to end: every file of ``../shared/corpus/`` through an embedded stack
(offline extractor, 1 extract worker), scored against the sheet numbers and titles the
manifest lists for each page, and the corpus's text-layer pages timed as one job beside a
plain PyMuPDF loop doing the same per-page work (words + text + render + PNG) on the same
pages, in the same run.

    python -m bench.corpus [--files SUBSTRING ...] [--no-ocr-check]
    python -m bench.corpus --variants [--files SUBSTRING ...] [--only VARIANT ...] [--jobs N]

``--variants`` reads the files again in other renderings instead (``bench.variants``: raster,
outlines, turned 90° and 270°).

``--no-ocr-check`` runs the stack with verify's OCR check off (``SHEETFLOW_VERIFY_OCR_CHECK``),
to tell its share of the ratios from the rest of the pipeline's.

Per file and in total: sheet numbers right / labelled, numbers wrong (reported, not the
printed one) and invented (reported on pages that print none), titles right / labelled and
wrong titles (a title reported that is not the printed one: ``tests.support.identity``),
offline and fallback objects the verifier refuted,
pages with problems, dark text pages (a text layer and no objects), pages below the
coverage floor; revision, issue date, project number and scale right / printed (and values
given where the manifest lists none), drawing-index rows read, pages by review priority and
pages passed by basis (with the objects checked and the lines the OCR check read); and the
identity work's time per page (``read_sheet``, in process). Last lines:
``RESULT corpus_self_refuted N``, ``RESULT corpus_sheet_accuracy X``,
``RESULT corpus_title_accuracy X``, ``RESULT corpus_wrong_title_share X`` (of the pages
listed), ``RESULT corpus_cpu_ratio X`` (the CPU seconds of every
sheetflow process, NATS and the S3 server included, per text-layer page over the raw loop's
CPU per page; goal <= 1.5) and ``RESULT corpus_time_ratio X`` (sheetflow's seconds per
text-layer page over the raw loop's; goal <= 1.0).
"""

import argparse
import asyncio
import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import pymupdf

from bench import variants
from bench.common import (
    cpu_by_name,
    cpu_delta,
    cpu_line,
    embedded_servers,
    isolated,
    ratio,
    result_line,
    run_job,
    services,
)
from bench.overhead import pymupdf_png, raw_loop
from bench.synthetic import set_bytes
from bench.variants import CHOICES
from services.extract.reading.textlayer import read_text_layer
from services.report.assemble import passed_bases
from shared.contracts.report import PageReport, Report
from shared.infra.settings import Settings
from shared.sheet.header import SheetHeader
from shared.sheet.index import read_drawing_index
from shared.sheet.reader import read_title_block
from shared.sheet.reading import read_sheet
from shared.sheet.references import references
from tests.support.identity import Tally, same_field
from tests.support.renderings import VARIANTS

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
TIME_GOAL = 1.0
CPU_GOAL = 1.5


@dataclass
class Score:
    """Figures of one file (or of all of them, summed)."""

    pages: int = 0
    # Sheet numbers and titles: right / labelled, numbers invented, wrong titles.
    identity: Tally = field(default_factory=Tally)
    self_refuted: int = 0  # offline/fallback objects the verifier refuted
    problem_pages: int = 0
    dark_text_pages: int = 0
    below_floor: int = 0
    failed_pages: int = 0
    text_pages: int = 0
    ocr_judged: int = 0  # text pages the OCR check judged (an object it confirmed or refuted)
    ocr_mismatch: int = 0  # pages with a text_layer_mismatch: zero on real sets
    verify_ms: int = 0  # verify's time summed over pages (the OCR check is most of it)
    # Title-block fields: right / printed (manifest), and values given where the manifest
    # lists none (either a value it left out, or an invented one: listed to be looked at).
    fields_right: dict[str, int] = field(default_factory=dict)
    fields_labelled: dict[str, int] = field(default_factory=dict)
    fields_unlisted: dict[str, int] = field(default_factory=dict)
    index_rows: int = 0  # drawing-index rows read (report.json's set)
    by_priority: dict[str, int] = field(default_factory=dict)  # pages by review priority
    passed_by_basis: dict[str, int] = field(default_factory=dict)  # passed pages by basis
    objects: int = 0
    objects_checked: int = 0  # objects a check gave a verdict (verification.checked)
    ocr_lines: int = 0  # lines the OCR check read
    fonts_cited: int = 0  # objects confirmed through a font read on another page
    misses: list[str] = field(default_factory=list)

    def checked_line(self) -> str:
        levels = ", ".join(f"{k} {v}" for k, v in self.by_priority.items())
        bases = ", ".join(f"{k} {v}" for k, v in sorted(self.passed_by_basis.items()))
        return (
            f"review priority: {levels}; pages passed by basis: {bases or 'none'}; "
            f"checked {self.objects_checked} of {self.objects} objects (OCR check of "
            f"{self.ocr_lines} lines, {self.fonts_cited} through a font read on another page)"
        )

    def add(self, other: "Score") -> None:
        for name, value in vars(other).items():
            if isinstance(value, int):
                setattr(self, name, getattr(self, name) + value)
            elif isinstance(value, Tally):
                self.identity.add(value)
            elif isinstance(value, dict):
                mine = getattr(self, name)
                for key, n in value.items():
                    mine[key] = mine.get(key, 0) + n

    def fields_line(self) -> str:
        return "  ".join(
            f"{name} {self.fields_right.get(name, 0)}/{self.fields_labelled.get(name, 0)}"
            f" (+{self.fields_unlisted.get(name, 0)} unlisted)"
            for name in FIELDS
        )


# report.json's sheet field → the manifest's name for it.
FIELDS = {"revision": "revision", "issue_date": "date", "project_number": "project_number"}
FIELDS |= {"scale": "scale"}


def _score_fields(score: Score, page: int, got: SheetHeader, sheet: dict) -> None:
    for name, listed in FIELDS.items():
        value, printed = getattr(got, name), sheet.get(listed)
        if printed:
            score.fields_labelled[name] = score.fields_labelled.get(name, 0) + 1
            if same_field(name, value, printed):
                score.fields_right[name] = score.fields_right.get(name, 0) + 1
            else:
                score.misses.append(f"p{page} {name} {value!r} (prints {printed[:40]!r})")
        elif value:
            score.fields_unlisted[name] = score.fields_unlisted.get(name, 0) + 1
            score.misses.append(f"p{page} {name} {value!r} (manifest lists none)")


def score_report(report: Report, sheets: list[dict]) -> Score:
    """Score one file's report against the manifest's sheets (one entry per page)."""
    score = Score(index_rows=len(report.set.index))
    pages = {p.page_number: p for p in report.pages}
    for sheet in sheets:
        page = pages[sheet["page"]]
        score.pages += 1
        if page.status != "verified" or page.verification is None:
            score.failed_pages += 1
            continue
        got = page.sheet
        score.identity.count(
            f"p{sheet['page']}",
            (got.sheet_number, got.sheet_title),
            (sheet["sheet_number"], sheet["sheet_title"]),
        )
        _score_fields(score, sheet["page"], got, sheet)
        score.self_refuted += sum(
            1
            for o in page.objects
            if o.rung in ("offline", "fallback")
            and o.verification is not None
            and o.verification.verdict == "refuted"
        )
        score.problem_pages += bool(page.verification.problems)
        score.dark_text_pages += bool(page.has_text_layer and not page.objects)
        score.below_floor += page.below_floor
        score.text_pages += bool(page.has_text_layer)
        score.ocr_judged += any(
            o.verification
            and o.verification.basis == "ocr"
            and o.verification.verdict != "uncertain"
            for o in page.objects
        )
        score.ocr_mismatch += "text_layer_mismatch" in page.verification.kinds
        _score_checked(score, page)
    return score


def _score_checked(score: Score, page: PageReport) -> None:
    """The page's review priority, the bases that passed it, and how much was checked."""
    if page.review_priority:
        level = page.review_priority.level
        score.by_priority[level] = score.by_priority.get(level, 0) + 1
    verdict = page.verification
    if verdict is None:
        return
    if verdict.ok and not verdict.unjudged:
        for basis in passed_bases(verdict):
            score.passed_by_basis[basis] = score.passed_by_basis.get(basis, 0) + 1
    if checked := verdict.checked:
        score.objects += checked.objects
        score.objects_checked += checked.checked
        score.ocr_lines += checked.ocr_lines
        score.fonts_cited += checked.fonts_cited


def verify_ms(report: Report) -> int:
    """Verify's time over the report's pages (its median times its pages)."""
    verify = report.summary.timings.get("verify")
    return round(verify.p50_ms * verify.pages) if verify else 0


def text_layer_set(entries: list[dict]) -> tuple[bytes, int]:
    """One PDF of every page of the files with a usable text layer (in memory only)."""
    combined = pymupdf.open()
    for entry in entries:
        if entry["text_layer_usable"] is not False:
            with pymupdf.open(CORPUS / "pdfs" / entry["file"]) as doc:
                combined.insert_pdf(doc)
    return combined.tobytes(), combined.page_count


def identity_ms(entries: list[dict]) -> tuple[float, float, int]:
    """Milliseconds per text-layer page, in process, side by side: what extract reads once
    now (``read_sheet``: number, title, fields, index, references) and the title block,
    index and references alone (what the pipeline read before the fields, once each)."""
    layers = []
    for entry in entries:
        if entry["text_layer_usable"] is False:
            continue
        with pymupdf.open(CORPUS / "pdfs" / entry["file"]) as doc:
            for n, page in enumerate(doc, start=1):
                layers.append(read_text_layer(page, n, 1))
    now = before = float("inf")
    for _ in range(2):  # fastest of two
        started = time.perf_counter()
        for layer in layers:
            read_sheet(layer)
        now = min(now, time.perf_counter() - started)
        started = time.perf_counter()
        for layer in layers:
            read_title_block(layer), read_drawing_index(layer), list(references(layer))
        before = min(before, time.perf_counter() - started)
    pages = max(len(layers), 1)
    return 1000 * now / pages, 1000 * before / pages, len(layers)


def _row(name: str, s: Score) -> str:
    n = s.identity
    return (
        f"{name[:34]:<34} {s.pages:>5} {n.numbers_right:>3}/{n.numbers_labelled:<4} "
        f"{n.numbers_wrong:>5} {n.numbers_invented:>8} {n.titles_right:>3}/{n.titles_labelled:<3} "
        f"{n.titles_wrong:>5} {s.self_refuted:>7} {s.problem_pages:>8} {s.dark_text_pages:>4} "
        f"{s.below_floor:>6} {s.failed_pages:>6}"
    )


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="the offline pipeline on real drawing sets")
    parser.add_argument("--files", nargs="*", default=[], help="only files containing these")
    parser.add_argument("--runs", type=int, default=2, help="timed runs of each; fastest counts")
    parser.add_argument("--no-ocr-check", action="store_true", help="verify without its OCR check")
    parser.add_argument(
        "--variants",
        action="store_true",
        help="read the files again as raster, outlines and turned 90/270 (bench.variants)",
    )
    parser.add_argument(
        "--only", nargs="*", choices=CHOICES, default=list(VARIANTS), help="with --variants"
    )
    parser.add_argument("--jobs", type=int, default=1, help="with --variants: files read at once")
    return parser.parse_args(argv)


def main() -> None:
    args = parse_args()
    if args.variants:
        variants.run(args.files, args.only, args.jobs)
        return
    entries = [
        e
        for e in json.loads((CORPUS / "manifest.json").read_text())["files"]
        if not args.files or any(part in e["file"] for part in args.files)
    ]
    timed_pdf, timed_pages = text_layer_set(entries)
    max_px = Settings(_env_file=None).page_image_max_px
    raw_loop(set_bytes(2), max_px, pymupdf_png)  # first-call costs out of the way

    scores: dict[str, Score] = {}
    flows: list[float] = []
    raws: list[float] = []
    raw_cpus: list[float] = []
    cpu: dict[str, float] = {}
    with embedded_servers("corpus") as servers:
        settings = isolated(servers.settings, verify_ocr_check=not args.no_ocr_check)
        with services(settings, extract_workers=1) as running:
            everyone = [*running.procs, *servers.processes]
            asyncio.run(run_job(settings, set_bytes(2)))  # process start and imports
            for entry in entries:
                pdf = (CORPUS / "pdfs" / entry["file"]).read_bytes()
                report, _ = asyncio.run(run_job(settings, pdf))
                scores[entry["file"]] = score_report(report, entry["sheets"])
                scores[entry["file"]].verify_ms = verify_ms(report)
            for _ in range(args.runs if timed_pages else 0):
                raw = raw_loop(timed_pdf, max_px, pymupdf_png)
                raws.append(raw.seconds)
                raw_cpus.append(raw.cpu_s)
                before = cpu_by_name(everyone)
                _, elapsed = asyncio.run(run_job(settings, timed_pdf))
                if not flows or elapsed < min(flows):
                    cpu = cpu_delta(before, cpu_by_name(everyone))
                flows.append(elapsed)

    total = Score()
    print(
        f"{'file':<34} {'pages':>5} {'numbers':>8} {'wrong':>5} {'invented':>8} {'titles':>7} "
        f"{'wrong':>5} {'refuted':>7} {'problems':>8} {'dark':>4} {'<floor':>6} {'failed':>6}"
    )
    for file, s in scores.items():
        total.add(s)
        print(_row(file, s))
        print(f"    fields: {s.fields_line()}  index rows read: {s.index_rows}")
        for miss in s.identity.misses + s.misses:
            print(f"    {miss}")
    t = total
    print(_row("total", t))
    print(f"    fields: {t.fields_line()}  index rows read: {t.index_rows}")
    print(f"    {t.checked_line()}")
    now_ms, before_ms, read_pages = identity_ms(entries)
    print(
        f"identity work per text-layer page ({read_pages} pages, in process): read_sheet "
        f"{now_ms:.1f} ms; title block + index + references alone {before_ms:.1f} ms"
    )
    time_ratio = ratio(min(flows), min(raws)) if flows else float("nan")
    # The fastest run's CPU (every process of the stack) over the raw loop's least CPU.
    cpu_ratio = ratio(sum(cpu.values()), min(raw_cpus)) if flows else float("nan")
    if flows:
        print(
            f"text-layer pages timed together: {timed_pages}; raw PyMuPDF loop "
            f"{timed_pages / min(raws):.2f} pages/s, sheetflow end to end "
            f"{timed_pages / min(flows):.2f} pages/s (runs: "
            f"{', '.join(f'{x:.1f}' for x in flows)} s vs {', '.join(f'{x:.1f}' for x in raws)} s)"
        )
        print(f"  end to end CPU ms/page by process: {cpu_line(cpu, timed_pages)}")
        print(
            f"  end to end CPU {1000 * sum(cpu.values()) / timed_pages:.0f} ms/page, raw loop "
            f"{1000 * min(raw_cpus) / timed_pages:.0f} ms/page: {cpu_ratio:.2f}x the CPU "
            f"(goal <= {CPU_GOAL})"
        )
        print(f"  end to end / raw loop  {time_ratio:.2f}x the time (goal <= {TIME_GOAL})")
    print(
        f"OCR check: {t.ocr_judged}/{t.text_pages} text-layer pages judged by it, "
        f"{t.ocr_mismatch} text_layer_mismatch (goal 0); verify "
        f"~{t.verify_ms / max(t.pages, 1):.0f} ms/page (median x pages, OCR check included)"
    )
    print(result_line("corpus_ocr_mismatch", t.ocr_mismatch))
    print(result_line("corpus_self_refuted", t.self_refuted))
    n = t.identity
    print(result_line("corpus_sheet_accuracy", ratio(n.numbers_right, n.numbers_labelled)))
    print(result_line("corpus_numbers_invented", n.numbers_invented))
    print(result_line("corpus_title_accuracy", ratio(n.titles_right, n.titles_labelled)))
    # Of every page the manifest lists (a page printing no title can only be wrong).
    print(result_line("corpus_wrong_title_share", ratio(n.titles_wrong, t.pages)))
    for name in FIELDS:
        right, printed = t.fields_right.get(name, 0), t.fields_labelled.get(name, 0)
        print(result_line(f"corpus_{name}_accuracy", ratio(right, printed)))
    print(result_line("corpus_identity_ms_per_page", now_ms))
    print(result_line("corpus_cpu_ratio", cpu_ratio))
    print(result_line("corpus_time_ratio", time_ratio))


if __name__ == "__main__":
    main()
