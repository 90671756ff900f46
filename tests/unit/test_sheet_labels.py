"""The field vocabulary (``shared.sheet.vocabulary``) and how a text is matched against it
(``shared.sheet.labels``): folded (case, accents, ß, full width, numero signs, punctuation),
one edit of tolerance on labels of six letters or more, labels in two languages at once; a
label of every language is a label, a stage or status banner of every language is one, and
the titles and numbers sheets print are neither; and the reader never reports a label or a
banner as a sheet's number or title."""

import pytest

from shared.sheet.labels import (
    fold,
    is_count_line,
    is_firm_name,
    is_label,
    is_stage_or_status,
    label_fields,
    names_drawing_kind,
)
from shared.sheet.reader import read_title_block
from shared.sheet.vocabulary import FIELDS, STAGES, forms
from tests.unit.test_sheet_fields import X, layer

LANGUAGES = (
    "en",
    "de",
    "fr",
    "es",
    "it",
    "pt",
    "nl",
    "sv",
    "da",
    "no",
    "pl",
    "cs",
    "ru",
    "ja",
    "zh",
)

# ISO 7200's data fields, each in the vocabulary under its own name.
ISO_7200 = (
    "number",
    "title",
    "revision",
    "issue_date",
    "sheet",
    "scale",
    "document_type",
    "document_status",
    "legal_owner",
    "creator",
    "approver",
    "department",
    "technical_reference",
    "language",
)

# A sheet-number label and a title label of each language, as a sheet might print them
# (case, punctuation and spacing of their own).
PRINTED = {
    "en": ("DWG. NO.:", "Drawing Title"),
    "de": ("Zeichnungs-Nr.", "PLANINHALT:"),
    "fr": ("N° DE PLAN", "Titre du plan"),
    "es": ("PLANO Nº", "TÍTULO DEL PLANO"),
    "it": ("Tav. n.", "TITOLO ELABORATO"),
    "pt": ("Desenho n.º", "Título do desenho"),
    "nl": ("TEKENINGNR.", "Tekeningtitel"),
    "sv": ("Ritn. nr", "RITNINGSTITEL"),
    "da": ("Tegn. nr.:", "Tegningstitel"),
    "no": ("TEGNINGSNUMMER", "Tegningsnavn"),
    "pl": ("Nr rys.", "Tytuł rysunku:"),
    "cs": ("Č. výkresu", "NÁZEV VÝKRESU"),
    "ru": ("№ листа", "Наименование"),
    "ja": ("図面番号", "図面名称"),
    "zh": ("图号", "图名"),
}

# Titles and numbers sheets print: never labels, never banners.
TITLES = (
    "FLOOR PLAN",
    "SITE PLAN",
    "ROOF PLAN",
    "ELEVATIONS",
    "SECTIONS",
    "DETAILS",
    "GENERAL NOTES",
    "COVER SHEET",
    "STRUCTURAL NOTES - SHEET 1",
    "DRAWING INDEX",
    "LEGEND",
    "SCHEDULES",
    "Grundriss EG",
    "Ansichten",
    "Schnitte",
    "Lageplan",
    "Plan de masse",
    "Coupes",
    "Façades",
    "Planta baja",
    "Alzados",
    "Secciones",
    "Pianta piano terra",
    "Prospetti",
    "Sezioni",
    "Planta do rés-do-chão",
    "Alçados",
    "Cortes",
    "Plattegrond begane grond",
    "Gevels",
    "Doorsneden",
    "Planritning",
    "Fasader",
    "Rzut parteru",
    "Elewacje",
    "Przekroje",
    "Půdorys 1.NP",
    "Řezy",
    "Pohledy",
    "План 1 этажа",
    "Фасады",
    "Разрезы",
    "1階平面図",
    "立面図",
    "断面図",
    "一层平面图",
    "立面图",
    "剖面图",
)
NUMBERS = ("A-101", "S001", "COV-S", "SITE", "M-201", "E1.01", "A 101", "Blatt 3", "3/9")


def test_the_vocabulary_holds_iso_7200s_fields_in_every_language():
    for name in ISO_7200:
        assert set(FIELDS[name]) >= set(LANGUAGES), name
        for lang in LANGUAGES:
            assert forms(FIELDS[name][lang]), (name, lang)
    assert set(STAGES) >= set(LANGUAGES)


