"""Write ``examples/drawing-set.pdf``: a small, realistic drawing set to run sheetflow on.

Six 36x24 inch sheets: a cover with the sheet index and general notes (G001),
a floor plan with room tags, walls, dimensions, door tags and a detail
reference (A101), a door schedule (A601), structural general notes (S001), a
scanned elevation sheet with no text layer (A201), and a blank page. Each
sheet carries a title block. The output is byte-for-byte deterministic.

Run: ``python examples/make_examples.py [OUT]``.
"""

import sys
import textwrap
from pathlib import Path

import pymupdf

WIDTH, HEIGHT = 2592, 1728  # 36 x 24 in at 72 pt/in
MARGIN = 36
TITLE_BLOCK = pymupdf.Rect(2196, 1236, WIDTH - MARGIN, HEIGHT - MARGIN)
PROJECT = "RIVERSIDE COMMUNITY CENTER"
PROJECT_NO = "25177"
DATE = "05.29.26"
FIXED_DATE = "D:20260529090000Z"
REGULAR, BOLD = "helv", "hebo"
OUT = Path(__file__).with_name("drawing-set.pdf")

SHEETS = [
    ("G001", "COVER SHEET AND INDEX", "NTS"),
    ("A101", "FLOOR PLAN - LEVEL 1", '1/4" = 1\'-0"'),
    ("A601", "DOOR SCHEDULE", "NTS"),
    ("S001", "STRUCTURAL GENERAL NOTES", "NTS"),
    ("A201", "EXTERIOR ELEVATIONS", '1/8" = 1\'-0"'),
]

GENERAL_NOTES = [
    (
        "ALL WORK SHALL COMPLY WITH THE 2024 INTERNATIONAL BUILDING CODE AS AMENDED BY THE LOCAL "
        "JURISDICTION."
    ),
    "DIMENSIONS ARE TO FACE OF STUD UNLESS NOTED OTHERWISE. DO NOT SCALE DRAWINGS.",
    (
        "CONTRACTOR SHALL VERIFY ALL EXISTING CONDITIONS BEFORE STARTING WORK AND REPORT ANY "
        "DISCREPANCIES TO THE ARCHITECT."
    ),
    "PROVIDE FIRE BLOCKING AT ALL CONCEALED SPACES PER IBC SECTION 718.",
    'ALL GYPSUM BOARD AT WET AREAS SHALL BE MOISTURE RESISTANT TYPE X, 5/8" THICK.',
]

STRUCTURAL_NOTES = [
    "DESIGN LOADS: ROOF LIVE LOAD 20 PSF, FLOOR LIVE LOAD 50 PSF, PARTITION ALLOWANCE 15 PSF.",
    "BASIC WIND SPEED 115 MPH (ULTIMATE), EXPOSURE C, RISK CATEGORY II.",
    "SEISMIC DESIGN CATEGORY C, SITE CLASS D, SDS = 0.42, SD1 = 0.21.",
    "ALLOWABLE SOIL BEARING PRESSURE 2500 PSF PER GEOTECHNICAL REPORT NO. 24-118 DATED 03.14.26.",
    (
        "CONCRETE SHALL HAVE A MINIMUM 28-DAY COMPRESSIVE STRENGTH OF 3000 PSI FOR FOOTINGS AND "
        "4000 PSI FOR SLABS ON GRADE."
    ),
    "REINFORCING STEEL SHALL BE ASTM A615 GRADE 60, DETAILED PER ACI 315.",
    "FRAMING LUMBER SHALL BE DOUGLAS FIR-LARCH NO. 2 OR BETTER, 19% MAXIMUM MOISTURE CONTENT.",
    "PROVIDE (5) 2X6 STUD PACK AT EACH END OF HEADER UNLESS NOTED OTHERWISE ON PLAN.",
    'ALL HEADERS IN BEARING WALLS SHALL BE (2) 2X10 MINIMUM WITH 1/2" PLYWOOD FLITCH.',
    'SHEATHING: 7/16" OSB WITH 8D NAILS AT 6" O.C. AT PANEL EDGES AND 12" O.C. IN THE FIELD.',
    (
        'ANCHOR BOLTS SHALL BE 5/8" DIAMETER AT 48" O.C. MAXIMUM, 12" FROM EACH END OF PLATE, '
        'WITH 7" MINIMUM EMBEDMENT.'
    ),
    "HOLDOWNS SHALL BE SIMPSON HDU5 AT EACH END OF SHEAR WALLS, SEE 2/S301.",
    "STRUCTURAL STEEL WIDE FLANGE SHAPES SHALL BE ASTM A992, FY = 50 KSI.",
    "WELDING SHALL BE PERFORMED BY AWS CERTIFIED WELDERS USING E70XX ELECTRODES.",
    (
        "CONTRACTOR SHALL SUBMIT SHOP DRAWINGS FOR TRUSSES AND STEEL TO THE ENGINEER FOR REVIEW "
        "PRIOR TO FABRICATION."
    ),
]

