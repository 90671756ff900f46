"""A synthetic drawing set for the benchmarks: N sheets of 36x24 in, each with a title block
and one of four bodies (cover with index and notes, floor plan, door schedule, structural
notes), reusing the drawing code of ``examples/make_examples.py``. ``scanned_every=k``
makes every k-th sheet a picture of itself (no text layer), for the peers' no-text share.

Generated sets are cached under ``bench/out/`` (gitignored): ``python -m bench.synthetic 100``.
"""

import argparse
from pathlib import Path

import pymupdf

from examples import make_examples as ex

OUT_DIR = Path(__file__).resolve().parent / "out"

# (sheet number prefix, title, scale, body): the bodies cycle so every kind recurs.
KINDS = [
    ("G", "COVER SHEET AND INDEX", "NTS", ex.draw_cover),
    ("A1", "FLOOR PLAN - LEVEL {n}", '1/4" = 1\'-0"', ex.draw_plan),
    ("A6", "DOOR SCHEDULE", "NTS", ex.draw_door_schedule),
    ("S0", "STRUCTURAL GENERAL NOTES", "NTS", ex.draw_structural_notes),
]


def sheet_spec(index: int) -> tuple[str, str, str]:
    """Sheet number, title and scale of the 0-based ``index``-th sheet: unique numbers."""
    prefix, title, scale, _ = KINDS[index % len(KINDS)]
    serial = index // len(KINDS) + 1
    return f"{prefix}{serial:02d}", title.format(n=serial), scale


def make_set(pages: int, *, scanned_every: int | None = None) -> pymupdf.Document:
    """Build ``pages`` sheets in memory; with ``scanned_every=k`` every k-th sheet is a scan."""
    if pages < 1:
        raise ValueError("a set needs at least one sheet")
    doc = pymupdf.open()
    for i in range(pages):
        number, title, scale = sheet_spec(i)
        if scanned_every and (i + 1) % scanned_every == 0:
            ex.add_scanned_sheet(doc, number, title, scale)
        else:
            KINDS[i % len(KINDS)][3](ex.new_sheet(doc, number, title, scale))
    return doc


def set_path(pages: int, *, scanned_every: int | None = None, out_dir: Path = OUT_DIR) -> Path:
    """The cached PDF of a synthetic set, generated on first use."""
    suffix = f"-scan{scanned_every}" if scanned_every else ""
    path = out_dir / f"synthetic-{pages}{suffix}.pdf"
    if not path.exists():
        out_dir.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        with make_set(pages, scanned_every=scanned_every) as doc:
            doc.save(tmp, garbage=4, deflate=True)
        tmp.replace(path)  # a concurrent or interrupted run never sees half a file
    return path


def set_bytes(pages: int, *, scanned_every: int | None = None) -> bytes:
    """The bytes of the cached synthetic set."""
    return set_path(pages, scanned_every=scanned_every).read_bytes()


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pages", type=int, nargs="?", default=100)
    parser.add_argument("--scanned-every", type=int, default=None)
    return parser.parse_args(argv)


if __name__ == "__main__":
    args = parse_args()
    path = set_path(args.pages, scanned_every=args.scanned_every)
    print(f"{path} ({path.stat().st_size // 1024} KiB)")
