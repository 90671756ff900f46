"""Is an upload a PDF we will process? Checked by content, before anything is stored."""

from dataclasses import dataclass
from pathlib import Path

import pymupdf

from services.ingest.refusals import Refusal, RefusalKind

PDF_MAGIC = b"%PDF-"
# The PDF spec allows junk before the header; readers look within the first KiB.
MAGIC_SEARCH_BYTES = 1024


@dataclass
class AcceptedPdf:
    page_count: int


def inspect_pdf(path: Path, *, max_pages: int) -> AcceptedPdf:
    """Accept the PDF at ``path`` or raise a ``Refusal`` a person can act on."""
    with open(path, "rb") as f:
        head = f.read(MAGIC_SEARCH_BYTES)
    pymupdf.TOOLS.mupdf_display_errors(False)
    try:
        doc = pymupdf.open(path, filetype="pdf")
    except Exception as exc:
        # MuPDF's message names the server-side temporary file: never show it.
        raise _unopened(has_header=PDF_MAGIC in head) from exc
    with doc:
        # Without a header, what MuPDF reads as a PDF with a page is one (writers that drop
        # the header exist); anything else it opens (an image, HTML) is not.
        if PDF_MAGIC not in head and not (doc.is_pdf and _has_a_page(doc)):
            raise _unopened(has_header=False)
        return _inspect_document(doc, max_pages=max_pages)


def _unopened(*, has_header: bool) -> Refusal:
    if not has_header:
        return Refusal(
            RefusalKind.NOT_PDF,
            "not_a_pdf",
            "The file is not a PDF (its content has no PDF header).",
        )
    return Refusal(
        RefusalKind.INVALID,
        "corrupt_pdf",
        "The PDF could not be opened: it is damaged or not a PDF.",
    )


def _has_a_page(doc: pymupdf.Document) -> bool:
    try:
        return doc.page_count > 0
    except Exception:  # a page tree MuPDF refuses
        return False


def _inspect_document(doc: pymupdf.Document, *, max_pages: int) -> AcceptedPdf:
    if doc.needs_pass or doc.is_encrypted:
        raise Refusal(
            RefusalKind.INVALID,
            "encrypted_pdf",
            "The PDF is encrypted or password-protected; upload an unprotected copy.",
        )
    page_count = _page_count(doc)
    if page_count == 0:
        raise Refusal(RefusalKind.INVALID, "empty_pdf", "The PDF has no pages (it may be corrupt).")
    if page_count > max_pages:
        raise Refusal(
            RefusalKind.INVALID,
            "too_many_pages",
            f"The PDF has {page_count} pages; this deployment accepts at most {max_pages}.",
        )
    return AcceptedPdf(page_count=page_count)


def _page_count(doc: pymupdf.Document) -> int:
    """The page count the page tree declares, or a Refusal when MuPDF refuses it (a node
    whose /Count does not match its kids)."""
    try:
        return doc.page_count
    except Exception as exc:
        raise Refusal(
            RefusalKind.INVALID,
            "bad_page_tree",
            "The PDF's page tree is inconsistent (it declares a page count its pages do not "
            "match); re-save it with a PDF tool and upload it again.",
        ) from exc


def safe_file_name(name: str | None) -> str:
    """The upload's base name with anything but plain characters replaced (it ends up in HTML
    and logs)."""
    base = Path((name or "upload.pdf").replace("\\", "/")).name
    cleaned = "".join(c if c.isalnum() or c in "._- ()" else "_" for c in base).strip(" .")
    return cleaned[:120] or "upload.pdf"
