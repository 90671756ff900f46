"""Ingest's download use cases: a sheet as its own PDF named by number, every sheet in a zip,
the set bookmarked and linked, and a page rendered at full resolution for the screen. The
PDF work runs in a bounded child (``PdfWork``); what it makes from a finished report is kept
under the job's keys by the report's revision, so a correction makes it again."""

import asyncio
import contextlib
import functools
import tempfile
import unicodedata
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

from services.ingest import setpdf
from services.ingest.refusals import Refusal, RefusalKind, not_found, refusing_outages, unavailable
from services.ingest.setpdf import SheetEntry
from services.ingest.usecases import Collaborators, find_job, report
from shared.contracts.interfaces import ObjectMissing
from shared.contracts.models import VerifiedPage
from shared.contracts.report import Report
from shared.infra.bounded import BoundedPool, ChildDied, OverLimit, PoolBusy
from shared.infra.settings import Settings
from shared.infra.storage import Keys
from shared.pagetext import TextLayer
from shared.sheet.tokens import sheet_key

T = TypeVar("T")
# PDF work at once in one ingest process; more waits its turn (or gets a 503).
PDF_WORKERS = 2
# Pages' stored words and references read at once while a set is linked.
READ_AT_ONCE = 16
# The longer side of a page rendered for the screen to zoom into, and its pixel bound.
FULL_RENDER_PX = 6000
FULL_RENDER_PIXELS = 24_000_000


class InlinePdfWork:
    """PDF work in a thread of this process: for unit tests' fakes."""

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.to_thread(fn, *args)