DOORS = [
    # MARK, WIDTH, HEIGHT, THICKNESS, TYPE, MATERIAL, FRAME, HARDWARE, FIRE RATING, REMARKS
    ("101A", "3'-0\"", "7'-0\"", '1-3/4"', "A", "HM", "HM", "1", "-", "MAIN ENTRY, CLOSER"),
    ("101B", "3'-0\"", "7'-0\"", '1-3/4"', "B", "WD", "HM", "2", "-", ""),
    ("102A", "3'-0\"", "7'-0\"", '1-3/4"', "B", "WD", "HM", "2", "-", "VISION LITE"),
    ("103A", "2'-10\"", "7'-0\"", '1-3/4"', "B", "WD", "HM", "3", "-", ""),
    ("104A", "3'-0\"", "7'-0\"", '1-3/4"', "C", "HM", "HM", "4", "20 MIN", "CORRIDOR"),
    ("105A", "3'-0\"", "7'-0\"", '1-3/4"', "B", "WD", "HM", "3", "-", ""),
    ("106A", "6'-0\"", "7'-0\"", '1-3/4"', "D", "HM", "HM", "5", "-", "PAIR, PANIC HARDWARE"),
    ("107A", "3'-0\"", "7'-0\"", '1-3/4"', "B", "WD", "HM", "6", "-", "PRIVACY LOCK"),
]


def make_drawing_set() -> pymupdf.Document:
    """Build the set in memory: cover, plan, schedule, notes, scanned sheet, blank page."""
    doc = pymupdf.open()
    draw_cover(new_sheet(doc, *SHEETS[0]))
    draw_plan(new_sheet(doc, *SHEETS[1]))
    draw_door_schedule(new_sheet(doc, *SHEETS[2]))
    draw_structural_notes(new_sheet(doc, *SHEETS[3]))
    add_scanned_sheet(doc, *SHEETS[4])
    doc.new_page(width=WIDTH, height=HEIGHT)  # intentionally blank
    doc.set_metadata(
        {
            "title": f"{PROJECT} - CONSTRUCTION DOCUMENTS",
            "author": "sheetflow examples",
            "creator": "examples/make_examples.py",
            "producer": "PyMuPDF",
            "creationDate": FIXED_DATE,
            "modDate": FIXED_DATE,
        }
    )
    return doc


def new_sheet(doc: pymupdf.Document, number: str, title: str, scale: str) -> pymupdf.Page:
    page = doc.new_page(width=WIDTH, height=HEIGHT)
    page.draw_rect(pymupdf.Rect(MARGIN, MARGIN, WIDTH - MARGIN, HEIGHT - MARGIN), width=3)
    draw_title_block(page, number, title, scale)
    return page


def draw_title_block(page: pymupdf.Page, number: str, title: str, scale: str) -> None:
    tb = TITLE_BLOCK
    page.draw_rect(tb, width=2.5)
    x = tb.x0 + 14
    text(page, x, tb.y0 + 30, "NORTHWIND ARCHITECTS", 16, BOLD)
    text(page, x, tb.y0 + 50, "410 HARBOR STREET, SUITE 200  PORTLAND, OR 97204", 9)
    rows = [(tb.y0 + 70, "PROJECT", PROJECT, 15), (tb.y0 + 150, "SHEET TITLE", title, 18)]
    for y, label, value, size in rows:
        page.draw_line((tb.x0, y), (tb.x1, y), width=1.2)
        text(page, x, y + 16, label, 8)
        for i, line in enumerate(textwrap.wrap(value, 26)):
            text(page, x, y + 40 + i * (size + 4), line, size, BOLD)
    y = tb.y0 + 250
    page.draw_line((tb.x0, y), (tb.x1, y), width=1.2)
    column = (tb.x1 - tb.x0) / 3
    for i, (label, value) in enumerate(
        [("DATE", DATE), ("PROJECT NO.", PROJECT_NO), ("SCALE", scale)]
    ):
        cx = tb.x0 + i * column
        if i:
            page.draw_line((cx, y), (cx, y + 60), width=1)
        text(page, cx + 10, y + 16, label, 8)
        text(page, cx + 10, y + 42, value, 13, BOLD)
    y += 60
    page.draw_line((tb.x0, y), (tb.x1, y), width=1.2)
    text(page, x, y + 18, "SHEET NUMBER", 8)
    text(page, x, y + 100, number, 64, BOLD)


