"""verify_page end to end on tiny PDFs: oracle, page checks, blank pages, the judge, crops."""

import json

import pymupdf
import pytest

from services.extract.guard import apply_grounding_guard
from services.extract.reading.textlayer import read_text_layer
from services.verify.pipeline import verify_page
from shared.contracts.models import Coverage, CoveredPage, PageObject, Usage
from shared.infra.llm import LLMClient
from shared.infra.settings import Settings
from shared.pagetext import TextLayer
from shared.pagetext.units import page_units
from shared.sheet.header import SheetHeader
from shared.sheet.reading import FieldReading, SheetReading
from tests.support.flows import judge_objects, lenient_judge
from tests.support.model_server import (
    ModelReply,
    ScriptedModelServer,
    request_images,
    request_text,
)
from tests.support.verdicts import verification


def _pdf(lines: list[str]) -> bytes:
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    for i, line in enumerate(lines):
        page.insert_text((72, 100 + i * 20), line, fontsize=10)
    return doc.tobytes()


def _layer(pdf: bytes) -> TextLayer:
    """The page-text model of the PDF's page, read by the real reader."""
    return read_text_layer(pymupdf.open(stream=pdf, filetype="pdf")[0], 1, min_chars=20)


def _png(pdf: bytes) -> bytes:
    return pymupdf.open(stream=pdf, filetype="pdf")[0].get_pixmap(dpi=36).tobytes("png")


def _covered(
    objects: list[PageObject],
    sheet_number: str | None = None,
    has_text: bool = True,
    printed: str | None = None,
) -> CoveredPage:
    cov = Coverage(total_lines=2, covered_lines=2, ratio=1.0)
    if has_text:
        # As extract hands them on: tied to the NOTES page's words by the grounding guard.
        objects, _ = apply_grounding_guard(objects, _layer(_pdf(NOTES)))
    return CoveredPage(
        job_id="j1",
        page_number=1,
        has_text_layer=has_text,
        objects=objects,
        sheet=SheetHeader(sheet_number=sheet_number, sheet_number_source="extraction"),
        coverage_before=cov,
        coverage=cov,
        floor=0.6,
        below_floor=False,
        usage={"extract": Usage(calls=1, prompt_tokens=10, completion_tokens=5)},
        # What extract read the title block to say (once, for every later stage).
        reading=SheetReading(number=FieldReading(text=printed)) if printed else None,
    )


NOTES = ["GENERAL NOTES", "1. PROVIDE (5) 2X6 STUD PACK AT EACH END OF BEAM.", "SHEET NO. A101"]
MISREAD = PageObject(
    object_id="N1",
    source_text="(2) 2X6 STUD PACK",
    grounding="vision_unverified",
    attributes={"quantity": 2},
)
GOOD = PageObject(object_id="N2", source_text="GENERAL NOTES", grounding="source_text")
DOOR = PageObject(object_id="G1", graphical_basis="door swing", grounding="graphical")

NO_JUDGE = Settings(llm_base_url=None, llm_verify_model=None)
JUDGE = Settings(
    llm_base_url="http://judge.invalid/v1", llm_verify_model="judge-m", verify_crop_dpi=144
)


@pytest.fixture(scope="module")
def server():
    with ScriptedModelServer(lenient_judge) as server:
        yield server


@pytest.fixture
async def judge(server):
    """The real client against a scripted judge that confirms everything it is shown, and
    the settings that name it."""
    server.requests.clear()
    server.responder = lenient_judge
    settings = JUDGE.model_copy(update={"llm_base_url": server.base_url})
    client = LLMClient(settings)
    yield settings, client
    await client.aclose()


async def test_oracle_refutes_the_misread_and_keeps_what_was_extracted():
    """No judge: content_wrong citing the sheet, the rest confirmed or not judged, none rewritten."""
    pdf = _pdf(NOTES)
    out = await verify_page(
        _covered([MISREAD, GOOD, DOOR]),
        _layer(pdf),
        pdf,
        _png(pdf),
        NO_JUDGE,
        None,
    )
    page = out.verified
    by_id = {o.object_id: o for o in page.objects}
    assert verification(by_id["N1"]).kind == "content_wrong"
    assert verification(by_id["N1"]).actual_text == "(5) 2X6 STUD PACK"
    assert by_id["N1"].source_text == "(2) 2X6 STUD PACK" and by_id["N1"].attributes == {
        "quantity": 2
    }
    assert verification(by_id["N2"]).verdict == "confirmed"
    assert verification(by_id["G1"]).verdict == "not_judged"
    assert not page.verdict.ok and page.verdict.kinds == ["content_wrong"]
    assert page.verdict.objects_not_judged == 1 and not page.verdict.unjudged
    assert any('"(5) 2X6 STUD PACK"' in p for p in page.verdict.problems)
    # Without a judge, the only crop is the refuted object's evidence, for the report.
    assert set(out.crops) == {"pages/1/evidence/N1.jpg"} and "verify" in page.timings_ms
    assert [c.object_id for c in page.evidence_crops] == ["N1"]
    assert MISREAD.verification is None  # the covered page's objects are not mutated