class ChildPdfWork:
    """PDF work in bounded children, held to the page render's time and memory limits."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._pool = BoundedPool(preload=["services.ingest.setpdf"], size=PDF_WORKERS)

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        settings = self._settings
        try:
            async with self._pool.child(wait_s=settings.page_render_timeout_s) as child:
                return await child.run(
                    fn,
                    *args,
                    timeout_s=settings.page_render_timeout_s,
                    max_mb=settings.page_render_max_mb,
                )
        except PoolBusy as exc:
            raise unavailable("Every PDF worker is busy; retry shortly.") from exc
        except (OverLimit, ChildDied) as exc:
            raise Refusal(
                RefusalKind.INVALID, "too_complex", f"The file could not be made: {exc}."
            ) from exc

    def close(self) -> None:
        self._pool.close()


def attachment(name: str) -> dict[str, str]:
    """The ``Content-Disposition`` header that saves a download as ``name`` (UTF-8, with a
    plain-ASCII form for old clients)."""
    plain = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    plain = plain.replace('"', "'").replace("\\", "-") or "download"
    header = f"attachment; filename=\"{plain}\"; filename*=UTF-8''{quote(name)}"
    return {"Content-Disposition": header}


def entries(found: Report) -> list[SheetEntry]:
    """Every page of the report as the downloads name it (a person's corrections applied)."""
    return [
        SheetEntry(p.page_number, p.sheet.sheet_number, p.sheet.sheet_title, p.sheet.discipline)
        for p in found.pages
    ]


async def _finished(io: Collaborators, job_id: str) -> Report:
    return Report.model_validate_json(await report(io, job_id, "json"))


def _set_stem(found: Report) -> str:
    stem = found.file_name.rsplit(".", 1)[0] if "." in found.file_name else found.file_name
    return setpdf.safe_stem(stem) or found.job_id


@contextlib.asynccontextmanager
async def _source(io: Collaborators, job_id: str) -> AsyncIterator[Path]:
    """The job's stored source as a local file, for the PDF work; removed afterwards."""
    job = await find_job(io, job_id)
    data = await io.bucket.get_bytes(job.source_key)
    with tempfile.TemporaryDirectory(prefix="sheetflow-download-") as tmp:
        path = Path(tmp) / "source.pdf"
        await asyncio.to_thread(path.write_bytes, data)
        yield path


async def _kept(io: Collaborators, key: str, make: Callable[[], Any], content_type: str) -> bytes:
    """What ``key`` holds, or what ``make`` makes, then kept there."""
    with contextlib.suppress(ObjectMissing):
        return await io.bucket.get_bytes(key)
    data: bytes = await make()
    await io.bucket.put_bytes(key, data, content_type)
    return data


def pick_sheet(found: Report, sheet: str) -> SheetEntry:
    """The page ``sheet`` names: a sheet number (as printed or compared: ``A-101``, ``a101``)
    or ``page-N``. A number two pages carry is refused, naming them."""
    pages = entries(found)
    if sheet.lower().startswith("page-") and sheet[5:].isdigit():
        for entry in pages:
            if entry.page_number == int(sheet[5:]):
                return entry
        raise not_found(f"The job has pages 1 to {found.page_count}.", "no_such_sheet")
    matches = [e for e in pages if e.sheet_number and sheet_key(e.sheet_number) == sheet_key(sheet)]
    if not matches:
        raise not_found(f"No page of the job carries the sheet number {sheet!r}.", "no_such_sheet")
    if len(matches) > 1:
        where = ", ".join(str(e.page_number) for e in matches)
        raise Refusal(
            RefusalKind.CONFLICT,
            "ambiguous_sheet",
            f"Pages {where} all carry {sheet!r}; ask for one as page-N.",
        )
    return matches[0]


@refusing_outages
async def sheet_download(io: Collaborators, job_id: str, sheet: str) -> tuple[bytes, str]:
    """One sheet as its own PDF and the name to save it as (``A101 - FLOOR PLAN.pdf``)."""
    entry = pick_sheet(await _finished(io, job_id), sheet)
    async with _source(io, job_id) as source:
        data = await io.pdf_work.run(setpdf.sheet_pdf, source, entry.page_number, entry.label)
    return data, setpdf.file_name(entry)


@refusing_outages
async def zip_download(io: Collaborators, job_id: str) -> tuple[bytes, str]:
    """Every page as its own PDF, named by number and title, in one zip."""
    found = await _finished(io, job_id)

    async def make() -> bytes:
        async with _source(io, job_id) as source:
            return await io.pdf_work.run(setpdf.sheets_zip, source, entries(found))

    key = Keys.download(job_id, f"sheets-r{found.revision}.zip")
    data = await _kept(io, key, make, "application/zip")
    return data, f"{_set_stem(found)} - sheets.zip"


async def _page_links(
    io: Collaborators, found: Report
) -> tuple[list[setpdf.CrossLink], list[setpdf.Unlinked]]:
    """The set's cross-references planned as links, from each verified page's references and
    words (as extract read them)."""
    limit = asyncio.Semaphore(READ_AT_ONCE)
    job_id = found.job_id

    async def refs(n: int) -> tuple[int, list[tuple[str, str]]]:
        async with limit:
            page = await io.bucket.get_model(Keys.verified(job_id, n), VerifiedPage)
        return n, page.references

    async def words(n: int) -> tuple[int, TextLayer]:
        async with limit:
            return n, await io.bucket.get_model(Keys.text(job_id, n), TextLayer)

    verified = [p.page_number for p in found.pages if p.status == "verified"]
    references = {n: r for n, r in await asyncio.gather(*map(refs, verified)) if r}
    layers = dict(await asyncio.gather(*map(words, references)))
    return setpdf.plan_links(entries(found), references, layers)


@refusing_outages
async def set_download(io: Collaborators, job_id: str) -> tuple[bytes, str]:
    """The set bookmarked, labelled and linked (``setpdf.linked_set``)."""
    found = await _finished(io, job_id)

    async def make() -> bytes:
        links, unlinked = await _page_links(io, found)
        async with _source(io, job_id) as source:
            make_set = functools.partial(setpdf.linked_set, title=found.file_name)
            return await io.pdf_work.run(make_set, source, entries(found), links, unlinked)

    key = Keys.download(job_id, f"set-r{found.revision}.pdf")
    data = await _kept(io, key, make, "application/pdf")
    return data, f"{_set_stem(found)} - bookmarked.pdf"


@refusing_outages
async def full_render(io: Collaborators, job_id: str, page_number: int) -> bytes:
    """The page rendered large (PNG) for a person to zoom into; kept once made."""
    job = await find_job(io, job_id)
    if not 1 <= page_number <= job.page_count:
        raise not_found(f"The job has pages 1 to {job.page_count}.")

    async def make() -> bytes:
        async with _source(io, job_id) as source:
            return await io.pdf_work.run(
                setpdf.render_png, source, page_number, FULL_RENDER_PX, FULL_RENDER_PIXELS
            )

    return await _kept(io, Keys.full_image(job_id, page_number), make, "image/png")
