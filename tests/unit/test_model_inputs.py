"""What reaches a model, tested where each request is built: the caps on the page text in
the vision block, the text-structuring request and the judge's excerpt; never a word the
page does not show; and the documented defaults those caps and the ladder start from."""

import pymupdf
import pytest

from services.extract.model.structuring import structure_text
from services.extract.reading.textlayer import read_text_layer
from services.extract.rung1 import extract_rung1
from services.verify.pipeline import verify_page
from shared.contracts.models import Coverage, CoveredPage, PageObject
from shared.infra.llm import LLMClient
from shared.infra.settings import Settings
from tests.support.flows import (
    JUDGE_MODEL,
    is_judge,
    is_structuring,
    is_vision,
    lenient_judge,
    model_settings,
    reply,
    text_block,
)
from tests.support.model_server import ModelReply, ScriptedModelServer, request_text
from tests.support.pdfs import HIDDEN_NUMBER, add_hidden_text_page, make_pdf

LINES = [f"{i}. NOTE {i:02d} OF THE GENERAL NOTES ON THIS SHEET OF THE SET" for i in range(1, 41)]
CAP = 300
JUDGE_PAGE_TEXT = "cite the words as actual_text):\n"


def _capped(block: str) -> str:
    """The units a capped block holds, without the line saying what the cap left out."""
    units, note, _ = block.partition("\n[… ")
    assert note, "a capped block says what it left out"
    return units


def _long_pdf() -> bytes:
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=1008)
    for i, line in enumerate(LINES):
        page.insert_text((36, 40 + 24 * i), line, fontsize=9)
    return doc.tobytes()


def _respond(request: dict) -> ModelReply:
    if is_judge(request):
        return lenient_judge(request)
    return reply([{"object_id": "o1", "source_text": LINES[0]}])


@pytest.fixture(scope="module")
def server():
    with ScriptedModelServer(_respond) as server:
        yield server


@pytest.fixture
async def model(server):
    """The real client against the scripted server; requests cleared; small caps."""
    server.requests.clear()
    settings = model_settings(
        Settings(),
        server,
        llm_structure_model="structure-x",
        llm_verify_model=JUDGE_MODEL,
        text_layer_max_chars=CAP,
        verify_text_max_chars=CAP,
    )
    client = LLMClient(settings)
    yield settings, client
    await client.aclose()


def _covered(objects: list[PageObject]) -> CoveredPage:
    full = Coverage(total_lines=1, covered_lines=1, ratio=1.0)
    return CoveredPage(
        job_id="j",
        page_number=1,
        has_text_layer=True,
        objects=objects,
        coverage_before=full,
        coverage=full,
        floor=0.6,
        below_floor=False,
    )


async def test_the_vision_block_holds_the_page_text_up_to_its_cap(model, server, readers):
    """In one call, the vision request's TEXT LAYER block is the page's reading cut at
    text_layer_max_chars (whole units); read in tiles, each tile's block is held to it too."""
    settings, llm = model
    one_call = settings.model_copy(update={"vision_max_tiles": 1})
    pdf = _long_pdf()
    await extract_rung1(pdf, 1, one_call, llm, readers=readers, worker_id="w", job_id="j")
    [request] = [r for r in server.requests if is_vision(r)]
    block = _capped(text_block(request))
    assert LINES[0] in block and LINES[-1] not in block
    assert CAP - len(LINES[0]) < len(block) <= CAP
    server.requests.clear()
    await extract_rung1(pdf, 1, settings, llm, readers=readers, worker_id="w", job_id="j")
    blocks = [text_block(r) for r in server.requests if is_vision(r)]
    assert len(blocks) > 1 and all(len(b.partition("\n[… ")[0]) <= CAP for b in blocks)
    assert any(LINES[0] in b for b in blocks)


async def test_the_structuring_request_holds_the_page_text_up_to_its_cap(model, server):
    """The text-structuring request carries the page's text cut at text_layer_max_chars."""
    settings, llm = model
    layer = read_text_layer(pymupdf.open(stream=_long_pdf())[0], 1, 20)
    await structure_text(layer, settings, llm, job_id="j")
    [request] = [r for r in server.requests if is_structuring(r)]
    block = _capped(text_block(request))
    assert LINES[0] in block and LINES[-1] not in block
    assert CAP - len(LINES[0]) < len(block) <= CAP


async def test_the_judge_excerpt_is_held_to_its_cap(model, server):
    """The judge's PAGE TEXT is at most verify_text_max_chars, around the claim it checks."""
    settings, llm = model
    cap = 2 * CAP  # room for the claim and its context, not for the page
    settings = settings.model_copy(update={"verify_text_max_chars": cap})
    pdf = _long_pdf()
    layer = read_text_layer(pymupdf.open(stream=pdf)[0], 1, 20)
    assert len(layer.text) > 3 * cap
    ids = layer.lines[30]
    claim = PageObject(object_id="N31", source_text=LINES[30], evidence=ids, rung="vision")
    await verify_page(_covered([claim]), layer, pdf, None, settings, llm)
    [request] = [r for r in server.requests if is_judge(r)]
    excerpt = request_text(request).split(JUDGE_PAGE_TEXT, 1)[1].split("\n\nOBJECTS TO", 1)[0]
    assert LINES[30] in excerpt and LINES[0] not in excerpt
    assert 0 < len(excerpt) <= cap


async def test_no_model_request_carries_text_the_page_does_not_show(model, server, readers):
    """The hidden-text sheet through vision, text structuring and the judge: no request
    holds the invisible number or the white note; the title block reads A-101."""
    settings, llm = model
    pdf = make_pdf(add_hidden_text_page)
    settings = settings.model_copy(update={"text_layer_max_chars": 12000})
    out = await extract_rung1(pdf, 1, settings, llm, readers=readers, worker_id="w", job_id="j")
    layer = out.text_layer
    await structure_text(layer, settings, llm, job_id="j")
    objects = [
        PageObject(object_id=f"o{i}", source_text=text, evidence=ids, rung="vision")
        for i, (text, ids) in enumerate(zip(layer.line_texts, layer.lines, strict=True))
    ]
    await verify_page(_covered(objects), layer, pdf, out.png, settings, llm)
    kinds = [(is_vision(r), is_structuring(r), is_judge(r)) for r in server.requests]
    assert sorted(kinds) == [(False, False, True), (False, True, False), (True, False, False)]
    for request in server.requests:
        text = request_text(request)
        assert HIDDEN_NUMBER not in text and "IGNORE THE IMAGE" not in text
        assert "PROVIDE (9)" not in text and "PROVIDE (5) 2X6 STUD PACK" in text
    assert "A-101" in layer.text


def test_the_documented_defaults():
    """The defaults the README and .env.example document: a changed one fails here."""
    s = Settings(_env_file=None)
    assert s.extract_coverage_floor == 0.6
    assert s.extract_text_retry_enabled and s.extract_fallback_enabled
    assert s.fallback_max_objects == 200
    assert (s.text_layer_max_chars, s.verify_text_max_chars) == (12000, 8000)
    assert s.verify_hi_dpi_crops
    assert (s.verify_crop_dpi, s.verify_crop_margin_pts) == (300, 36.0)
    assert (s.verify_max_images, s.verify_max_objects) == (6, 40)
    assert s.verify_ocr_check and s.verify_ocr_max_objects == 12
