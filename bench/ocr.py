"""OCR of the corpus's sheets without a text layer (scanned, or text drawn as outlines),
side by side in one run: RapidOCR run once on the plain page image (2048 px on the long side,
the engine settings OCR had before it read at two resolutions), the same run with the
recogniser's narrow padding alone, and sheetflow's OCR as extract runs it on a page
(``shared.ocr.engine`` and ``title_ocr``: lines found on the page image, the page's
orientation found, its lines read from a 300 DPI render of the area holding text in that
frame, when no sheet number shows, the places the sheet names itself read closer, and the
title it reads read again closer).

    python -m bench.ocr [--rounds 2] [--files SUBSTRING ...]

Pages: every page of a manifest entry marked ``text_layer: false`` or
``text_layer_usable: false`` that the text-layer reader also finds without a usable text layer
(the pages extract OCRs; the others are named and skipped). Each variant runs ``--rounds``
times per page, interleaved; the fastest run is kept. Per page and variant: wall and CPU
seconds, words recovered, words that the corpus's text-layer sheets also print ("known": a
misread word rarely is one), and title hits: the sheet number the manifest lists read as one
word (or two adjacent ones), plus each word of the sheet title found. Last lines:
``RESULT ocr_seconds_per_page X`` (sheetflow's OCR, wall) and ``ocr_cpu_seconds_per_page``,
``RESULT ocr_title_hits N``, ``RESULT ocr_plain_title_hits N``, ``RESULT ocr_time_ratio X`` and
``ocr_cpu_ratio`` (sheetflow's time over the plain run's; goal <= 1 with at least the plain
run's title hits), and ``ocr_cpu_seconds_per_page_36x24`` / ``_11x17`` / ``_larger``
(sheetflow's CPU per page by sheet size; goals 15 s and 5 s). Inference runs on one
thread, so on a quiet machine wall and CPU seconds agree; on a busy one the CPU figures
are the steadier.
"""

import argparse
import itertools
import json
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pymupdf

from bench.common import ratio, result_line
from services.extract.reading import title_ocr
from services.extract.reading.render import encode_png, render_page, render_zoom
from services.extract.reading.textlayer import ocr_text_layer, read_text_layer
from shared.infra.settings import Settings
from shared.ocr import engine as ocr
from shared.pagetext import normalize, squash
from shared.sheet import read_title_block

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
# The engine settings OCR ran with before it read at two resolutions: the plain baseline.
PLAIN_PARAMS = {k: v for k, v in ocr.ENGINE_PARAMS.items() if not k.startswith(("Det.", "Rec."))}
NARROW_PARAMS = {**PLAIN_PARAMS, "Rec.rec_img_shape": ocr.ENGINE_PARAMS["Rec.rec_img_shape"]}
_WORD = re.compile(r"[A-Z]{3,}")


@dataclass
class Page:
    file: str
    number: int
    pdf: bytes
    png: bytes
    zoom: float
    width: float  # points, as displayed
    height: float
    sheet_number: str | None
    sheet_title: str | None


@dataclass
class Run:
    """The fastest of a variant's runs on one page, and what it read."""

    wall_s: float = float("inf")
    cpu_s: float = float("inf")
    words: list[str] = field(default_factory=list)

    def keep(self, wall_s: float, cpu_s: float, words: list[str]) -> None:
        if wall_s < self.wall_s:
            self.wall_s, self.cpu_s, self.words = wall_s, cpu_s, words


def plain_reader(params: dict) -> Callable[[Page], list[str]]:
    """RapidOCR run once on the page image with ``params``: its words, as OCR read them."""
    from rapidocr import RapidOCR

    engine = RapidOCR(params=params)

    def read(page: Page) -> list[str]:
        result: Any = engine(page.png, return_word_box=True)
        words: list[str] = []
        for i, line in enumerate(result.txts or ()):
            line_words = result.word_results[i] if i < len(result.word_results) else ()
            words += [str(w[0]) for w in line_words] if line_words else line.split()
        return [w for w in words if w.strip()]

    return read


