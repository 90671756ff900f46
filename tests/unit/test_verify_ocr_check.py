"""The OCR check: offline objects read again from the page's render. Agreement confirms
(basis ocr), a text layer the page does not show is text_layer_mismatch with the crop as
evidence, OCR noise is uncertain and never a problem."""

import itertools

import pymupdf
import pytest

from services.extract.offline.extractor import extract_offline
from services.extract.reading.textlayer import read_text_layer
from services.verify.fonts import FontLedger
from services.verify.ocr_check import candidates, choose, compare
from services.verify.pipeline import verify_page
from services.verify.tolerances import OcrCheckTolerances
from shared.contracts.models import Coverage, CoveredPage, FontCheck, PageObject
from shared.infra.settings import Settings
from shared.pagetext import TextLayer
from shared.sheet.header import sheet_header
from shared.sheet.reading import read_sheet
from tests.support.fakes import MemoryStateStore
from tests.support.pdfs import garbled_notes_pdf, notes_pdf, same_named_fonts_pdf, text_layer_of
from tests.support.verdicts import verification

OFFLINE = Settings(llm_base_url=None, llm_verify_model=None)


def sample_claims(objects, layer, reading, max_objects, per_font):
    """The lines a page read on its own (no font read elsewhere) is asked to read."""
    found = candidates(objects, layer, reading)
    return found.title + choose(found.objects, found.title, max_objects, per_font).read


def _layer(pdf: bytes) -> TextLayer:
    return read_text_layer(pymupdf.open(stream=pdf)[0], 1, min_chars=20)


def _covered(layer: TextLayer, page_number: int = 1) -> CoveredPage:
    """The page as the offline run hands it to verify: objects cut from its words."""
    reading = read_sheet(layer)
    objects = [o.model_copy(update={"rung": "offline"}) for o in extract_offline(layer)]
    full = Coverage(total_lines=1, covered_lines=1, ratio=1.0)
    return CoveredPage(
        job_id="j",
        page_number=page_number,
        has_text_layer=True,
        sheet=sheet_header(reading),
        reading=reading,
        objects=objects,
        coverage_before=full,
        coverage=full,
        floor=0.6,
        below_floor=False,
        rungs=["offline"],
    )


async def test_ocr_agreement_confirms_offline_objects(readers):
    """The notes the check reads (lines_per_font of the page's one font) read as their
    words say: confirmed with basis ocr, saying what was read; the others stay unjudged,
    and the page is judged (a pass an independent check could have failed)."""
    pdf = notes_pdf()
    layer = _layer(pdf)
    out = await verify_page(_covered(layer), layer, pdf, None, OFFLINE, None, ocr=readers.ocr)
    verdicts = [(verification(o).verdict, verification(o).basis) for o in out.verified.objects]
    assert verdicts.count(("confirmed", "ocr")) == OFFLINE.verify_ocr_lines_per_font
    assert set(verdicts) == {("confirmed", "ocr"), ("not_judged", None)}
    confirmed = [o for o in out.verified.objects if verification(o).verdict == "confirmed"]
    read = f"the check read {OFFLINE.verify_ocr_lines_per_font} line(s) of the page"
    assert all(read in (verification(o).reason or "") for o in confirmed)
    v = out.verified.verdict
    assert v.ok and not v.unjudged and not v.self_read
    checked = v.checked
    assert checked is not None and checked.objects == len(out.verified.objects)
    assert checked.checked == checked.by_basis["ocr"].confirmed == len(confirmed)
    assert checked.ocr_lines >= len(confirmed) and checked.fonts_cited == 0
    assert checked.sentence().startswith(f"checked {len(confirmed)} of {checked.objects} objects")


async def test_without_the_ocr_check_the_offline_page_is_unjudged(readers):
    """The same page with the check off: nothing independent read it, never a pass."""
    pdf = notes_pdf()
    layer = _layer(pdf)
    settings = OFFLINE.model_copy(update={"verify_ocr_check": False})
    out = await verify_page(_covered(layer), layer, pdf, None, settings, None, ocr=readers.ocr)
    v = out.verified.verdict
    assert v.unjudged and v.self_read and v.ok
    assert {verification(o).verdict for o in out.verified.objects} == {"not_judged"}


