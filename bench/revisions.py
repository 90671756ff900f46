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

The drawing's delta (``shared.revisions.drawing``) is measured on the corpus's largest sheets
(``bench.drawing_edits``): the same sheet re-plotted (shifted, scaled), rendered at another
size and re-encoded as a JPEG raster (straight and skewed) must give no changed region; the
edits a drawing team makes (a wall added, a door moved, a detail deleted, a dimension's text
changed, a revision cloud and triangle added) must be found, each where it is; and its CPU
beside extract's read of the same page, with what reading the page's vector paths
(``page.get_drawings()``) would cost beside that read.

    python -m bench.revisions [--rounds 3] [--pages 6] [--sheets 8]

Last lines: ``RESULT drawing_replot_regions N`` (changed regions on re-plots and re-encodings
of unchanged sheets; goal 0), ``drawing_edit_recall`` (share of edits found, each by a region
or a text change overlapping it; goal >= 0.95), ``drawing_edit_false_regions`` (regions
touching no edit; goal 0), ``drawing_cost_ratio`` (the drawing's delta over extract's read of
the page, CPU, all pairs; goal < 1.0) and ``_worst``, ``vector_read_ratio`` (get_drawings over
the read), ``RESULT revisions_false_alarms N`` (changes listed that touch no rewritten word;
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
from bench.drawing_edits import REPLOTS, Edited, edits
from bench.overhead import pymupdf_png, raw_page_work
from services.extract.reading.page import read_page
from shared.infra.settings import Settings
from shared.pagetext import Box, TextLayer
from shared.pagetext.units import page_units
from shared.revisions import PageImage, SheetDelta, overlay_png, sheet_delta
from shared.revisions.drawing import drawing_delta, points_affine
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
    placement = delta.placement
    drawing_s, _ = timed(
        lambda: drawing_delta(
            old.image,
            new.image,
            words=([w.bbox for w in old.layer.words], [w.bbox for w in new.layer.words]),
            placement=points_affine(placement.scale, placement.dx, placement.dy)
            if placement
            else None,
            title_region=new.reading.region,
        )
    )
    vectors, _ = timed(lambda: vector_read(pair.before_pdf))
    seconds = {
        "read": read,
        "raw": raw,
        "delta": delta_s,
        "unread": unread,
        "overlay": overlay_s,
        "drawing": drawing_s,
        "vectors": vectors,
    }
    return seconds, delta


def vector_read(pdf: bytes) -> None:
    """The page's vector paths as PyMuPDF reads them (what comparing paths would start from)."""
    with pymupdf.open(stream=pdf, filetype="pdf") as doc:
        doc[0].get_drawings()


def raw_read(pdf: bytes, max_px: int) -> None:
    with pymupdf.open(stream=pdf, filetype="pdf") as doc:
        raw_page_work(doc[0], max_px, pymupdf_png)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="revision delta and overlay vs a page read")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each; the least counts")
    parser.add_argument("--pages", type=int, default=6, help="sheets (the largest first)")
    parser.add_argument(
        "--sheets", type=int, default=8, help="sheets for the drawing's re-plots and edits"
    )
    return parser.parse_args(argv)


def compared(before: bytes, after: bytes, settings: Settings) -> SheetDelta:
    """The delta of two one-page PDFs as the register takes it: extract's reading of each
    (text layer, image, sheet reading), the drawing compared too."""
    old, new = stored(before, settings), stored(after, settings)
    return sheet_delta(
        old.layer,
        new.layer,
        before_reading=old.reading,
        after_reading=new.reading,
        images=(old.image, new.image),
    )


def grown(box: Box, by: float) -> Box:
    return Box(box.x0 - by, box.y0 - by, box.x1 + by, box.y1 + by)


