"""The OpenAI-compatible client against the scripted model server."""

import asyncio
import json
import threading
import time

import pymupdf
import pytest

from services.extract.model.vision import (
    REPLY_JSON_SCHEMA,
    TEXT_LAYER_HEADING,
    build_vision_messages,
    parse_reply,
)
from services.extract.reading.textlayer import read_text_layer
from shared.contracts.interfaces import LLMError
from shared.infra.llm import LLMClient
from shared.infra.settings import Settings
from tests.support.model_server import (
    ModelReply,
    ScriptedModelServer,
    request_images,
    request_text,
)
from tests.support.pdfs import notes_pdf

KEY = "sk-test-secret-0123456789"
OK = json.dumps({"objects": []})


@pytest.fixture(scope="module")
def server():
    with ScriptedModelServer() as server:
        yield server


@pytest.fixture
def settings(server) -> Settings:
    server.requests.clear()
    server.responder = lambda req: ModelReply(content=OK)
    return Settings(
        _env_file=None,
        llm_base_url=server.base_url,
        llm_api_key=KEY,
        llm_extract_model="vision-model",
        llm_max_retries=2,
        llm_timeout_s=5,
        retry_backoff_s=0.01,
        retry_backoff_max_s=0.05,
    )


async def _chat(settings: Settings, **kwargs):
    client = LLMClient(settings)
    try:
        messages = [{"role": "user", "content": "hi"}]
        return await client.chat(model="vision-model", messages=messages, **kwargs)
    finally:
        await client.aclose()


async def test_request_carries_model_key_image_and_text_layer(server, settings):
    """The POST names the model, sends the key as Bearer, the image and the TEXT LAYER block."""
    layer = read_text_layer(pymupdf.open(stream=notes_pdf())[0], 1, 20)
    client = LLMClient(settings)
    await client.chat(
        model="vision-model", messages=build_vision_messages(b"PNG", layer, 12000), max_tokens=100
    )
    await client.aclose()
    request = server.requests[0]
    assert request["model"] == "vision-model" and request["max_tokens"] == 100
    assert request["_headers"]["authorization"] == f"Bearer {KEY}"
    assert request["response_format"] == {"type": "json_object"}
    assert request_images(request)[0].startswith("data:image/png;base64,")
    assert f"{TEXT_LAYER_HEADING}\nL1 GENERAL NOTES" in request_text(request)


async def test_usage_is_recorded(server, settings):
    """Content, finish_reason and token usage come back from the reply."""
    server.responder = lambda req: ModelReply(content=OK, finish_reason="length")
    result = await _chat(settings)
    assert result.content == OK and result.finish_reason == "length"
    assert result.usage.calls == 1 and result.usage.prompt_tokens > 0
    assert result.usage.completion_tokens == len(OK) // 4


async def test_429_then_success(server, settings):
    """A 429 with Retry-After is retried and the next answer returned."""
    replies = iter([ModelReply(status=429, headers={"Retry-After": "0"}), ModelReply(content=OK)])
    server.responder = lambda req: next(replies)
    result = await _chat(settings)
    assert result.content == OK and len(server.requests) == 2


async def test_500_forever_gives_up_after_bounded_retries(server, settings):
    """A server that always fails: 1 + llm_max_retries attempts, then LLMError (no key in it)."""
    server.responder = lambda req: ModelReply(status=500, content="boom")
    with pytest.raises(LLMError) as error:
        await _chat(settings)
    assert len(server.requests) == 3
    assert "HTTP 500" in str(error.value) and KEY not in str(error.value)


async def test_garbage_body_is_retried_then_fails(server, settings):
    """A 200 whose body is not a chat completion counts as a failure worth retrying."""
    server.responder = lambda req: ModelReply(body="<html>bad gateway</html>")
    with pytest.raises(LLMError, match="malformed"):
        await _chat(settings)
    assert len(server.requests) == 3


async def test_refusal_is_not_retried_and_hides_the_key(server, settings):
    """A 401 fails at once; the error message never contains the API key."""
    server.responder = lambda req: ModelReply(status=401, content=f"bad key {KEY}")
    with pytest.raises(LLMError) as error:
        await _chat(settings)
    assert len(server.requests) == 1 and KEY not in str(error.value)


async def test_timeout_is_retried_then_fails(server, settings):
    """A reply slower than llm_timeout_s is a timeout: retried, then LLMError."""
    server.responder = lambda req: ModelReply(content=OK, delay_s=0.5)
    fast = settings.model_copy(update={"llm_timeout_s": 0.1, "llm_max_retries": 1})
    with pytest.raises(LLMError, match="no answer within"):
        await _chat(fast)
    assert len(server.requests) == 2


async def test_unreachable_server_fails_cleanly(settings):
    """Nothing listening: connection errors are retried, then LLMError."""
    down = settings.model_copy(update={"llm_base_url": "http://127.0.0.1:9/v1"})
    with pytest.raises(LLMError, match="could not reach"):
        await _chat(down)


