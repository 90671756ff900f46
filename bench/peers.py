"""Peers side by side on the same sheets: pages/s and the share of pages left with no
extracted text, for sheetflow's offline path (``extract_rung1`` called in-process, one page
at a time: text layer, page render, offline extraction, grounding guard, OCR on a scan),
pymupdf4llm's markdown (``to_markdown(page_chunks=True)``, its default layout + OCR) and
unstructured's ``fast`` strategy (skipped with a message when not installed).

Two sets: the text-layer set of ``--pages`` sheets (the overhead benchmark's), and the same
count with every ``--scanned-every``-th sheet a scan with no text layer.

    python -m bench.peers [--pages 100] [--scanned-every 10]

Reported, not tuned to. Last line: ``RESULT peers_sheetflow_vs_pymupdf4llm <pages/s ratio>``
on the text-layer set (above 1: sheetflow's offline path is faster).
"""

import argparse
import asyncio
import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pymupdf

from bench.common import ratio, result_line
from bench.synthetic import set_path
from services.extract.bootstrap import page_readers
from services.extract.reading.page import Readers
from services.extract.rung1 import extract_rung1
from shared.infra.settings import Settings
from shared.pagetext import alnum_count

WARMUP_PAGES = 2


@dataclass
class PeerRun:
    seconds: float
    cpu_s: float  # CPU of this process, every thread (OCR runs multi-threaded)
    texts: list[str]  # the text each page ended with, in page order

    def pages_per_s(self) -> float:
        return len(self.texts) / self.seconds

    def cpu_ms_per_page(self) -> float:
        return 1000 * self.cpu_s / len(self.texts)

    def empty_share(self) -> float:
        """Share of pages whose extracted text holds no letter or digit."""
        return sum(1 for t in self.texts if alnum_count(t) == 0) / len(self.texts)


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Silence stdout and stderr at the file-descriptor level (native code writes there too)."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    with open(os.devnull, "w") as devnull:
        os.dup2(devnull.fileno(), 1)
        os.dup2(devnull.fileno(), 2)
        try:
            yield
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            for fd, copy in zip((1, 2), saved, strict=True):
                os.dup2(copy, fd)
                os.close(copy)


@dataclass
class Timing:
    seconds: float = 0.0
    cpu_s: float = 0.0


@contextlib.contextmanager
def timed() -> Iterator[Timing]:
    """Wall and process CPU seconds of the block."""
    t = Timing()
    wall, cpu = time.perf_counter(), time.process_time()
    yield t
    t.seconds, t.cpu_s = time.perf_counter() - wall, time.process_time() - cpu


def run_sheetflow(path: Path) -> PeerRun:
    """The text of each page's objects (their ``source_text``), as sheetflow's offline rung 1
    extracted them."""
    settings = Settings(_env_file=None)
    pdf = path.read_bytes()
    with pymupdf.open(path) as doc:
        pages = doc.page_count

    async def loop(readers: Readers) -> list[str]:
        texts = []
        for n in range(1, pages + 1):
            out = await extract_rung1(
                pdf, n, settings, None, readers=readers, worker_id="bench", job_id="bench"
            )
            texts.append("\n".join(o.source_text or "" for o in out.result.objects))
        return texts

    with page_readers() as readers, timed() as t:
        texts = asyncio.run(loop(readers))
    return PeerRun(t.seconds, t.cpu_s, texts)


def run_pymupdf4llm(path: Path) -> PeerRun:
    import pymupdf4llm

    with timed() as t, quiet():  # it prints parser messages
        chunks = pymupdf4llm.to_markdown(str(path), page_chunks=True, show_progress=False)
    return PeerRun(t.seconds, t.cpu_s, [c["text"] for c in chunks])


def run_unstructured(path: Path) -> PeerRun:
    from unstructured.partition.pdf import partition_pdf

    with timed() as t:
        elements = partition_pdf(filename=str(path), strategy="fast")
    with pymupdf.open(path) as doc:
        texts = [""] * doc.page_count
    for element in elements:
        page = element.metadata.page_number or 1
        texts[page - 1] += f"{element.text}\n"
    return PeerRun(t.seconds, t.cpu_s, texts)


PEERS: dict[str, tuple[str, Callable[[Path], PeerRun]]] = {
    "sheetflow offline rung 1 (in-process)": ("services", run_sheetflow),
    "pymupdf4llm to_markdown": ("pymupdf4llm", run_pymupdf4llm),
    "unstructured fast": ("unstructured.partition.pdf", run_unstructured),
}


def installed(module: str) -> bool:
    try:
        __import__(module)
    except ImportError:
        return False
    return True


def compare(path: Path, label: str, warmup: Path | None = None) -> dict[str, PeerRun]:
    """Each installed peer on ``path`` (after one untimed run on ``warmup``, so loading
    models and first-call costs are not counted)."""
    print(f"{label}: {path.name}", flush=True)
    runs: dict[str, PeerRun] = {}
    for name, (module, run) in PEERS.items():
        if not installed(module):
            print(f"  {name:<38} skipped: {module} is not installed")
            continue
        if warmup:
            run(warmup)
        runs[name] = run(path)
        r = runs[name]
        print(
            f"  {name:<38} {r.pages_per_s():6.2f} pages/s {r.cpu_ms_per_page():7.0f} CPU ms/page"
            f"   no text on {r.empty_share():6.1%} of pages",
            flush=True,
        )
    return runs


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="sheetflow's offline path beside peer extractors")
    parser.add_argument("--pages", type=int, default=100)
    parser.add_argument("--scanned-every", type=int, default=10, help="0: skip the set with scans")
    return parser.parse_args(argv)


def main() -> None:
    args = parse_args()
    # The warm-up set holds a scan, so OCR models are loaded before any timed run.
    warmup = set_path(WARMUP_PAGES, scanned_every=WARMUP_PAGES)
    text_runs = compare(set_path(args.pages), "text-layer set", warmup)
    if args.scanned_every:
        compare(
            set_path(args.pages, scanned_every=args.scanned_every),
            f"set with every {args.scanned_every}th sheet scanned",
            warmup,
        )
    sheetflow, peer = (text_runs.get(k) for k in list(PEERS)[:2])
    value = float("nan")
    if sheetflow and peer:
        value = ratio(sheetflow.pages_per_s(), peer.pages_per_s())
    print(result_line("peers_sheetflow_vs_pymupdf4llm", value))


if __name__ == "__main__":
    main()