def found(edit: Box, delta: SheetDelta) -> bool:
    """A region of the drawing, or a text unit, changed where the edit is (its box on
    either sheet overlaps the edit's, within 4 pt)."""
    near = grown(edit, 4.0)
    boxes = [b for g in delta.graphics for b in (g.before_bbox, g.after_bbox)]
    boxes += [b for c in delta.changes for b in (c.before_bbox, c.after_bbox) if b]
    return any(b.overlaps(near) for b in boxes)


def stray_regions(edited: Edited, delta: SheetDelta) -> int:
    """Regions touching none of the edit's boxes (within 8 pt): each a change not made."""
    near = [grown(b, 8.0) for b in edited.boxes]
    return sum(1 for g in delta.graphics if not any(g.after_bbox.overlaps(n) for n in near))


def drawing_checks(sheets: list[tuple[Path, int]], settings: Settings) -> tuple[int, int, int, int]:
    """Re-plots and edits of each sheet, compared; (regions on re-plots, edits found, edits,
    stray regions on edits)."""
    bigger = settings.model_copy(update={"page_image_max_px": 3000})
    replot_regions = hits = total = strays = 0
    print(f"\nThe drawing's delta on {len(sheets)} sheets (regions found; 0 on a re-plot)")
    for path, number in sheets:
        pdf = one_page(path.read_bytes(), number)
        name = f"{path.name}:{number}"
        again = {label: make(pdf) for label, make in REPLOTS.items()}
        counts = {
            label: len(compared(pdf, other, settings).graphics) for label, other in again.items()
        }
        old, new = stored(pdf, settings), stored(pdf, bigger)
        at_3000 = sheet_delta(
            old.layer, new.layer, images=(old.image, new.image), after_reading=new.reading
        )
        counts["rendered at 3000 px"] = len(at_3000.graphics)
        replot_regions += sum(counts.values())
        print(f"  {name[:46]:<46} re-plots: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
        for edited in edits(pdf, stored(pdf, settings).layer, path.name):
            delta = compared(edited.before, edited.after, settings)
            hit = [found(box, delta) for box in edited.boxes]
            stray = stray_regions(edited, delta)
            hits, total, strays = hits + sum(hit), total + len(hit), strays + stray
            print(
                f"  {'':<46}   {edited.kind:<20} found {sum(hit)}/{len(hit)}, regions "
                f"{len(delta.graphics)}, text units {len(delta.changes)}, stray {stray}"
            )
    return replot_regions, hits, total, strays


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
    drawing = ratio(sum(best[p.name]["drawing"] for p in pairs), total["read"])
    drawing_worst = max(ratio(best[p.name]["drawing"], best[p.name]["read"]) for p in pairs)
    vectors = ratio(sum(best[p.name]["vectors"] for p in pairs), total["read"])
    print(
        "  drawing / read, per pair: "
        + ", ".join(
            f"{p.name.split('__')[0]} {ratio(best[p.name]['drawing'], best[p.name]['read']):.2f}"
            for p in pairs
        )
    )
    print(f"  the drawing's delta / extract's page read, all pairs: {drawing:.2f} (goal < {GOAL})")
    print(f"  get_drawings() alone / extract's page read, all pairs: {vectors:.2f}")
    replots, hits, edited, strays = drawing_checks(largest_sheets(args.sheets), settings)
    print(f"  edits found: {hits} of {edited}; stray regions on edits: {strays}")
    print(result_line("drawing_replot_regions", replots))
    print(result_line("drawing_edit_recall", hits / edited if edited else 0.0))
    print(result_line("drawing_edit_false_regions", strays))
    print(result_line("drawing_cost_ratio_worst", drawing_worst))
    print(result_line("vector_read_ratio", vectors))
    print(result_line("drawing_cost_ratio", drawing))
    print(result_line("revisions_false_alarms", alarms))
    print(result_line("revisions_cost_ratio_worst", worst))
    print(result_line("revisions_cost_ratio_raw", raw))
    print(result_line("revisions_cost_ratio_unread", unread))
    print(result_line("revisions_cost_ratio", overall))


if __name__ == "__main__":
    main()
