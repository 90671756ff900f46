"""The one normaliser (how texts are compared), the one digit-run function, and the unit of
coverage (which lines a page is measured by)."""

import re
import unicodedata
from collections.abc import Sequence

# --- one normaliser -----------------------------------------------------------------------

# Unicode hyphens, dashes and the minus sign: printed as such, compared as "-".
DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"
_DASH_TABLE = str.maketrans(dict.fromkeys(DASHES, "-"))
_ALNUM_RUN = re.compile(r"[^\W_]+")
_DIGIT_RUN = re.compile(r"\d+")
# A number grouped in thousands ("1,200", "12,500,000") and a decimal ("3.50", "12.0"),
# standing alone or before a unit ("3.50m"), never inside a token ("A101.10", "W1,200").
_GROUPED = re.compile(r"(?<![\w,])\d{1,3}(?:,\d{3})+(?![\d,])")
_DECIMAL = re.compile(r"(?<![\w.])(\d+)\.(\d+)(?![\d.])")


def fold_dashes(text: str) -> str:
    """The text with every Unicode dash and the minus sign made an ASCII hyphen."""
    return text.translate(_DASH_TABLE)


def normalize(text: str) -> str:
    """The form texts are compared in: compatibility-folded, case-folded runs of letters and
    digits joined by single spaces (``8' - 0" O.C.`` → ``8 0 o c``)."""
    return " ".join(_ALNUM_RUN.findall(unicodedata.normalize("NFKC", text).casefold()))


def squash(text: str) -> str:
    """``normalize`` without the spaces: where words break never decides a match."""
    return normalize(text).replace(" ", "")


def digit_runs(text: str) -> list[str]:
    """The runs of digits in a text, in order (``12'-6 1/2"`` → 12, 6, 1, 2): what a misread
    changes."""
    return _DIGIT_RUN.findall(unicodedata.normalize("NFKC", text))


def plain_numbers(text: str) -> str:
    """The text with its numbers spelled plainly: thousands without their commas ("1,200" →
    "1200") and decimals without trailing zeros ("3.50" → "3.5", "12.0" → "12"), so a value
    written either way is the same number."""
    text = _GROUPED.sub(lambda m: m.group().replace(",", ""), unicodedata.normalize("NFKC", text))
    return _DECIMAL.sub(_plain_decimal, text)


def _plain_decimal(match: re.Match[str]) -> str:
    whole, fraction = match.group(1), match.group(2).rstrip("0")
    return f"{whole}.{fraction}" if fraction else whole


def number_key(run: str) -> str:
    """A digit-run as the number it is ("02" is 2), without converting unbounded digits."""
    return run.lstrip("0") or "0"


def numbers_printed(text: str) -> set[str]:
    """Every number a text prints (``number_key`` of each digit-run), as printed and as
    spelled plainly: what may vouch for a value anywhere in it."""
    return {number_key(r) for r in digit_runs(text) + digit_runs(plain_numbers(text))}


def mask_digits(text: str) -> str:
    """The text with each digit-run replaced by "#": its layout, whatever the numbers."""
    return _DIGIT_RUN.sub("#", text)


def alnum_count(text: str) -> int:
    """Letters and digits in a text: punctuation and whitespace carry no content."""
    return sum(map(str.isalnum, text))


# --- the unit of coverage -----------------------------------------------------------------

# A line shorter than this (whitespace folded) is a tag or a tick, not text a page is
# measured by.
MIN_LINE_CHARS = 12
# A line made only of numbers, feet/inch marks, fractions and an elevation or top-of prefix
# is a dimension tick: it says nothing an object must carry.
_TICK_PREFIX = re.compile(r"^(?:(?:EL(?:EV)?|[TB]\.\s?O\.(?:\s?[A-Z]{1,3}\.?)?)\.?\s*:?\s*)+", re.I)
_TICK_BODY = re.compile(r"^[\d\s'\"′″‘’“”\-/.,+±=@()xX]*$")


def is_dimension_tick(text: str) -> bool:
    """True for a line of only dimensions/elevations (``15"``, ``8' - 0"``, ``EL. 100'-6"``)."""
    body = _TICK_PREFIX.sub("", fold_dashes(" ".join(text.split())), count=1)
    return bool(_TICK_BODY.match(body))


def is_meaningful(text: str) -> bool:
    """Whether a line is one the page's coverage is measured by: long enough, not a tick."""
    folded = " ".join(text.split())
    return (
        len(folded) >= MIN_LINE_CHARS and not is_dimension_tick(folded) and bool(normalize(folded))
    )


def is_content(text: str) -> bool:
    """Whether a line carries anything at all (a short tag counts; a lone mark does not)."""
    return alnum_count(text) > 0 and not is_dimension_tick(text)


def coverage_units(line_texts: Sequence[str]) -> list[int]:
    """The lines a page's coverage is measured by, and the fallback rung cites: its
    meaningful lines, or, on a page of nothing but short tags, every line with content (so
    a sheet of tags is never dark either)."""
    units = [i for i, text in enumerate(line_texts) if is_meaningful(text)]
    return units or [i for i, text in enumerate(line_texts) if is_content(text)]
