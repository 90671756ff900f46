"""The labels of title-block fields, in the forms firms and standards print them.

A label is matched on whole words at the start of a line, punctuation ignored
("DWG. NO.", "Drawing No:", "SHT NO" all name the sheet-number field). A bare "SHEET" also
labels the number field, but only as a line of its own: inside prose ("SEE SHEET S-501")
it introduces a reference. Other fields (project number, date, revision, scale …) matter
because their values are never the sheet number and they bound the fields around them.
"""

import re
import unicodedata
from collections.abc import Iterable, Sequence
from enum import Enum
from functools import lru_cache

from rapidfuzz.distance import OSA

from shared.sheet.vocabulary import (
    DRAWING_KINDS,
    FIELDS,
    LEGAL_FORM_ENDINGS,
    LEGAL_FORM_OPENINGS,
    LEGAL_FORM_WORDS,
    STAGES,
    forms,
)

_PUNCT = re.compile(r"[\s.:_\-–—()]+")


def label_key(words: Sequence[str]) -> str:
    """Words as a label is compared: full-width forms made plain, capitals, accents and
    punctuation dropped, N°/Nº/№ read as NO ("Lámina" is LAMINA, "N° de plan" NODEPLAN)."""
    joined = "".join(words)
    if joined.isascii():  # most words: nothing to normalise
        return _PUNCT.sub("", joined.upper())
    plain = unicodedata.normalize("NFKC", joined).upper()  # full width, "Nº" is "No"
    joined = plain.replace("N°", "NO")
    bare = "".join(_unaccented(ch) for ch in joined)
    return _PUNCT.sub("", bare)


def _unaccented(ch: str) -> str:
    """A Latin letter without its accent; any other character (Cyrillic Й too) as is."""
    if ch.isascii() or not unicodedata.name(ch, "").startswith("LATIN"):
        return ch
    return unicodedata.normalize("NFKD", ch)[0]


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


def _vocabulary(field: str, leaving: tuple[str, ...] = ()) -> frozenset[str]:
    """The keys of a field's forms in every language, but those naming something else too."""
    return frozenset(
        label_key([form])
        for text in FIELDS[field].values()
        for form in forms(text)
        if not any(part in form.casefold() for part in leaving)
    )


# The vocabulary's number labels name the drawing; a document's code or reference, or an
# archive's number, is another number ("DOCUMENT NO. 202402280811" on a recorded map).
_OTHER_NUMBERS = (
    *("document", "dokument", "doc", "шифр", "обознач", "ident", "cod", "refer", "réf"),
    *("evidenč", "archiv", "文書"),
)
# A supplementary title is not the title.
_SUPPLEMENTARY = (
    *("suppl", "zusätz", "ergänz", "zusatz", "complément", "complementar", "dodat", "doplň"),
    *("uzupełn", "tilläggs"),
)
# Headings of a table's name column as much as labels of the title ("Наименование" over a
# specification's items, "名称" over a schedule's).
_TABLE_HEADINGS = ("наименование", "название", "名称", "名稱")
# The word "drawing" alone labels the title on some sheets and the number on others ("PLANO:
# Planta baja", "PLANO I.101"): the reader takes neither from it.
_DRAWING_WORDS = (
    *("Zeichnung", "dessin", "plano", "desenho", "tekening", "ritning", "tegning", "rysunek"),
    *("výkres", "чертеж", "чертёж", "図面", "图纸"),
)
NUMBER_LABELS |= _vocabulary("number", _OTHER_NUMBERS)
_VOCABULARY_TITLES = _vocabulary("title", _SUPPLEMENTARY) - {
    label_key([word]) for word in _TABLE_HEADINGS + _DRAWING_WORDS
}
TITLE_LABELS |= _VOCABULARY_TITLES
ONE_WORD_TITLE_LABELS |= {
    label_key([form])
    for text in FIELDS["title"].values()
    for form in forms(text)
    if " " not in form and label_key([form]) in _VOCABULARY_TITLES
}
# Labels of the other fields in every language, as a line of their own or before a colon.
# Latin keys of three letters or fewer are words too ("LOT", "BET"): left to the first-word
# list above.
OTHER_LABELS = frozenset(
    key
    for name in FIELDS
    if name not in ("number", "title", "sheet")
    for key in _vocabulary(name)
    if len(key) >= 4 or not key.isascii()
) - (NUMBER_LABELS | TITLE_LABELS | BARE_NUMBER_LABELS)

