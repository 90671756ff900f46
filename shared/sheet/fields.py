"""The title block's labelled fields, each as printed with the words it came from: revision,
issue date, project number, project name and scale for the sheet's header (``read_fields``),
and every labelled field with the sheet number, title and who drew, checked, designed or
approved it for the page's reading (``title_block_fields``: its units, the offline objects).

A field is read the way the sheet number is: a label ("REVISION", "Datum", "Maßstab",
"Échelle", "Escala", "Schaal" …) at the start of a line of the title block (for the page's
reading, elsewhere on the sheet too), and its value after it on its line, beside it on its
row, or under it in its column (within its ruled cell, or up to the next label). A value
must have its field's shape (a date is a date, a scale a ratio or a phrase like "AS
INDICATED", a revision a short mark), so an empty field, a placeholder or a neighbour's value
is never taken: a page that prints no value gets none.

The current revision is the revision field's value; without one, the revision table's
filled row farthest from its header row (tables grow away from their header), its mark read
from the revision column or from a "REV A - …" row. A date labelled as a column of the
revision table is a revision's date, not the sheet's.
"""

import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace

from shared.pagetext import Box, Point, TextLayer, Word
from shared.pagetext.units import PageUnits, TitleField, page_units
from shared.sheet.cells import Cell
from shared.sheet.labels import (
    FIELD_KEYS,
    NUMBER_LABELS,
    ONE_WORD_TITLE_LABELS,
    PAIR_LABELS,
    TITLE_LABELS,
    fold,
    is_label,
    label_fields,
    match_label,
)
from shared.sheet.view import Run, View, views
from shared.sheet.vocabulary import (
    DATE_TEMPLATE_DAY,
    DATE_TEMPLATE_MONTH,
    DATE_TEMPLATE_YEAR,
    GRAPHIC_SCALE_WORDS,
    MONTHS,
    NO_SCALE_WORDS,
    SCALE_WORDS,
    Forms,
    forms,
)


def _folded(*texts: str) -> frozenset[str]:
    return frozenset(fold(t) for t in texts)


# A date label alone ("DATE", "Datum", "Fecha" …) names the sheet's date less surely than
# one that says which ("ISSUE DATE", "Ausgabedatum"): a plot stamp's or a signature's date
# is labelled "DATE" too.
_PLAIN_DATES = _folded("date", "datum", "fecha", "data", "dato", "дата", "日付", "日期")
# A job's or a contract's number names the project less surely than a project number.
_JOB_NUMBERS = _folded(
    "job no", "job number", "job #", "contract no", "contract number", "Auftragsnummer"
) | {"auftragsnr"}
# Words that name a project's place or client rather than its name.
_PLACES = FIELD_KEYS["site"] | FIELD_KEYS["legal_owner"]
# A number's and a title's labels as the reader knows them, folded.
_NUMBER_KEYS = _folded(*NUMBER_LABELS - PAIR_LABELS) | FIELD_KEYS["number"]
_TITLE_KEYS = _folded(*TITLE_LABELS - ONE_WORD_TITLE_LABELS) | {
    key for key in FIELD_KEYS["title"] if len(key) >= 9
}

