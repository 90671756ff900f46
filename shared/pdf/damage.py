"""A damaged page: one MuPDF cannot load, or whose content names objects the file does not
hold.

A truncated or broken file is repaired by MuPDF as it opens it, and a page whose objects
were lost comes out of the repair as an empty page. Empty is not blank: such a page is
named as damaged (ingest counts them, extract fails them with the reason), so a blank page
is only ever one the file itself says is empty.

Damage is decided by what MuPDF resolves, never by the shape of ``/Contents``: one stream,
an array of streams, a reference to such an array (Adobe PDF Library, MicroStation), objects
inside object streams are all followed to the streams they name, as MuPDF's own reader
follows them. Callers look for it only where it can matter: in a file MuPDF had to repair, and on a
page that reads empty (no text, nothing drawn). A page that shows something in a file MuPDF
read as written is read as it is.
"""

import zlib

import pymupdf

DAMAGED = "the page could not be read: damaged file"
_mupdf = pymupdf.mupdf


def page_damage(doc: pymupdf.Document, index: int) -> str | None:
    """Why page ``index`` (0-based) of ``doc`` is damaged, as a sentence starting with
    :data:`DAMAGED`, or None when MuPDF loads it and the file holds every content stream it
    names.

    In a file MuPDF had to repair, content streams are also inflated to their end: a cut-off
    one is damage.
    """
    try:
        pdf = _mupdf.pdf_document_from_fz_document(doc.this)
        if not _mupdf.pdf_is_dict(_mupdf.pdf_lookup_page_obj(pdf, index)):
            return f"{DAMAGED} (its page object is missing)"
        doc.load_page(index)
        held, missing = content_streams(doc, index)
    except Exception:  # MuPDF raises plain RuntimeErrors on a broken page tree
        return f"{DAMAGED} (MuPDF cannot load the page)"
    if missing:
        total = len(held) + missing
        return f"{DAMAGED} ({missing} of its {total} content streams are missing)"
    if doc.is_repaired and any(_cut_short(doc, xref) for xref in held):
        return f"{DAMAGED} (its drawing instructions are cut short)"
    return None


def damaged_pages(doc: pymupdf.Document) -> list[int]:
    """The 1-based numbers of ``doc``'s damaged pages, in a file MuPDF had to repair (one read
    as written has its pages checked as extract reads them)."""
    if not doc.is_repaired:
        return []
    return [i + 1 for i in range(doc.page_count) if page_damage(doc, i)]


def content_streams(doc: pymupdf.Document, index: int) -> tuple[list[int], int]:
    """The object numbers of the content streams page ``index``'s ``/Contents`` names, as
    MuPDF reads it (one stream, or an array of streams, either of them behind a reference),
    and how many parts of it are no stream the file holds (a reference to an object it
    lacks, or to anything but a stream). No ``/Contents`` at all is an empty page, not a
    damaged one."""
    pdf = _mupdf.pdf_document_from_fz_document(doc.this)
    contents = _mupdf.pdf_dict_get(
        _mupdf.pdf_lookup_page_obj(pdf, index), _mupdf.PDF_ENUM_NAME_Contents
    )
    if _mupdf.pdf_is_array(contents):
        parts = [_mupdf.pdf_array_get(contents, i) for i in range(_mupdf.pdf_array_len(contents))]
    elif _mupdf.pdf_is_null(contents) and not _mupdf.pdf_is_indirect(contents):
        parts = []
    else:
        parts = [contents]
    held = [_mupdf.pdf_to_num(p) for p in parts if _mupdf.pdf_is_stream(p)]
    return held, len(parts) - len(held)


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
