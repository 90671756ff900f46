"""PDFs carrying active content, made with PyMuPDF the way CAD and Acrobat exports carry it,
and a check that a PDF carries none."""

import re

import pymupdf

from tests.support.pdfs import add_notes_page

SCRIPT = "app.alert('drawing set opened');"


def _new_object(doc: pymupdf.Document, source: str) -> int:
    xref = doc.get_new_xref()
    doc.update_object(xref, source)
    return xref


def scripted_set() -> bytes:
    """A notes sheet with a document JavaScript name tree (two scripts, one in a child
    node, its code in a stream), a JavaScript OpenAction and an embedded file."""
    doc = pymupdf.open()
    add_notes_page(doc)
    code = _new_object(doc, "<<>>")
    doc.update_stream(code, SCRIPT.encode(), new=True)
    first = _new_object(doc, f"<</S/JavaScript/JS {code} 0 R>>")
    second = _new_object(doc, f"<</S/JavaScript/JS({SCRIPT})>>")
    child = _new_object(doc, f"<</Names[(second) {second} 0 R]>>")
    tree = _new_object(doc, f"<</Names[(first) {first} 0 R]/Kids[{child} 0 R]>>")
    catalog = doc.pdf_catalog()
    doc.xref_set_key(catalog, "Names", f"<</JavaScript {tree} 0 R>>")
    opener = _new_object(doc, f"<</S/JavaScript/JS({SCRIPT})>>")
    doc.xref_set_key(catalog, "OpenAction", f"{opener} 0 R")
    doc.embfile_add("title-block.dwg", b"AC1032 not a drawing" * 10)
    return doc.tobytes()


def acted_set() -> bytes:
    """A notes sheet with a page-open script (/AA), a link running a script, a launch
    action behind another link, and a file-attachment annotation."""
    doc = pymupdf.open()
    page = add_notes_page(doc)
    doc.xref_set_key(page.xref, "AA", f"<</O<</S/JavaScript/JS({SCRIPT})>>>>")
    launch = _new_object(doc, "<</S/Launch/F(calc.exe)>>")
    links = [
        _new_object(
            doc, f"<</Type/Annot/Subtype/Link/Rect[40 40 140 60]/A<</S/JavaScript/JS({SCRIPT})>>>>"
        ),
        _new_object(doc, f"<</Type/Annot/Subtype/Link/Rect[40 70 140 90]/A {launch} 0 R>>"),
    ]
    doc.xref_set_key(page.xref, "Annots", "[" + " ".join(f"{x} 0 R" for x in links) + "]")
    page = doc[0]
    page.add_file_annot((300, 300), b"attached notes", "notes.txt")
    return doc.tobytes()


def active_content_left(pdf: bytes) -> list[str]:
    """Every trace of active content in ``pdf``: objects that are script or launch actions,
    script code, embedded or attached files (an attachment's icon may stay, without its
    file), a JavaScript name tree. Empty when clean."""
    found = []
    with pymupdf.open(stream=pdf, filetype="pdf") as doc:
        if doc.embfile_count():
            found.append("embedded files")
        for xref in range(1, doc.xref_length()):
            source = doc.xref_object(xref, compressed=True)
            attached = "/FileAttachment" in source and "/FS" in source
            if attached or re.search(r"/(JavaScript|Launch|JS)\b", source):
                found.append(f"object {xref}: {source[:80]}")
            data = (doc.xref_stream(xref) or b"") if doc.xref_is_stream(xref) else b""
            if SCRIPT.encode() in data:
                found.append(f"object {xref}: script code")
            if "/EmbeddedFile" in source and data:
                found.append(f"object {xref}: an embedded file's content")
    if SCRIPT.encode() in pdf:
        found.append("script code in the file's bytes")
    return found