def sheetflow_reader() -> Callable[[Page], list[str]]:
    """What extract does on the page (``services.extract.rung1``: its page words, then
    the closer reading, then its title read again closer), in this process (extract renders
    in a bounded child)."""
    engine = ocr.OcrEngine()

    def read(page: Page) -> list[str]:
        lines = engine.find_lines(page.png, page.zoom)
        if not lines:
            return []
        area = ocr.text_area(lines)
        raster = ocr.render_area(page.pdf, page.number, area, ocr.RECOGNITION_DPI)
        turn = engine.page_turn(raster, lines)
        layer = ocr_text_layer(
            engine.read_lines(raster, lines, turn), page.number, page.width, page.height
        )
        if not read_title_block(layer).number:
            rules = title_ocr.long_rules(page.png, page.zoom)
            for region in title_ocr.closer_regions(layer, turn, rules):
                closer = engine.ocr_raster(
                    ocr.render_area(page.pdf, page.number, region, ocr.RECOGNITION_DPI),
                    turn,
                    detection_zoom=title_ocr.detection_zoom(region),
                    skip=title_ocr.read_already(layer.words),
                )
                layer = ocr_text_layer(layer.words + closer, page.number, page.width, page.height)
                if read_title_block(layer).number:
                    break
        reading = read_title_block(layer)
        ids = list(reading.title_words)
        if ids and (regions := title_ocr.title_regions(layer, ids, page.zoom)):
            region, core = regions
            closer = engine.ocr_raster(
                ocr.render_area(page.pdf, page.number, region, ocr.RECOGNITION_DPI),
                title_ocr.text_turn([layer.words[i] for i in ids]),
                detection_zoom=title_ocr.detection_zoom(region),
                skip=title_ocr.apart_from(core, layer.words),
            )
            words = title_ocr.with_closer_title(layer.words, closer, core)
            again = ocr_text_layer(words, page.number, page.width, page.height)
            found = read_title_block(again)
            if found.title and found.number == reading.number:
                layer = again
        return [w.text for w in layer.words]

    return read


def title_hits(words: list[str], number: str | None, title: str | None) -> tuple[int, int]:
    """(hits, possible): the sheet number read as one word or two adjacent ones, and each
    word of the title found among the words read."""
    squashed = {squash(w) for w in words} | {squash(a + b) for a, b in itertools.pairwise(words)}
    tokens = {t for w in words for t in normalize(w).split()}
    hits = possible = 0
    if number:
        possible += 1
        hits += squash(number) in squashed
    for token in normalize(title or "").split():
        possible += 1
        hits += token in tokens
    return hits, possible


def known_vocabulary(entries: list[dict]) -> set[str]:
    """Words of three letters or more printed in the text layers of the corpus's sheets."""
    vocabulary: set[str] = set()
    for entry in entries:
        if not entry.get("text_layer"):
            continue
        with pymupdf.open(CORPUS / "pdfs" / entry["file"]) as doc:
            for page in doc:
                vocabulary.update(_WORD.findall(page.get_text().upper()))
    return vocabulary


def known_count(words: list[str], vocabulary: set[str]) -> int:
    return sum(1 for w in words for part in _WORD.findall(w.upper()) if part in vocabulary)


def ocr_pages(entries: list[dict], settings: Settings) -> list[Page]:
    """The pages extract would OCR among the entries marked as having no (usable) text
    layer; the others are named on stderr."""
    pages: list[Page] = []
    for entry in entries:
        if entry.get("text_layer") and entry.get("text_layer_usable") is not False:
            continue
        pdf = (CORPUS / "pdfs" / entry["file"]).read_bytes()
        sheets = {s["page"]: s for s in entry.get("sheets", [])}
        with pymupdf.open(stream=pdf, filetype="pdf") as doc:
            for page in doc:
                n = page.number + 1
                layer = read_text_layer(page, n, settings.text_layer_min_chars)
                if layer.has_text_layer:
                    print(
                        f"  skipped {entry['file']} p{n}: its text layer (or annotations) "
                        f"carries {len(layer.words)} words, so extract does not OCR it",
                        file=sys.stderr,
                    )
                    continue
                max_px, max_pixels = settings.page_image_max_px, settings.page_image_max_pixels
                sheet = sheets.get(n, {})
                pages.append(
                    Page(
                        file=entry["file"],
                        number=n,
                        pdf=pdf,
                        png=encode_png(render_page(page, max_px, max_pixels)),
                        zoom=render_zoom(page, max_px, max_pixels),
                        width=page.rect.width,
                        height=page.rect.height,
                        sheet_number=sheet.get("sheet_number"),
                        sheet_title=sheet.get("sheet_title"),
                    )
                )
    return pages