async def test_a_garbled_text_layer_is_a_text_layer_mismatch_with_its_crop(readers):
    """A page whose text layer names other letters than it shows: text_layer_mismatch,
    citing both readings, with the evidence crop for the report."""
    pdf = garbled_notes_pdf()
    layer = _layer(pdf)
    assert "HFOFSBM OPUFT" in layer.text
    out = await verify_page(_covered(layer), layer, pdf, None, OFFLINE, None, ocr=readers.ocr)
    v = out.verified.verdict
    assert not v.ok and v.kinds == ["text_layer_mismatch"]
    [refuted] = [o for o in out.verified.objects if verification(o).verdict == "refuted"]
    assert verification(refuted).basis == "ocr"
    assert '"HFOFSBM OPUFT"' in (verification(refuted).problem or "")
    assert "GENERAL NOTES" in (verification(refuted).problem or "")
    assert [c.object_id for c in out.verified.evidence_crops] == [refuted.object_id]
    assert set(out.crops) == {f"pages/1/evidence/{refuted.object_id}.jpg"}


@pytest.mark.parametrize(
    ("text", "read", "outcome"),
    [
        ("PROVIDE (5) 2X6 STUD PACK", "PROVIDE (5) 2X6 STUD PACK", "agree"),
        ("SHEET NO. A101", "SHEET N0. AI01", "agree"),  # look-alikes folded
        ("PROVIDE (5) 2X6 STUD PACK", "PROVIDE (6) 2X6 STUD PACK", "noise"),  # a digit off
        ("GENERAL NOTES", "GENERAL", "noise"),  # half read
        ("GENERAL NOTES", "", "noise"),  # nothing read
        ("A-101", "XK", "noise"),  # too short to say it is something else
        ("HFOFSBM OPUFT", "GENERAL NOTES", "mismatch"),
    ],
)
def test_only_a_gross_disagreement_is_a_mismatch(text, read, outcome):
    """Agreement needs the same characters (look-alikes aside) and the same digits; only a
    reading that shares almost nothing with a long enough text is a mismatch."""
    assert compare(text, read) == outcome


def test_the_comparison_tolerances_are_passed_per_call():
    """A half reading is noise by today's tolerances, agreement for a caller that accepts
    less, and a short disagreement a mismatch for one that asks fewer characters."""
    assert compare("GENERAL NOTES", "GENERAL") == "noise"
    assert compare("GENERAL NOTES", "GENERAL", OcrCheckTolerances(agree=0.5)) == "agree"
    assert compare("ROOM 101", "ROOM 101", OcrCheckTolerances(agree=1.0)) == "agree"
    assert compare("A-101", "XK") == "noise"
    assert compare("A-101", "XK", OcrCheckTolerances(mismatch_chars=2)) == "mismatch"


def test_the_sample_is_the_title_block_and_each_font_spread_over_the_page():
    """Title-block number and title first, then objects until each font is read
    lines_per_font times (the title block's lines counted), spread over the page; lines
    OCR cannot speak for (a script it does not read, too short) are left."""
    lines = [f"{i}. NOTE NUMBER {i} OF THE SHEET" for i in range(1, 31)]
    lines += ["ПРИМЕЧАНИЕ ОДИН", "AB", "SHEET NO.", "A-101"]
    layer = text_layer_of(lines)
    objects = [
        PageObject(object_id=f"o{i}", source_text=text, evidence=line)
        for i, (text, line) in enumerate(zip(layer.line_texts, layer.lines, strict=True))
    ]
    claims = sample_claims(objects, layer, read_sheet(layer), max_objects=12, per_font=4)
    ids = [c.claim_id for c in claims]
    assert ids[0] == "sheet_number" and claims[0].text == "A-101"
    # One font: the number read, and three objects more, spread over the notes.
    assert len(ids) == len(set(ids)) and len([i for i in ids if i.startswith("o")]) == 3
    assert {"o30", "o31"}.isdisjoint(ids)  # Cyrillic and a two-letter line
    picked = [int(i[1:]) for i in ids[1:]]
    assert min(b - a for a, b in itertools.pairwise(picked)) >= 8  # spread, not the first three


def test_every_font_of_the_page_is_read():
    """A font set in a few lines among many of another is read too: a broken text
    encoding is one font's, and a sample blind to a font cannot see it."""
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    for i in range(30):
        font = "cour" if i in (17, 23) else "helv"
        page.insert_text((72, 60 + 22 * i), f"{i}. NOTE NUMBER {i} OF THE SHEET", fontname=font)
    layer = read_text_layer(page, 1, min_chars=20)
    assert len(layer.fonts) == 2
    objects = [
        PageObject(object_id=f"o{i}", source_text=text, evidence=line)
        for i, (text, line) in enumerate(zip(layer.line_texts, layer.lines, strict=True))
    ]
    claims = sample_claims(objects, layer, None, max_objects=12, per_font=1)
    assert {font for c in claims for font in c.fonts} == set(layer.font_xrefs)
    assert len(claims) == 2 and len(set(layer.font_xrefs)) == 2


