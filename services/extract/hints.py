"""The file's own hints for a page: its page label and the titles of the bookmarks that point
at it (Bluebeam and Acrobat sets often name each sheet in their outline). They confirm what a
sheet prints, or break a tie; they never stand in for it.
"""

import functools

import pymupdf

from shared.sources import open_pdf


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
        return page.get_label() or None
    except Exception:  # broken label rules, as above
        return None
