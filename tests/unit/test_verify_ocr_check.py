"""The OCR check: offline objects read again from the page's render. Agreement confirms
(basis ocr), a text layer the page does not show is text_layer_mismatch with the crop as
evidence, OCR noise is uncertain and never a problem."""

import itertools

import pymupdf
import pytest

from services.extract.offline.extractor import extract_offline
from services.extract.reading.textlayer import read_text_layer
from services.verify.ocr_check import compare, sample_claims
from services.verify.pipeline import verify_page
from shared.contracts.models import Coverage, CoveredPage, PageObject
from shared.infra.settings import Settings
from shared.pagetext import TextLayer
from shared.sheet.header import sheet_header
from shared.sheet.reading import read_sheet
from tests.support.pdfs import garbled_notes_pdf, notes_pdf, text_layer_of

OFFLINE = Settings(llm_base_url=None, llm_verify_model=None)


def _layer(pdf: bytes) -> TextLayer:
    return read_text_layer(pymupdf.open(stream=pdf)[0], 1, min_chars=20)


def _covered(layer: TextLayer) -> CoveredPage:
    """The page as the offline run hands it to verify: objects cut from its words."""
    reading = read_sheet(layer)
    objects = [o.model_copy(update={"rung": "offline"}) for o in extract_offline(layer)]
    full = Coverage(total_lines=1, covered_lines=1, ratio=1.0)
    return CoveredPage(
        job_id="j",
        page_number=1,
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
    verdicts = [(o.verification.verdict, o.verification.basis) for o in out.verified.objects]
    assert verdicts.count(("confirmed", "ocr")) == OFFLINE.verify_ocr_lines_per_font
    assert set(verdicts) == {("confirmed", "ocr"), ("not_judged", None)}
    confirmed = [o for o in out.verified.objects if o.verification.verdict == "confirmed"]
    read = f"the check read {OFFLINE.verify_ocr_lines_per_font} line(s) of the page"
    assert all(read in o.verification.reason for o in confirmed)
    v = out.verified.verdict
    assert v.ok and not v.unjudged and not v.self_read


async def test_without_the_ocr_check_the_offline_page_is_unjudged(readers):
    """The same page with the check off: nothing independent read it, never a pass."""
    pdf = notes_pdf()
    layer = _layer(pdf)
    settings = OFFLINE.model_copy(update={"verify_ocr_check": False})
    out = await verify_page(_covered(layer), layer, pdf, None, settings, None, ocr=readers.ocr)
    v = out.verified.verdict
    assert v.unjudged and v.self_read and v.ok
    assert {o.verification.verdict for o in out.verified.objects} == {"not_judged"}


async def test_a_garbled_text_layer_is_a_text_layer_mismatch_with_its_crop(readers):
    """A page whose text layer names other letters than it shows: text_layer_mismatch,
    citing both readings, with the evidence crop for the report."""
    pdf = garbled_notes_pdf()
    layer = _layer(pdf)
    assert "HFOFSBM OPUFT" in layer.text
    out = await verify_page(_covered(layer), layer, pdf, None, OFFLINE, None, ocr=readers.ocr)
    v = out.verified.verdict
    assert not v.ok and v.kinds == ["text_layer_mismatch"]
    [refuted] = [o for o in out.verified.objects if o.verification.verdict == "refuted"]
    assert refuted.verification.basis == "ocr"
    assert '"HFOFSBM OPUFT"' in refuted.verification.problem
    assert "GENERAL NOTES" in refuted.verification.problem
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
    assert {font for c in claims for font in c.fonts} == {0, 1}
    assert len(claims) == 2


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