def draw_cover(page: pymupdf.Page) -> None:
    text(page, 120, 200, PROJECT, 54, BOLD)
    text(page, 120, 250, "CONSTRUCTION DOCUMENTS - ISSUED FOR PERMIT " + DATE, 24)
    text(page, 120, 290, "1200 RIVER ROAD, PORTLAND, OREGON", 20)

    text(page, 120, 420, "SHEET INDEX", 24, BOLD)
    y = 440
    page.draw_line((120, y), (900, y), width=1.5)
    for number, title, _ in SHEETS:
        y += 40
        text(page, 130, y, number, 18, BOLD)
        text(page, 290, y, title, 18)
        page.draw_line((120, y + 12), (900, y + 12), width=0.5)

    text(page, 1100, 420, "GENERAL NOTES", 24, BOLD)
    numbered_notes(page, 1100, 470, GENERAL_NOTES, width=62, size=17)

    text(page, 120, 850, "ABBREVIATIONS", 24, BOLD)
    abbreviations = [
        ("A.F.F.", "ABOVE FINISHED FLOOR"),
        ("GYP. BD.", "GYPSUM BOARD"),
        ("HM", "HOLLOW METAL"),
        ("N.I.C.", "NOT IN CONTRACT"),
        ("O.C.", "ON CENTER"),
        ("TYP.", "TYPICAL"),
        ("U.N.O.", "UNLESS NOTED OTHERWISE"),
        ("WD", "WOOD"),
    ]
    for i, (short, long) in enumerate(abbreviations):
        text(page, 130, 900 + i * 32, short, 16, BOLD)
        text(page, 290, 900 + i * 32, long, 16)


def draw_plan(page: pymupdf.Page) -> None:
    # Building shell and partitions: a double-loaded corridor with six rooms.
    x0, y0, x1, y1 = 300, 300, 1900, 1200
    page.draw_rect(pymupdf.Rect(x0, y0, x1, y1), width=10)
    corridor_top, corridor_bottom = 680, 820
    for y in (corridor_top, corridor_bottom):
        page.draw_line((x0, y), (x1, y), width=5)
    columns = [x0, 800, 1300, x1]
    for x in columns[1:-1]:
        page.draw_line((x, y0), (x, corridor_top), width=5)
        page.draw_line((x, corridor_bottom), (x, y1), width=5)

    rooms = [
        ("OFFICE", "101"),
        ("CONF.", "102"),
        ("OFFICE", "103"),
        ("STORAGE", "104"),
        ("MULTIPURPOSE", "106"),
        ("RESTROOM", "107"),
    ]
    for i, (name, number) in enumerate(rooms):
        left, right = columns[i % 3], columns[i % 3 + 1]
        top, bottom = (y0, corridor_top) if i < 3 else (corridor_bottom, y1)
        room_tag(page, (left + right) / 2, (top + bottom) / 2, name, number)
    room_tag(page, 1100, (corridor_top + corridor_bottom) / 2, "CORRIDOR", "105")

    # Door openings along the corridor, each with its tag.
    doors = [
        (550, corridor_top, "101A"),
        (1050, corridor_top, "102A"),
        (1600, corridor_top, "103A"),
        (550, corridor_bottom, "104A"),
        (1050, corridor_bottom, "106A"),
        (1600, corridor_bottom, "107A"),
    ]
    for x, y, mark in doors:
        page.draw_line((x - 18, y), (x + 18, y), width=7, color=(1, 1, 1))
        into_room = -1 if y == corridor_top else 1
        page.draw_line((x - 18, y), (x - 18, y + into_room * 36), width=1.5)
        tag_y = y + into_room * 70
        page.draw_circle((x + 40, tag_y), 22, width=1.2)
        centered(page, x + 40, tag_y + 4, mark, 11)
    page.draw_line((x0 - 5, 750), (x0 + 5, 750), width=12, color=(1, 1, 1))
    page.draw_circle((x0 - 60, 750), 22, width=1.2)
    centered(page, x0 - 60, 754, "101B", 11)

    # Dimension strings above and left of the building.
    dimension_h(page, 240, [(x0, 800, "12'-6\""), (800, 1300, "12'-6\""), (1300, x1, "15'-0\"")])
    dimension_h(page, 190, [(x0, x1, "40'-0\"")])
    dimension_v(
        page,
        240,
        [
            (y0, corridor_top, "9'-6\""),
            (corridor_top, corridor_bottom, "5'-0\""),
            (corridor_bottom, y1, "9'-6\""),
        ],
    )

    # Detail reference bubble pointing at the shear wall end.
    cx, cy = 2050, 520
    page.draw_circle((cx, cy), 38, width=1.5)
    page.draw_line((cx - 38, cy), (cx + 38, cy), width=1)
    centered(page, cx, cy - 10, "2", 20, BOLD)
    centered(page, cx, cy + 26, "S301", 15)
    page.draw_line((cx - 38, cy), (x1 + 6, cy), width=1)
    text(page, 1960, 590, "HOLDOWN AT SHEAR WALL END", 12)

    # Plan notes and the view title.
    text(page, 2000, 700, "PLAN NOTES", 16, BOLD)
    numbered_notes(
        page,
        2000,
        735,
        [
            'ALL INTERIOR PARTITIONS 2X4 AT 16" O.C. U.N.O.',
            "PROVIDE BLOCKING FOR WALL MOUNTED EQUIPMENT.",
            "SEE A601 FOR DOOR SCHEDULE.",
        ],
        width=30,
        size=13,
    )
    page.draw_circle((340, 1330), 30, width=1.5)
    centered(page, 340, 1338, "1", 22, BOLD)
    text(page, 390, 1328, "FLOOR PLAN - LEVEL 1", 26, BOLD)
    page.draw_line((390, 1338), (900, 1338), width=2)
    text(page, 390, 1362, 'SCALE: 1/4" = 1\'-0"', 14)