# The GOST main inscription's row of stage, sheet and sheet count.
STAGE_LABELS = frozenset({"СТАДИЯ", "STAGE"})

_MAX_LABEL_WORDS = 4


class Field(Enum):
    NUMBER = "number"
    TITLE = "title"
    OTHER = "other"


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
    for n in range(min(_MAX_LABEL_WORDS, len(words)), 0, -1):
        if label_key(words[:n]) in OTHER_LABELS and (n == len(words) or words[n - 1].endswith(":")):
            return Field.OTHER, n
    return None


_ALL_KEYS = NUMBER_LABELS | BARE_NUMBER_LABELS | TITLE_LABELS | OTHER_LABEL_WORDS | OTHER_LABELS
_KEY_PREFIXES = frozenset(key[:n] for key in _ALL_KEYS for n in range(1, len(key) + 1))


def may_start_label(word: str) -> bool:
    """Whether a word can begin a label (a quick test before ``match_label``)."""
    key = label_key([word])
    return bool(key) and key in _KEY_PREFIXES


_OF = frozenset({"OF", "VON", "DE", "SUR", "VAN"})
# A line that counts the sheet in any language: a word, its position, "of" and the count
# ("Foglio 1 di 4", "Blad 1 av 4", "Arkusz 1 z 4", "Лист 1 из 4"; "1/4" reads as a scale).
_COUNT_LINE = re.compile(
    r"^\w+\.?:?\s+\d+\s*(?:of|von|de|sur|van|di|av|af|z|ze|из)\s*\d+(?:\s+\w+)?$",
    re.IGNORECASE,
)


# A sheet's label, its position and the count after a slash ("Feuille 1/4", "Blatt 3/9");
# a slash alone ("1/4") reads as a scale.
_SLASH_COUNT = re.compile(r"^(\w+)\.?:?\s+\d+\s*/\s*\d+$")


def is_count_line(text: str) -> bool:
    """Whether a line only counts the sheet ("Foglio 1 di 4", "Feuille 1/4"): never its
    title."""
    if _COUNT_LINE.match(text.strip()):
        return True
    slash = _SLASH_COUNT.match(text.strip())
    return slash is not None and fold(slash.group(1)) in FIELD_KEYS["sheet"]


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


# --- the vocabulary's labels, folded -------------------------------------------------------

# "N°", "n.°": the numero sign read as the abbreviation it stands for ("Nº" and "№" become
# "No" under NFKC already).
_NUMERO = re.compile(r"n\.?\s*°", re.IGNORECASE)
_NOT_ALNUM = re.compile(r"[^a-z0-9]+")
# Latin letters with a stroke, which Unicode does not part into a letter and a mark as it
# does an accented one: OCR reads them without it ("TYTUL" for "TYTUŁ").
_STROKED = str.maketrans({"ł": "l", "ø": "o", "đ": "d", "ħ": "h", "ŧ": "t", "ı": "i"})
# One edit of tolerance only on labels of this many letters or more: shorter words are
# too close to one another and to the values around them.
TOLERANT_LENGTH = 6
# Labels printed in two languages or of two fields at once ("Maßstab / Scale", "Title,
# supplementary title") split here.
_PARTS = re.compile(r"\s*[/|]\s*|,\s*|\n")
# A scale label naming the paper size it holds for ("SCALE @ A1", "Maßstab bei A3").
_PAPER_SIZE = re.compile(
    r"(.+?)\s*(?:@|\b(?:at|bei|à|en|in|su|på|w|na)\b)?\s*\b[AB][0-4]\s*:?$", re.I
)
# A number sign closing a label ("PROJECT REFERENCE NO.", "Projektreferenz Nr.", "Réf. N°"):
# the label before it names the same field, where that field's value is a code.
_NUMBER_SIGN = re.compile(r"(.+?)\s*(?:\b(?:no|nr|nro|núm|num|č)\.?|n\.?\s*[°º]|#|№)\s*:?$", re.I)
_CODE_FIELDS = frozenset({"number", "project_number"})
# Words that join two stage phrases in one banner ("PRELIMINARY AND NOT FOR CONSTRUCTION").
_JOINERS = frozenset({"and", "und", "et", "y", "e", "en", "og", "och", "i", "a", "oraz", "и"})
# A status code leading a banner (ISO 19650's "S3", "A1", "CR"): dropped before the phrase.
_STATUS_CODE = re.compile(r"^[a-z]{1,2}\d{0,2}$")


