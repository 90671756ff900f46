"""The labels of title-block fields, in the forms firms and standards print them.

A label is matched on whole words at the start of a line, punctuation ignored
("DWG. NO.", "Drawing No:", "SHT NO" all name the sheet-number field). A bare "SHEET" also
labels the number field, but only as a line of its own: inside prose ("SEE SHEET S-501")
it introduces a reference. Other fields (project number, date, revision, scale …) matter
because their values are never the sheet number and they bound the fields around them.
"""

import re
import unicodedata
from collections.abc import Sequence
from enum import Enum

# Two numbers printed as one ("Unterlage / Blatt-Nr.: 7 / 1"): the sheet is the pair.
PAIR_LABELS = frozenset({"UNTERLAGE/BLATT", "UNTERLAGE/BLATTNR", "UNTERLAGENR/BLATTNR"})
_HEADS = ("SHEET", "SHT", "DRAWING", "DWG", "DRG", "PLAN", "PLANREF", "PLANREFERENCE")
_TAILS = ("NUMBER", "NO", "NUM", "NBR", "NR", "#", "ID")
NUMBER_LABELS = frozenset(
    {h + t for h in _HEADS for t in _TAILS}
    | {"BLATTNR", "ZEICHNUNGSNR", "ZEICHNUNGSNUMMER", "NUMERODEPLAN", "NUMERODEPLANCHE"}
    | {"PLANNUMMER", "PLANNUMMERN", "NODEPLAN", "NODEPLANCHE", "PLANCHENO"}
    | {"PLANONO", "LAMINANO", "NODEPLANO", "NUMERODEPLANO", "TEKENINGNUMMER", "TEKENINGNR"}
    | {"TEKNR", "BLADNR", "BLADNUMMER"}
    | PAIR_LABELS
)
# Printed alone on their line, these label the sheet-number field of a title block.
BARE_NUMBER_LABELS = frozenset(
    {"SHEET", "SHT", "DWG", "BLATT", "PLANCHE", "FEUILLE", "HOJA", "LAMINA", "TAVOLA", "BLAD"}
    | {"ЛИСТ"}
)
TITLE_LABELS = frozenset(
    {h + t for h in ("SHEET", "SHT", "DRAWING", "DWG", "DRG") for t in ("TITLE", "NAME")}
    | {"TITLE", "TITEL", "TITRE", "TITULO", "PLANINHALT", "PLANBEZEICHNUNG", "TITLEOFDRAWING"}
    | {"PLANTITEL", "ZEICHNUNGSTITEL", "TITREDUPLAN", "TITULODELPLANO", "TEKENINGTITEL"}
    | {"DRAWING", "OMSCHRIJVING", "DESIGNATION", "CONTENIDO"}
)
# One-word title labels also start titles and prose ("TITLE 24 COMPLIANCE"): they label
# only as a line of their own or before a colon.
ONE_WORD_TITLE_LABELS = frozenset(
    {"TITLE", "TITEL", "TITRE", "TITULO", "DRAWING", "OMSCHRIJVING", "DESIGNATION", "CONTENIDO"}
)
# Labels of other title-block fields; a first word is enough ("PROJECT DETAILS:").
OTHER_LABEL_WORDS = frozenset(
    (
        "PROJECT JOB CLIENT OWNER ARCHITECT ENGINEER CONSULTANT CONTRACTOR DATE SCALE DRAWN "
        "DESIGNED DESIGN CHECKED APPROVED DWN CKD CHK REV REVISION REVISIONS ISSUE ISSUED "
        "STATUS SUITABILITY SEAL STAMP FILE CAD PRINT ADDRESS DISCIPLINE CERTIFIER DRAFT "
        "CONTRACT BY СТАДИЯ ЛИСТОВ ИЗМ ДАТА ПОДПИСЬ РАЗРАБ ПРОВ ГИП НКОНТР УТВ МАСШТАБ "
        # German, French, Spanish, Dutch
        "PROJEKT PROJEKTNR AUFTRAG AUFTRAGSNR AUFTRAGGEBER BAUHERR BAUVORHABEN DATUM MASSSTAB "
        "INDEX ANDERUNG GEZEICHNET GEPRUFT BEARBEITET DATEI PLANVERFASSER ARCHITEKT PHASE "
        "LEISTUNGSPHASE UNTERLAGE PROJET ECHELLE INDICE DESSINE VERIFIE MAITRE AFFAIRE "
        "FICHIER PROYECTO ESCALA FECHA REVISADO CLIENTE ARCHIVO SCHAAL OPDRACHTGEVER "
        "GETEKEND GECONTROLEERD WIJZIGING BESTAND PROJECTNUMMER FORMAAT"
    ).split()
)
# The GOST main inscription's row of stage, sheet and sheet count.
STAGE_LABELS = frozenset({"СТАДИЯ", "STAGE"})

