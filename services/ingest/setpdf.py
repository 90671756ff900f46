"""The set as people download it, made from the job's stored source: one sheet as its own PDF,
every sheet in a zip, and the whole set bookmarked and linked (an outline of its sheets grouped
by discipline, page labels set to sheet numbers, each cross-reference a link to the sheet it
names). The functions that open a PDF run in a bounded child (``services.ingest.downloads``);
``plan_links`` and the names are pure.

Nothing active is added: links only go to a page of the same file (``GoTo``), and the outline
only points at pages, so the file passes the same intake check as an upload.
"""

import io
import re
import unicodedata
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pymupdf

from shared.pagetext import Box, TextLayer, fold_dashes
from shared.pdf.sources import PDF_LOCK
from shared.sheet.tokens import sheet_key

# What no file name may hold on the systems people save to (and control characters).
_UNSAFE_NAME = re.compile(r'[\\/:*?"<>|\x00-\x1f\x7f]+')
NAME_MAX_CHARS = 120
# Where the outline gathers references to sheets the set does not hold.
UNLINKED_GROUP = "References to sheets not in this set"
NO_DISCIPLINE = "Other sheets"
# The document information a PDF's metadata may set (PyMuPDF's set_metadata keys).
METADATA_KEYS = ("author", "subject", "keywords", "creator", "producer", "creationDate")


@dataclass(frozen=True)
class SheetEntry:
    """A page of the set as the downloads name it (the report's sheet, corrections applied)."""

    page_number: int
    sheet_number: str | None = None
    sheet_title: str | None = None
    discipline: str | None = None

    @property
    def label(self) -> str:
        """How the outline names it: ``A101 — FLOOR PLAN``, or ``Page 7`` without a number."""
        if not self.sheet_number:
            return f"Page {self.page_number}"
        if not self.sheet_title:
            return self.sheet_number
        return f"{self.sheet_number} — {self.sheet_title}"


@dataclass(frozen=True)
class CrossLink:
    """A reference printed on ``page_number`` at ``box`` (displayed page, points) that names
    the sheet on ``target_page``."""

    page_number: int
    box: Box
    target_page: int
    target: str


@dataclass(frozen=True)
class Unlinked:
    """A reference printed on ``page_number`` to a sheet the set does not hold."""

    page_number: int
    target: str
    text: str


def file_name(entry: SheetEntry) -> str:
    """``A101 - FLOOR PLAN.pdf``: the sheet's number and title, safe to save anywhere;
    ``page 7.pdf`` for a page without a number."""
    stem = f"page {entry.page_number}"
    if entry.sheet_number:
        stem = entry.sheet_number
        if entry.sheet_title:
            stem = f"{stem} - {entry.sheet_title}"
    return f"{safe_stem(stem) or f'page {entry.page_number}'}.pdf"


def safe_stem(text: str) -> str:
    """``text`` with what a file name may not hold replaced, spaces collapsed, cut short."""
    cleaned = _UNSAFE_NAME.sub("-", unicodedata.normalize("NFC", text))
    cleaned = " ".join(cleaned.split()).strip(" .-")
    return cleaned[:NAME_MAX_CHARS].rstrip(" .-")


def zip_names(entries: Iterable[SheetEntry]) -> dict[int, str]:
    """Page → its file's name in the zip; a name two pages share gets each page's number."""
    entries = list(entries)
    names = {e.page_number: file_name(e) for e in entries}
    counts: dict[str, int] = {}
    for name in names.values():
        counts[name.casefold()] = counts.get(name.casefold(), 0) + 1
    return {
        n: (f"{name[:-4]} (page {n}).pdf" if counts[name.casefold()] > 1 else name)
        for n, name in names.items()
    }


def plan_links(
    entries: list[SheetEntry],
    references: dict[int, list[tuple[str, str]]],
    layers: dict[int, TextLayer],
) -> tuple[list[CrossLink], list[Unlinked]]:
    """Each reference a page prints (``(sheet as printed, its line)``, as the page's reading
    found it) as a link to the first page carrying that sheet, placed on the words that print
    it; a reference to a sheet no page carries is listed instead."""
    pages_by_key: dict[str, int] = {}
    for entry in entries:
        if entry.sheet_number:
            pages_by_key.setdefault(sheet_key(entry.sheet_number), entry.page_number)
    links: list[CrossLink] = []
    unlinked: list[Unlinked] = []
    for page_number in sorted(references):
        layer = layers.get(page_number)
        placed: set[tuple[str, Box]] = set()
        for target, line in references[page_number]:
            target_page = pages_by_key.get(sheet_key(target))
            if target_page is None:
                unlinked.append(Unlinked(page_number, target, line))
                continue
            for box in _boxes(layer, target, line) if layer else []:
                if (target, box) not in placed:
                    placed.add((target, box))
                    links.append(CrossLink(page_number, box, target_page, target))
    return links, _distinct(unlinked)


def _distinct(unlinked: list[Unlinked]) -> list[Unlinked]:
    seen: set[tuple[int, str]] = set()
    out = []
    for u in unlinked:
        if (u.page_number, sheet_key(u.target)) not in seen:
            seen.add((u.page_number, sheet_key(u.target)))
            out.append(u)
    return out


def _folded(text: str) -> str:
    return fold_dashes(text).upper()