# Label keys (``labels.fold`` form) by field, in order of preference within the field: a
# specific label beats a general one ("ISSUE DATE", "DATE"). The labels are the vocabulary's
# (``shared.sheet.vocabulary``: every language it holds).
LABELS: dict[str, tuple[frozenset[str], ...]] = {
    "revision": (FIELD_KEYS["revision"] | _folded("current revision", "rev #", "revision #"),),
    "issue_date": (FIELD_KEYS["issue_date"] - _PLAIN_DATES, _PLAIN_DATES),
    "project_number": (FIELD_KEYS["project_number"] - _JOB_NUMBERS, _JOB_NUMBERS),
    "project_name": (FIELD_KEYS["project"] - _PLACES,),
    "scale": (FIELD_KEYS["scale"],),
    # The page's reading only: the header takes number and title from ``reader``.
    "sheet_number": (_NUMBER_KEYS,),
    # One-word title labels ("TITLE", "DRAWING") also start prose ("TITLE 24 COMPLIANCE").
    "sheet_title": (_TITLE_KEYS,),
    "drawn_by": (_folded("drawn by"),),
    "checked_by": (_folded("checked by"),),
    "designed_by": (_folded("designed by"),),
    "approved_by": (_folded("approved by"),),
}
HEADER_FIELDS = ("revision", "issue_date", "project_number", "project_name", "scale")
# Labels of the revision table's columns other than its mark and date, in the languages of
# the vocabulary: a row holding one of them beside a revision or date label is the table's
# header row. A mark's and a date's labels alone side by side are a title block's cells
# ("Rév. | Date d'édition | Langue | Feuille" in an ISO 7200 block).
TABLE_COLUMNS = _folded(
    *("DESCRIPTION", "ISSUED FOR", "BY", "APPD", "APPROVED", "CHKD", "CHK", "NO", "REMARKS"),
    *("ISSUED FOR DESCRIPTION", "REASON FOR ISSUE", "REASON", "AMENDMENT", "AMENDMENTS"),
    *("BESCHREIBUNG", "ÄNDERUNG", "ART DER ÄNDERUNG", "GEZ.", "GEPR.", "OBJET", "NATURE"),
    *("MODIFICATION", "DESCRIPCIÓN", "MODIFICACIÓN", "DESCRIZIONE", "DESCRIÇÃO", "OMSCHRIJVING"),
    *("BESKRIVNING", "BESKRIVELSE", "OPIS", "POPIS", "ИЗМЕНЕНИЕ", "改訂内容", "内容", "修改内容"),
    # GOST 2.104's change table: "Изм. | Кол.уч. | Лист | № док. | Подп. | Дата".
    *("КОЛ.УЧ.", "№ ДОК.", "ПОДП."),
)
# The sign-off columns a revision table shares with a title block's row of cells ("DRAWN |
# CHECKED | APPROVED | DATE | SCALE"): beside a date's label they make a table's header only
# with a revision mark's column on the row.
SIGN_OFF_COLUMNS = _folded("BY", "APPD", "APPROVED", "CHKD", "CHK", "GEZ.", "GEPR.", "ПОДП.")
TABLE_ONLY_WORDS = _folded(
    "DESCRIPTION", "BESCHREIBUNG", "OMSCHRIJVING", "DESCRIPCIÓN", "APPD", "CHKD", "ÄNDERUNG"
)
_TABLE_FIELDS = ("revision", "issue_date")
_MAX_LABEL_WORDS = 4
# Words after a label that qualify it ("Scale at ISO A0", "SCALE @ A2:") rather than start
# a value, at most this many.
_QUALIFIER_WORDS = 3
# A value sits at most this many label heights right of its label (or 144 pt), or below it.
REACH_RIGHT = 20
REACH_BELOW = 5
# Column labels of one header row stand at most this many label heights apart.
HEADER_REACH = 20
# A project name's line is at most this long.
NAME_MAX_CHARS = 80
# Revision-table rows more than this many row heights apart belong to another table.
ROW_GAP = 2.5


def _alternatives(vocabulary: Forms) -> str:
    """A vocabulary's forms as one pattern's alternatives, longest first."""
    found = {re.escape(f) for text in vocabulary.values() for f in forms(text)}
    return "|".join(sorted(found, key=len, reverse=True))


# A month by name or abbreviation, in any language the vocabulary holds.
_MONTH = f"(?:{_alternatives(MONTHS)})\\.?"
# A day's date, or a month by name with its year: no other number reads as one.
_DAY_DATES = (
    r"\b(?:\d{1,2}[./-]\d{1,2}[./-](?:\d{4}|\d{2})|\d{4}[./-]\d{1,2}[./-]\d{1,2})\b"
    rf"|\b\d{{1,2}}\.?\s+{_MONTH}\s+\d{{4}}\b"
    rf"|\b{_MONTH}\s+\d{{1,2}},?\s+\d{{4}}\b"
    # "FEBRUARY 2024" (OCR may glue the two: "FEBRUARY2024").
    rf"|\b{_MONTH}\s*\d{{4}}\b"
    # "2023年4月17日", "2020年2月", "令和5年4月1日".
    r"|(?:\b\d{4}|(?:令和|平成|昭和)\s*(?:\d{1,2}|元))\s*年\s*\d{1,2}\s*月(?:\s*\d{1,2}\s*日)?"
)
_DATE = re.compile(
    _DAY_DATES
    # A month and its year: "2020.02", "04/2023", GOST's "12.22".
    + r"|\b\d{4}[./-](?:0?[1-9]|1[0-2])\b(?![./-]\d)|\b(?:0?[1-9]|1[0-2])/\d{4}\b"
    r"|\b(?:0[1-9]|1[0-2])\.\d{2}\b(?![./]\d)",
    re.IGNORECASE,
)
_DAY_DATE = re.compile(_DAY_DATES, re.IGNORECASE)


# An unfilled date field prints its format ("Month Day, Year", "TT.MM.JJJJ"): the field as
# printed, which says the sheet is undated (it has no ISO form), not that nothing is there.
_D, _M, _Y = (
    _alternatives(parts) for parts in (DATE_TEMPLATE_DAY, DATE_TEMPLATE_MONTH, DATE_TEMPLATE_YEAR)
)
_S = r"(?:[./-]|,?\s+)"
_DATE_TEMPLATE = re.compile(
    rf"(?<!\w)(?:(?:{_D}){_S}(?:{_M})|(?:{_M}){_S}(?:{_D})){_S}(?:{_Y})(?!\w)"
    rf"|(?<!\w)(?:{_Y}){_S}(?:{_M}){_S}(?:{_D})(?!\w)",
    re.IGNORECASE,
)
# A numbered detail or section ("3.2.10", "1-2-10") has the shape of a day's date with a
# two-digit year; a date written so with slashes is a date.
_SHORT_YEAR = re.compile(r"\d{1,2}[.-]\d{1,2}[.-]\d{2}")
_MARK = re.compile(r"^(?:[A-Za-z]\d{0,3}|[A-Z]{2}\d{1,3}|\d{1,3}[A-Z]?)$")