async def test_lenient_judge_cannot_clear_the_misread(server, judge):
    """A judge confirming everything leaves content_wrong; an unlocated object adds the full page."""
    pdf = _pdf(NOTES)
    settings, llm = judge
    out = await verify_page(
        _covered([MISREAD, GOOD, DOOR]),
        _layer(pdf),
        pdf,
        _png(pdf),
        settings,
        llm,
    )
    page = out.verified
    assert len(server.requests) == 1
    assert "max_tokens" not in server.requests[0], "the judge's reply is never capped"
    by_id = {o.object_id: o for o in page.objects}
    assert verification(by_id["N1"]).kind == "content_wrong"
    assert verification(by_id["N1"]).judge == {
        "verdict": "confirmed",
        "kind": None,
        "actual_text": None,
        "problem": None,
    }
    assert verification(by_id["G1"]).verdict == "confirmed"  # the judge alone spoke for it
    assert [d["object_id"] for d in page.judge_disagreements] == ["N1"]
    assert page.verdict.kinds == ["content_wrong"] and not page.verdict.ok
    verify_usage = page.usage["verify"]
    assert verify_usage.calls == 1 and verify_usage.prompt_tokens > 0
    assert page.usage["extract"].calls == 1
    # N1 and N2 were located: their crops are stored; G1 was not, so the full page went too.
    judge_crops = {"pages/1/crops/N1.jpg", "pages/1/crops/N2.jpg"}
    assert set(out.crops) == judge_crops | {"pages/1/evidence/N1.jpg"}
    parts = server.requests[0]["messages"][1]["content"]
    mimes = [p["image_url"]["url"].split(";")[0] for p in parts if p["type"] == "image_url"]
    assert mimes == ["data:image/jpeg", "data:image/jpeg", "data:image/png"]
    assert "1. PROVIDE (5) 2X6 STUD PACK" in parts[0]["text"]


async def test_judge_disabled_for_the_job_is_not_called(server, judge):
    """judge_enabled=False (the job's option) keeps the model out."""
    pdf = _pdf(NOTES)
    settings, llm = judge
    await verify_page(
        _covered([GOOD]),
        _layer(pdf),
        pdf,
        _png(pdf),
        settings,
        llm,
        judge_enabled=False,
    )
    assert server.requests == []


async def test_identity_disagreement_is_a_page_problem():
    """An extracted sheet number unlike the title block's is identity_wrong; A-101 is A101."""
    pdf = _pdf(NOTES)
    layer = _layer(pdf)
    wrong = await verify_page(
        _covered([GOOD], "A102", printed="A101"), layer, pdf, None, NO_JUDGE, None
    )
    assert wrong.verified.verdict.kinds == ["identity_wrong"]
    right = await verify_page(
        _covered([GOOD], "A-101", printed="A101"), layer, pdf, None, NO_JUDGE, None
    )
    assert right.verified.verdict.ok


async def test_blank_page_is_skipped_and_never_judged(server, judge):
    """No text, no objects, no drawings, empty image: skipped 'blank', unjudged, no model call."""
    pdf = _pdf([])
    settings, llm = judge
    covered = _covered([], has_text=False)
    out = await verify_page(covered, _layer(pdf), pdf, _png(pdf), settings, llm)
    v = out.verified.verdict
    assert v.skipped == "blank" and v.unjudged and v.ok and server.requests == []


def _declared_blank_pdf(drawn: bool) -> bytes:
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    if drawn:
        page.draw_rect(pymupdf.Rect(100, 100, 400, 300))
    else:
        page.insert_text((72, 100), "1. ALL WORK SHALL COMPLY WITH THE CODE.", fontsize=10)
    return doc.tobytes()


