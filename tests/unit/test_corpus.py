"""The offline path on real drawing sets (``../shared/corpus/``): the verifier never
contradicts the extractor's own reading, no text page is dark, and every object is one unit
of the page's text."""

from functools import cache

import pytest

from services.extract.guard import apply_grounding_guard
from services.extract.reading.page import Readers
from services.verify.oracle import check_object
from shared.contracts.models import PageObject
from shared.infra.settings import Settings
from shared.sheet.labels import match_label
from tests.support.corpus import corpus_pages, manifest, needs_corpus, offline_page
from tests.support.identity import Tally

pytestmark = [needs_corpus, pytest.mark.slow]

# OCR is left to the flow test and bench.corpus: it takes seconds a page, and OCR words can
# only ever make an object uncertain, never refuted.
SETTINGS = Settings(_env_file=None, ocr_enabled=False)
TEXT_PAGES = corpus_pages(text_layer_only=True)
# Wrong titles on text-layer pages read alone, a share of those pages: today's (goal none).
WRONG_TITLES_ALONE = 0.02


@cache
def page(file: str, number: int, readers: Readers):
    return offline_page(file, number, SETTINGS, readers)


@pytest.mark.parametrize(("file", "number"), TEXT_PAGES)
def test_offline_objects_are_never_refuted_and_the_page_is_covered(file, number, readers):
    """Zero offline or fallback objects refuted, no page problem, and a text page at or
    above the floor after the ladder (never dark)."""
    result = page(file, number, readers)
    refuted = [
        (o.source_text, o.verification.kind)
        for o in result.objects
        if o.verification and o.verification.verdict == "refuted"
    ]
    assert refuted == []
    assert result.verdict.problems == []
    if result.layer.has_text_layer:
        assert result.covered.objects, "a text page left dark"
        assert result.covered.coverage.ratio >= SETTINGS.extract_coverage_floor


@pytest.mark.parametrize(("file", "number"), TEXT_PAGES)
def test_every_object_is_one_unit_of_the_page(file, number, readers):
    """An object's words are one block's lines, or one table row (cells side by side on one
    band of the page), or a title-block label with its value (on up to three lines): never
    two neighbouring labels joined. Its source_text is exactly its words."""
    result = page(file, number, readers)
    layer = result.layer
    for obj in result.covered.objects:
        assert obj.source_text == " ".join(layer.words[i].text for i in obj.evidence)
        blocks = {layer.block_of_line[layer.line_of_word[i]] for i in obj.evidence}
        if obj.object_type in ("schedule_row", "text") and obj.category == "schedule_header":
            continue
        if obj.object_type == "title_block_field":
            # Its label's line, then the value's lines (a title stacked on up to three): no
            # line of the value opens another label.
            label_line = layer.line_of_word[obj.evidence[0]]
            lines = {layer.line_of_word[i] for i in obj.evidence} - {label_line}
            assert len(lines) <= 3, obj.source_text
            for n in lines:
                assert match_label([layer.words[i].text for i in layer.lines[n]]) is None, n
        elif obj.object_type != "schedule_row" and obj.rung == "offline":
            assert len(blocks) == 1, obj.source_text


@pytest.mark.timeout(1200)  # every text page, read here unless this worker read it already
def test_wrong_titles_on_pages_read_alone(readers):
    """A text-layer page read alone (its identity as coverage states it, before the set
    step) gets a wrong title (one that is not the printed one, or where none is printed)
    on no more than today's share of those pages."""
    printed = {
        (e["file"], s["page"]): (s["sheet_number"], s["sheet_title"])
        for e in manifest()
        for s in e["sheets"]
    }
    tally = Tally()
    for file, number in TEXT_PAGES:
        sheet = page(file, number, readers).covered.sheet
        tally.count(
            f"{file} p{number}", (sheet.sheet_number, sheet.sheet_title), printed[(file, number)]
        )
    assert tally.titles_wrong <= WRONG_TITLES_ALONE * tally.pages, tally.misses


QUOTED_FALSE_ALARMS = [
    ("cott__COTTAGES_SHOP_DRAWINGS_REV1_APPROVED.pdf", "FAPS1 NAC3 95CD"),
    ("cott__COTTAGES_SHOP_DRAWINGS_REV1_APPROVED.pdf", "VERIFY CLUBHOUSE"),
    ("ocm__OCM081.1.08.18.pdf", "1:100 PTY.LTD"),
]


@pytest.mark.parametrize(("file", "chimera"), QUOTED_FALSE_ALARMS)
def test_the_chimeras_once_reported_are_gone(file, chimera, readers):
    """Words of neighbouring labels are never joined into one object (these joins once made
    the verifier cry content_wrong)."""
    numbers = [n for f, n in TEXT_PAGES if f == file]
    for number in numbers:
        assert not [
            o
            for o in page(file, number, readers).covered.objects
            if chimera in (o.source_text or "")
        ]


def test_a_planted_misread_on_a_real_sheet_is_refuted(readers):
    """On a real schedule row, a model's reading with one digit changed is content_wrong
    citing the sheet's words, and so is a count the row does not print."""
    file, number = "edge__stockland_S1000.pdf", 1
    result = page(file, number, readers)
    layer = result.layer

    def one_band(obj: PageObject) -> bool:
        centres = [(layer.words[i].bbox[1] + layer.words[i].bbox[3]) / 2 for i in obj.evidence]
        height = min(layer.words[i].bbox[3] - layer.words[i].bbox[1] for i in obj.evidence)
        return max(centres) - min(centres) < height

    row = next(
        o
        for o in result.covered.objects
        if o.object_type == "schedule_row"
        and any(ch.isdigit() for ch in o.source_text)
        and one_band(o)
    )
    digit = next(ch for ch in row.source_text if ch.isdigit())
    wrong = row.source_text.replace(digit, str((int(digit) + 1) % 10), 1)
    (misread,), _ = apply_grounding_guard(
        [PageObject(object_id="v1", source_text=wrong, rung="vision")], layer
    )
    verdict = check_object(misread, layer.words)
    assert (verdict.verdict, verdict.kind) == ("refuted", "content_wrong")
    assert verdict.actual_text == row.source_text
    planted = row.model_copy(update={"attributes": {**row.attributes, "count": "97"}})
    assert check_object(planted, layer.words).kind == "content_wrong"