def test_folding_drops_case_accents_sharp_s_full_width_and_punctuation():
    assert fold("Zeichnungs-Nr.:") == fold("ZEICHNUNGSNR") == "zeichnungsnr"
    assert fold("Maßstab") == fold("MASSSTAB") == "massstab"
    assert fold("Échelle") == fold("ECHELLE")
    assert fold("ＤＷＧ　ＮＯ．") == fold("DWG NO") == "dwgno"  # full-width forms
    assert fold("N° de plan") == fold("Nº de plan") == fold("No. de plan") == "nodeplan"
    assert fold("Des. n.º") == "desno"
    assert fold("SHEET #") == fold("Sheet No.") == "sheetno"
    assert fold("図面番号:") == "図面番号"  # CJK kept, its punctuation dropped
    assert fold("ﾌﾟﾛｼﾞｪｸﾄ") == fold("プロジェクト")  # half-width kana, voicing marks kept
    assert fold("Č. výkresu") == "cvykresu"
    # A stroke is no accent to Unicode, and OCR reads the letter without it.
    assert fold("TYTUŁ") == fold("TYTUL") == "tytul"
    assert fold("Størrelse") == "storrelse"
    assert is_label("TYTUL, TYTUŁ UZUPEŁNIAJACY:")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_number_label_and_a_title_label_of_every_language_are_labels(lang):
    number, title = PRINTED[lang]
    assert "number" in label_fields(number), number
    assert "title" in label_fields(title), title
    assert is_label(number) and is_label(title)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_form_of_the_vocabulary_is_a_label_and_every_stage_a_stage(lang):
    for name, by_language in FIELDS.items():
        for form in forms(by_language.get(lang, "")):
            assert name in label_fields(form), (name, form)
    for stage in forms(STAGES[lang]):
        assert is_stage_or_status(stage), stage


def test_one_edit_of_tolerance_on_labels_of_six_letters_or_more():
    assert label_fields("Masstab") == {"scale"}  # a letter dropped
    assert label_fields("Revison") == {"revision"}
    assert label_fields("Tegnignsnummer") == {"number"}  # two letters swapped
    assert label_fields("Tavoal n.") == {"number"}
    assert label_fields("DRAWNG NO.") == {"number"}
    assert not is_label("Mastab")  # two edits
    assert not is_label("PIANO")  # one from "plano", but five letters: no tolerance
    assert not is_label("DATES")  # one from "date": four letters


def test_a_label_in_two_languages_or_with_its_paper_size_is_one_label():
    assert label_fields("Maßstab / Scale") == {"scale"}
    assert label_fields("Zeichnungsnummer | Drawing No.") == {"number"}
    assert label_fields("Title, supplementary title") == {"title"}
    assert label_fields("SCALE @ A1") == {"scale"}
    assert label_fields("Maßstab bei A3:") == {"scale"}
    assert not is_label("SCALE 1:100")  # a label with its value
    assert not is_label("FLOOR PLAN / ROOF PLAN")


def test_a_code_label_closed_by_a_number_sign_labels_the_same_field():
    """ "PROJECT REFERENCE NO." is "PROJECT REFERENCE" with its number sign, in any language's
    sign; a sign after a label whose value is no code, or after no label, makes no label."""
    assert label_fields("PROJECT REFERENCE NO.") == {"project_number"}
    assert label_fields("Projektnummer Nr.:") == {"project_number"}
    assert label_fields("Réf. projet N°") == {"project_number"}
    assert label_fields("PROJECT #") == {"project_number"}
    assert not is_label("SHEET TITLE NO.")
    assert not is_label("SCALE NO")
    assert not is_label("FLOOR NO. 3")


@pytest.mark.parametrize("text", TITLES + NUMBERS)
def test_titles_and_numbers_sheets_print_are_no_labels_and_no_banners(text):
    assert not is_label(text)
    assert not is_stage_or_status(text)


@pytest.mark.parametrize(
    "banner",
    [
        "ISSUED FOR CONSTRUCTION",
        "NOT FOR CONSTRUCTION",
        "PRELIMINARY - NOT FOR CONSTRUCTION",
        "S3 - SUITABLE FOR REVIEW & COMMENT",
        "Preliminary",
        "PRELIMENARY",  # one letter off
        "VORABZUG",
        "Zur Genehmigung",
        "NICHT FÜR DIE AUSFÜHRUNG",
        "BON POUR EXÉCUTION",
        "Para aprobación",
        "PROGETTO ESECUTIVO",
        "Para construção",
        "VOORLOPIG ONTWERP",
        "FÖRFRÅGNINGSUNDERLAG",
        "Til godkendelse",
        "IKKE FOR BYGGING",
        "DO ZATWIERDZENIA",
        "Ke schválení",
        "Не для строительства",
        "承認用",
        "施工图",
    ],
)
def test_stage_and_status_banners_in_every_language_are_stages(banner):
    assert is_stage_or_status(banner)