def draw_door_schedule(page: pymupdf.Page) -> None:
    headers = [
        "MARK",
        "WIDTH",
        "HEIGHT",
        "THK.",
        "TYPE",
        "MATERIAL",
        "FRAME",
        "HARDWARE",
        "FIRE RATING",
        "REMARKS",
    ]
    widths = [110, 120, 120, 110, 80, 130, 100, 130, 140, 330]
    left, top, row_h = 150, 260, 44
    text(page, left, top - 40, "DOOR SCHEDULE", 28, BOLD)
    right = left + sum(widths)
    bottom = top + row_h * (len(DOORS) + 1)
    page.draw_rect(pymupdf.Rect(left, top, right, bottom), width=2)
    for r in range(1, len(DOORS) + 1):
        page.draw_line(
            (left, top + r * row_h), (right, top + r * row_h), width=1.5 if r == 1 else 0.6
        )
    x = left
    for w in widths[:-1]:
        x += w
        page.draw_line((x, top), (x, bottom), width=0.8)
    for r, row in enumerate([headers, *DOORS]):
        x = left
        for w, value in zip(widths, row, strict=True):
            text(
                page,
                x + 10,
                top + r * row_h + 29,
                value,
                14 if r else 13,
                BOLD if r == 0 else REGULAR,
            )
            x += w

    text(page, left, bottom + 70, "DOOR SCHEDULE NOTES", 18, BOLD)
    numbered_notes(
        page,
        left,
        bottom + 105,
        [
            "ALL DOORS TO BE PREPARED FOR HARDWARE PER HARDWARE SETS ON SHEET A602.",
            'PROVIDE 1/2" UNDERCUT AT ALL DOORS UNLESS NOTED OTHERWISE.',
            "RATED DOORS SHALL BEAR A LABEL FROM AN APPROVED TESTING AGENCY.",
        ],
        width=80,
        size=15,
    )


def draw_structural_notes(page: pymupdf.Page) -> None:
    text(page, 120, 150, "STRUCTURAL GENERAL NOTES", 30, BOLD)
    half = 8
    numbered_notes(page, 120, 220, STRUCTURAL_NOTES[:half], width=60, size=17)
    numbered_notes(page, 1150, 220, STRUCTURAL_NOTES[half:], width=60, size=17, first=half + 1)


