"""The corpus in the renderings the same sheets can arrive in: every labelled page of
``../shared/corpus/`` read again as a raster scan, as outlines (text drawn as paths) and
turned 90° and 270° (``tests.support.renderings``, made at run time, nothing stored), and
its sheet numbers and titles scored against the manifest.

    python -m bench.corpus --variants [--files SUBSTRING ...] [--only VARIANT ...] [--jobs N]

Each page is read in process by extract's own rung 1 (``extract_rung1`` offline: the text
layer, or OCR words where the page has none, read closer where the pipeline reads closer,
with the OCR engine and page readers a worker builds), and each file's identity is then
decided as the report decides it (``reconcile_set`` and ``apply_corrections``): the whole
stack's reading without its servers (``tests.support.identity``). A rendering keeps no
bookmarks or page labels, as a scan has none. ``--only original`` reads the files as they
are, the same way, for comparison.

Per variant: each file's numbers right / labelled, numbers wrong and invented, titles right
/ labelled and wrong titles, the misses, and the total with the title block's other fields
(revision, issue date, project number, scale: right / printed, + values where none is); then
``RESULT variants_<variant>_sheet_accuracy X``, ``..._title_accuracy X`` and
``..._wrong_title_share X`` (wrong titles over the pages read). OCR takes most of the time
(seconds a page): ``--jobs 2`` reads two files at once on a quiet machine.
"""

import asyncio
import contextlib
import json
import multiprocessing
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from multiprocessing.util import Finalize
from pathlib import Path

from bench.common import ratio, result_line
from services.extract.bootstrap import page_readers
from services.extract.reading.page import Readers
from shared.infra.settings import Settings
from tests.support.identity import FieldTally, Tally, read_set, set_identity
from tests.support.renderings import VARIANTS, render

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
CHOICES = ("original", *VARIANTS)
# The title block's other fields: SheetHeader's name → the manifest's.
MANIFEST_FIELDS = {
    "revision": "revision",
    "issue_date": "date",
    "project_number": "project_number",
    "scale": "scale",
}

_READERS: list[Readers] = []  # this process's page readers, built once


def _start_readers() -> None:
    """Build this process's page readers (as an extract worker does), closed at its exit."""
    stack = contextlib.ExitStack()
    _READERS.append(stack.enter_context(page_readers()))
    Finalize(None, stack.close, exitpriority=10)


def read_file(file: str, variant: str, sheets: list[dict]) -> tuple[Tally, FieldTally, float]:
    """One corpus file in one rendering, read and decided as the pipeline does, scored
    against its manifest sheets (identity, then the title block's other fields); and the
    seconds it took (rendering included)."""
    started = time.perf_counter()
    pdf = (CORPUS / "pdfs" / file).read_bytes()
    if variant != "original":
        pdf = render(variant, pdf)
    settings = Settings(_env_file=None)

    pages = [s["page"] for s in sheets]
    decided = set_identity(asyncio.run(read_set(pdf, pages, settings, _READERS[0])))
    tally, fields = Tally(), FieldTally()
    for s in sheets:
        got = decided[s["page"]]
        tally.count(
            f"p{s['page']}",
            (got.sheet_number, got.sheet_title),
            (s["sheet_number"], s["sheet_title"]),
        )
        fields.count(got, {name: s.get(listed) for name, listed in MANIFEST_FIELDS.items()})
    return tally, fields, time.perf_counter() - started


def run(files: list[str], only: list[str], jobs: int) -> None:
    entries = [
        e
        for e in json.loads((CORPUS / "manifest.json").read_text())["files"]
        if not files or any(part in e["file"] for part in files)
    ]
    tasks = [(e["file"], v, e["sheets"]) for v in only for e in entries]
    started = time.perf_counter()
    totals: dict[str, Tally] = {v: Tally() for v in only}
    field_totals: dict[str, FieldTally] = {v: FieldTally() for v in only}
    seconds: dict[str, float] = dict.fromkeys(only, 0.0)
    with contextlib.ExitStack() as stack:
        if jobs <= 1:
            _start_readers()
            results: Iterator = (read_file(*task) for task in tasks)
        else:
            # Spawned, not forked: each worker builds its own readers (their forkserver too).
            context = multiprocessing.get_context("spawn")
            pool = stack.enter_context(
                ProcessPoolExecutor(jobs, mp_context=context, initializer=_start_readers)
            )
            results = pool.map(read_file, *zip(*tasks, strict=True))
        # Each file's line as soon as it is read (in order): a long run shows its progress.
        for (file, variant, _), (tally, fields, took) in zip(tasks, results, strict=True):
            print(f"{variant:<10} {file[:40]:<40} {tally.line()}  ({took:.0f} s)", flush=True)
            for miss in tally.misses:
                print(f"    {miss}", flush=True)
            totals[variant].add(tally)
            field_totals[variant].add(fields)
            seconds[variant] += took
    wall = time.perf_counter() - started
    print(f"{len(entries)} files, {jobs} job(s), {wall:.0f} s wall")
    for variant, t in totals.items():
        print(f"{variant:<10} total: {t.pages} pages  {t.line()}  ({seconds[variant]:.0f} s)")
        print(f"{variant:<10} fields: {field_totals[variant].line()}")
    for variant, t in totals.items():
        key = f"variants_{variant}"
        print(result_line(f"{key}_sheet_accuracy", ratio(t.numbers_right, t.numbers_labelled)))
        print(result_line(f"{key}_title_accuracy", ratio(t.titles_right, t.titles_labelled)))
        print(result_line(f"{key}_wrong_title_share", ratio(t.titles_wrong, t.pages)))