def test_common_words_near_a_stage_are_no_stage():
    for text in ("CONSTRUCTION", "APPROVAL", "CONSTRUCTION DETAILS", "TENDERLOIN", "DRAFTING"):
        assert not is_stage_or_status(text), text


@pytest.mark.parametrize(
    ("label", "banner"),
    [
        ("Zeichnungsnummer", "VORABZUG"),
        ("DRAWING TITLE", "PRELIMINARY"),
        ("TEGNINGSNUMMER", "TIL GODKENDELSE"),
        ("Título del plano", "Para aprobación"),
        ("Titre du plan", "POUR APPROBATION"),
        ("Tavola n.", "PER APPROVAZIONE"),
        ("Zeichnungsinhalt", "ZUR GENEHMIGUNG"),
        ("Peça desenhada", "PARA APROVAÇÃO"),
    ],
)
def test_the_reader_reports_no_label_and_no_banner_as_number_or_title(label, banner):
    """A label printed large and a stage banner in the title block are never the sheet's
    number or title: the number is its labelled value, and no title is better than either."""
    page = layer(
        [
            (X, 1400, label, 8),
            (X, 1440, banner, 24),
            (X, 1560, "SHEET NO.", 8),
            (X, 1600, "A-101", 30),
            (X, 1650, label, 30),
        ]
    )
    found = read_title_block(page)
    assert found.number == "A-101"
    assert found.title is None
    assert not any(is_label(c.text) for c in found.candidates)


def test_a_russian_cipher_labels_the_projects_code_not_the_sheet():
    """ "Шифр" alone is the project's code (шифр проекта), one for the whole set: reading it
    as the sheet's number would give every sheet the same number."""
    assert label_fields("Шифр") == {"project_number"}
    assert label_fields("ШИФР:") == {"project_number"}


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("LIGHTING PLAN", True),
        ("Schnitt A-A", True),
        ("Erdgeschossgrundriss", True),
        ("Façades nord et sud", True),
        ("Planta baja", True),
        ("Przekrój B-B", True),
        ("План второго этажа", True),
        ("1階平面図", True),
        ("一层平面图", True),
        ("Kraemer Consulting Engineers", False),
        ("101 EAST MAIN STREET, CHANDLER, AZ 85226", False),
        ("INTERSECTION IMPROVEMENTS", False),
    ],
)
def test_a_title_names_a_kind_of_drawing_in_any_language(text: str, names: bool):
    """The kinds of drawing a title names, whole or ending a compound; a firm's name, an
    address or a word merely containing one ("INTERSECTION") names none."""
    assert names_drawing_kind(text) is names


@pytest.mark.parametrize(
    ("text", "firm"),
    [
        ("Ingegneria Rossi S.r.l.", True),
        ("Kraemer Consulting Engineers, PLLC.", True),
        ("Müller Architekten GmbH", True),
        ("Nordkonstruktion AB Ltd", True),
        ("Nordkonstruktion AB", True),
        ("Bergen Arkitekter AS", True),
        ("Hargreaves Partners plc", True),
        ("ООО «Проектное бюро Вектор»", True),
        ("山田設計株式会社", True),
        ("LIMITED ACCESS PLAN", False),
        ("AS BUILT PLAN", False),
        ("SECTION A-B", False),
        ("SECTION AB", False),
    ],
)
def test_a_firms_name_is_known_by_its_legal_form(text: str, firm: bool):
    """A firm's name carries its legal form, at its end (or its start in Russian, anywhere
    in Japanese and Chinese); a title that merely holds such a word does not."""
    assert is_firm_name(text) is firm


def test_a_sheets_label_with_its_position_and_count_after_a_slash_counts_the_sheet():
    """A sheet's label with its position and count after a slash ("Feuille 1/4") counts the
    sheet as "Foglio 1 di 4" does: never a title (a French left strip as a raster gave its
    count as three sheets' title, by size, where three sheets printed it at one place); a
    slash alone, or after another word, is no count."""
    assert is_count_line("Feuille 1/4") and is_count_line("Blatt 3 / 9")
    assert is_count_line("Hoja 2/4") and is_count_line("Foglio 1 di 4")
    assert not is_count_line("1/4") and not is_count_line("Plan 1/4")
