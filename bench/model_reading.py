"""What a model is given to read, before and after the page reading (``shared.pagetext.units``),
measured with scripted models (no network): prompt tokens per page, and the share of schedule
rows and numbered notes a model returns as whole objects.

Two scripted models answer the vision prompt from its TEXT LAYER block alone:

- *copy*: one object per line of the block, its text as ``source_text`` (and, after, the
  line's id in ``ids``);
- *segment*: a model that reassembles lines into objects the way a text model does: a line
  opening with a note number, a line whose first word carries a digit (a mark, a tag), or a
  line after one ending in a full stop starts an object; any other line continues the one
  before (after: the object cites the ids of its lines).

Each reply goes through the real parser and grounding guard. A schedule row or numbered note
(as the offline extractor reads it) is *whole* when one object's evidence is exactly its
words. Tokens are estimated as characters / 4 (system prompt and text; the image is left
out: it is the same before and after). Pages: the example set (``examples/``), a synthetic
set (``bench/synthetic.py``) and the corpus's schedule sheets (pages where the offline
extractor finds table rows).

    python -m bench.model_reading [--synthetic 8] [--no-corpus]
"""

import argparse
import json
import re
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pymupdf

from bench.common import result_line
from bench.synthetic import set_path
from services.extract.guard import apply_grounding_guard
from services.extract.model.tiles import merge_tile_objects, plan_tiles, units_in
from services.extract.model.vision import SYSTEM_PROMPT, TEXT_LAYER_HEADING, parse_reply
from services.extract.offline.extractor import extract_offline
from services.extract.reading.render import render_zoom
from services.extract.reading.textlayer import read_text_layer
from shared.contracts.models import PageObject
from shared.infra.settings import Settings
from shared.pagetext import NOTE_NUMBER, TextLayer
from shared.sheet.fields import read_units

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "drawing-set.pdf"
CORPUS = ROOT.parent / "shared" / "corpus"
CHARS_PER_TOKEN = 4
_ID_LINE = re.compile(r"^(L\d+) (.*)$")

# A scripted model: the TEXT LAYER block -> the reply's objects.
Model = Callable[[str, bool], list[dict]]


def copy_model(block: str, with_ids: bool) -> list[dict]:
    """One object per line of the block."""
    objects = []
    for line in block.splitlines():
        unit, text = _split(line, with_ids)
        if text and not text.startswith("[…"):
            objects.append({"object_type": "text", "source_text": text, "ids": unit})
    return objects


def segment_model(block: str, with_ids: bool) -> list[dict]:
    """Lines joined into objects at note numbers, marks and full stops."""
    objects: list[dict] = []
    ended = True
    for line in block.splitlines():
        unit, text = _split(line, with_ids)
        if not text or text.startswith("[…"):
            continue
        first = text.split()[0]
        starts = ended or bool(NOTE_NUMBER.match(first)) or any(ch.isdigit() for ch in first)
        if starts or not objects:
            objects.append({"object_type": "text", "source_text": text, "ids": unit})
        else:
            objects[-1]["source_text"] += " " + text
            objects[-1]["ids"] += unit
        ended = text.rstrip().endswith(".")
    return objects


def _split(line: str, with_ids: bool) -> tuple[list[str], str]:
    match = _ID_LINE.match(line) if with_ids else None
    return ([match.group(1)], match.group(2)) if match else ([], line.strip())


def before_blocks(layer: TextLayer, _zoom: float, settings: Settings) -> list[str]:
    """The TEXT LAYER block as it was: the layer's lines, cut at ``max_chars``."""
    return [layer.text[: settings.text_layer_max_chars]]


def after_blocks(layer: TextLayer, zoom: float, settings: Settings) -> list[str]:
    """The TEXT LAYER blocks now: the page's units, or each tile's units on a page the
    vision pass reads in tiles (its image at ``zoom``), capped by whole units."""
    units = read_units(layer)
    limit = settings.text_layer_max_chars
    max_px, max_tiles = settings.page_image_max_px, settings.vision_max_tiles
    plan = plan_tiles(layer, zoom, max_px, max_tiles, units=units.units, max_chars=limit)
    if not plan.clips:
        return [units.render(limit)]
    return [units.render(limit, units_in(units.units, clip)) for clip in plan.clips]


@dataclass
class Tally:
    pages: int = 0
    calls: int = 0
    tokens: list[int] = field(default_factory=list)
    wanted: int = 0
    shown: int = 0  # of those wanted, the ones whose every word the blocks show
    whole: dict[str, int] = field(default_factory=dict)
    whole_shown: dict[str, int] = field(default_factory=dict)

    def share(self, model: str) -> float:
        return self.whole.get(model, 0) / self.wanted if self.wanted else 1.0

    def share_shown(self, model: str) -> float:
        return self.whole_shown.get(model, 0) / self.shown if self.shown else 1.0


def _targets(layer: TextLayer) -> list[frozenset[int]]:
    """The words of each schedule row and numbered note the offline extractor reads."""
    objects = extract_offline(layer)
    wanted = ("schedule_row", "general_note")
    return [frozenset(o.evidence) for o in objects if o.object_type in wanted]


def _answer(layer: TextLayer, blocks: list[str], model: Model, with_ids: bool) -> list[PageObject]:
    """The model's objects for the page's blocks (one call each), through the parser and
    the guard, merged as the vision pass merges tiles."""
    objects: list[PageObject] = []
    cited: dict[str, list[str]] = {}
    for n, block in enumerate(blocks):
        reply = parse_reply(json.dumps({"objects": model(block, with_ids)}), "stop", f"b{n}-")
        objects += [o.model_copy(update={"rung": "vision"}) for o in reply.objects]
        cited |= reply.cited
    units = read_units(layer) if with_ids else None
    kept, _ = apply_grounding_guard(objects, layer, cited, units)
    return merge_tile_objects(kept) if len(blocks) > 1 else kept


