"""Memory across jobs: 30 jobs in a row through one embedded stack (offline
extractor); the resident memory (RSS, children included) of every service and server
process after each job; growth from the end of the warm-up (job 5) to the end.

    python -m bench.memory [--jobs 30] [--pages 5] [--warmup 5] [--scanned-every 0]
    python -m bench.memory --corpus-rounds 3

With ``--corpus-rounds`` the jobs are the corpus's sets of at most 12 pages (the soak's), all
of them once a round: memory that a new set's content fills (caches, the largest page seen so
far) stops growing after the first round, memory that grows with jobs goes on growing.

Bounded means: no service grew by more than ``max(LIMIT_MB, LIMIT_SHARE x its warm RSS)``
after warm-up. Last line: ``RESULT memory_growth_max_pct <largest service growth, %>``.
"""

import argparse
import asyncio

from bench.common import (
    embedded_servers,
    isolated,
    report_pages_ok,
    result_line,
    rss_mb,
    run_job,
    services,
)
from bench.soak import corpus_sets
from bench.synthetic import set_bytes
from sheetflow.services import SERVICES

LIMIT_MB = 20.0
LIMIT_SHARE = 0.10
# A service whose RSS still climbs faster than this over the later jobs is named, bounded or not.
RISING_MB_PER_JOB = 0.25


def growth_verdict(warm: float, end: float) -> tuple[float, float, bool]:
    """Growth in MB and in % of ``warm``, and whether it is within the bound."""
    grown = end - warm
    within = grown <= max(LIMIT_MB, LIMIT_SHARE * warm)
    return grown, 100 * grown / warm if warm else 0.0, within


def slope_mb_per_job(values: list[float]) -> float:
    """Least-squares slope of ``values`` (one sample per job): still rising, or flat."""
    n = len(values)
    if n < 2:
        return 0.0
    mean_x, mean_y = (n - 1) / 2, sum(values) / n
    cov = sum((x - mean_x) * (y - mean_y) for x, y in enumerate(values))
    return cov / sum((x - mean_x) ** 2 for x in range(n))


def kind(process_name: str) -> str:
    return process_name.split("-")[0]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="service RSS across jobs in a row")
    parser.add_argument("--jobs", type=int, default=30)
    parser.add_argument("--pages", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=5, help="jobs before the reference sample")
    parser.add_argument("--scanned-every", type=int, default=0, help="k: every k-th sheet a scan")
    parser.add_argument(
        "--corpus-rounds", type=int, default=0, help="n: the corpus's small sets, n times over"
    )
    return parser.parse_args(argv)


def jobs_to_run(args: argparse.Namespace) -> list[tuple[str, bytes, int]]:
    """(name, PDF, pages) of every job in order; with corpus rounds, ``--jobs`` and
    ``--warmup`` become the rounds' (warm is the end of the first round)."""
    if not args.corpus_rounds:
        pdf = set_bytes(args.pages, scanned_every=args.scanned_every or None)
        return [(f"synthetic {args.pages} pages", pdf, args.pages)] * args.jobs
    sets = corpus_sets()
    args.jobs, args.warmup = args.corpus_rounds * len(sets), len(sets)
    return sets * args.corpus_rounds


def main() -> None:
    args = parse_args()
    if args.corpus_rounds == 1:
        raise SystemExit("--corpus-rounds needs at least 2: the first round is the warm-up")
    jobs = jobs_to_run(args)
    if not 1 <= args.warmup < args.jobs:
        raise SystemExit("--warmup must be at least 1 and below --jobs")
    samples: list[dict[str, float]] = []
    with embedded_servers("memory") as servers:
        settings = isolated(servers.settings)
        with services(settings, extract_workers=1) as running:
            watched = [*running.procs, *servers.processes]
            for job, (name, pdf, pages) in enumerate(jobs, start=1):
                report, seconds = asyncio.run(run_job(settings, pdf))
                if report.status != "complete" or not report_pages_ok(report, pages):
                    failed = report.summary.failed_pages
                    raise RuntimeError(f"job {job} ({name}) is missing pages: {failed}")
                samples.append({kind(p.name): rss_mb(p) for p in watched})
                row = "  ".join(f"{name} {mb:.0f}" for name, mb in samples[-1].items())
                print(f"  job {job:>2} ({seconds:4.1f} s) RSS MB: {row}", flush=True)

    warm, end = samples[args.warmup - 1], samples[-1]
    what = f"{args.pages} sheets"
    if args.corpus_rounds:
        what = f"the corpus's small sets, {args.corpus_rounds} rounds"
    print(
        f"{args.jobs} jobs of {what} in a row; "
        f"RSS after job {args.warmup} (warm) vs job {args.jobs} (end)"
    )
    print(
        f"  {'process':<10} {'warm MB':>8} {'end MB':>8} {'growth MB':>10} {'growth %':>9}"
        f" {'peak MB':>8} {'late MB/job':>12}  bounded"
    )
    worst = 0.0
    unbounded = []
    rising = []
    late = samples[(args.warmup + args.jobs) // 2 :]  # the second half after warm-up
    for name in warm:
        grown, pct, ok = growth_verdict(warm[name], end[name])
        peak = max(s[name] for s in samples[args.warmup - 1 :])
        slope = slope_mb_per_job([s[name] for s in late])
        print(
            f"  {name:<10} {warm[name]:>8.0f} {end[name]:>8.0f} {grown:>+10.1f} {pct:>+8.1f}%"
            f" {peak:>8.0f} {slope:>+12.2f}  {'yes' if ok else 'NO'}"
        )
        if name in SERVICES:
            worst = max(worst, pct)
            if not ok:
                unbounded.append(name)
            if slope > RISING_MB_PER_JOB:
                rising.append(f"{name} ({slope:+.2f} MB/job)")
    bound = f"{LIMIT_MB:.0f} MB or {LIMIT_SHARE:.0%}, whichever is larger"
    if unbounded:
        print(f"  verdict: growth NOT bounded for {', '.join(unbounded)} (limit {bound})")
    else:
        print(f"  verdict: every service's growth after warm-up is within {bound}")
    if rising:
        print(f"  still rising over the later jobs: {', '.join(rising)}")
    print(result_line("memory_growth_max_pct", worst))


if __name__ == "__main__":
    main()
