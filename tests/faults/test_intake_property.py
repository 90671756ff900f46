"""Over every real-world PDF we hold (the drawing-set corpus and the pdf.js test corpus),
intake never refuses a file with a readable page, never names a readable page damaged, never
raises past its handlers, never changes what a page shows when it strips active content, and
answers within its inspection limit. No servers: intake's checks are called directly, each
file in a bounded child (``tests/support/intake_property.py`` says what is compared)."""

import asyncio
from pathlib import Path

import pytest

from shared.infra.bounded import BoundedPool, ChildDied, OverLimit
from shared.infra.settings import Settings
from tests.support.intake_property import Verdict, examine

pytestmark = pytest.mark.slow

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
FOLDERS = (SHARED / "corpus" / "pdfs", SHARED / "robustness" / "pdfjs")
# What reading a file's sampled pages twice (upload and stripped copy) may add to intake's own
# time before the child is stopped.
ORACLE_S = 60.0
# Files examined at once: CI has two cores.
PARALLEL = 2


def real_world_pdfs() -> list[Path]:
    files = [f for folder in FOLDERS if folder.is_dir() for f in sorted(folder.iterdir())]
    return [f for f in files if f.is_file() and f.suffix.lower() != ".json"]


async def examine_all(files: list[Path], settings: Settings) -> list[Verdict]:
    pool = BoundedPool(preload=["tests.support.intake_property"], size=PARALLEL)

    async def one(path: Path) -> Verdict:
        async with pool.child() as child:
            try:
                return await child.run(
                    examine,
                    path,
                    settings.max_pages,
                    timeout_s=settings.inspect_timeout_s + ORACLE_S,
                    max_mb=settings.inspect_max_mb,
                )
            except OverLimit as exc:
                return Verdict(path.name, problems=[f"examining it went {exc}"])
            except ChildDied as exc:
                return Verdict(path.name, problems=[f"its reader died: {exc}"])

    try:
        return await asyncio.gather(*(one(f) for f in files))
    finally:
        pool.close()


@pytest.mark.timeout(900)
async def test_intake_holds_over_every_real_world_pdf():
    """Each file MuPDF opens goes through intake's checks and stripping as an upload would;
    any broken promise is listed by file."""
    files = real_world_pdfs()
    if len(files) < 100:
        pytest.skip("the shared corpora are not beside the repository")
    settings = Settings(_env_file=None)
    verdicts = await examine_all(files, settings)
    slow = [v for v in verdicts if v.intake_s > settings.inspect_timeout_s]
    broken = {v.name: v.problems for v in verdicts if v.problems}
    broken.update({v.name: [f"intake took {v.intake_s:.1f} s"] for v in slow})
    assert sum(v.opened for v in verdicts) > 0.9 * len(files)
    assert not broken, "\n".join(f"{name}: {'; '.join(p)}" for name, p in broken.items())
