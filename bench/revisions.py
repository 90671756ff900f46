"""What a revision costs beside reading the page: for the corpus's largest sheets (36x24 in
and larger, with a text layer), the CPU time of the delta (``sheet_delta``) and the overlay
(``overlay_png``) of a revision pair, beside extract's own reading of that page (the PDF
opened, its words and text layer, its render, PNG and thumbnail: what extract does for one
page, ``services.extract.reading.page.read_page``) and beside the plain PyMuPDF loop of
``bench.overhead`` (words, text, render, PNG), side by side in one run.

Each pair is the sheet and a copy of it with a few units edited (the longest word of a few
units spread over the sheet rewritten, as a reviser would), made in memory with PyMuPDF;
the delta and overlay take what extract stored for both pages (text layers, page images),
as the register does. Each measurement runs ``--rounds`` times, interleaved; the least CPU
of each is kept.

    python -m bench.revisions [--rounds 3] [--pages 6]

Last lines: ``RESULT revisions_false_alarms N`` (changes listed that touch no rewritten word;
goal 0), ``RESULT revisions_cost_ratio X`` (the delta, given the pages' readings as the
register gives them, and overlay of every pair over extract's reading of every page, CPU;
goal < 1.0), ``revisions_cost_ratio_worst`` (the worst sheet's), ``revisions_cost_ratio_raw``
(over the plain PyMuPDF loop) and ``revisions_cost_ratio_unread`` (the delta without the
readings, the title block's fields read again).
"""

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pymupdf

from bench.common import ratio, result_line
from bench.overhead import pymupdf_png, raw_page_work
from services.extract.reading.page import read_page
from shared.infra.settings import Settings
from shared.pagetext import Box, TextLayer
from shared.pagetext.units import page_units
from shared.revisions import PageImage, SheetDelta, overlay_png, sheet_delta
from shared.sheet.reading import SheetReading, read_sheet

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "pdfs"
GOAL = 1.0
E_SIZE_POINTS = (36 * 72, 24 * 72)
# The units rewritten in each pair, spread over the sheet's reading order.
EDITS = 3


@dataclass
class Stored:
    """What extract keeps of a page: its text layer, its image and its sheet reading."""

    layer: TextLayer
    image: PageImage
    reading: SheetReading


@dataclass
class Pair:
    name: str
    size_in: tuple[float, float]
    words: int
    before: Stored
    after: Stored
    before_pdf: bytes
    edits: list[Box]  # the boxes of the words rewritten


def largest_sheets(limit: int) -> list[tuple[Path, int]]:
    """The corpus pages at least E size (either way round) with words on them, largest
    first."""
    found = []
    for path in sorted(CORPUS.glob("*.pdf")):
        with pymupdf.open(path) as doc:
            for page in doc:
                long, short = sorted((page.rect.width, page.rect.height), reverse=True)
                if (
                    long >= E_SIZE_POINTS[0]
                    and short >= E_SIZE_POINTS[1]
                    and page.get_text("words")
                ):
                    found.append((long * short, path, page.number + 1))
                    break  # one sheet per set: the sets' sheets are alike
    found.sort(key=lambda f: -f[0])
    return [(path, number) for _, path, number in found[:limit]]


def one_page(pdf: bytes, number: int) -> bytes:
    """Page ``number`` alone, as a one-page PDF."""
    with pymupdf.open(stream=pdf, filetype="pdf") as doc:
        doc.select([number - 1])
        return doc.tobytes()