@pytest.mark.parametrize("drawn", [False, True])
async def test_page_declared_blank_with_content_is_content_missing(drawn):
    """No judge, no objects but a text layer (or vector drawing): content_missing, not skipped."""
    pdf = _declared_blank_pdf(drawn)
    out = await verify_page(
        _covered([], has_text=not drawn),
        _layer(pdf),
        pdf,
        _png(pdf),
        NO_JUDGE,
        None,
    )
    v = out.verified.verdict
    assert v.skipped is None and not v.ok and not v.unjudged and v.kinds == ["content_missing"]


def _page_judge(verdict: str, problem: str | None = None):
    """A judge answering ``verdict`` about every object it is asked (the page claim too)."""

    def respond(request: dict) -> ModelReply:
        objects = [
            {"object_id": oid, "verdict": verdict, "kind": "content_missing", "problem": problem}
            for oid in judge_objects(request)
        ]
        return ModelReply(content=json.dumps({"objects": objects}))

    return respond


@pytest.mark.parametrize("drawn", [False, True])
async def test_contradicted_blank_page_goes_to_the_judge_with_the_contradiction(
    server, judge, drawn
):
    """With a judge, a page declared empty that its text layer (or drawing) contradicts is
    judged, the contradiction stated in the prompt: refuted is content_missing with the
    judge's words, confirmed is a judged page with no problem."""
    pdf = _declared_blank_pdf(drawn)
    settings, llm = judge
    server.responder = _page_judge("refuted", "Note 1 is not extracted.")
    covered = _covered([], has_text=not drawn)
    out = await verify_page(covered, _layer(pdf), pdf, _png(pdf), settings, llm)
    v = out.verified.verdict
    assert v.kinds == ["content_missing"] and not v.unjudged and v.skipped is None
    assert "Note 1 is not extracted." in v.problems[0]
    [request] = server.requests
    prompt = request_text(request)
    assert "THE EXTRACTION FOUND NOTHING ON THIS PAGE" in prompt
    assert ("vector drawings" if drawn else "a text layer (") in prompt
    assert request_images(request), "the judge sees the page"
    server.responder = _page_judge("confirmed")
    out = await verify_page(covered, _layer(pdf), pdf, _png(pdf), settings, llm)
    v = out.verified.verdict
    assert v.ok and not v.unjudged and out.verified.objects == []


async def test_ink_only_page_carries_its_reason():
    """A raster with marks, no text layer and nothing extracted, with no judge: unjudged, and
    the verdict says why (the ink on its image), never a silent unjudged."""
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    page.insert_image(pymupdf.Rect(50, 50, 500, 400), stream=_png(_pdf(NOTES)))
    pdf = doc.tobytes()
    layer = _layer(pdf)
    assert not layer.has_text_layer and not layer.has_drawings
    out = await verify_page(_covered([], has_text=False), layer, pdf, _png(pdf), NO_JUDGE, None)
    v = out.verified.verdict
    assert v.unjudged and v.skipped is None and v.problems == []
    assert "ink on" in (v.reason or "") and "No objects were extracted" in (v.reason or "")


async def test_empty_page_without_its_image_says_why_it_is_unjudged(server, judge):
    """No objects, no text layer or drawing, and the page image missing: neither blank nor
    contradicted, so unjudged with the reason, and the judge is not asked about nothing."""
    pdf = _pdf([])
    settings, llm = judge
    out = await verify_page(_covered([], has_text=False), _layer(pdf), pdf, None, settings, llm)
    v = out.verified.verdict
    assert v.unjudged and v.skipped is None and "no page image" in (v.reason or "")
    assert server.requests == []


async def test_text_less_page_without_a_judge_is_unjudged():
    """A scanned page's OCR objects with no model judge: nothing judged it, never a pass."""
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    page.insert_image(pymupdf.Rect(50, 50, 300, 200), stream=_png(_pdf(NOTES)))
    pdf = doc.tobytes()
    layer = _layer(pdf)
    assert not layer.has_text_layer
    ocr = PageObject(object_id="O1", source_text="GENERAL NOTES", grounding="ocr")
    out = await verify_page(_covered([ocr], has_text=False), layer, pdf, _png(pdf), NO_JUDGE, None)
    v = out.verified.verdict
    assert v.ok and v.unjudged and v.skipped is None and v.objects_not_judged == 1
    assert "no judge" in (v.reason or "")
    assert verification(out.verified.objects[0]).verdict == "not_judged"


