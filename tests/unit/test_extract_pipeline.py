"""Rung 1-3 orchestration with the scripted model server and tiny PDFs."""

import json

import pytest

from services.extract.model.structuring import structure_text
from services.extract.model.vision import COMPACT_RETRY, TEXT_LAYER_HEADING
from services.extract.offline.fallback import fallback_result
from services.extract.reading.page import PageUnreadable
from services.extract.rung1 import extract_rung1
from shared.infra.llm import LLMClient
from shared.infra.settings import Settings
from shared.sheet.header import SheetHeader
from tests.support.flows import model_settings
from tests.support.model_server import (
    ModelReply,
    ScriptedModelServer,
    request_has_image,
    request_text,
)
from tests.support.pdfs import NOTES, blank_pdf, make_pdf, notes_pdf

NOTE_1 = f"1. {NOTES[0]}"
VISION_REPLY = {
    "sheet": {"sheet_number": "G001", "sheet_title": "GENERAL NOTES"},
    "objects": [
        {"object_type": "general_note", "source_text": NOTE_1},
        {
            "object_type": "general_note",
            "source_text": "3. PROVIDE (2) 2X6 STUD PACK",
            "attributes": {"count": 2},
        },
        {"object_type": "summary", "description": "17 notes on this sheet"},
    ],
}


@pytest.fixture(scope="module")
def server():
    with ScriptedModelServer() as server:
        yield server


@pytest.fixture
async def model(server):
    server.requests.clear()
    server.responder = lambda req: ModelReply(content=json.dumps(VISION_REPLY))
    settings = model_settings(
        Settings(_env_file=None),
        server,
        llm_extract_model="vision-model",
        llm_structure_model="text-model",
        llm_max_retries=1,
        retry_backoff_s=0.01,
        retry_backoff_max_s=0.02,
    )
    client = LLMClient(settings)
    yield settings, client
    await client.aclose()


async def test_offline_rung1_without_model(readers):
    """No model: offline objects, text layer and PNG returned, worker and timing recorded."""
    out = await extract_rung1(
        notes_pdf(), 1, Settings(_env_file=None), None, readers=readers, worker_id="w7", job_id="j1"
    )
    result = out.result
    assert (result.rung, result.status) == ("offline", "ok")
    assert (result.worker_id, result.job_id) == ("w7", "j1")
    assert NOTE_1 in [o.source_text for o in result.objects]
    assert result.guard.kept == len(result.objects) and result.usage == {}
    assert out.text_layer.has_text_layer and out.png.startswith(b"\x89PNG")


async def test_vision_rung1_guarded_with_usage(server, model, readers):
    """One vision call; the guard drops the invented count and cites the page's words for the
    misread note (for the oracle to compare)."""
    settings, client = model
    out = await extract_rung1(
        notes_pdf(), 1, settings, client, readers=readers, worker_id="w", job_id="j"
    )
    result = out.result
    assert (result.rung, result.status) == ("vision", "ok")
    assert len(server.requests) == 1 and request_has_image(server.requests[0])
    # Both notes are tied to the words the page prints, the misread one to "(5) ...".
    assert [o.grounding for o in result.objects] == ["source_text", "source_text"]
    words = out.text_layer.words
    misread = result.objects[1]
    assert " ".join(words[i].text for i in misread.evidence).startswith("3. PROVIDE (5) 2X6")
    assert all(o.page_number == 1 and o.rung == "vision" for o in result.objects)
    assert result.guard.dropped == 1 and result.sheet.sheet_number == "G001"
    assert result.usage["extract"].calls == 1 and result.elapsed_ms > 0


async def test_use_vision_false_runs_offline_even_with_a_model(server, model, readers):
    """The job option vision=false keeps rung 1 offline: no model call."""
    settings, client = model
    out = await extract_rung1(
        notes_pdf(),
        1,
        settings,
        client,
        use_vision=False,
        readers=readers,
        worker_id="w",
        job_id="j",
    )
    assert out.result.rung == "offline" and server.requests == []