@dataclass(frozen=True)
class Page:
    layer: TextLayer
    zoom: float  # the page image's pixels per point


def measure(
    pages: list[Page], settings: Settings, *, schedule_only: bool = False
) -> dict[str, Tally]:
    """Tallies before and after over the pages (only those with table rows when
    ``schedule_only``)."""
    tallies = {"before": Tally(), "after": Tally()}
    models: dict[str, Model] = {"copy": copy_model, "segment": segment_model}
    for layer, zoom in ((p.layer, p.zoom) for p in pages):
        if not layer.has_text_layer:
            continue
        targets = _targets(layer)
        if schedule_only and not _has_rows(layer):
            continue
        for name, build, with_ids in (
            ("before", before_blocks, False),
            ("after", after_blocks, True),
        ):
            tally = tallies[name]
            blocks = build(layer, zoom, settings)
            prompts = [f"{SYSTEM_PROMPT}\n{TEXT_LAYER_HEADING}\n{block}" for block in blocks]
            tally.pages += 1
            tally.calls += len(blocks)
            tally.tokens.append(sum(len(p) for p in prompts) // CHARS_PER_TOKEN)
            tally.wanted += len(targets)
            seen = _shown(layer, blocks, with_ids)
            shown = [t for t in targets if t <= seen]
            tally.shown += len(shown)
            for model_name, model in models.items():
                found = {frozenset(o.evidence) for o in _answer(layer, blocks, model, with_ids)}
                hits = sum(1 for t in targets if t in found)
                tally.whole[model_name] = tally.whole.get(model_name, 0) + hits
                hits = sum(1 for t in shown if t in found)
                tally.whole_shown[model_name] = tally.whole_shown.get(model_name, 0) + hits
    return tallies


def _shown(layer: TextLayer, blocks: list[str], with_ids: bool) -> set[int]:
    """The words the blocks show: those of the units they name (after), or of the layer's
    lines the cut kept whole (before)."""
    if with_ids:
        units = read_units(layer)
        named = [
            m.group(1) for b in blocks for line in b.splitlines() if (m := _ID_LINE.match(line))
        ]
        return set(units.words_of(named))
    kept, used = set(), 0
    for line, text in zip(layer.lines, layer.line_texts, strict=True):
        used += len(text) + 1
        if used > len(blocks[0]) + 1:
            break
        kept.update(line)
    return kept


def _has_rows(layer: TextLayer) -> bool:
    objects = extract_offline(layer)
    return any(o.object_type == "schedule_row" for o in objects)


def read_layers(path: Path, settings: Settings) -> list[Page]:
    max_px, max_pixels = settings.page_image_max_px, settings.page_image_max_pixels
    with pymupdf.open(path) as doc:
        return [
            Page(
                read_text_layer(page, page.number + 1, settings.text_layer_min_chars),
                render_zoom(page, max_px, max_pixels),
            )
            for page in doc
        ]


def corpus_layers(settings: Settings) -> list[Page]:
    manifest = json.loads((CORPUS / "manifest.json").read_text())["files"]
    layers = []
    for entry in manifest:
        if entry.get("text_layer_usable") is not False:
            layers += read_layers(CORPUS / "pdfs" / entry["file"], settings)
    return layers


def report(name: str, tallies: dict[str, Tally]) -> None:
    before, after = tallies["before"], tallies["after"]
    print(f"\n{name}: {after.pages} pages, {after.wanted} schedule rows and numbered notes")
    for label, tally in tallies.items():
        tokens = statistics.mean(tally.tokens) if tally.tokens else 0
        calls = tally.calls / tally.pages if tally.pages else 0
        print(
            f"  {label:6} calls/page {calls:4.2f}  text tokens/page {tokens:5.0f}  whole: "
            f"copy {tally.share('copy'):6.1%}  segment {tally.share('segment'):6.1%}  "
            f"(of the {tally.shown} shown: copy {tally.share_shown('copy'):6.1%}  segment "
            f"{tally.share_shown('segment'):6.1%})"
        )
    if before.tokens and after.tokens:
        ratio = statistics.mean(after.tokens) / statistics.mean(before.tokens)
        print(f"  tokens after/before {ratio:.2f}")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--synthetic", type=int, default=8, help="sheets of the synthetic set")
    parser.add_argument("--no-corpus", action="store_true", help="leave the corpus out")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    settings = Settings(_env_file=None)
    synthetic = read_layers(EXAMPLES, settings) + read_layers(set_path(args.synthetic), settings)
    tallies = measure(synthetic, settings)
    report("examples + synthetic set", tallies)
    copy_share = tallies["after"].share("copy")
    if not args.no_corpus and (CORPUS / "manifest.json").exists():
        layers = corpus_layers(settings)
        report("corpus, every text page", measure(layers, settings))
        schedules = measure(layers, settings, schedule_only=True)
        report("corpus, schedule sheets", schedules)
        untiled = settings.model_copy(update={"vision_max_tiles": 0})
        report("corpus, schedule sheets, never tiled", measure(layers, untiled, schedule_only=True))
        copy_share = min(copy_share, schedules["after"].share("copy"))
    print(result_line("whole_rows_and_notes_copy_model", copy_share))


if __name__ == "__main__":
    main()