def _phrases(vocabulary: Forms) -> str:
    """A vocabulary's phrases as one pattern, their spaces and dots as printed or not."""
    return "|".join(
        sorted(
            (
                r"\.?\s*".join(re.escape(part) for part in re.split(r"[.\s]+", phrase) if part)
                for text in vocabulary.values()
                for phrase in forms(text)
            ),
            key=len,
            reverse=True,
        )
    )


# "NOT TO SCALE", "N.T.S.", "o. M.", "Sans échelle", "ノンスケール".
_NO_SCALE_WORDS = rf"{_phrases(NO_SCALE_WORDS)}|N\.?\s*T\.?\s*S\.?|O\.\s*M\."
_NO_SCALE = re.compile(rf"(?:{_NO_SCALE_WORDS})(?!\w)", re.IGNORECASE)
# The scale field's words in every language ("AS INDICATED", "Siehe Zeichnung", "见图").
_SCALE_WORDS = f"{_phrases(SCALE_WORDS)}|{_NO_SCALE_WORDS}"
# Inches and feet as typed, as typeset (″ ′) or as OCR reads curly quotes (” ’).
_INCH, _FOOT = '["”″]', "['’′]"
# A note that says what the sheet draws is not to scale ("THE ONE-LINE DIAGRAM IS NOT TO
# SCALE."): the sheet's scale, as a line of its own would say it.
_SAID_NOT_TO_SCALE = re.compile(rf"\b(?:is|are)\s+((?:{_NO_SCALE_WORDS})(?!\w))", re.IGNORECASE)
# A graphic scale's heading: some view on the sheet is drawn to scale.
_GRAPHIC_SCALE = re.compile(rf"(?<!\w)(?:{_phrases(GRAPHIC_SCALE_WORDS)})(?!\w)", re.IGNORECASE)
# A profile's two scales: along it, and across it.
_HORIZONTAL = re.compile(r"\s(?:HORIZONTAL|HORIZ\.?|HOR\.?|H\.?)$", re.IGNORECASE)
_VERTICAL = re.compile(r"\s(?:VERTICAL|VERT\.?|V\.?)$", re.IGNORECASE)
NO_SCALE = "no scale"  # the key of every way of saying a drawing has none
_STRAIGHT_MARKS = str.maketrans("”″’′", "\"\"''")


def straight_marks(text: str) -> str:
    """The text with its inch and foot marks straight: one scale however it was set."""
    return text.translate(_STRAIGHT_MARKS)


_SCALE = re.compile(
    rf"(?<![\d:])\d+\s*:\s*\d+(?![\d:])(?!\s*[AP]\.?M)|\d+(?:/\d+)?\s*{_INCH}\s*=\s*\d+(?:\.\d+)?\s*{_FOOT}(?:\s*-\s*\d+(?:\s+\d+/\d+)?\s*{_INCH})?"
    rf"|\d+\s*=\s*\d+\s*{_FOOT}|\d+\s*{_FOOT}\s*=\s*\d+(?:/\d+)?\s*{_INCH}"
    # "1/100", as French, Spanish and Japanese sheets print a ratio (not "1/8\" = 1'-0\"").
    rf"|(?<![\d/])1\s*/\s*\d{{2,4}}(?![\d/\"'”’″′])"
    rf"|^(?:{_SCALE_WORDS})(?!\w)",
    re.IGNORECASE,
)
_PROJECT_NUMBER = re.compile(r"^(?=.*\d)[A-Z0-9][A-Z0-9./_\-\u2010-\u2013()]{2,29}$", re.I)
_SHEET_NUMBER = re.compile(r"^(?=.*\d)[A-Z0-9][A-Z0-9./_\-\u2010-\u2013]{0,39}$", re.I)
# Who drew, checked, designed or approved a sheet: initials or a name, a few words at most.
_PERSON_FIELDS = ("drawn_by", "checked_by", "designed_by", "approved_by")
_PERSON_MAX_WORDS = 4
# Fields whose value is any short text, not a shape of its own.
_NAME_FIELDS = ("project_name", "sheet_title", *_PERSON_FIELDS)


@dataclass(frozen=True)
class Value:
    """A field's value as printed, with the words it came from."""

    text: str
    word_ids: tuple[int, ...]


@dataclass(frozen=True)
class _Label:
    field: str
    rank: int  # its place in the field's label list: lower is more specific
    run: Run
    ids: tuple[int, ...]  # the label's own words
    box: Box
    rest: tuple[int, ...]  # word ids after the label on its line
    in_table_header: bool
    bare: bool  # its inline value follows without a colon ("SCALE 1:100", a view's title)
    line: Run  # the line it was printed on (``run`` is its own part where a line holds two)


def is_scale(text: str) -> bool:
    """Whether a line is nothing but a scale as a scale field prints it ("1:100", "AS
    INDICATED", "Som angivet"): another field's value, never a sheet's title."""
    # The whole line, by any of the forms ("N.T.S." is more than the phrase "N.T.S").
    return _SCALE.fullmatch(text.strip()) is not None


