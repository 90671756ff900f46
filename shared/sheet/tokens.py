"""What a sheet number looks like, and what only looks like one.

A sheet number is one whole token: a designator and a sequence (``A101``, ``S-201``,
``A101.01``, ``ST01.B``, ``AB12-CD01``), up to long ISO 19650-style codes
(``P01-B02-ARC-00-XX-DR-A-10050``). Tokens are compared with Unicode dashes folded, case,
separators and leading zeros ignored (``E-2`` is ``E-02``), and reported as printed.
"""

import re

from shared.pagetext import fold_dashes

_STRIP = "()[]{},;:'\"*"
# An ASCII designator (1-6 capitals), an optional separator, then a sequence that starts
# with a digit; any further groups of letters and digits joined by - . or _.
_SHEET_ID = re.compile(
    r"[A-Z]{1,6}[-._]?\d[A-Za-z0-9]*(?:[-._][A-Za-z0-9]+)*"
    # ISO 19650: project, originator, volume, level, type, role, number in fields
    r"|(?=[A-Z0-9_-]*\d)(?=[A-Z0-9_-]*[A-Z])[A-Z0-9]{2,8}(?:[-_][A-Z0-9]{1,8}){4,}"
)
# What a label vouches for: any whole token of letters and digits in groups.
_LABELLED = re.compile(r"[^\W_]+(?:[-._][^\W_]+)*")
# Digit-X-digit is a member or lumber size (W12X26, HSS6X6X1/4, L4X4, 2X6), never a sheet.
_MEMBER_MARK = re.compile(r"\d\s*[xX×]\s*\d")
_DATE = re.compile(r"\d{1,4}[-./]\d{1,2}[-./]\d{1,4}")
# Dotted section numbers a date never prints: a one-digit middle and a short tail ("5.1.00").
_SECTION = re.compile(r"\d{1,3}\.\d\.\d{1,2}")
# Route and road names a highway set prints large: I-90, SR 520, US-101, NB520.
_ROUTE = re.compile(r"(?:I|IH|SR|US|NB|SB|EB|WB|CR|SH|HWY|RT|RTE|STH|FM|RM)-?\d{1,4}[A-Z]?")
# Characters a sheet number never holds: references (2/S301), scales, stations (12+50),
# paths of model files, notes (#4@12).
_FOREIGN = set("/\\=#@+:'\"&%$!?<>|~")
_FILE_SUFFIX = re.compile(r"\.(?:dwg|dxf|rvt|pdf|dgn|nwd|ifc|png|jpe?g|tif)$", re.IGNORECASE)
# Words that fill a number field before a number exists, and pieces of a label split over
# lines ("SHEET" over "NO.").
_PLACEHOLDERS = frozenset(
    {"TBD", "TBC", "TBA", "NA", "NONE", "XX", "XXX", "NTS"}
    | {"SHEET", "SHEETS", "SHT", "DWG", "DRAWING", "NO", "NR", "NUM", "NUMBER", "OF", "TOTAL"}
)
# A title glued to its number by a dash: "A101.01–FLOOR" reads as the number "A101.01".
_GLUED_TITLE = re.compile(r"^(?P<number>.*?\d[^\s]*?)\s*[-\u2010-\u2015\u2212]\s*[A-Za-z]{3,}$")
_LEADING_ZEROS = re.compile(r"(?<!\d)0+(?=\d)")


def printed_token(text: str) -> str:
    """A token as printed, without the brackets and punctuation around it."""
    token = text.strip().strip(_STRIP).strip()
    return token.rstrip(".") if token.count(".") == 1 and token.endswith(".") else token


def clean_token(text: str) -> str:
    """A token as it is tested: ``printed_token`` with its dashes made ASCII."""
    return fold_dashes(printed_token(text))


def cut_glued_title(token: str) -> str:
    """The number of a token whose title was glued on by a dash (``A101.01–FLOOR``)."""
    match = _GLUED_TITLE.match(token)
    return match.group("number") if match else token