async def test_truncated_reply_is_degraded(server, model, readers):
    """A reply cut at the token limit keeps its closed objects and marks the page degraded."""
    settings, client = model
    whole = json.dumps(VISION_REPLY)
    server.responder = lambda req: ModelReply(
        content=whole[: whole.index("3. PROVIDE")], finish_reason="length"
    )
    out = await extract_rung1(
        notes_pdf(), 1, settings, client, readers=readers, worker_id="w", job_id="j"
    )
    result = out.result
    assert result.status == "degraded" and "cut off" in (result.reason or "")
    assert [o.source_text for o in result.objects] == [NOTE_1]


async def test_unparseable_then_compact_retry_succeeds(server, model, readers):
    """Garbage first, then a valid reply to the compact retry: the page is ok."""
    settings, client = model
    replies = iter(
        [
            ModelReply(content="Sorry, here goes: {oops"),
            ModelReply(content=json.dumps(VISION_REPLY)),
        ]
    )
    server.responder = lambda req: next(replies)
    out = await extract_rung1(
        notes_pdf(), 1, settings, client, readers=readers, worker_id="w", job_id="j"
    )
    result = out.result
    assert result.status == "ok" and result.usage["extract"].calls == 2
    assert COMPACT_RETRY in request_text(server.requests[1])


async def test_unparseable_twice_is_read_offline_and_degraded(server, model, readers):
    """Garbage twice: the page is read offline instead, degraded, with the reason kept."""
    settings, client = model
    server.responder = lambda req: ModelReply(content="no json here")
    out = await extract_rung1(
        notes_pdf(), 1, settings, client, readers=readers, worker_id="w", job_id="j"
    )
    assert out.result.status == "degraded" and "could not be parsed" in (out.result.reason or "")
    assert "could not be parsed" in (out.result.model_failure or "")
    assert out.result.rung == "offline" and out.result.objects
    assert out.text_layer.has_text_layer and out.png


async def test_model_server_down_is_read_offline_and_degraded(server, model, readers):
    """500 forever: bounded retries, then the page read offline, degraded, naming the error."""
    settings, client = model
    server.responder = lambda req: ModelReply(status=500)
    out = await extract_rung1(
        notes_pdf(), 1, settings, client, readers=readers, worker_id="w", job_id="j"
    )
    assert out.result.status == "degraded" and "HTTP 500" in (out.result.reason or "")
    assert "HTTP 500" in (out.result.model_failure or "") and out.result.objects
    assert len(server.requests) == 2


async def test_unreadable_pages_raise_with_a_sentence(readers):
    """Broken bytes, a missing page and an absurd page size raise PageUnreadable."""
    settings = Settings(_env_file=None)
    with pytest.raises(PageUnreadable, match="could not be opened"):
        await extract_rung1(
            b"%PDF-1.7 garbage", 1, settings, None, readers=readers, worker_id="w", job_id="j"
        )
    with pytest.raises(PageUnreadable, match="does not exist"):
        await extract_rung1(
            blank_pdf(), 2, settings, None, readers=readers, worker_id="w", job_id="j"
        )
    huge = make_pdf(lambda doc: doc.new_page(width=250 * 72, height=100 * 72))
    with pytest.raises(PageUnreadable, match="larger than"):
        await extract_rung1(huge, 1, settings, None, readers=readers, worker_id="w", job_id="j")


async def test_structure_text_sends_text_only_to_the_structure_model(server, model, readers):
    """Rung 2: no image, the segment-ALL block, the structure model, usage under "structure"."""
    settings, client = model
    out = await extract_rung1(
        notes_pdf(),
        1,
        settings,
        client,
        use_vision=False,
        readers=readers,
        worker_id="w",
        job_id="j",
    )
    result = await structure_text(out.text_layer, settings, client, job_id="j")
    request = server.requests[0]
    assert request["model"] == "text-model" and not request_has_image(request)
    assert "TEXT LAYER (segment ALL of it):\nL1 GENERAL NOTES" in request_text(request)
    assert (result.rung, result.status) == ("text_structuring", "ok")
    assert result.usage["structure"].calls == 1 and result.guard.dropped == 1
    assert all(o.rung == "text_structuring" for o in result.objects)