def read_fields(layer: TextLayer) -> dict[str, Value]:
    """The fields the title block prints, by name (``revision``, ``issue_date``,
    ``project_number``, ``project_name``, ``scale``); a field it leaves empty is absent."""
    found: dict[str, tuple[tuple, Value | None]] = {}
    for view in views(layer):
        for label, value in _labelled_values(view):
            if label.field not in HEADER_FIELDS:
                continue
            # A filled field first; then an empty one, which a value printed bare after its
            # label (a view's "SCALE 1:100") never fills: the block leaves it blank.
            strength = 2 if value is not None and label.bare else int(value is None)
            rank = (label.rank, strength, -view.edge_score(label.box))
            if label.field not in found or rank < found[label.field][0]:
                found[label.field] = (rank, value)
        if found.get("revision", (None, None))[1] is None and (mark := _revision_table(view)):
            found["revision"] = ((9, 0, 0.0), mark)
    fields = {name: value for name, (_, value) in found.items() if value is not None}
    if "scale" not in found and (scale := _drawings_scale(layer)):
        fields["scale"] = scale
    return fields


def cell_fields(layer: TextLayer, cells: Iterable[Cell]) -> dict[str, Value]:
    """The header fields of the title block's ruled cells whose label the labels' own
    reading cannot pair with its value: a label turned up its cell's side. Each cell's
    whole value with its field's shape (a date within a seal's text, "Exp. 12/31/24", is
    none). A label under its value is not taken so: a revision or change table's header
    stands under its rows, and a row's date is no sheet's date."""
    view = next(views(layer), None)
    fields: dict[str, Value] = {}
    for cell in cells:
        if view is None or not cell.label or not cell.value_ids:
            continue
        label, value = layer.words[cell.label_ids[0]], layer.words[cell.value_ids[0]]
        if label.dir == value.dir:
            continue
        for name in label_fields(cell.label) & set(HEADER_FIELDS) - set(fields):
            shaped = _shaped(name, view, cell.value_ids)
            if shaped is not None and shaped.text.split() == cell.value.split():
                fields[name] = shaped
    return fields


def unlabelled_date(layer: TextLayer, cell_values: Iterable[Iterable[int]]) -> Value | None:
    """The sheet's date where its title block labels none: the one date that its cells
    (their words given by ``cell_values``: cells whose label names no field) print on a line
    of its own, as a seal's signature or an issue stamp dates a sheet. A date after other
    words ("Exp. 12/31/24", "REV: 2/1/2012") is something else's; two dates give none."""
    inside = {i for ids in cell_values for i in ids}
    return _one_date(layer.words, (tuple(line) for line in layer.lines if line), inside)


def _one_date(
    words: list[Word], lines: Iterable[tuple[int, ...]], inside: set[int]
) -> Value | None:
    """The one date the ``lines`` wholly ``inside`` print alone; None for none or two."""
    dates: dict[str, Value] = {}
    for line in lines:
        if not inside.issuperset(line):
            continue
        text = " ".join(words[i].text for i in line)
        if _DAY_DATE.fullmatch(text) and not _SHORT_YEAR.fullmatch(text):
            dates.setdefault("".join(text.split()).upper(), Value(text, line))
    return next(iter(dates.values())) if len(dates) == 1 else None


def heading_fields(
    layer: TextLayer, title_ids: Iterable[int], number_ids: Iterable[int]
) -> dict[str, Value]:
    """The fields of a sheet counted under its heading, with no title block (a recorded
    map: "FINAL MAP OF …", "SUBDIVISION NO. P19-036", its date, "SHEET 3 OF 10"): what the
    heading's block, from the title down to the count, prints after a field's label on its
    line, and the one date it prints on a line of its own."""
    ids = [*title_ids, *number_ids]
    if not ids:
        return {}
    block = Box.union(layer.words[i].bbox for i in ids)
    inside = {i for i, word in enumerate(layer.words) if block.contains(word.bbox.centre)}
    fields: dict[str, Value] = {}
    for view in views(layer):
        for label in _labels(view):
            if label.field not in HEADER_FIELDS or label.field in fields or not label.rest:
                continue
            if inside.issuperset(label.line.ids) and (
                value := _shaped(label.field, view, label.rest)
            ):
                fields[label.field] = value
    # Rows as each text direction prints them: a heading turned up the sheet's edge, which
    # OCR reads as lines that run into each other.
    rows = (run.ids for view in views(layer) for run in view.aligned)
    if "issue_date" not in fields and (date := _one_date(layer.words, rows, inside)):
        fields["issue_date"] = date
    return fields


