"""A reasoning model's thinking counts against its completion's tokens: with a thinking budget
set, extraction asks for it and gives the reply its own tokens on top, so the objects are no
longer cut off; a server that refuses the reasoning fields is not asked them again."""

import time

import pytest

from services.extract.model.calls import ModelAsk, model_result
from services.extract.model.structuring import TEXT_HEADING
from shared.infra.llm import LLMClient
from shared.infra.settings import Settings
from shared.pagetext.units import page_units
from tests.support.flows import line_objects, model_settings, reply
from tests.support.model_server import ModelReply, ScriptedModelServer
from tests.support.pdfs import text_layer_of

LINES = [f"{n}. PROVIDE BLOCKING AT GRAB BAR NUMBER {n}." for n in range(1, 9)]
THINKS = 6000  # tokens the scripted model thinks when nothing limits it
REPLY_TOKENS = 3000  # tokens its reply takes


def reasoning_model(request: dict) -> ModelReply:
    """Thinks THINKS tokens, or what ``reasoning.max_tokens`` allows; a reply that does not
    fit in what is left of ``max_tokens`` is cut off (finish_reason length, the JSON cut)."""
    budget = (request.get("reasoning") or {}).get("max_tokens")
    thought = min(THINKS, budget) if budget else THINKS
    whole = reply(line_objects(request))
    if thought + REPLY_TOKENS > request.get("max_tokens", 10**9):
        return ModelReply(content=(whole.content or "")[:40], finish_reason="length")
    return whole


def refusing_reasoning(request: dict) -> ModelReply:
    if "reasoning" in request or "reasoning_effort" in request:
        return ModelReply(status=400, content="Unrecognized request argument: reasoning")
    return reply(line_objects(request))


async def extract(settings: Settings, server: ScriptedModelServer):
    layer = text_layer_of(LINES)
    units = page_units(layer)
    messages = [{"role": "user", "content": f"{TEXT_HEADING}\n{units.render(10**6)}"}]
    ask = ModelAsk("m", [messages], units, "text_structuring", "structure", "t-")
    client = LLMClient(model_settings(settings, server))
    try:
        return await model_result(
            layer,
            client._settings,
            client,
            ask,
            job_id="j",
            worker_id=None,
            started=time.monotonic(),
        )
    finally:
        await client.aclose()


@pytest.mark.parametrize(("thinking", "effort"), [(None, None), (1000, "low")])
async def test_a_thinking_budget_keeps_the_objects_whole(thinking, effort):
    """Unbounded, the model's thinking leaves its reply too few tokens: cut off, no objects.
    With a budget, the reply's tokens come on top of it: every line's object."""
    settings = Settings(
        _env_file=None,
        extract_reasoning_max_tokens=thinking,
        extract_reasoning_effort=effort,
    )
    with ScriptedModelServer(reasoning_model) as server:
        result = await extract(settings, server)
    if not thinking:
        assert result.status != "ok" and "cut off" in (result.reason or "") + str(
            result.model_failure
        )
        assert not result.objects
    else:
        assert result.status == "ok"
        [request] = server.requests
        assert request["reasoning"] == {"effort": "low", "max_tokens": 1000}
        assert request["reasoning_effort"] == "low"
        assert request["max_tokens"] == settings.llm_max_tokens + thinking
        assert len(result.objects) == len(LINES)


async def test_a_server_that_refuses_the_reasoning_fields_is_asked_without_them():
    """A 400 naming the reasoning fields: the call is made again without them."""
    settings = Settings(_env_file=None, extract_reasoning_effort="high")
    with ScriptedModelServer(refusing_reasoning) as server:
        result = await extract(settings, server)
    assert result.status == "ok" and len(result.objects) == len(LINES)
    assert "reasoning" not in server.requests[-1]
