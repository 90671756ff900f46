"""A damaged page: one whose objects the file names but does not hold.

A truncated or broken file is repaired by MuPDF as it opens it, and a page whose objects
were lost comes out of the repair as an empty page. Empty is not blank: such a page is
named as damaged (ingest counts them, extract fails them with the reason), so a blank page
is only ever one the file itself says is empty.

A page's ``/Contents`` may be one stream, an array of streams, or a reference to such an
array (Adobe PDF Library and MicroStation write the last): all are resolved to the streams
they name before anything is called missing.
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
        refs = _content_refs(doc, kind, value)
    except Exception:  # MuPDF raises plain RuntimeErrors on a broken page tree
        return f"{DAMAGED} (its page object is missing)"
    missing = [r for r in refs if not _holds_stream(doc, r)]
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


def _content_refs(doc: pymupdf.Document, kind: str, value: str) -> list[int]:
    """The object numbers of the streams a page's ``/Contents`` names: the stream itself,
    the members of an array, or the members of an array the entry refers to."""
    if kind == "array":
        return [int(r) for r in _REF.findall(value)]
    if kind != "xref":
        return []
    target = int(value.split()[0])
    if _holds_stream(doc, target):
        return [target]
    if 0 < target < doc.xref_length() and doc.xref_object(target).lstrip().startswith("["):
        return [int(r) for r in _REF.findall(doc.xref_object(target))]
    return [target]


def _holds_stream(doc: pymupdf.Document, xref: int) -> bool:
    return 0 < xref < doc.xref_length() and doc.xref_is_stream(xref)


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