def _drawings_scale(layer: TextLayer) -> Value | None:
    """The scale a sheet's drawings print, for a title block with no scale field: a scale
    printed as a line of its own (under a view's title: "1/8\" = 1'-0\"", "NOT TO SCALE")
    or after a label anywhere ("SCALE: 1:50"), where every such scale on the sheet is one
    (a profile's pair, "1\" = 50' HORIZONTAL" over "1\" = 10' VERTICAL", is one); failing
    any, a note saying that what the sheet draws "is not to scale". Views at several scales
    give none: the sheet has no one scale to name; nor does "not to scale" where a graphic
    scale measures some view."""
    printed: dict[str, Value] = {}
    said_so: Value | None = None
    graphic = False
    for view in views(layer):
        lines = _whole_lines(view)
        for ids in lines:
            text = " ".join(view.words[i].text for i in ids)
            graphic = graphic or _GRAPHIC_SCALE.search(text) is not None
            if said := _SAID_NOT_TO_SCALE.search(text):
                words = [view.words[i] for i in ids]
                said_so = said_so or _span(words, said.start(1), said.end(1))
                continue
            # A ratio or "NOT TO SCALE", not "AS SHOWN" (a view's note, not its scale); the
            # cheap test first: most lines hold neither.
            if not (any(ch.isdigit() for ch in text) or _NO_SCALE.match(text)):
                continue
            if not _SCALE.search(text):
                continue
            value: Value | None = Value(text, ids) if is_scale(text) else None
            if value is None and (found := _match([view.words[i].text for i in ids])):
                field, _, n = found
                value = _shaped("scale", view, ids[n:]) if field == "scale" else None
            if value is not None and _HORIZONTAL.search(value.text):
                value = _with_vertical(view, lines, value)
            if value is not None:
                printed.setdefault(_scale_key(value.text), value)
    if graphic and set(printed) <= {NO_SCALE}:
        return None  # "N.T.S." under a vicinity map, and the plans measured by a bar
    if not printed:
        return said_so
    return next(iter(printed.values())) if len(printed) == 1 else None


def _whole_lines(view: View) -> list[tuple[int, ...]]:
    """The view's lines whole, where rules they cross (a profile's grid) part them into
    runs."""
    lines: dict[int, list[int]] = {}
    for run in view.aligned:
        lines.setdefault(run.line_id, []).extend(run.ids)
    return [tuple(ids) for ids in lines.values()]


def _with_vertical(view: View, lines: list[tuple[int, ...]], horizontal: Value) -> Value:
    """A profile's horizontal scale with the vertical one printed on the line under it."""
    box = view.box_of(horizontal.word_ids)
    for ids in lines:
        under = view.box_of(ids)
        gap = under.y0 - box.y1
        if under.overlap_x(box) > 0 and -0.5 * box.height <= gap <= box.height:
            text = " ".join(view.words[i].text for i in ids)
            if _VERTICAL.search(text) and is_scale(_VERTICAL.sub("", text)):
                return Value(f"{horizontal.text}, {text}", (*horizontal.word_ids, *ids))
    return horizontal


def _scale_key(text: str) -> str:
    """One key for a scale however printed: "N.T.S." and "NOT TO SCALE" say the same."""
    if _NO_SCALE.fullmatch(text.strip()):
        return NO_SCALE
    return "".join(straight_marks(text).split()).upper()


def title_block_fields(layer: TextLayer) -> list[TitleField]:
    """Every filled field the title block labels (and any "LABEL: value" elsewhere), in
    reading order of its labels: the label as printed (without its colon), the value, and
    the words of both. ``read_fields`` picks the header's fields from the same labels."""
    found: list[TitleField] = []
    taken: set[int] = set()
    for view in views(layer):
        for label, value in _labelled_values(view, anywhere=True):
            if value is None or label.bare:
                continue  # an empty field; a view's title or prose ("PROJECT / TRUE NORTH")
            ids = (*label.ids, *value.word_ids)
            if taken.intersection(ids):
                continue  # a value an earlier label already has
            taken.update(ids)
            printed = " ".join(view.words[i].text for i in label.ids).rstrip(": ")
            found.append(TitleField(printed, value.text, ids))
    return found


def read_units(layer: TextLayer) -> PageUnits:
    """The page's units with its title block's fields: the reading every stage shows."""
    return page_units(layer, title_block_fields(layer))


# --- labels -------------------------------------------------------------------------------


_KEY_PREFIXES = frozenset(
    key[:n]
    for ranks in LABELS.values()
    for keys in ranks
    for key in keys
    for n in range(1, len(key) + 1)
)
# Signs that label a scale and that folding would drop or take for a word: Japanese
# practice's "S=" ("S=1/100", "Ｓ＝1:50"), DIN's "M." ("M. 1:100"); a bare "M" only before
# its scale ("M 1:50", GOST's Cyrillic "М 1:100") or a colon ("M:"): alone it is a grid
# line's or a detail's mark.
_SCALE_SIGNS = frozenset({"S=", "M."})
_SCALE_LETTERS = frozenset({"M", "\u041c"})
# The vocabulary's fields that are header fields of the same name.
_VOCABULARY_FIELDS = ("revision", "issue_date", "project_number", "scale")