def test_an_object_is_read_when_the_title_block_read_every_font():
    """The title block's number read the page's one font: one object is read still, so
    the page's objects are not all left unjudged."""
    notes = [f"{i}. NOTE NUMBER {i} OF THE SHEET" for i in range(1, 9)]
    layer = text_layer_of([*notes, "SHEET NO.", "A-101"])
    objects = [
        PageObject(object_id=f"o{i}", source_text=text, evidence=line)
        for i, (text, line) in enumerate(zip(layer.line_texts, layer.lines, strict=True))
    ]
    claims = sample_claims(objects, layer, read_sheet(layer), max_objects=12, per_font=1)
    assert claims[0].claim_id == "sheet_number"
    assert len([c for c in claims if c.claim_id.startswith("o")]) == 1


async def test_two_fonts_of_one_name_are_sampled_apart(readers):
    """A page whose notes and legend are set in two font objects named alike, the legend's
    with a shifted /ToUnicode: both fonts are read, and the legend is text_layer_mismatch
    while the notes' font is confirmed."""
    pdf = same_named_fonts_pdf()
    layer = _layer(pdf)
    out = await verify_page(_covered(layer), layer, pdf, None, OFFLINE, None, ocr=readers.ocr)
    v = out.verified.verdict
    assert not v.ok and v.kinds == ["text_layer_mismatch"]
    [refuted] = [o for o in out.verified.objects if verification(o).verdict == "refuted"]
    assert (refuted.source_text or "").startswith("MFHFOE")
    assert "LEGEND" in (verification(refuted).problem or "")
    assert any(verification(o).verdict == "confirmed" for o in out.verified.objects)


async def test_a_font_read_alike_on_one_page_is_cited_on_the_next(readers, monkeypatch):
    """Pages of one job share the fonts read alike (the job state store): the notes' font is
    read on page 1 and cited on pages 2 and 3 (page and line), never read again; the broken
    font, which did not read alike, is read again on each page and refuted on each."""
    read: list[int] = []
    real = readers.ocr.read_crops

    def counted(crops):
        read.append(len(crops))
        return real(crops)

    monkeypatch.setattr(readers.ocr, "read_crops", counted)
    pdf = same_named_fonts_pdf(pages=3)
    doc = pymupdf.open(stream=pdf)
    fonts = FontLedger(MemoryStateStore())
    verified = []
    for n in (1, 2, 3):
        layer = read_text_layer(doc[n - 1], n, min_chars=20)
        out = await verify_page(
            _covered(layer, n), layer, pdf, None, OFFLINE, None, ocr=readers.ocr, fonts=fonts
        )
        verified.append(out.verified)
    assert read == [2, 1, 1]  # page 1: a line of each font; then the broken font's alone
    first = [o for o in verified[0].objects if verification(o).verdict == "confirmed"]
    assert first and all(verification(o).font_check is None for o in first)
    for page in verified[1:]:
        assert page.verdict.kinds == ["text_layer_mismatch"]
        [cited] = [o for o in page.objects if verification(o).verdict == "confirmed"]
        check = verification(cited).font_check
        assert check is not None
        assert (check.page, check.font) == (1, "ArialMT")
        assert check.line in (first[0].source_text or "")
        assert "on page 1" in (verification(cited).reason or "")
        assert page.verdict.checked is not None
        assert page.verdict.checked.fonts_cited == 1 and page.verdict.checked.ocr_lines == 1


def test_the_sample_is_the_same_whether_a_font_was_read_here_or_elsewhere():
    """The objects a page checks do not depend on which page of the job read a font first:
    the lines it would read are the lines it cites when their fonts were read elsewhere, so
    two runs of one job give every object the same verdict whatever the order."""
    layer = _layer(same_named_fonts_pdf())
    found = candidates(_covered(layer).objects, layer, read_sheet(layer))
    alone = choose(found.objects, found.title, 8, 1)
    fonts = {font for claim in found.objects for font in claim.fonts}
    elsewhere = {f: FontCheck(xref=f, font="ArialMT", page=2, line="NOTES") for f in fonts}
    cited = choose(found.objects, found.title, 8, 1, checked=elsewhere)
    assert alone.read and not alone.cited
    assert not cited.read
    assert [c.claim_id for c, _ in cited.cited] == [c.claim_id for c in alone.read]