STRUCTURING_CLAUSES = (
    "Cover the ENTIRE input",
    "Omitting a note, a row or a field is a failure.",
    "Never invent, complete or correct text.",
    "copied VERBATIM from the text layer",
    'make it a general_note with "confidence": "low"',
    "When a SHEET HINT is given",
)


async def test_structuring_prompt_carries_completeness_and_no_invention_clauses(
    server, model, readers
):
    """The rung-2 request the model receives says: cover everything (omitting is a failure),
    never invent, complete or correct, copy verbatim, low-confidence general note when
    unsure, and gives the sheet hint when one is known (and none when nothing is)."""
    settings, client = model
    layer = (
        await extract_rung1(
            notes_pdf(),
            1,
            settings,
            client,
            use_vision=False,
            readers=readers,
            worker_id="w",
            job_id="j",
        )
    ).text_layer
    hint = SheetHeader(sheet_number="G001", sheet_title="GENERAL NOTES")
    await structure_text(layer, settings, client, job_id="j", sheet=hint)
    await structure_text(layer, settings, client, job_id="j")
    hinted, plain = (" ".join(request_text(r).split()) for r in server.requests)
    for clause in STRUCTURING_CLAUSES:
        assert clause in hinted, clause
    assert "SHEET HINT (what is already known of this sheet): sheet_number: G001; " in hinted
    assert "sheet_title: GENERAL NOTES" in hinted
    assert "SHEET HINT (what is already known" not in plain


async def test_text_layer_switched_off_leaves_vision_and_ocr(server, model, readers):
    """SHEETFLOW_TEXT_LAYER_ENABLED off: a text PDF is read as if it had no text layer — no
    TEXT LAYER block for vision, OCR words standing in for the text layer either way."""
    settings, client = model
    off = settings.model_copy(update={"text_layer_enabled": False})
    out = await extract_rung1(
        notes_pdf(), 1, off, client, readers=readers, worker_id="w", job_id="j"
    )
    assert not out.text_layer.has_text_layer and out.text_layer.source == "ocr"
    assert {w.origin for w in out.text_layer.words} == {"ocr"}
    assert TEXT_LAYER_HEADING not in request_text(server.requests[0])
    offline = await extract_rung1(
        notes_pdf(), 1, off, None, readers=readers, worker_id="w", job_id="j"
    )
    assert offline.text_layer.source == "ocr" and not offline.text_layer.has_text_layer
    assert offline.result.objects and all(o.grounding == "ocr" for o in offline.result.objects)


async def test_structure_text_without_model_fails_cleanly(readers):
    """Rung 2 with no model configured is a failed result, not an exception."""
    layer = (
        await extract_rung1(
            notes_pdf(),
            1,
            Settings(_env_file=None),
            None,
            readers=readers,
            worker_id="w",
            job_id="j",
        )
    ).text_layer
    result = await structure_text(layer, Settings(_env_file=None), None, job_id="j")
    assert result.status == "failed" and "no model" in (result.reason or "")


async def test_fallback_result_stubs_every_segment(readers):
    """Rung 3 returns one stub per segment with rung fallback."""
    layer = (
        await extract_rung1(
            notes_pdf(),
            1,
            Settings(_env_file=None),
            None,
            readers=readers,
            worker_id="w",
            job_id="j",
        )
    ).text_layer
    result = fallback_result(layer, Settings(_env_file=None), job_id="j")
    assert result.rung == "fallback" and result.status == "ok"
    assert [o.source_text for o in result.objects][1] == NOTE_1 and len(result.objects) == 5


async def test_blank_page_is_not_ocred(readers):
    """A blank page (no image, no drawing) yields nothing, quickly, without OCR."""
    out = await extract_rung1(
        blank_pdf(), 1, Settings(_env_file=None), None, readers=readers, worker_id="w", job_id="j"
    )
    assert out.result.objects == [] and out.text_layer.source == "pdf"
    assert not out.result.has_text_layer