def size_class(page: Page) -> str:
    """The sheet size the CPU goals name: up to 11x17, up to 36x24 in, or larger."""
    long, short = sorted((page.width / 72, page.height / 72), reverse=True)
    if long <= 17.5 and short <= 11.5:
        return "11x17"
    return "36x24" if long <= 36.5 and short <= 24.5 else "larger"


def print_cpu_by_size(pages: list[Page], runs: dict[tuple[str, str, int], Run]) -> None:
    for size, group in itertools.groupby(sorted(pages, key=size_class), key=size_class):
        cpu = [runs["sheetflow", p.file, p.number].cpu_s for p in group]
        print(result_line(f"ocr_cpu_seconds_per_page_{size}", sum(cpu) / len(cpu)))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2, help="runs per variant and page")
    parser.add_argument("--files", nargs="*", help="only manifest files containing these")
    return parser.parse_args(argv)


def main() -> None:
    args = parse_args()
    if not (CORPUS / "manifest.json").exists():
        sys.exit(f"no corpus at {CORPUS}: bench.ocr needs ../shared/corpus/")
    entries = json.loads((CORPUS / "manifest.json").read_text())["files"]
    if args.files:
        entries = [e for e in entries if any(f in e["file"] for f in args.files)]
    settings = Settings(_env_file=None)
    pages = ocr_pages(entries, settings)
    if not pages:
        sys.exit("no page of the chosen files lacks a text layer")
    vocabulary = known_vocabulary(json.loads((CORPUS / "manifest.json").read_text())["files"])
    variants: dict[str, Callable[[Page], list[str]]] = {
        "plain 2048 px": plain_reader(PLAIN_PARAMS),
        "plain, narrow padding": plain_reader(NARROW_PARAMS),
        "sheetflow": sheetflow_reader(),
    }
    # Load every model before timing: the first inference of a session pays for it.
    for read in variants.values():
        read(pages[0])
    runs = {(name, p.file, p.number): Run() for name in variants for p in pages}
    for _ in range(args.rounds):
        for page in pages:
            for name, read in variants.items():
                wall, cpu = time.perf_counter(), time.process_time()
                words = read(page)
                runs[name, page.file, page.number].keep(
                    time.perf_counter() - wall, time.process_time() - cpu, words
                )

    print(f"{len(pages)} pages, fastest of {args.rounds} runs each, 2 cores shared")
    print(f"  {'page / variant':<46} {'wall s':>7} {'CPU s':>6} {'words':>6} {'known':>6} hits")
    totals: dict[str, list[float]] = {name: [0.0, 0.0, 0, 0, 0, 0] for name in variants}
    for page in pages:
        print(f"  {page.file} p{page.number} ({page.sheet_number}: {page.sheet_title})")
        for name in variants:
            run = runs[name, page.file, page.number]
            hits, possible = title_hits(run.words, page.sheet_number, page.sheet_title)
            known = known_count(run.words, vocabulary)
            print(
                f"    {name:<44} {run.wall_s:7.1f} {run.cpu_s:6.1f} {len(run.words):6d} "
                f"{known:6d} {hits}/{possible}"
            )
            total = totals[name]
            for i, value in enumerate((run.wall_s, run.cpu_s, len(run.words), known, hits)):
                total[i] += value
            total[5] += possible
    print("  per page, all pages:")
    n = len(pages)
    for name, (wall, cpu, word_count, known_words, hit_count, possible_hits) in totals.items():
        print(
            f"    {name:<44} {wall / n:7.1f} {cpu / n:6.1f} {word_count / n:6.0f} "
            f"{known_words / n:6.0f} {hit_count:.0f}/{possible_hits:.0f}"
        )
    plain, ours = totals["plain 2048 px"], totals["sheetflow"]
    print(
        f"  sheetflow / plain: {ratio(ours[0], plain[0]):.2f}x the wall time, "
        f"{ratio(ours[1], plain[1]):.2f}x the CPU, {ratio(ours[3], plain[3]):.2f}x the known words"
    )
    print_cpu_by_size(pages, runs)
    print(result_line("ocr_seconds_per_page", ours[0] / len(pages)))
    print(result_line("ocr_cpu_seconds_per_page", ours[1] / len(pages)))
    print(result_line("ocr_title_hits", ours[4]))
    print(result_line("ocr_plain_title_hits", plain[4]))
    print(result_line("ocr_time_ratio", ratio(ours[0], plain[0])))
    print(result_line("ocr_cpu_ratio", ratio(ours[1], plain[1])))


if __name__ == "__main__":
    main()
