"""Real drawing sets end to end: every file of ``../shared/corpus/`` through an embedded stack
(offline extractor, 1 extract worker), scored against the sheet numbers and titles the
manifest lists for each page, and the corpus's text-layer pages timed as one job beside a
plain PyMuPDF loop doing the same per-page work (words + text + render + PNG) on the same
pages, in the same run.

    python -m bench.corpus [--files SUBSTRING ...] [--no-ocr-check]

``--no-ocr-check`` runs the stack with verify's OCR check off (``SHEETFLOW_VERIFY_OCR_CHECK``),
to tell its share of the ratios from the rest of the pipeline's.

Per file and in total: sheet numbers right / labelled (and numbers reported on pages that
print none), titles right / labelled, offline and fallback objects the verifier refuted,
pages with problems, dark text pages (a text layer and no objects), pages below the
coverage floor; revision, issue date, project number and scale right / printed (and values
given where the manifest lists none), drawing-index rows read; and the identity work's
time per page (``read_sheet``, in process). Last lines:
``RESULT corpus_self_refuted N``, ``RESULT corpus_sheet_accuracy X``,
``RESULT corpus_title_accuracy X``, ``RESULT corpus_cpu_ratio X`` (the CPU seconds of every
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
from services.extract.reading.textlayer import read_text_layer
from shared.contracts.report import Report
from shared.infra.settings import Settings
from shared.pagetext import fold_dashes
from shared.sheet.header import SheetHeader
from shared.sheet.index import read_drawing_index
from shared.sheet.reader import read_title_block
from shared.sheet.reading import read_sheet
from shared.sheet.references import references

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
TIME_GOAL = 1.0
CPU_GOAL = 1.5


@dataclass
class Score:
    """Figures of one file (or of all of them, summed)."""

    pages: int = 0
    numbers_right: int = 0
    numbers_labelled: int = 0
    numbers_invented: int = 0  # a number reported on a page that prints none
    titles_right: int = 0
    titles_labelled: int = 0
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
    misses: list[str] = field(default_factory=list)

    def add(self, other: "Score") -> None:
        for name, value in vars(other).items():
            if isinstance(value, int):
                setattr(self, name, getattr(self, name) + value)
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


def _same_number(got: str | None, printed: str) -> bool:
    return got is not None and fold_dashes(got).strip() == fold_dashes(printed).strip()


def _same_title(got: str | None, printed: str) -> bool:
    # Case- and whitespace-insensitive: a text layer's stray space ('BLDG "600 "') is no
    # misreading.
    def key(text: str) -> str:
        return "".join(fold_dashes(text).upper().split())

    return got is not None and key(got) == key(printed)


# report.json's sheet field → the manifest's name for it.
FIELDS = {"revision": "revision", "issue_date": "date", "project_number": "project_number"}
FIELDS |= {"scale": "scale"}


def _same_field(name: str, got: str | None, printed: str) -> bool:
    """As printed, case and spaces aside; a scale the manifest describes at more length
    ("As indicated (views 1 : 50)") counts when it starts with what was read."""

    def key(text: str) -> str:
        return "".join(fold_dashes(text).upper().split())

    if got is None:
        return False
    return key(got) == key(printed) or (name == "scale" and key(printed).startswith(key(got)))


def _score_fields(score: Score, page: int, got: SheetHeader, sheet: dict) -> None:
    for name, listed in FIELDS.items():
        value, printed = getattr(got, name), sheet.get(listed)
        if printed:
            score.fields_labelled[name] = score.fields_labelled.get(name, 0) + 1
            if _same_field(name, value, printed):
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
        if sheet["sheet_number"]:
            score.numbers_labelled += 1
            if _same_number(got.sheet_number, sheet["sheet_number"]):
                score.numbers_right += 1
            else:
                score.misses.append(
                    f"p{sheet['page']} number {got.sheet_number!r} (prints "
                    f"{sheet['sheet_number']!r})"
                )
        elif got.sheet_number:
            score.numbers_invented += 1
            score.misses.append(f"p{sheet['page']} number {got.sheet_number!r} (prints none)")
        _score_fields(score, sheet["page"], got, sheet)
        if sheet["sheet_title"]:
            score.titles_labelled += 1
            score.titles_right += _same_title(got.sheet_title, sheet["sheet_title"])
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
    return score


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


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="the offline pipeline on real drawing sets")
    parser.add_argument("--files", nargs="*", default=[], help="only files containing these")
    parser.add_argument("--runs", type=int, default=2, help="timed runs of each; fastest counts")
    parser.add_argument("--no-ocr-check", action="store_true", help="verify without its OCR check")
    return parser.parse_args(argv)


def main() -> None:
    args = parse_args()
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
        f"{'file':<34} {'pages':>5} {'numbers':>8} {'invented':>8} {'titles':>7} "
        f"{'refuted':>7} {'problems':>8} {'dark':>4} {'<floor':>6} {'failed':>6}"
    )
    for file, s in scores.items():
        total.add(s)
        print(
            f"{file[:34]:<34} {s.pages:>5} {s.numbers_right:>3}/{s.numbers_labelled:<4} "
            f"{s.numbers_invented:>8} {s.titles_right:>3}/{s.titles_labelled:<3} "
            f"{s.self_refuted:>7} {s.problem_pages:>8} {s.dark_text_pages:>4} "
            f"{s.below_floor:>6} {s.failed_pages:>6}"
        )
        print(f"    fields: {s.fields_line()}  index rows read: {s.index_rows}")
        for miss in s.misses:
            print(f"    {miss}")
    t = total
    print(
        f"{'total':<34} {t.pages:>5} {t.numbers_right:>3}/{t.numbers_labelled:<4} "
        f"{t.numbers_invented:>8} {t.titles_right:>3}/{t.titles_labelled:<3} "
        f"{t.self_refuted:>7} {t.problem_pages:>8} {t.dark_text_pages:>4} "
        f"{t.below_floor:>6} {t.failed_pages:>6}"
    )
    print(f"    fields: {t.fields_line()}  index rows read: {t.index_rows}")
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
    print(result_line("corpus_sheet_accuracy", ratio(t.numbers_right, t.numbers_labelled)))
    print(result_line("corpus_title_accuracy", ratio(t.titles_right, t.titles_labelled)))
    for name in FIELDS:
        right, printed = t.fields_right.get(name, 0), t.fields_labelled.get(name, 0)
        print(result_line(f"corpus_{name}_accuracy", ratio(right, printed)))
    print(result_line("corpus_identity_ms_per_page", now_ms))
    print(result_line("corpus_cpu_ratio", cpu_ratio))
    print(result_line("corpus_time_ratio", time_ratio))


if __name__ == "__main__":
    main()