@lru_cache(maxsize=65536)
def fold(text: str) -> str:
    """A text as labels are compared: full-width forms and ligatures made plain (NFKC), the
    numero signs read as "no" ("N°", "Nº", "№", "#"), case folded (ß is ss), accents of
    Latin, Greek and Cyrillic letters dropped and Latin letters' strokes too (ł is l, ø is
    o), and everything but letters and digits removed
    ("Zeichnungs-Nr.:", "ZEICHNUNGSNR" and "ｚｅｉｃｈｎｕｎｇｓ ｎｒ" are one). Kana keep their
    voicing marks."""
    if text.isascii():  # most words: nothing to normalise
        return _NOT_ALNUM.sub("", text.lower().replace("#", "no"))
    plain = _NUMERO.sub("no", unicodedata.normalize("NFKC", text)).casefold().replace("#", "no")
    plain = plain.translate(_STROKED)
    kept: list[str] = []
    for ch in unicodedata.normalize("NFD", plain):
        if unicodedata.combining(ch) and kept and kept[-1] < "\u0500":
            continue
        kept.append(ch)
    return "".join(ch for ch in unicodedata.normalize("NFC", "".join(kept)) if ch.isalnum())


def _fold_words(text: str) -> tuple[str, ...]:
    """A text's words, each folded (punctuation between them splits them)."""
    spaced = re.sub(r"[^\w°]+", " ", unicodedata.normalize("NFKC", text))
    return tuple(key for word in spaced.split() if (key := fold(word)))


def _keys(by_language: dict[str, str]) -> frozenset[str]:
    return frozenset(fold(form) for text in by_language.values() for form in forms(text)) - {""}


# Folded label → the fields it labels.
FIELD_KEYS: dict[str, frozenset[str]] = {name: _keys(by) for name, by in FIELDS.items()}
_LABEL_FIELDS: dict[str, frozenset[str]] = {}
for _name, _keyset in FIELD_KEYS.items():
    for _key in _keyset:
        _LABEL_FIELDS[_key] = _LABEL_FIELDS.get(_key, frozenset()) | {_name}
_STAGE_PHRASES = frozenset(
    _fold_words(form) for text in STAGES.values() for form in forms(text)
) - {()}
_STAGE_KEYS = frozenset("".join(words) for words in _STAGE_PHRASES)
_LONGEST_STAGE = max(len(words) for words in _STAGE_PHRASES)


def _deletions(key: str) -> set[str]:
    """A key with one letter dropped, each way."""
    return {key[:i] + key[i + 1 :] for i in range(len(key))}


def _tolerant(keys: Iterable[str]) -> dict[str, set[str]]:
    """The keys of letters only, of ``TOLERANT_LENGTH`` or more, indexed by themselves and by
    each of their one-letter deletions: a text within one edit of a key shares one of them."""
    index: dict[str, set[str]] = {}
    for key in keys:
        if len(key) >= TOLERANT_LENGTH and key.isalpha():
            for form in (key, *_deletions(key)):
                index.setdefault(form, set()).add(key)
    return index


_TOLERANT_LABELS = _tolerant(_LABEL_FIELDS)
_TOLERANT_STAGES = _tolerant(_STAGE_KEYS)


def _near(key: str, tolerant: dict[str, set[str]]) -> str | None:
    """The key within one edit (a letter added, dropped, changed, or two swapped) of a text
    of letters, or None."""
    if not key.isalpha() or len(key) < TOLERANT_LENGTH - 1:
        return None
    found = {label for form in (key, *_deletions(key)) for label in tolerant.get(form, ())}
    return min(
        (label for label in found if OSA.distance(key, label, score_cutoff=1) <= 1), default=None
    )


