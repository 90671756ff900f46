"""Cross-references printed on a sheet: the sheets it sends a reader to.

The forms drawings use: a detail over its sheet ("2/S301", "A/A-501"), "SEE SHEET A-501",
"REFER TO DWG S-101", "DETAIL 3 ON S-502", "SEE A-501". What is referred to must have a
sheet number's shape: "SEE NOTE 3" or "SEE 1/2" name no sheet.
"""

import re
from collections.abc import Iterator

from shared.pagetext import TextLayer, fold_dashes
from shared.sheet.tokens import is_route_name, is_sheet_id

_TARGET = r"(?P<sheet>[A-Z]{1,4}-?\d[A-Z0-9]*(?:[-.][A-Z0-9]+)*)"
_FORMS = [
    # a detail or section mark over its sheet: 2/S301, A/A-501 (W/ is "with")
    re.compile(r"(?<![\w/.])(?:\d{1,3}|[A-VX-Z])\s?/\s?" + _TARGET + r"(?![\w/])"),
    # see / refer to sheet or drawing X
    re.compile(
        r"\b(?:SEE|REFER\s+TO|REF\.?|PER|ON)\s+(?:SHEETS?|SHTS?\.?|DWGS?\.?|DRAWINGS?)\s+"
        + _TARGET
        + r"(?![\w/])"
    ),
    # detail / section / elevation N on (sheet) X
    re.compile(
        r"\b(?:DETAILS?|DET\.?|SECTIONS?|SECT\.?|ELEVATIONS?|ELEV\.?)\s+\w{1,3}\s+ON\s+"
        r"(?:SHEET\s+|SHT\.?\s+|DWG\.?\s+)?" + _TARGET + r"(?![\w/])"
    ),
    # see X
    re.compile(r"\bSEE\s+" + _TARGET + r"(?![\w/])"),
]


def references(layer: TextLayer) -> Iterator[tuple[str, str]]:
    """(sheet number as printed, the line it is printed in) for each reference on the page."""
    for text in layer.line_texts:
        folded = fold_dashes(text).upper()
        seen: set[tuple[int, int]] = set()
        for form in _FORMS:
            for match in form.finditer(folded):
                span = match.span("sheet")
                target = match.group("sheet").rstrip(".")
                if span in seen or not is_sheet_id(target) or is_route_name(target):
                    continue
                seen.add(span)
                yield text[span[0] : span[0] + len(target)], text
