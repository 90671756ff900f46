"""A damaged page: one whose objects the file names but does not hold.

A truncated or broken file is repaired by MuPDF as it opens it, and a page whose objects
were lost comes out of the repair as an empty page. Empty is not blank: such a page is
named as damaged (ingest counts them, extract fails them with the reason), so a blank page
is only ever one the file itself says is empty.
"""

import re
import zlib

import pymupdf

DAMAGED = "the page could not be read: damaged file"
_REF = re.compile(r"(\d+)\s+\d+\s+R")


def page_damage(doc: pymupdf.Document, index: int) -> str | None:
    """Why page ``index`` (0-based) of ``doc`` is damaged, as a sentence starting with
    :data:`DAMAGED`, or None when the file holds every object the page names.

    Checked: the page object itself and each of its content streams. In a file MuPDF had
    to repair, content streams are also inflated to their end: a cut-off one is damage.
    """
    try:
        xref = doc.page_xref(index)
        if not 0 < xref < doc.xref_length() or doc.xref_get_key(xref, "Type")[1] != "/Page":
            return f"{DAMAGED} (its page object is missing)"
        kind, value = doc.xref_get_key(xref, "Contents")
    except Exception:  # MuPDF raises plain RuntimeErrors on a broken page tree
        return f"{DAMAGED} (its page object is missing)"
    refs = [int(r) for r in _REF.findall(value)] if kind in ("xref", "array") else []
    missing = [r for r in refs if not (0 < r < doc.xref_length() and doc.xref_is_stream(r))]
    if missing:
        return f"{DAMAGED} ({len(missing)} of its {len(refs)} content streams are missing)"
    if doc.is_repaired and any(_cut_short(doc, r) for r in refs):
        return f"{DAMAGED} (its drawing instructions are cut short)"
    return None


def damaged_pages(doc: pymupdf.Document) -> list[int]:
    """The 1-based numbers of ``doc``'s damaged pages (only a repaired file has any)."""
    if not doc.is_repaired:
        return []
    return [i + 1 for i in range(doc.page_count) if page_damage(doc, i)]


def _cut_short(doc: pymupdf.Document, xref: int) -> bool:
    """A Flate-compressed stream whose compressed data ends before its end marker. Inflated
    a megabyte at a time and thrown away: only whether it reaches its end matters."""
    if "FlateDecode" not in doc.xref_get_key(xref, "Filter")[1]:
        return False
    inflater = zlib.decompressobj()
    data = doc.xref_stream_raw(xref) or b""
    try:
        while data and not inflater.eof:
            inflater.decompress(data, 1 << 20)
            data = inflater.unconsumed_tail
        inflater.flush()
    except zlib.error:
        return True
    return not inflater.eof