def _boxes(layer: TextLayer, target: str, line: str) -> list[Box]:
    """The boxes of the words printing ``target`` in each line of ``layer`` that reads
    ``line``: the word holding it, or the run of words that spells it."""
    wanted = _folded(target).replace(" ", "")
    found = []
    for ids, text in zip(layer.lines, layer.line_texts, strict=True):
        if text != line:
            continue
        words = [layer.words[i] for i in ids]
        for start in range(len(words)):
            spelled = ""
            for end in range(start, min(start + 4, len(words))):
                spelled += _folded(words[end].text)
                if wanted in spelled:
                    run = words[start : end + 1]
                    found.append(
                        Box(
                            min(w.bbox.x0 for w in run),
                            min(w.bbox.y0 for w in run),
                            max(w.bbox.x1 for w in run),
                            max(w.bbox.y1 for w in run),
                        )
                    )
                    break
                if not wanted.startswith(spelled) and wanted not in spelled:
                    break
    return found


def sheet_pdf(source: Path, page_number: int, title: str) -> bytes:
    """The page ``page_number`` of ``source`` as a PDF of its own, with its annotations (links
    to other pages of the set, which it no longer holds, left out)."""
    with PDF_LOCK, pymupdf.open(source, filetype="pdf") as doc, pymupdf.open() as out:
        out.insert_pdf(doc, from_page=page_number - 1, to_page=page_number - 1, links=False)
        out.set_metadata({"title": title, "producer": "sheetflow"})
        return out.tobytes(garbage=3, deflate=True)


def sheets_zip(source: Path, entries: list[SheetEntry]) -> bytes:
    """Every page of ``entries`` as its own PDF, named by number and title, in one zip."""
    names = zip_names(entries)
    buffer = io.BytesIO()
    with (
        PDF_LOCK,
        pymupdf.open(source, filetype="pdf") as doc,
        zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive,
    ):
        for entry in entries:
            with pymupdf.open() as out:
                n = entry.page_number - 1
                out.insert_pdf(doc, from_page=n, to_page=n, links=False)
                out.set_metadata({"title": entry.label, "producer": "sheetflow"})
                archive.writestr(names[entry.page_number], out.tobytes(garbage=3, deflate=True))
    return buffer.getvalue()


def outline(entries: list[SheetEntry], unlinked: list[Unlinked]) -> list[list]:
    """The set's outline (PyMuPDF's ``set_toc`` rows): a group per discipline in the order
    the set first shows it, each sheet under it in page order; pages without a discipline
    under "Other sheets"; then the references to sheets the set does not hold, each pointing
    at the page that prints it."""
    groups: dict[str, list[SheetEntry]] = {}
    for entry in sorted(entries, key=lambda e: e.page_number):
        named = entry.discipline if entry.discipline != "unknown" else None
        groups.setdefault(named or NO_DISCIPLINE, []).append(entry)
    if NO_DISCIPLINE in groups:  # the sheets of a named discipline first
        groups[NO_DISCIPLINE] = groups.pop(NO_DISCIPLINE)
    rows: list[list] = []
    for name, members in groups.items():
        rows.append([1, name, members[0].page_number])
        rows += [[2, e.label, e.page_number] for e in members]
    if unlinked:
        rows.append([1, UNLINKED_GROUP, unlinked[0].page_number])
        labels = {e.page_number: e.sheet_number or f"page {e.page_number}" for e in entries}
        rows += [
            [2, f"{u.target} (on {labels.get(u.page_number, u.page_number)})", u.page_number]
            for u in unlinked
        ]
    return rows


def page_labels(entries: list[SheetEntry], page_count: int) -> list[dict]:
    """Page label rules: each numbered page labelled with its sheet number, a page without
    one with its page number."""
    numbers = {e.page_number: e.sheet_number for e in entries if e.sheet_number}
    rules = []
    for n in range(1, page_count + 1):
        number = numbers.get(n)
        if number:
            rules.append({"startpage": n - 1, "prefix": number, "style": "", "firstpagenum": 1})
        else:
            rules.append({"startpage": n - 1, "prefix": "", "style": "D", "firstpagenum": n})
    return rules


def linked_set(
    source: Path,
    entries: list[SheetEntry],
    links: list[CrossLink],
    unlinked: list[Unlinked],
    title: str,
) -> bytes:
    """``source`` bookmarked (``outline``), labelled (``page_labels``) and linked: each
    ``CrossLink`` a link to its page, placed over the words that print it."""
    with PDF_LOCK, pymupdf.open(source, filetype="pdf") as doc:
        doc.set_toc(outline(entries, unlinked))
        doc.set_page_labels(page_labels(entries, doc.page_count))
        for link in links:
            page = doc[link.page_number - 1]
            # The words' boxes are the displayed page's; a link is placed in the unrotated one.
            rect = pymupdf.Rect(*link.box) * page.derotation_matrix
            page.insert_link(
                {
                    "kind": pymupdf.LINK_GOTO,
                    "page": link.target_page - 1,
                    "from": rect.normalize(),
                    "to": pymupdf.Point(0, 0),
                }
            )
        kept = {k: v for k, v in (doc.metadata or {}).items() if k in METADATA_KEYS and v}
        doc.set_metadata({**kept, "title": title})
        return doc.tobytes(garbage=3, deflate=True)


def render_png(source: Path, page_number: int, max_px: int, max_pixels: int) -> bytes:
    """The page rendered as PNG with its longer side ``max_px`` pixels (fewer when that
    would make more than ``max_pixels``): the sheet at full resolution for a person to zoom."""
    with PDF_LOCK, pymupdf.open(source, filetype="pdf") as doc:
        page = doc[page_number - 1]
        rect = page.rect
        scale = max_px / max(rect.width, rect.height)
        # A pixel more on each side than the scale gives, as the rendering rounds up.
        scale = min(scale, (max_pixels / ((rect.width + 1) * (rect.height + 1))) ** 0.5)
        pixmap = page.get_pixmap(matrix=pymupdf.Matrix(scale, scale), alpha=False)
        return pixmap.tobytes("png")
