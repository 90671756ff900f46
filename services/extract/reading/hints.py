"""The file's own hints for a page: its page label and the titles of the bookmarks that point
at it (Bluebeam and Acrobat sets often name each sheet in their outline). They confirm what a
sheet prints, or break a tie; they never stand in for it.
"""

import functools

import pymupdf
from pymupdf import mupdf

from shared.pdf.sources import open_pdf


@functools.lru_cache(maxsize=4)
def bookmarks_by_page(pdf: bytes) -> dict[int, list[str]]:
    """The outline's titles by the 1-based page they point at, read once per document (as
    long as ``open_pdf`` keeps it open); entries that point nowhere are left out. Call it
    under ``PDF_LOCK``."""
    found: dict[int, list[str]] = {}
    try:
        toc = open_pdf(pdf).get_toc(simple=True)
    except Exception:  # a broken outline is no fault of any page: the hints are only missing
        return found
    for entry in toc:
        _, title, page = entry[:3]
        title = " ".join(str(title).split())
        if page >= 1 and title:
            found.setdefault(page, []).append(title)
    return found


def page_label(page: pymupdf.Page) -> str | None:
    """The page's label when the file defines page labels ("A-101", "iii"), else None."""
    try:
        rules = _label_rules(page.parent)
    except Exception:  # broken label rules, as above
        return None
    start, style, prefix, first = max(
        (r for r in rules if r[0] <= page.number), key=lambda r: r[0], default=(0, "", "", 1)
    )
    if not style:
        return prefix or None
    # PyMuPDF's own alphabetic numbering counts from 0 ("A" is 0); the file's from 1.
    offset = -1 if style in ("a", "A") else 0
    return pymupdf.utils.construct_label(style, prefix, page.number - start + first + offset)


def _label_rules(doc: pymupdf.Document) -> list[tuple[int, str, str, int]]:
    """The page-label rules of the catalog's number tree: (first page, numbering style,
    prefix, first number). The prefix is decoded as a PDF text string (UTF-16 with its byte
    order mark, or PDFDocEncoding), which PyMuPDF's ``get_label`` returns undecoded (a hex
    string as "<FEFF…>", a literal with its parentheses and anything after a "/" lost)."""
    pdf = mupdf.pdf_document_from_fz_document(doc.this)
    root = mupdf.pdf_dict_gets(mupdf.pdf_trailer(pdf), "Root")
    tree = mupdf.pdf_dict_gets(root, "PageLabels")
    rules: list[tuple[int, str, str, int]] = []
    nodes, seen = [tree], set()
    while nodes:
        ref = nodes.pop()
        num = mupdf.pdf_to_num(ref)  # 0 for a direct node, which cannot recur
        if num in seen:
            continue  # a kid already walked: the tree is cyclic
        if num:
            seen.add(num)
        node = mupdf.pdf_resolve_indirect(ref)
        if not mupdf.pdf_is_dict(node):
            continue
        kids = mupdf.pdf_dict_gets(node, "Kids")
        nodes += [mupdf.pdf_array_get(kids, i) for i in range(mupdf.pdf_array_len(kids))]
        nums = mupdf.pdf_dict_gets(node, "Nums")
        for i in range(0, mupdf.pdf_array_len(nums) - 1, 2):
            rule = mupdf.pdf_resolve_indirect(mupdf.pdf_array_get(nums, i + 1))
            first = mupdf.pdf_dict_gets(rule, "St")
            rules.append(
                (
                    mupdf.pdf_to_int(mupdf.pdf_array_get(nums, i)),
                    mupdf.pdf_to_name(mupdf.pdf_dict_gets(rule, "S")),
                    mupdf.pdf_to_text_string(mupdf.pdf_dict_gets(rule, "P")),
                    mupdf.pdf_to_int(first) if mupdf.pdf_is_int(first) else 1,
                )
            )
    return rules