def _match(words: list[str]) -> tuple[str, int, int] | None:
    """The field, label rank and word count of the label a line starts with, or None. A label
    misspelled by one letter ("Masstab", "Revison") counts, after every exact one."""
    if not words:
        return None
    sign = unicodedata.normalize("NFKC", words[0]).upper()
    lettered = sign in _SCALE_LETTERS and is_scale(" ".join(words[1:]))
    if sign in _SCALE_SIGNS or lettered or (sign[:-1] in _SCALE_LETTERS and sign[-1:] == ":"):
        return "scale", 0, 1
    if fold(words[0]) in _KEY_PREFIXES:
        for n in range(min(_MAX_LABEL_WORDS, len(words)), 0, -1):
            key = fold("".join(words[:n]))
            for field, ranks in LABELS.items():
                for rank, keys in enumerate(ranks):
                    if key in keys:
                        return field, rank, n
    # A misspelled label stands as a label does, alone on its line or before a colon: within
    # prose a word one letter from a label is another word ("PROJECTED" is not "PROJECT ID").
    for n in range(min(_MAX_LABEL_WORDS, len(words)), 0, -1):
        if n < len(words) and not words[n - 1].endswith(":"):
            continue
        named = label_fields(" ".join(words[:n]))
        misspelled = next((f for f in _VOCABULARY_FIELDS if f in named), None)
        if misspelled is not None:
            return misspelled, len(LABELS[misspelled]) - 1, n
    return None


def _labels(view: View) -> Iterator[_Label]:
    for run in view.aligned:
        words = [view.words[i].text for i in run.ids]
        found = _match(words)
        if found is None:
            continue
        field, rank, n = found
        # Two cells' labels read as one line ("PROJECT NUMBER: ISSUE DATE:"): each labels
        # its own cell, its value under it, unless the line heads the revision table.
        while (
            (following := _match(words[n:]))
            and words[n - 1].endswith(":") == words[n + following[2] - 1].endswith(":")
            and not (field in _TABLE_FIELDS and _in_table_header(view, run, words[:n]))
        ):
            yield _own_label(view, run, field, rank, run.ids[:n])
            run_ids, words = run.ids[n:], words[n:]
            field, rank, n = following
            run = replace(run, ids=run_ids, box=view.box_of(run_ids), _text=None, _size=None)
        rest = run.ids[n:]
        rest_words = words[n:]
        bare = False
        if rest_words and not words[n - 1].endswith(":"):
            # "Scale at ISO A0", "SCALE @ A2:": qualifiers; otherwise an inline value that
            # must have the field's shape ("REV A - PRELIMINARY REVIEW"), or prose.
            colon = next((k for k, w in enumerate(rest_words) if w.endswith(":")), None)
            if colon is not None and colon < _QUALIFIER_WORDS:
                rest = rest[colon + 1 :]
            elif _shaped(field, view, rest) is None and len(rest_words) > _QUALIFIER_WORDS:
                continue
            elif _shaped(field, view, rest) is None:
                rest = ()
            else:
                bare = True
        box = view.box_of(run.ids[:n])
        # Only a revision or date label can head a revision table's column.
        header = field in _TABLE_FIELDS and _in_table_header(view, run, words[:n])
        yield _Label(field, rank, run, run.ids[:n], box, rest, header, bare, view.run_of(run.ids))


def _own_label(view: View, line: Run, field: str, rank: int, ids: tuple[int, ...]) -> _Label:
    """A label that shares its line with the next cell's label: its own words as its run."""
    box = view.box_of(ids)
    own = replace(line, ids=ids, box=box, _text=None, _size=None)
    return _Label(field, rank, own, ids, box, (), False, False, view.run_of(line.ids))


def _in_table_header(view: View, run: Run, label_words: list[str]) -> bool:
    """Whether a label sits in a row of column labels (the revision table's header): the
    rest of its line, or a run close beside it on its row, is another column's label."""
    h = max(run.box.height, 1.0)
    texts = [[view.words[i].text for i in run.ids[len(label_words) :]]]
    texts += [
        [view.words[i].text for i in r.ids]
        for r in view.aligned
        if r is not run
        and r.box.overlap_y(run.box) > 0.5 * min(r.box.height, h)
        and min(abs(r.box.x0 - run.box.x1), abs(run.box.x0 - r.box.x1)) <= HEADER_REACH * h
    ]
    # A run of column labels may be one line ("REV DESCRIPTION"): short runs count by the
    # words only a revision table's header holds.
    columns = {fold("".join(t)) for t in texts if t} & TABLE_COLUMNS
    marked = _is_revision_label(label_words) or any(_is_revision_label(t) for t in texts if t)
    return bool(columns - SIGN_OFF_COLUMNS or (columns and marked)) or any(
        len(t) <= _MAX_LABEL_WORDS and any(fold(w) in TABLE_ONLY_WORDS for w in t)
        for t in texts
        if t
    )


def _is_revision_label(words: list[str]) -> bool:
    """Whether words are a revision mark's label alone ("REV", "Index")."""
    found = _match(words)
    return found is not None and found[0] == "revision" and found[2] == len(words)


def _is_other_label(view: View, run: Run) -> bool:
    """Whether a run is the label of a field the reader knows ("DRAWING TITLE:")."""
    words = [view.words[i].text for i in run.ids]
    found = match_label(words)
    return found is not None and found[1] == len(words)