async def test_response_format_rejection_falls_back_and_is_remembered(server, settings):
    """A server refusing response_format: retried without it, and later calls skip it."""

    def responder(req: dict) -> ModelReply:
        if "response_format" in req:
            return ModelReply(status=400, content="Unsupported parameter: response_format")
        return ModelReply(content=OK)

    server.responder = responder
    client = LLMClient(settings)
    messages = [{"role": "user", "content": "hi"}]
    first = await client.chat(model="m", messages=messages)
    second = await client.chat(model="m", messages=messages)
    await client.aclose()
    assert first.content == second.content == OK
    assert ["response_format" in r for r in server.requests] == [True, False, False]


async def test_concurrency_is_bounded_per_client(server, settings):
    """No more than llm_concurrency calls are in flight at once."""
    lock, state = threading.Lock(), {"now": 0, "max": 0}

    def responder(req: dict) -> ModelReply:
        with lock:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
        time.sleep(0.05)
        with lock:
            state["now"] -= 1
        return ModelReply(content=OK)

    server.responder = responder
    client = LLMClient(settings.model_copy(update={"llm_concurrency": 2}))
    messages = [{"role": "user", "content": "hi"}]
    await asyncio.gather(*(client.chat(model="m", messages=messages) for _ in range(6)))
    await client.aclose()
    assert len(server.requests) == 6 and state["max"] == 2


# --- structured output: the four ways OpenAI-compatible servers answer ---------------------

REPLY = {
    "sheet": {"sheet_number": "A101"},
    "objects": [
        {"object_type": "general_note", "source_text": "1. VERIFY", "ids": ["L3"]},
        {"object_type": "general_note", "source_text": "2. DO NOT SCALE", "ids": ["L4"]},
    ],
}
CHATTY = "Sure! Here is the JSON:\n```json\n" + json.dumps(REPLY, indent=2) + "\n```\nDone."


def _formats(server) -> list[str | None]:
    return [(r.get("response_format") or {}).get("type") for r in server.requests]


async def _two_schema_calls(settings: Settings):
    client = LLMClient(settings)
    try:
        messages = [{"role": "user", "content": "extract"}]
        return [
            await client.chat(model="m", messages=messages, schema=REPLY_JSON_SCHEMA)
            for _ in range(2)
        ]
    finally:
        await client.aclose()


async def test_a_server_that_honours_the_schema_gets_it_and_answers_json_alone(server, settings):
    """Asked in the reply's JSON schema, such a server answers the JSON alone."""
    server.response_format = "honour"
    server.responder = lambda req: ModelReply(content=CHATTY)
    try:
        first, second = await _two_schema_calls(settings)
    finally:
        server.response_format = "ignore"
    assert json.loads(first.content) == REPLY and json.loads(second.content) == REPLY
    assert _formats(server) == ["json_schema", "json_schema"]
    sent = server.requests[0]["response_format"]["json_schema"]
    assert sent["schema"] == REPLY_JSON_SCHEMA
    parsed = parse_reply(first.content, first.finish_reason)
    assert parsed.cited == {"v1": ["L3"], "v2": ["L4"]}


async def test_a_server_that_ignores_the_schema_is_parsed_tolerantly(server, settings):
    """Accepted and ignored (prose and a fence around the JSON): the tolerant parser still
    reads every object and its cited ids, and the schema is still asked for."""
    server.responder = lambda req: ModelReply(content=CHATTY)
    _, second = await _two_schema_calls(settings)
    assert _formats(server) == ["json_schema", "json_schema"]
    parsed = parse_reply(second.content, second.finish_reason)
    assert [o.source_text for o in parsed.objects] == ["1. VERIFY", "2. DO NOT SCALE"]
    assert parsed.cited == {"v1": ["L3"], "v2": ["L4"]}


async def test_a_server_that_rejects_response_format_is_asked_without_it_from_then_on(
    server, settings
):
    """A 400 naming response_format: the schema, then JSON mode, are dropped for this
    client, and the call still answers; the next call asks without either."""
    server.response_format = "reject"
    server.responder = lambda req: ModelReply(content=json.dumps(REPLY))
    try:
        first, second = await _two_schema_calls(settings)
    finally:
        server.response_format = "ignore"
    assert _formats(server) == ["json_schema", "json_object", None, None]
    assert len(parse_reply(first.content, first.finish_reason).objects) == 2
    assert second.content == first.content


async def test_a_reply_cut_at_the_token_limit_keeps_the_objects_that_closed(server, settings):
    """finish_reason "length": the objects that closed before the cut are kept, with their
    cited ids, and the reply is marked truncated."""
    cut = json.dumps(REPLY)[:-30]
    server.responder = lambda req: ModelReply(content=cut, finish_reason="length")
    first, _ = await _two_schema_calls(settings)
    parsed = parse_reply(first.content, first.finish_reason)
    assert parsed.truncated and [o.source_text for o in parsed.objects] == ["1. VERIFY"]
    assert parsed.cited == {"v1": ["L3"]}


async def test_structured_output_off_asks_json_mode_as_before(server, settings):
    """``llm_structured_output=off`` (the start-up check found no support): JSON mode only."""
    await _two_schema_calls(settings.model_copy(update={"llm_structured_output": "off"}))
    assert _formats(server) == ["json_object", "json_object"]