def add_scanned_sheet(doc: pymupdf.Document, number: str, title: str, scale: str) -> None:
    """A sheet that is only a picture of itself: no text layer, legible for OCR."""
    scratch = pymupdf.open()
    page = scratch.new_page(width=WIDTH, height=HEIGHT)
    page.draw_rect(pymupdf.Rect(MARGIN, MARGIN, WIDTH - MARGIN, HEIGHT - MARGIN), width=3)
    draw_title_block(page, number, title, scale)
    for i, label in enumerate(["NORTH ELEVATION", "SOUTH ELEVATION"]):
        top = 160 + i * 700
        page.draw_rect(pymupdf.Rect(200, top + 200, 1700, top + 520), width=4)  # wall
        page.draw_polyline([(200, top + 200), (950, top + 40), (1700, top + 200)], width=4)  # roof
        for wx in range(310, 1600, 240):
            page.draw_rect(pymupdf.Rect(wx, top + 270, wx + 120, top + 420), width=2)
        text(page, 1760, top + 205, "T.O. PLATE +10'-0\"", 20)
        text(page, 1760, top + 525, "FIN. FLOOR 0'-0\"", 20)
        text(page, 200, top + 590, f"{i + 1}  {label}", 28, BOLD)
        text(page, 200, top + 625, 'SCALE: 1/8" = 1\'-0"', 20)
    for y, target, label in [
        (440, (1650, 440), "FIBER CEMENT LAP SIDING"),
        (250, (1300, 280), "ASPHALT SHINGLE ROOFING"),
    ]:
        page.draw_line(target, (1750, y - 7), width=1)
        text(page, 1760, y, label, 20)
    pix = page.get_pixmap(dpi=100, colorspace=pymupdf.csGRAY)
    scanned = doc.new_page(width=WIDTH, height=HEIGHT)
    scanned.insert_image(scanned.rect, stream=pix.tobytes("jpeg", jpg_quality=70))


def numbered_notes(
    page: pymupdf.Page,
    x: float,
    y: float,
    notes: list[str],
    *,
    width: int,
    size: float,
    first: int = 1,
) -> float:
    """Notes with the number as its own text run, bodies wrapped; returns the next free y."""
    leading = size * 1.35
    for number, note in enumerate(notes, start=first):
        text(page, x, y, f"{number}.", size, BOLD)
        for line in textwrap.wrap(note, width):
            text(page, x + size * 2.2, y, line, size)
            y += leading
        y += leading * 0.5
    return y


def room_tag(page: pymupdf.Page, cx: float, cy: float, name: str, number: str) -> None:
    centered(page, cx, cy - 6, name, 20, BOLD)
    box = pymupdf.Rect(cx - 34, cy + 6, cx + 34, cy + 36)
    page.draw_rect(box, width=1.2)
    centered(page, cx, cy + 28, number, 17)


def dimension_h(page: pymupdf.Page, y: float, spans: list[tuple[float, float, str]]) -> None:
    for a, b, label in spans:
        page.draw_line((a, y), (b, y), width=0.8)
        for x in (a, b):
            page.draw_line((x - 7, y + 7), (x + 7, y - 7), width=1.6)
            page.draw_line((x, y - 12), (x, y + 20), width=0.6)
        centered(page, (a + b) / 2, y - 8, label, 15)


def dimension_v(page: pymupdf.Page, x: float, spans: list[tuple[float, float, str]]) -> None:
    for a, b, label in spans:
        page.draw_line((x, a), (x, b), width=0.8)
        for y in (a, b):
            page.draw_line((x - 7, y + 7), (x + 7, y - 7), width=1.6)
            page.draw_line((x - 12, y), (x + 20, y), width=0.6)
        text(page, x - 70, (a + b) / 2 + 5, label, 15)


def text(
    page: pymupdf.Page, x: float, y: float, value: str, size: float, font: str = REGULAR
) -> None:
    page.insert_text((x, y), value, fontsize=size, fontname=font)


def centered(
    page: pymupdf.Page, cx: float, y: float, value: str, size: float, font: str = REGULAR
) -> None:
    width = pymupdf.get_text_length(value, fontname=font, fontsize=size)
    text(page, cx - width / 2, y, value, size, font)


def main(out: Path = OUT) -> Path:
    doc = make_drawing_set()
    # no_new_id keeps the trailer /ID stable, so the file is byte-for-byte reproducible.
    doc.save(out, garbage=4, deflate=True, no_new_id=True)
    return out


if __name__ == "__main__":
    path = main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)
    print(f"wrote {path} ({path.stat().st_size // 1024} KiB)")
