"""The generated multilingual set (``tests.support.titleblocks``): drawing sheets whose title
blocks are ruled tables of labelled cells, in 15 languages and 7 layouts, with decoys,
read as the pipeline reads them and scored against each sheet's own truth.

    python -m bench.titleblocks [--renderings original raster outlines] [--langs CODE ...]
        [--layouts NAME ...] [--seed N] [--sheets N] [--jobs N]

Each page is read in process by extract's rung 1 offline (its text layer, or OCR words in
the raster and outlines renderings, ``tests.support.renderings``) and each set's identity is
decided as the report decides it (``tests.support.identity``). Prints, per rendering, each
set's misses, then per language and per layout: numbers right / printed, wrong, invented;
titles right / printed, wrong titles; revision, issue date, project number and scale right /
printed (+ values given where none is printed). Last lines, per rendering:
``RESULT titleblocks_<rendering>_sheet_accuracy X``, ``..._title_accuracy X``,
``..._wrong_title_share X`` (of the sheets), and the worst language's and layout's shares
(``..._worst_sheet_accuracy``, ``..._worst_title_accuracy``). Goals (issue 36): numbers
>= 98%, titles >= 95%, no wrong title, in every language and layout.
"""

import argparse
import asyncio
import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor
from functools import cache

from bench.common import ratio, result_line
from bench.variants import _READERS, _start_readers
from shared.infra.settings import Settings
from tests.support import identity
from tests.support.identity import FieldTally, Tally, set_identity
from tests.support.renderings import render
from tests.support.titleblocks.sheets import PLAN, GeneratedSet, generated_sets

RENDERINGS = ("original", "raster", "outlines")


@cache
def _sets(seed: int, sheets: int) -> dict[str, GeneratedSet]:
    return {s.name: s for s in generated_sets(seed, sheets)}


def read_set(name: str, rendering: str, seed: int, sheets: int) -> tuple[Tally, FieldTally]:
    """One generated set in one rendering, read and decided as the pipeline does."""
    generated = _sets(seed, sheets)[name]
    pdf = generated.pdf if rendering == "original" else render(rendering, generated.pdf)
    settings = Settings(_env_file=None)

    pages = [t.page for t in generated.truths]
    decided = set_identity(asyncio.run(identity.read_set(pdf, pages, settings, _READERS[0])))
    tally, fields = Tally(), FieldTally()
    for truth in generated.truths:
        got = decided[truth.page]
        tally.count(
            f"{name} p{truth.page}",
            (got.sheet_number, got.sheet_title),
            (truth.number, truth.title),
        )
        fields.count(
            got,
            {
                "revision": truth.revision,
                "issue_date": truth.date,
                "project_number": truth.project_number,
                "scale": truth.scale,
            },
        )
    return tally, fields


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="the generated multilingual title blocks")
    parser.add_argument("--renderings", nargs="*", choices=RENDERINGS, default=["original"])
    parser.add_argument("--langs", nargs="*", default=[], help="only these languages")
    parser.add_argument("--layouts", nargs="*", default=[], help="only these layouts")
    parser.add_argument("--seed", type=int, default=36)
    parser.add_argument("--sheets", type=int, default=4, help="sheets per set")
    parser.add_argument("--jobs", type=int, default=1, help="sets read at once")
    return parser.parse_args(argv)


def _groups(results: dict[tuple[str, str], tuple[Tally, FieldTally]], key: int) -> dict:
    """(rendering, language or layout) → summed tallies."""
    groups: dict[tuple[str, str], tuple[Tally, FieldTally]] = {}
    for (name, rendering), (tally, fields) in results.items():
        lang, layout = name.split("-", 1)
        group = (rendering, (lang, layout)[key])
        mine = groups.setdefault(group, (Tally(), FieldTally()))
        mine[0].add(tally)
        mine[1].add(fields)
    return groups


def main() -> None:
    args = parse_args()
    names = [
        f"{lang}-{layout}"
        for lang, layout in PLAN
        if (not args.langs or lang in args.langs) and (not args.layouts or layout in args.layouts)
    ]
    tasks = [(name, r, args.seed, args.sheets) for r in args.renderings for name in names]
    started = time.perf_counter()
    if args.jobs <= 1:
        _start_readers()
        found = [read_set(*task) for task in tasks]
    else:
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(args.jobs, mp_context=context, initializer=_start_readers) as pool:
            found = list(pool.map(read_set, *zip(*tasks, strict=True)))
    results = {(name, r): out for (name, r, _, _), out in zip(tasks, found, strict=True)}
    for (_, rendering), (tally, _) in results.items():
        for miss in tally.misses:
            print(f"{rendering:<9} {miss}")
    print(f"{len(names)} sets, {time.perf_counter() - started:.0f} s")
    for by, what in ((0, "language"), (1, "layout")):
        for (rendering, group), (tally, fields) in sorted(_groups(results, by).items()):
            print(f"{rendering:<9} {what} {group:<15} {tally.line()}  {fields.line()}")
    for rendering in args.renderings:
        total = Tally()
        for (_, r), (tally, _) in results.items():
            if r == rendering:
                total.add(tally)
        key = f"titleblocks_{rendering}"
        print(
            result_line(f"{key}_sheet_accuracy", ratio(total.numbers_right, total.numbers_labelled))
        )
        print(
            result_line(f"{key}_title_accuracy", ratio(total.titles_right, total.titles_labelled))
        )
        print(result_line(f"{key}_wrong_title_share", ratio(total.titles_wrong, total.pages)))
        groups = [
            t for k in (0, 1) for (r, _), (t, _) in _groups(results, k).items() if r == rendering
        ]
        worst_n = min(ratio(t.numbers_right, t.numbers_labelled) for t in groups)
        worst_t = min(ratio(t.titles_right, t.titles_labelled) for t in groups)
        print(result_line(f"{key}_worst_sheet_accuracy", worst_n))
        print(result_line(f"{key}_worst_title_accuracy", worst_t))


if __name__ == "__main__":
    main()
