"""Who decides a sheet's number and title: the one place their sources are weighed (pure).

A page's identity has up to four sources, each stage knowing some of them:

1. **the page's reading** (``SheetReading``: its title block, from its text layer or OCR
   words), read once in extract; the ground every other source stands on;
2. **the extraction's header** (a model's: the vision pass, text structuring; offline, rung
   1's own reading): its number wins where it names one (verify holds a model's number to
   the printed one), its other fields where the reading has none; the title block's own
   fields (revision, date, scale, ...) fill what it left out;
3. **the set's decision** (``shared.sheet.decide`` through ``reconcile``: the title block as
   the set's template, the numbering scheme, a bookmark, the drawing index), always a number
   the page prints; the index's title only where the page has none;
4. **a person's correction**, which wins over everything; a new number brings its
   discipline unless the person gave one.

Each stage calls it with what it knows: extract with the reading, coverage with the rungs'
header too, the report with the header decided so far and the set's decision or a person's
values. Deciding again from a decided header changes nothing (the function is idempotent in
``header``), so a later stage passes the page's header as it stands; no stage weighs sources
of its own.
"""

from collections.abc import Mapping

from shared.sheet import discipline_for
from shared.sheet.header import SheetHeader, sheet_header
from shared.sheet.reading import FIELD_NAMES, SheetReading
from shared.sheet.sheet_set import Correction

# Sources under which a header's number is the page's own printed reading.
PAGE_SOURCES = ("text_layer", "ocr")


def decide_identity(
    reading: SheetReading | None,
    *,
    header: SheetHeader | None = None,
    set_choice: Correction | None = None,
    person: Mapping[str, str | None] | None = None,
) -> SheetHeader:
    """The page's header from what is known of it, each field with the source that won (see
    the module's order); ``header`` is the extraction's, or the one decided so far."""
    decided = sheet_header(reading)
    if header is not None:
        decided = _with_extraction(header, decided)
    if set_choice is not None:
        decided = _with_set(decided, set_choice)
    if person:
        decided = _with_person(decided, person)
    return decided


def merge_header(base: SheetHeader, later: SheetHeader) -> SheetHeader:
    """Fill the fields ``base`` left empty (None or blank) from ``later``; never overwrite.
    ``sheet_number_source`` travels with the sheet number it describes."""
    filled = {
        field: getattr(later, field)
        for field in SheetHeader.model_fields
        if field != "sheet_number_source"
        and _blank(getattr(base, field))
        and not _blank(getattr(later, field))
    }
    if "sheet_number" in filled:
        filled["sheet_number_source"] = later.sheet_number_source
    return base.model_copy(update=filled)


def read_from_page(header: SheetHeader) -> bool:
    """Whether the header's number is the page's own reading, no other source's."""
    return header.sheet_number_source in PAGE_SOURCES


def claimed_number(header: SheetHeader) -> str | None:
    """The number another source (a model, the set, a person) claims for the page, which the
    page's own printed number can contradict; None when the number is the page's reading."""
    return None if header.sheet_number_source == "text_layer" else header.sheet_number


def title_from_template(choice: Correction | None, own_title: str | None) -> bool:
    """Whether the page's title is only what the set's title-block template read where it
    puts a title: the template decided the page and the page's own reading had no title."""
    return (
        choice is not None
        and choice.basis == "set_template"
        and bool(choice.sheet_title)
        and not own_title
    )


def _with_extraction(extracted: SheetHeader, read: SheetHeader) -> SheetHeader:
    if extracted.sheet_number:
        named = extracted.model_copy(
            update={"sheet_number_source": extracted.sheet_number_source or "extraction"}
        )
        fields = read.model_dump(include=set(FIELD_NAMES))
        return merge_header(named, SheetHeader(**fields))
    return merge_header(extracted.model_copy(update={"sheet_number_source": None}), read)


def _with_set(header: SheetHeader, choice: Correction) -> SheetHeader:
    # The index lists a title the page may print otherwise: the page's own wins there. The
    # other bases read the title with the number, from the page itself.
    if choice.basis == "drawing_index":
        title = header.sheet_title or choice.sheet_title
    else:
        title = choice.sheet_title or header.sheet_title
    # A title the set vouched for leaves the page's own number, and its source, as read.
    source = header.sheet_number_source if choice.was == choice.now else choice.basis
    return header.model_copy(
        update={"sheet_number": choice.now, "sheet_title": title, "sheet_number_source": source}
    )


def _with_person(header: SheetHeader, values: Mapping[str, str | None]) -> SheetHeader:
    update = {k: v for k, v in values.items() if k in SheetHeader.model_fields}
    if "sheet_number" in values:
        update["sheet_number_source"] = "person"
        if "discipline" not in values:
            update["discipline"] = discipline_for(values["sheet_number"] or "")
    return header.model_copy(update=update)


def _blank(value: str | None) -> bool:
    return value is None or not value.strip()