# --- values -------------------------------------------------------------------------------


def _labelled_values(view: View, anywhere: bool = False) -> Iterator[tuple[_Label, Value | None]]:
    """Each label of the title block with its value (None where its field is empty); with
    ``anywhere``, labels elsewhere too, but a name's label ("PROJECT", "DRAWN BY") there only
    with its value after it: one heading a note or a view would take any text near it."""
    labels = list(_labels(view))
    label_runs = {id(label.run) for label in labels} | {id(label.line) for label in labels}
    for label in labels:
        if label.in_table_header:
            continue  # a revision table's column (its rows are read below)
        if not view.in_zone(label.box) and (
            not anywhere or (label.field in _NAME_FIELDS and not label.rest)
        ):
            continue  # a view's scale, a note's date: not the title block's
        if label.rest:
            yield label, _shaped(label.field, view, label.rest)
            continue
        found = None
        runs = _field_runs(view, label, labels, label_runs)
        # A person's field holds the nearest text or nothing: any text far enough to pass
        # an empty field has a name's shape too.
        for run in runs[:1] if label.field in _PERSON_FIELDS else runs:
            if value := _shaped(label.field, view, _value_words(view, run)):
                found = value
                if label.field in ("project_name", "sheet_title"):
                    found = _stacked_name(view, run, value, label_runs)
                break
        yield label, found


def _field_runs(view: View, label: _Label, labels: list[_Label], label_runs: set[int]) -> list[Run]:
    """The runs of a label's field, nearest first: right of it on its row, then under it in
    its column, within its ruled cell, or up to the next label."""
    x0, y0, x1, y1 = label.run.box
    h = max(y1 - y0, 1.0)
    cell = view.cell(label.box.centre)
    row_labels = [
        o.run.box
        for o in labels
        if o.run is not label.run and o.run.box.overlap_y(label.run.box) > 0
    ]
    # The next label on the row bounds the field, and so does the reach (a label far along
    # the row lets no value beside it come from beyond the reach).
    reach = x1 + max(REACH_RIGHT * h, 144.0)
    right = min([reach, *(b.x0 for b in row_labels if b.x0 >= x1)])
    bottom = y1 + REACH_BELOW * h
    if cell:
        # A label in a cell of its own ("项目编号 | 0288"): its value is in the next cell on its
        # row.
        beside_cell = view.cell(Point(cell.x1 + 0.5, label.box.centre.y))
        if (
            beside_cell is not None
            and _holds_only(view, cell, label.line)
            and not _holds_label(view, beside_cell)
        ):
            cell = Box(cell.x0, cell.y0, beside_cell.x1, cell.y1)
        right, bottom = min(right, cell.x1), cell.y1
    below_labels = [
        o.run.box.y0
        for o in labels
        if o.run is not label.run and o.run.box.y0 > y1 and o.run.box.overlap_x(label.run.box) > 0
    ]
    # A value printed just past its cell's wall (the rule drawn through the value's top, or
    # a label in a cell of its own over its value's) comes after everything inside the cell.
    spill = min([bottom + h if cell else bottom, *below_labels])
    bottom = min([bottom, *below_labels])
    beside: list[tuple[float, Run]] = []
    under: list[tuple[float, Run]] = []
    past: list[tuple[float, Run]] = []
    for run in view.runs:
        if run is label.run or id(run) in label_runs:
            continue
        rx0, ry0, rx1, ry1 = run.box
        if run.box.overlap_y(label.run.box) >= 0.5 * min(h, ry1 - ry0) and x1 - 1 <= rx0 < right:
            beside.append((rx0 - x1, run))
        elif (y0 + y1) / 2 <= ry0 < spill and rx0 < (right if cell else x1 + h) and rx1 > x0 - h:
            (under if ry0 < bottom else past).append((ry0 - y1, run))
    nearest = [r for _, r in sorted(beside, key=lambda dr: dr[0])]
    nearest += [r for _, r in sorted(under, key=lambda dr: dr[0])]
    nearest += [r for _, r in sorted(past, key=lambda dr: dr[0])]
    return [r for r in nearest if not _is_other_label(view, r)]


def _value_words(view: View, run: Run) -> tuple[int, ...]:
    """A run's words; for a word printed across the view (beside a label turned 90°), the
    words of its own printed line that share its ruled cell."""
    line = view.crossing.get(run.ids[0]) if run.line_id < 0 else None
    if line is None:
        return run.ids
    cell = view.cell(run.box.centre)
    if cell is None:
        return line
    return tuple(i for i in line if cell.contains(view.box_of((i,)).centre))


def _holds_only(view: View, cell: Box, line: Run) -> bool:
    """Whether a ruled cell holds no text but one line."""
    return all(r is line or not cell.contains(r.box.centre) for r in view.runs)


def _holds_label(view: View, cell: Box) -> bool:
    """Whether a ruled cell holds a label of its own (its value is that label's, not a
    neighbour's), or words turned another way (a field read in another direction)."""
    return any(
        cell.contains(r.box.centre)
        and (r.line_id == -1 or is_label(r.text) or match_label(r.text.split()))
        for r in view.runs
    )