async def test_garbage_judge_reply_on_a_text_less_page_is_unjudged(server, judge):
    """A judge reply that fails the contract twice (it is asked once more) with no oracle
    verdicts leaves the page unjudged."""
    server.responder = lambda request: ModelReply(content="all good!")
    settings, llm = judge
    pdf = _pdf([])
    ocr = PageObject(object_id="O1", source_text="GENERAL NOTES", grounding="ocr")
    out = await verify_page(
        _covered([ocr], has_text=False), _layer(pdf), pdf, _png(pdf), settings, llm
    )
    v = out.verified.verdict
    assert v.unjudged and v.ok and out.verified.usage["verify"].calls == 2
    assert "(asked twice)" in (v.reason or "")


async def test_identity_is_checked_against_the_reading_not_read_again():
    """Verify takes the title block's number from the page's reading (made once in extract)
    and never reads the title block itself: without a reading there is nothing to compare,
    though the page's words print A101."""
    pdf = _pdf(NOTES)
    read = await verify_page(
        _covered([GOOD], "A-102", printed="A101"), _layer(pdf), pdf, None, NO_JUDGE, None
    )
    assert read.verified.verdict.kinds == ["identity_wrong"]
    assert '"A101"' in read.verified.verdict.problems[0]
    assert read.verified.reading is not None and read.verified.reading.sheet_number == "A101"
    unread = await verify_page(_covered([GOOD], "A-102"), _layer(pdf), pdf, None, NO_JUDGE, None)
    assert "identity_wrong" not in unread.verified.verdict.kinds


@pytest.mark.parametrize("drawn", [False, True])
async def test_contradicted_blank_page_the_judge_cannot_decide_is_unjudged(server, judge, drawn):
    """A page declared empty that a witness contradicts, and a judge that answers uncertain
    (or twice an unusable reply): unjudged with the reason, never a pass nor skipped."""
    pdf = _declared_blank_pdf(drawn)
    settings, llm = judge
    covered = _covered([], has_text=not drawn)
    server.responder = _page_judge("uncertain")
    v = (await verify_page(covered, _layer(pdf), pdf, _png(pdf), settings, llm)).verified.verdict
    assert v.unjudged and v.blank_contradicted and v.skipped is None and v.problems == []
    assert (v.reason or "").startswith("the judge could not tell whether the page holds content")
    server.responder = lambda request: ModelReply(content="looks empty to me")
    out = await verify_page(covered, _layer(pdf), pdf, _png(pdf), settings, llm)
    v = out.verified.verdict
    assert v.unjudged and v.blank_contradicted and v.skipped is None and v.problems == []
    assert "(asked twice)" in (v.reason or "") and out.verified.usage["verify"].calls == 2


async def test_declared_blank_pages_say_whether_they_were_contradicted():
    """blank_contradicted is set on a page declared empty that its text layer contradicts,
    and on no other (a truly blank page is skipped, a page with objects was not declared)."""
    pdf = _declared_blank_pdf(drawn=False)
    out = await verify_page(
        _covered([], has_text=True), _layer(pdf), pdf, _png(pdf), NO_JUDGE, None
    )
    assert out.verified.verdict.blank_contradicted
    blank = _pdf([])
    out = await verify_page(
        _covered([], has_text=False), _layer(blank), blank, _png(blank), NO_JUDGE, None
    )
    assert out.verified.verdict.skipped == "blank" and not out.verified.verdict.blank_contradicted
    notes = _pdf(NOTES)
    out = await verify_page(_covered([GOOD]), _layer(notes), notes, None, NO_JUDGE, None)
    assert not out.verified.verdict.blank_contradicted


def _offline(layer: TextLayer) -> list[PageObject]:
    from services.extract.offline.extractor import extract_offline

    return [o.model_copy(update={"rung": "offline"}) for o in extract_offline(layer)]


async def test_objects_cut_from_the_page_words_get_no_verdict_from_them():
    """Offline objects checked against the words they were cut from: not_judged (no basis),
    the page unjudged and never passed, with the reason that nothing independent read it;
    a model's claim on the same words is confirmed with basis text_layer."""
    pdf = _pdf(NOTES)
    layer = _layer(pdf)
    objects = _offline(layer)
    out = await verify_page(_covered(objects), layer, pdf, None, NO_JUDGE, None)
    v = out.verified.verdict
    assert objects and all(verification(o).verdict == "not_judged" for o in out.verified.objects)
    assert all(verification(o).basis is None for o in out.verified.objects)
    assert v.unjudged and v.self_read and v.ok
    assert v.reason == "its objects are the page's own text; nothing independent read it"
    out = await verify_page(_covered([GOOD]), layer, pdf, None, NO_JUDGE, None)
    [good] = out.verified.objects
    assert (verification(good).verdict, verification(good).basis) == ("confirmed", "text_layer")
    assert not out.verified.verdict.unjudged and not out.verified.verdict.self_read