_MAX_LABEL_WORDS = 4
_PUNCT = re.compile(r"[\s.:_\-–—()]+")


class Field(Enum):
    NUMBER = "number"
    TITLE = "title"
    OTHER = "other"


def label_key(words: Sequence[str]) -> str:
    """Words as a label is compared: capitals, accents and punctuation dropped, N°/№ read
    as NO ("Lámina" is LAMINA, "N° de plan" NODEPLAN)."""
    joined = "".join(words).upper().replace("№", "NO").replace("N°", "NO").replace("Nº", "NO")
    bare = "".join(_unaccented(ch) for ch in joined)
    return _PUNCT.sub("", bare)


def _unaccented(ch: str) -> str:
    """A Latin letter without its accent; any other character (Cyrillic Й too) as is."""
    if ch.isascii() or not unicodedata.name(ch, "").startswith("LATIN"):
        return ch
    return unicodedata.normalize("NFKD", ch)[0]


def match_label(words: Sequence[str]) -> tuple[Field, int] | None:
    """The field a line's first words label and how many words the label takes, or None.

    Number and title labels need their whole words ("SHEET NO." but not "SHEET NOTES");
    a bare SHEET only counts as the whole line, or before "<n> OF <count>"; other fields
    need their first word.
    """
    for n in range(min(_MAX_LABEL_WORDS, len(words)), 0, -1):
        key = label_key(words[:n])
        if key in NUMBER_LABELS:
            return Field.NUMBER, n
        if key in TITLE_LABELS and (
            key not in ONE_WORD_TITLE_LABELS or n == len(words) or words[n - 1].endswith(":")
        ):
            return Field.TITLE, n
    if label_key(words) in BARE_NUMBER_LABELS:
        return Field.NUMBER, len(words)
    if label_key(words[:1]) in BARE_NUMBER_LABELS and _counts_sheets(words[1:]):
        return Field.NUMBER, 1  # "SHEET 3 OF 10"
    first = label_key(words[:1])
    if first in OTHER_LABEL_WORDS and _reads_as_label(words):
        return Field.OTHER, 1
    return None


_ALL_KEYS = NUMBER_LABELS | BARE_NUMBER_LABELS | TITLE_LABELS | OTHER_LABEL_WORDS
_KEY_PREFIXES = frozenset(key[:n] for key in _ALL_KEYS for n in range(1, len(key) + 1))


def may_start_label(word: str) -> bool:
    """Whether a word can begin a label (a quick test before ``match_label``)."""
    key = label_key([word])
    return bool(key) and key in _KEY_PREFIXES


_OF = frozenset({"OF", "VON", "DE", "SUR", "VAN"})


def _counts_sheets(words: Sequence[str]) -> bool:
    """Whether words read "<value> OF <count> …" (the rest of "SHEET 3 OF 10 SHEETS"): a
    line that opens so states the sheet's position, whatever follows."""
    return sheet_count(words) is not None


def sheet_count(words: Sequence[str]) -> str | None:
    """The count of words that read "<value> OF <count> …" ("3 OF 10 SHEETS" → "10"), else
    None."""
    if len(words) >= 3 and words[1].upper() in _OF and words[2].isdigit():
        return words[2]
    return None


def _reads_as_label(words: Sequence[str]) -> bool:
    """A first word that names a field starts a label line (short, or ending in a colon),
    not a sentence that happens to start with "SCALE" or "DATE"."""
    return len(words) <= 4 or any(w.endswith(":") for w in words[:4])