def _shaped(field: str, view: View, ids: tuple[int, ...]) -> Value | None:
    """The part of some words that has the field's shape, or None."""
    if not ids:
        return None
    words = [view.words[i] for i in ids]
    text = " ".join(w.text for w in words)
    if field == "issue_date":
        match = _DATE.search(text) or _DATE_TEMPLATE.search(text)
        return _span(words, match.start(), match.end()) if match else None
    if field == "scale":
        match = _SCALE.search(text)
        if not match or text[: match.start()].strip(" :"):
            return None
        # "(SCALE: 1:50)": the label's bracket closes after the value, and is not part of it.
        if text.endswith(")") and text.count(")") > text.count("("):
            text = text[:-1]
        return Value(" ".join(text.split()), tuple(ids))
    if field == "revision":
        token = words[0].text.strip(":")
        if fold(token) in LABELS["revision"][0] and len(words) > 1:
            token, words = words[1].text, words[1:]  # "REV A - …" in a table row
        return Value(token, (words[0].id,)) if _MARK.match(token) else None
    if field in ("project_number", "sheet_number"):
        token = words[0].text
        shape = _PROJECT_NUMBER if field == "project_number" else _SHEET_NUMBER
        if shape.match(token) and not _DATE.search(token):
            return Value(token, (words[0].id,))
        return None
    if field in _PERSON_FIELDS:
        return Value(text, tuple(ids)) if _is_person(words) else None
    letters = sum(ch.isalpha() for ch in text)
    if letters < 3 or len(text) > NAME_MAX_CHARS or is_label(text):
        return None  # a note or a paragraph, not a name; a neighbour's label is no value
    return Value(" ".join(text.split()), tuple(ids))


def _is_person(words: list[Word]) -> bool:
    """Initials or a short name, not the next field's label ("CHECKED:")."""
    texts = [w.text for w in words]
    if len(texts) > _PERSON_MAX_WORDS or not any(ch.isalpha() for t in texts for ch in t):
        return False
    return not any(t.endswith(":") for t in texts) and match_label(texts) is None


def _span(words: list[Word], start: int, end: int) -> Value:
    """The words covering characters ``start:end`` of their text joined by spaces."""
    ids, at = [], 0
    for w in words:
        if at < end and at + len(w.text) > start:
            ids.append(w.id)
        at += len(w.text) + 1
    text = " ".join(w.text for w in words)
    return Value(text[start:end], tuple(ids))


def _stacked_name(view: View, first: Run, value: Value, label_runs: set[int]) -> Value:
    """A project name with the lines stacked under its first (same size, same column)."""
    lines, last = [first], first
    while True:
        nxt = min(
            (
                r
                for r in view.aligned
                if id(r) not in label_runs
                and r not in lines
                and abs(r.box.x0 - first.box.x0) <= first.box.height
                and 0 <= r.box.y0 - last.box.y1 <= 0.8 * last.box.height
                and abs(r.size - first.size) <= 0.1 * first.size
            ),
            key=lambda r: r.box.y0,
            default=None,
        )
        if nxt is None or len(lines) >= 3:
            break
        lines.append(nxt)
        last = nxt
    ids = tuple(i for r in lines for i in r.ids)
    return Value(" ".join(view.words[i].text for i in ids), ids) if len(lines) > 1 else value


# --- the revision table -------------------------------------------------------------------


def _revision_table(view: View) -> Value | None:
    """The mark of the revision table's filled row farthest from its header row."""
    best: Value | None = None
    for run in view.aligned:
        words = [view.words[i].text for i in run.ids]
        found = _match(words)
        if not found or found[0] != "revision" or not view.in_zone(run.box):
            continue
        n = found[2]
        if not _in_table_header(view, run, words[:n]):
            continue
        column = view.box_of(run.ids[:n])
        for step in (-1, 1):
            mark = _farthest_row(view, run, column, step)
            if mark:
                best = mark
                break
        if best:
            return best
    return None


def _farthest_row(view: View, header: Run, column: Box, step: int) -> Value | None:
    """Going up (``step`` -1) or down from the header, the rows of the revision column while
    they follow one another; the mark of the last one."""
    cells = sorted(
        (
            r
            for r in view.aligned
            if r is not header
            and r.box.overlap_x(column) > 0
            and (r.box.y1 <= header.box.y0 if step < 0 else r.box.y0 >= header.box.y1)
        ),
        key=lambda r: -r.box.y1 if step < 0 else r.box.y0,
    )
    mark, edge = None, header.box.y0 if step < 0 else header.box.y1
    pitch = header.box.height
    for run in cells:
        gap = edge - run.box.y1 if step < 0 else run.box.y0 - edge
        if gap > ROW_GAP * max(pitch, run.box.height):
            break
        value = _shaped("revision", view, run.ids)
        if value is None:
            break
        mark, edge = value, run.box.y0 if step < 0 else run.box.y1
    return mark
