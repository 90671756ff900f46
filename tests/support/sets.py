"""A drawing set built to be reconciled: a cover whose drawing index lists a sheet the set
lacks, two sheets sharing a number, a sheet the index does not list, a title that differs
from the index, E-2 in the index against E-02 on the sheet, a sheet numbered only by a word
the index vouches for, and references to sheets in and out of the set."""

import pymupdf

from shared.pagetext import TextLayer
from shared.sheet.header import SheetHeader
from shared.sheet.reading import read_sheet
from shared.sheet.reconcile import PageFacts

W, H = 36 * 72, 24 * 72

INDEX = [
    ("G-001", "COVER SHEET AND INDEX"),
    ("A-101", "FLOOR PLAN"),
    ("A-102", "SECOND FLOOR PLAN"),  # not in the set
    ("A-201", "ELEVATIONS"),
    ("E-2", "LIGHTING PLAN"),  # printed E-02 on its sheet
    ("SITE", "SITE PLAN"),  # a word: a number only because the index says so
]

# (number printed in the title block, its title, its label or None, body lines)
SHEETS = [
    ("G-001", "COVER SHEET AND INDEX", "SHEET NUMBER", []),
    (
        "A-101",
        "FIRST FLOOR PLAN",
        "SHEET NUMBER",
        ["SEE SHEET A-501 FOR WALL TYPES.", "SEE 2/A-201."],
    ),
    ("A-201", "ELEVATIONS", "SHEET NUMBER", ["DETAIL 3 ON S-502 FOR FOOTINGS."]),
    ("A-201", "ELEVATIONS", "SHEET NUMBER", []),
    ("E-02", "Lighting Plan", "SHEET NUMBER", []),
    ("SITE", "SITE PLAN", None, []),
    ("M-101", "MECHANICAL PLAN", "SHEET NUMBER", ["REFER TO DWG M-101 NOTES."]),
]


def indexed_set() -> pymupdf.Document:
    """The set as a PDF of 36 x 24 in sheets, each with a ruled right-hand title strip."""
    doc = pymupdf.open()
    for number, title, label, body in SHEETS:
        page = doc.new_page(width=W, height=H)
        page.draw_rect(pymupdf.Rect(36, 36, W - 36, H - 36), width=2)
        strip = W - 320
        page.draw_line((strip, 36), (strip, H - 36), width=2)
        page.draw_line((strip, H - 400), (W - 36, H - 400), width=1)
        page.draw_line((strip, H - 220), (W - 36, H - 220), width=1)
        page.insert_text((strip + 20, 100), "NORTHWIND ARCHITECTS", fontsize=16)
        page.insert_text((strip + 20, H - 370), "SHEET TITLE", fontsize=8)
        page.insert_text((strip + 20, H - 330), title, fontsize=18)
        if label:
            page.insert_text((strip + 20, H - 190), label, fontsize=8)
        page.insert_text((strip + 20, H - 80), number, fontsize=72)
        for i, line in enumerate(body):
            page.insert_text((120, 300 + 20 * i), line, fontsize=10)
        if number == "G-001":
            page.insert_text((120, 420), "SHEET INDEX", fontsize=24)
            for i, (n, t) in enumerate(INDEX):
                page.insert_text((130, 480 + 40 * i), n, fontsize=18)
                page.insert_text((290, 480 + 40 * i), t, fontsize=18)
    return doc


def facts_of(number: int, sheet: SheetHeader, layer: TextLayer) -> PageFacts:
    """A page's facts as extract reads them and the report receives them."""
    reading = read_sheet(layer)
    return PageFacts(
        number,
        sheet.sheet_number,
        sheet.sheet_title,
        reading.index_rows,
        reading.references,
        reading,
    )