@lru_cache(maxsize=8192)
def label_fields(text: str) -> frozenset[str]:
    """The fields a text labels (by the vocabulary's names: ``number``, ``title``, ``scale``
    …), empty when it is no label: the whole text must be a label, folded, or one edit from
    a label of six letters or more. A label printed in two languages ("Maßstab / Scale")
    labels the fields of both."""
    key = fold(text)
    if key in _LABEL_FIELDS:
        return _LABEL_FIELDS[key]
    parts = [p for p in _PARTS.split(text) if fold(p)]
    if len(parts) > 1:
        found = [label_fields(p) for p in parts]
        return frozenset().union(*found) if all(found) else frozenset()
    if not key:
        return frozenset()
    if near := _near(key, _TOLERANT_LABELS):
        return _LABEL_FIELDS[near]
    sized = _PAPER_SIZE.match(text)
    if sized and "scale" in label_fields(sized.group(1)):
        return frozenset({"scale"})
    signed = _NUMBER_SIGN.match(text)
    if signed and (fields := label_fields(signed.group(1))) and fields <= _CODE_FIELDS:
        return fields
    return frozenset()


def is_label(text: str) -> bool:
    """Whether a text is the label of any field in any language (so never a field's value:
    no number, no title)."""
    return bool(label_fields(text))


@lru_cache(maxsize=8192)
def is_stage_or_status(text: str) -> bool:
    """Whether a text is a stage or status banner ("ISSUED FOR CONSTRUCTION", "Vorabzug",
    "S3 – Suitable for review & comment", "PRELIMINARY – NOT FOR CONSTRUCTION"): one or more
    stage phrases, perhaps after a status code, with only joining words between."""
    words = list(_fold_words(text))
    while len(words) > 1 and _STATUS_CODE.match(words[0]) and "".join(words) not in _STAGE_KEYS:
        words = words[1:]
    if not words:
        return False
    if "".join(words) in _STAGE_KEYS or _near("".join(words), _TOLERANT_STAGES):
        return True
    return _covered_by_stages(tuple(words))


def _covered_by_stages(words: tuple[str, ...]) -> bool:
    """Whether words are stage phrases end to end, joining words allowed between them."""
    reach = [False] * (len(words) + 1)
    reach[0] = True
    for start in range(len(words)):
        if not reach[start]:
            continue
        if start and words[start] in _JOINERS:
            reach[start + 1] = True
        for n in range(1, min(_LONGEST_STAGE, len(words) - start) + 1):
            if words[start : start + n] in _STAGE_PHRASES:
                reach[start + n] = True
    return reach[-1] and words[-1] not in _JOINERS


# Kinds of drawing as whole words; and those that end a compound in the languages that
# write one word for "ground floor plan" ("Erdgeschossgrundriss", "1階平面図").
_DRAWING_KINDS = _keys(DRAWING_KINDS)
_KIND_ENDINGS = _keys({lang: DRAWING_KINDS[lang] for lang in ("de", "nl", "sv", "da", "no")})
_KIND_ENDINGS |= _keys({lang: DRAWING_KINDS[lang] for lang in ("ja", "zh")})


def names_drawing_kind(text: str) -> bool:
    """Whether a text names a kind of drawing ("LIGHTING PLAN", "Coupe A-A", "平面図"), as
    a sheet's title does and a firm's name, an address or a note seldom does."""
    return any(
        key in _DRAWING_KINDS or any(key.endswith(end) for end in _KIND_ENDINGS)
        for key in _fold_words(text)
    )


_LEGAL_ENDINGS = frozenset(forms(LEGAL_FORM_ENDINGS))
_LEGAL_OPENINGS = frozenset(forms(LEGAL_FORM_OPENINGS))
# Nordic legal forms of two letters, which a title may end with too ("SECTION AB").
_SHORT_LEGAL_ENDINGS = frozenset({"ab", "as"})
_LEGAL_WORDS = forms(LEGAL_FORM_WORDS)


def is_firm_name(text: str) -> bool:
    """Whether a line is a firm's name, by the legal form it carries ("Rossi S.r.l.",
    "Kraemer Consulting Engineers, PLLC", "ООО «Вектор»", "山田設計株式会社"): never a
    sheet's title."""
    words = text.replace(",", " ").lower().split()
    if any(form in text for form in _LEGAL_WORDS):
        return True
    if len(words) < 2:
        return False
    if words[-1] in _SHORT_LEGAL_ENDINGS:
        return not names_drawing_kind(text)  # "SECTION AB" is a section's title
    return words[-1] in _LEGAL_ENDINGS or words[0] in _LEGAL_OPENINGS