def sheet_key(number: str) -> str:
    """The form sheet numbers are compared in: dashes, spaces and underscores dropped, case
    folded, leading zeros of each digit run dropped (``E-02``, ``E‐2`` and ``e2`` are one)."""
    folded = re.sub(r"[\s_-]+", "", fold_dashes(number)).upper()
    return _LEADING_ZEROS.sub("", folded)


def _foreign(token: str) -> bool:
    return (
        any(ch in _FOREIGN for ch in token)
        or bool(_MEMBER_MARK.search(token))
        or bool(_FILE_SUFFIX.search(token))
        or (bool(_DATE.fullmatch(token)) and not _SECTION.fullmatch(token))
    )


def is_sheet_id(text: str) -> bool:
    """True for a token shaped like a sheet number on its own, with no label to vouch for
    it: capitals then a sequence with digits, not a date, member size, scale, reference,
    station or file name."""
    token = clean_token(text)
    if len(token) > 40 or _foreign(token):
        return False
    return bool(_SHEET_ID.fullmatch(token))


def is_route_name(token: str) -> bool:
    """A road or route name (I-90, SR-520, NB520): never a sheet number without a label."""
    return bool(_ROUTE.fullmatch(clean_token(token).upper()))


def is_labelled_value(text: str) -> bool:
    """Whether a token can be the value of a sheet-number label: one whole token of letters
    and digits (a bare count "3", "COV-S", "A-101"), never a date, scale, reference or a
    placeholder such as TBD."""
    token = clean_token(text)
    if not token or len(token) > 40 or _foreign(token) or not _LABELLED.fullmatch(token):
        return False
    if token.upper().replace("-", "").replace(".", "") in _PLACEHOLDERS:
        return False
    if any(ch.isdigit() for ch in token):
        # A long bare number is a project or job number, not a sheet; digits in groups
        # ("5.1.00", "12-04") are a sheet's.
        return not token.isdigit() or len(token) <= 3
    # Letters only: a short code in capitals (COV-S, SITE), not a word of a sentence.
    return token.isupper() and len(token.replace("-", "").replace(".", "")) <= 8


# --- discipline (National CAD Standard) ----------------------------------------------------

_DISCIPLINES = {
    "G": "general",
    "H": "hazardous materials",
    "V": "survey",
    "B": "geotechnical",
    "W": "civil works",
    "C": "civil",
    "L": "landscape",
    "S": "structural",
    "A": "architectural",
    "I": "interiors",
    "Q": "equipment",
    "F": "fire protection",
    "P": "plumbing",
    "D": "process",
    "M": "mechanical",
    "E": "electrical",
    "T": "telecommunications",
    "R": "resource",
    "X": "other",
    "Z": "contractor/shop drawings",
    "O": "operations",
}
# Two-letter and spelled-out designators whose meaning is not just their first letter's.
_DESIGNATORS = {
    "FP": "fire protection",
    "FA": "fire alarm",
    "ID": "interiors",
    "LS": "life safety",
    "CS": "general",
    "SK": None,  # sketch: any discipline
    "PR": None,  # plan reference: an agency's numbering, not a discipline
    "ARCH": "architectural",
    "STR": "structural",
    "STRUCT": "structural",
    "MECH": "mechanical",
    "ELEC": "electrical",
    "PLMB": "plumbing",
    "PLUMB": "plumbing",
    "CIV": "civil",
    "LAND": "landscape",
}


def designator(sheet_number: str) -> str:
    """The letters a sheet number starts with (its discipline designator), in capitals."""
    letters = re.match(r"[A-Z]+", clean_token(sheet_number).upper())
    return letters.group() if letters else ""


def discipline_for(sheet_number: str | None) -> str | None:
    """The discipline a sheet number's designator names (National CAD Standard), in words."""
    if not sheet_number:
        return None
    letters = designator(sheet_number)
    if letters in _DESIGNATORS:
        return _DESIGNATORS[letters]
    if 1 <= len(letters) <= 2:
        # NCS: a discipline letter, then an optional modifier (AD demolition, EP power …).
        return _DISCIPLINES.get(letters[0])
    return None
