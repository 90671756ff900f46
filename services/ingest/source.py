"""What ingest stores as a job's source: the upload with its active content stripped, and
what ingest noticed on the way (a repaired structure, damaged pages).

A damaged file is accepted when at least one of its pages can still be read: those pages
are processed and the others become named failed pages. A file none of whose pages can be
read is refused (``corrupt_pdf``).
"""

from dataclasses import dataclass
from pathlib import Path

import pymupdf

from services.ingest.active_content import has_active_content, strip_active_content
from services.ingest.refusals import Refusal, RefusalKind
from services.ingest.validation import AcceptedPdf, inspect_pdf
from shared.contracts.models import IntakeReport
from shared.pdf.damage import damaged_pages
from shared.pdf.sources import PDF_LOCK


@dataclass(frozen=True)
class PreparedSource:
    path: Path  # the file to store as jobs/{id}/source.pdf
    intake: IntakeReport


def prepare_source(
    upload: Path, *, refuse_active_content: bool, write: bool = True
) -> PreparedSource:
    """The source to store for the accepted PDF at ``upload``: the upload itself, or a
    stripped copy beside it when it carries active content (an ``active_content``
    ``Refusal`` instead with ``refuse_active_content``); a ``corrupt_pdf`` one when no page
    of the file can be read. With ``write`` False the checks run, nothing is written."""
    stripped = upload.with_name(f"{upload.stem}-stripped.pdf")
    with PDF_LOCK, pymupdf.open(upload, filetype="pdf") as doc:
        damaged = damaged_pages(doc)
        if damaged and len(damaged) == doc.page_count:
            raise Refusal(
                RefusalKind.INVALID,
                "corrupt_pdf",
                f"The PDF is damaged (it looks truncated): none of its {doc.page_count} "
                "pages can be read.",
            )
        removed = strip_active_content(doc) if has_active_content(doc) else {}
        if removed and refuse_active_content:
            raise Refusal(
                RefusalKind.INVALID,
                "active_content",
                f"The PDF was refused because it carries {describe_removed(removed)}; this "
                "deployment refuses active content (SHEETFLOW_ACTIVE_CONTENT=refuse).",
            )
        if removed and write:
            doc.save(stripped, garbage=2)  # unused objects (the removed scripts) are dropped
        intake = IntakeReport(removed=removed, repaired=doc.is_repaired, damaged_pages=damaged)
    return PreparedSource(stripped if removed else upload, intake)


def describe_removed(removed: dict[str, int]) -> str:
    """``{"document_javascript": 2}`` → ``"document javascript (2)"``."""
    return ", ".join(f"{kind.replace('_', ' ')} ({count})" for kind, count in removed.items())


def check_and_prepare(
    upload: Path, *, max_pages: int, refuse_active_content: bool
) -> tuple[AcceptedPdf, PreparedSource]:
    """Everything ingest does to an upload before storing it, in one call (run in a bounded
    child): the checks of ``inspect_pdf``, then :func:`prepare_source`."""
    accepted = inspect_pdf(upload, max_pages=max_pages)
    return accepted, prepare_source(upload, refuse_active_content=refuse_active_content)