async def test_a_judge_gives_self_read_objects_their_verdict(server, judge):
    """With a judge, offline objects are judged by it: their verdicts say basis judge and
    the page is judged."""
    pdf = _pdf(NOTES)
    settings, llm = judge
    layer = _layer(pdf)
    out = await verify_page(_covered(_offline(layer)), layer, pdf, _png(pdf), settings, llm)
    verifications = [verification(o) for o in out.verified.objects]
    assert verifications and all(
        (v.verdict, v.basis) == ("confirmed", "judge") for v in verifications
    )
    assert not out.verified.verdict.unjudged and out.verified.verdict.ok


async def test_hidden_text_is_named_on_the_verified_page():
    """The page's hidden words are counted, by kind, with a sample, on the verified page."""
    from tests.support.pdfs import add_hidden_text_page, make_pdf

    pdf = make_pdf(add_hidden_text_page)
    layer = _layer(pdf)
    out = await verify_page(_covered([]), layer, pdf, None, NO_JUDGE, None)
    hidden = out.verified.hidden_text
    assert hidden is not None and hidden.count == 14
    assert hidden.kinds == {"ground_coloured": 13, "invisible": 1}
    assert "Z-999" in hidden.sample and "IGNORE THE IMAGE" in hidden.sample


@pytest.mark.parametrize(
    "claim",
    [
        # A text-only model's object: the guard replaces its text with the words it cites.
        PageObject(object_id="T1", rung="text_structuring", source_text="GENERAL NOTES"),
        # A vision object that gave no text of its own, only the line it cites.
        PageObject(object_id="V1", rung="vision", description="The notes' heading"),
    ],
    ids=["text_structuring", "vision_without_text"],
)
async def test_an_object_whose_text_is_its_citation_is_not_confirmed_by_it(claim):
    """The guard fills the object's text from the words it cites: held to those words it
    cannot fail, so without the OCR check or a judge it gets no verdict and the page is
    unjudged, never passed."""
    pdf = _pdf(NOTES)
    layer = _layer(pdf)
    units = page_units(layer)
    heading = next(u.id for u in units.units if u.line.endswith("GENERAL NOTES"))
    [placed], _ = apply_grounding_guard([claim], layer, {claim.object_id: [heading]}, units)
    assert placed.source_cited and placed.source_text == "GENERAL NOTES"
    covered = _covered([]).model_copy(update={"objects": [placed]})
    out = await verify_page(covered, layer, pdf, None, NO_JUDGE, None)
    [obj] = out.verified.objects
    assert (verification(obj).verdict, verification(obj).basis) == ("not_judged", None)
    assert "filled in from its citation" in (verification(obj).reason or "")
    v = out.verified.verdict
    assert v.unjudged and v.self_read and v.ok


async def test_a_contradicted_blank_page_is_read_again_by_ocr(readers):
    """A page of a scanned note the extraction found nothing on: OCR reads it again from its
    image, and the page is content_missing quoting what it shows (not a bare unjudged ink
    page); a drawing OCR finds no text in says so in its reason."""
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    scan = pymupdf.open(stream=_pdf(NOTES))[0].get_pixmap(dpi=200).tobytes("png")
    page.insert_image(page.rect, stream=scan)
    pdf = doc.tobytes()
    layer = _layer(pdf)
    image = pymupdf.open(stream=pdf)[0].get_pixmap(dpi=100).tobytes("png")
    covered = _covered([], has_text=False)
    out = await verify_page(covered, layer, pdf, image, NO_JUDGE, None, ocr=readers.ocr)
    v = out.verified.verdict
    assert not v.ok and v.kinds == ["content_missing"] and len(v.problems) == 1
    assert "read again by OCR" in v.problems[0] and "GENERAL NOTES" in v.problems[0]
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    page.draw_rect(pymupdf.Rect(100, 100, 400, 300), fill=(0, 0, 0))
    pdf = doc.tobytes()
    image = pymupdf.open(stream=pdf)[0].get_pixmap(dpi=50).tobytes("png")
    out = await verify_page(covered, _layer(pdf), pdf, image, NO_JUDGE, None, ocr=readers.ocr)
    v = out.verified.verdict
    assert "Read again by OCR, it shows no text." in (v.reason or "") or v.kinds == [
        "content_missing"
    ]