def edited(pdf: bytes, layer: TextLayer) -> tuple[bytes, list[Box]]:
    """The page with the longest word of EDITS units rewritten (its letters reversed, in
    Helvetica at its size), the units spread over the page's reading order; and the boxes
    of the words rewritten."""
    units = [u for u in page_units(layer).units if u.word_ids]
    chosen = [units[(n + 1) * len(units) // (EDITS + 1)] for n in range(EDITS)]
    words = [max((layer.words[i] for i in u.word_ids), key=lambda w: len(w.text)) for u in chosen]
    with pymupdf.open(stream=pdf, filetype="pdf") as doc:
        page = doc[0]
        for word in words:
            box = pymupdf.Rect(word.bbox) * page.derotation_matrix
            box.normalize()
            page.add_redact_annot(box)
        page.apply_redactions(
            images=pymupdf.mupdf.PDF_REDACT_IMAGE_NONE,
            graphics=pymupdf.mupdf.PDF_REDACT_LINE_ART_NONE,
        )
        for word in words:
            page.insert_text(
                pymupdf.Point(word.bbox[0], word.bbox[3] - 0.22 * (word.bbox[3] - word.bbox[1]))
                * page.derotation_matrix,
                word.text[::-1] + "X",
                fontsize=word.size,
                rotate=page.rotation,
            )
        return doc.tobytes(), [w.bbox for w in words]


def stored(pdf: bytes, settings: Settings) -> Stored:
    """What extract stores for page 1."""
    page = read_page(pdf, 1, settings)
    layer = page.text_layer
    return Stored(layer, PageImage(page.png, layer.width, layer.height), read_sheet(layer))


def make_pair(path: Path, number: int, settings: Settings) -> Pair:
    pdf = one_page(path.read_bytes(), number)
    before = stored(pdf, settings)
    edited_pdf, edits = edited(pdf, before.layer)
    layer = before.layer
    return Pair(
        f"{path.name}:{number}",
        (layer.width / 72, layer.height / 72),
        len(layer.words),
        before,
        stored(edited_pdf, settings),
        pdf,
        edits,
    )


def false_alarms(pair: Pair, delta: SheetDelta) -> int:
    """The changes the delta lists that touch none of the words rewritten (within a text
    height): each is something the sheet did not change."""
    near = [
        Box(b.x0 - b.height, b.y0 - b.height, b.x1 + b.height, b.y1 + b.height) for b in pair.edits
    ]
    return sum(
        1
        for c in delta.changes
        if not any(box and box.overlaps(n) for box in (c.before_bbox, c.after_bbox) for n in near)
    )


def timed(work: Callable[[], Any]) -> tuple[float, Any]:
    """CPU seconds of ``work`` (every thread of the process), and what it returned."""
    started = time.process_time()
    out = work()
    return time.process_time() - started, out


def measure(pair: Pair, settings: Settings) -> tuple[dict[str, float], SheetDelta]:
    """One round for a pair: extract's read and the plain read of the old page, then the
    delta (given the pages' readings, as the register gives them, and without: the title
    block's fields read again) and the overlay of the pair."""
    old, new = pair.before, pair.after
    read, _ = timed(lambda: read_page(pair.before_pdf, 1, settings))
    raw, _ = timed(lambda: raw_read(pair.before_pdf, settings.page_image_max_px))
    delta_s, delta = timed(
        lambda: sheet_delta(
            old.layer, new.layer, before_reading=old.reading, after_reading=new.reading
        )
    )
    unread, _ = timed(lambda: sheet_delta(old.layer, new.layer))
    overlay_s, _ = timed(lambda: overlay_png(old.image, new.image, delta))
    seconds = {"read": read, "raw": raw, "delta": delta_s, "unread": unread, "overlay": overlay_s}
    return seconds, delta


def raw_read(pdf: bytes, max_px: int) -> None:
    with pymupdf.open(stream=pdf, filetype="pdf") as doc:
        raw_page_work(doc[0], max_px, pymupdf_png)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="revision delta and overlay vs a page read")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each; the least counts")
    parser.add_argument("--pages", type=int, default=6, help="sheets (the largest first)")
    return parser.parse_args(argv)


def main() -> None:
    args = parse_args()
    settings = Settings(_env_file=None)
    pairs = [make_pair(path, n, settings) for path, n in largest_sheets(args.pages)]
    best: dict[str, dict[str, float]] = {p.name: {} for p in pairs}
    deltas: dict[str, SheetDelta] = {}
    for _ in range(args.rounds):
        for pair in pairs:
            seconds, deltas[pair.name] = measure(pair, settings)
            for what, value in seconds.items():
                best[pair.name][what] = min(best[pair.name].get(what, float("inf")), value)

    print(f"{len(pairs)} sheet pairs, CPU ms, least of {args.rounds} interleaved rounds")
    head = f"  {'sheet':<46} {'in':>6} {'words':>5} {'chg':>3} {'off':>3} {'read':>5} {'raw':>5}"
    print(f"{head} {'delta':>5} {'delta*':>6} {'overlay':>7} {'ratio':>5} {'ratio*':>6}")
    total = {"read": 0.0, "raw": 0.0, "cost": 0.0, "unread": 0.0}
    worst, alarms = 0.0, 0
    for pair in pairs:
        off = false_alarms(pair, deltas[pair.name])
        alarms += off
        t = best[pair.name]
        cost, unread = t["delta"] + t["overlay"], t["unread"] + t["overlay"]
        worst = max(worst, ratio(cost, t["read"]))
        for what, value in (
            ("read", t["read"]),
            ("raw", t["raw"]),
            ("cost", cost),
            ("unread", unread),
        ):
            total[what] += value
        size = f"{pair.size_in[0]:.0f}x{pair.size_in[1]:.0f}"
        ms = [
            f"{1000 * t[k]:>{w}.0f}"
            for k, w in (("read", 5), ("raw", 5), ("delta", 5), ("unread", 6), ("overlay", 7))
        ]
        print(
            f"  {pair.name[:46]:<46} {size:>6} {pair.words:>5} {len(deltas[pair.name].changes):>3} "
            f"{off:>3} {' '.join(ms)} "
            f"{ratio(cost, t['read']):>5.2f} {ratio(unread, t['read']):>6.2f}"
        )
    print(f"  chg: units the delta lists ({EDITS} words rewritten per pair); off: of those, the")
    print("  changes touching no rewritten word (false alarms); delta: given the pages' readings")
    print("  (as the register calls it); delta*: without them (the title block read again)")
    overall, raw = ratio(total["cost"], total["read"]), ratio(total["cost"], total["raw"])
    unread = ratio(total["unread"], total["read"])
    print(f"  (delta + overlay) / extract's page read, all pairs: {overall:.2f} (goal < {GOAL})")
    print(f"  (delta + overlay) / plain PyMuPDF read, all pairs:  {raw:.2f}")
    print(f"  (delta* + overlay) / extract's page read, all pairs: {unread:.2f}")
    print(result_line("revisions_false_alarms", alarms))
    print(result_line("revisions_cost_ratio_worst", worst))
    print(result_line("revisions_cost_ratio_raw", raw))
    print(result_line("revisions_cost_ratio_unread", unread))
    print(result_line("revisions_cost_ratio", overall))


if __name__ == "__main__":
    main()
