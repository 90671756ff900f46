"""Normalised forms of what a sheet prints, kept beside the printed ones: a sheet number with
ASCII hyphens (so a search for "100-00" finds a sheet printed "100‐00"), a date in ISO
8601, its day/month order read from the set it belongs to, and a title without the CAD
text codes an export left in it (pure).

A set's dates share one order. A numeric date whose first number is over 12 says day first,
whose second is over 12 says month first; a set whose dates say both, or neither, is
ambiguous: its numeric dates keep their printed form only (a date with a month name, or
written year first, is read whatever the set says).
"""

import re
from collections.abc import Iterable
from datetime import date
from typing import Literal

Order = Literal["day_first", "month_first"]

# Every dash a title block may print for a hyphen (Unicode's hyphens, dashes and minus).
DASHES = str.maketrans(dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe63\uff0d", "-"))
# Two-digit years up to this belong to this century, later ones to the last.
PIVOT_YEAR = 69
MONTHS = {
    name: n
    for n, names in enumerate(
        (
            ("jan", "january", "janv", "januar", "enero", "gennaio"),
            ("feb", "february", "fev", "févr", "februar", "febrero", "febbraio"),
            ("mar", "march", "mars", "märz", "marzo", "maerz"),
            ("apr", "april", "avr", "avril", "abril", "aprile"),
            ("may", "mai", "mayo", "maggio"),
            ("jun", "june", "juin", "juni", "junio", "giugno"),
            ("jul", "july", "juil", "juillet", "juli", "julio", "luglio"),
            ("aug", "august", "août", "aout", "agosto"),
            ("sep", "sept", "september", "septembre", "septiembre", "settembre"),
            ("oct", "october", "octobre", "oktober", "octubre", "ottobre", "okt"),
            ("nov", "november", "novembre", "noviembre"),
            ("dec", "december", "décembre", "decembre", "dezember", "diciembre", "dicembre", "dez"),
        ),
        start=1,
    )
    for name in names
}
NUMERIC = re.compile(
    r"^\s*(\d{1,4})\s*[./\-\u2010-\u2015]\s*(\d{1,2})\s*[./\-\u2010-\u2015]\s*(\d{2,4})\s*$"
)
TOKENS = re.compile(r"\d+|[^\W\d_]+")


def ascii_number(printed: str | None) -> str | None:
    """A sheet number as matched and exported: its dashes as ASCII hyphens, its spaces
    single."""
    if printed is None:
        return None
    return " ".join(printed.translate(DASHES).split())


def date_order(printed: Iterable[str | None]) -> Order | None:
    """The day/month order the set's numeric dates share; None when they do not say, or
    say both."""
    day_first = month_first = False
    for text in printed:
        found = NUMERIC.match(text or "")
        if found is None or len(found.group(1)) == 4:
            continue
        first, second = int(found.group(1)), int(found.group(2))
        day_first |= first > 12 >= second
        month_first |= second > 12 >= first
    if day_first == month_first:
        return None
    return "day_first" if day_first else "month_first"


def iso_date(printed: str | None, order: Order | None) -> str | None:
    """The date in ISO 8601 (``2016-04-12``), its numeric day and month read in ``order``
    (the set's); None when it is no date, or its order is not known and matters."""
    text = (printed or "").strip()
    if not text:
        return None
    found = NUMERIC.match(text)
    if found is not None:
        a, b, c = found.groups()
        if len(a) == 4:
            return _iso(int(a), int(b), int(c))
        first, second, year = int(a), int(b), _year(c)
        if first == second:
            return _iso(year, first, first)
        if order is None:
            return None
        day, month = (first, second) if order == "day_first" else (second, first)
        return _iso(year, month, day)
    # A month by name: "12 APR 2016", "APR 12, 2016", "12-Apr-16".
    tokens = TOKENS.findall(text)
    if len(tokens) != 3 or not tokens[2].isdigit() or len(tokens[2]) not in (2, 4):
        return None
    if tokens[0].isdigit() and not tokens[1].isdigit():
        day, name = tokens[0], tokens[1]
    elif tokens[1].isdigit() and not tokens[0].isdigit():
        name, day = tokens[0], tokens[1]
    else:
        return None
    by_name = MONTHS.get(name.casefold())
    if by_name is None or len(day) > 2:
        return None
    return _iso(_year(tokens[2]), by_name, int(day))


# AutoCAD's text codes, which a CAD export can leave in a text layer as typed ("%%UFLOOR
# PLAN"): underline and overline are formatting, the others stand for a symbol.
_CAD_CODE = re.compile(r"%%([uocdp%]|\d{3})", re.IGNORECASE)
_CAD_SYMBOLS = {"u": "", "o": "", "c": "\u2300", "d": "\u00b0", "p": "\u00b1", "%": "%"}


def without_cad_codes(text: str) -> str:
    """The text as the CAD program prints it: "%%UFLOOR PLAN" → "FLOOR PLAN", "%%C100" →
    "⌀100", "45%%D" → "45°", "%%065" → "A"."""

    def printed(code: re.Match[str]) -> str:
        key = code.group(1).lower()
        return chr(int(key)) if key.isdigit() else _CAD_SYMBOLS[key]

    return _CAD_CODE.sub(printed, text) if "%%" in text else text


def _year(text: str) -> int:
    year = int(text)
    if len(text) <= 2:
        year += 2000 if year <= PIVOT_YEAR else 1900
    return year


def _iso(year: int, month: int, day: int) -> str | None:
    try:
        return date(year, month, day).isoformat()
    except ValueError:
        return None
