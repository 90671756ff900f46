"""The model judge: prompts, scope, reply contract, and its place below the oracle."""

import json
import re

from services.verify import judge as judge_module
from services.verify.crops import JudgeImage
from services.verify.judge import (
    JudgeVerdict,
    build_judge_messages,
    judge_page,
    merge_judge,
    parse_judge_reply,
    select_scope,
    text_excerpt,
)
from shared.llm import ChatResult, LLMError
from shared.models import ObjectVerification, PageObject, Usage, Word

PLACEHOLDER = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}")
IMAGES = [
    JudgeImage("crop around object N1", b"\xff\xd8jpeg", "image/jpeg"),
    JudgeImage("the full page", b"png", "image/png"),
]


def _obj(object_id: str, **kw) -> PageObject:
    return PageObject(object_id=object_id, **kw)


def _texts(messages: list[dict]) -> list[str]:
    out = []
    for m in messages:
        content = m["content"]
        parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
        out += [p["text"] for p in parts if p["type"] == "text"]
    return out


def test_every_prompt_renders_with_no_placeholder_left():
    """System and user prompts carry the page text and objects, with no {name} literal left."""
    objects = [
        _obj("N1", source_text="(2) 2X6 STUD PACK"),
        _obj("G1", graphical_basis="door swing"),
    ]
    for excerpt in ("1. PROVIDE (5) 2X6 STUD PACK", ""):
        messages = build_judge_messages(objects, excerpt, IMAGES)
        texts = _texts(messages)
        assert texts and not any(PLACEHOLDER.search(t) for t in texts)
        user = texts[1]
        assert '"object_id": "N1"' in user and '"object_id": "G1"' in user
        assert (excerpt or judge_module.NO_TEXT_LAYER) in user
    assert not PLACEHOLDER.search(judge_module.JUDGE_SYSTEM_PROMPT)


def test_images_follow_their_labels_as_data_urls():
    """Each image is an image_url part with a data URL, announced by its label."""
    content = build_judge_messages([_obj("N1", source_text="x")], "t", IMAGES)[1]["content"]
    images = [p for p in content if p["type"] == "image_url"]
    urls = [p["image_url"]["url"] for p in images]
    assert urls[0].startswith("data:image/jpeg;base64,") and urls[1].startswith(
        "data:image/png;base64,"
    )
    labels = [p["text"] for p in content if p["type"] == "text"][1:]
    assert labels == ["Image 1: crop around object N1", "Image 2: the full page"]


def test_scope_puts_the_doubtful_first_and_is_capped():
    """Oracle-refuted, vision_unverified, rescued, low confidence come before confirmed objects."""
    confirmed = ObjectVerification(verdict="confirmed")
    objects = [
        _obj("ok", grounding="source_text", verification=confirmed),
        _obj("low", confidence="low", verification=confirmed),
        _obj("rescued", grounding="text_layer", verification=confirmed),
        _obj("unverified", grounding="vision_unverified"),
        _obj("refuted", verification=ObjectVerification(verdict="refuted", kind="content_wrong")),
        _obj("graphical", graphical_basis="symbol"),
    ]
    ids = [o.object_id for o in select_scope(objects, 10)]
    assert ids == ["refuted", "unverified", "rescued", "low", "graphical", "ok"]
    assert [o.object_id for o in select_scope(objects, 2)] == ["refuted", "unverified"]


def test_valid_reply_is_parsed():
    """A reply per the contract gives one verdict per known object; fenced JSON is fine."""
    reply = {
        "objects": [
            {
                "object_id": "N1",
                "verdict": "refuted",
                "kind": "content_wrong",
                "actual_text": "(5) 2X6 STUD PACK",
                "problem": "Quantity is 5.",
            },
            {
                "object_id": "N2",
                "verdict": "confirmed",
                "kind": None,
                "actual_text": None,
                "problem": None,
            },
        ]
    }
    outcome = parse_judge_reply("```json\n" + json.dumps(reply) + "\n```", ["N1", "N2"])
    assert outcome.judged and outcome.reason is None
    assert outcome.verdicts["N1"].actual_text == "(5) 2X6 STUD PACK"
    assert outcome.verdicts["N1"].kind == "content_wrong"
    assert outcome.verdicts["N2"].verdict == "confirmed"


def test_reply_missing_what_the_contract_asks_is_unjudged():
    """Missing verdicts, no objects list, unknown ids only, or garbage: unjudged, never a pass."""
    replies = [
        json.dumps({"objects": [{"object_id": "N1"}, {"object_id": "N2", "ok": True}]}),
        json.dumps({"objects": [{"object_id": "N1", "verdict": "looks fine"}]}),
        json.dumps({"verdict": "confirmed"}),
        json.dumps({"objects": [{"object_id": "Z9", "verdict": "confirmed"}]}),
        "Everything on this sheet looks correct to me!",
        '{"objects": [{"object_id": "N1", "verd',
        "",
    ]
    for content in replies:
        outcome = parse_judge_reply(content, ["N1", "N2"])
        assert not outcome.judged and outcome.verdicts == {} and outcome.reason, content


def test_partly_valid_reply_keeps_the_valid_entries():
    """Entries without a verdict are ignored and counted; the rest stand."""
    content = json.dumps(
        {"objects": [{"object_id": "N1", "verdict": "confirmed"}, {"object_id": "N2"}]}
    )
    outcome = parse_judge_reply(content, ["N1", "N2"])
    assert (
        outcome.judged
        and set(outcome.verdicts) == {"N1"}
        and "1 judge entries ignored" in outcome.reason
    )


def test_judge_cannot_overturn_an_oracle_refutation():
    """A lenient judge's 'confirmed' leaves content_wrong in place; the disagreement is recorded."""
    oracle = ObjectVerification(
        verdict="refuted",
        kind="content_wrong",
        actual_text="(5) 2X6 STUD PACK",
        evidence_bbox=(1, 2, 3, 4),
        problem="p",
    )
    obj = _obj("N1", source_text="(2) 2X6 STUD PACK", verification=oracle)
    result, disagreement = merge_judge(obj, JudgeVerdict("N1", "confirmed"))
    assert result.verdict == "refuted" and result.kind == "content_wrong"
    assert result.actual_text == "(5) 2X6 STUD PACK"
    assert result.judge["verdict"] == "confirmed"
    assert disagreement["kept"] == "oracle" and disagreement["object_id"] == "N1"


def test_judge_refutation_of_a_confirmed_object_is_kept_as_judge_refuted():
    """The oracle checks source_text only: a judge refutation is kept, the disagreement recorded."""
    obj = _obj("R1", source_text="ROOM 101", verification=ObjectVerification(verdict="confirmed"))
    result, disagreement = merge_judge(obj, JudgeVerdict("R1", "refuted", actual_text="ROOM 110"))
    assert result.verdict == "refuted" and result.kind == "judge_refuted"
    assert "ROOM 110" in result.problem and disagreement["kept"] == "judge"


def test_judge_decides_what_the_oracle_did_not_judge():
    """A graphical claim takes the judge's verdict; agreement records nothing."""
    obj = _obj("G1", graphical_basis="door", verification=ObjectVerification(verdict="not_judged"))
    result, disagreement = merge_judge(obj, JudgeVerdict("G1", "uncertain"))
    assert result.verdict == "uncertain" and disagreement is None
    agreed = _obj("N1", verification=ObjectVerification(verdict="confirmed"))
    assert merge_judge(agreed, JudgeVerdict("N1", "confirmed")) == (agreed.verification, None)


class FakeLLM:
    def __init__(self, content: str = "", error: Exception | None = None):
        self.content, self.error, self.calls = content, error, []

    async def chat(self, *, model, messages, max_tokens=None, json_mode=True):
        self.calls.append({"model": model, "messages": messages, "json_mode": json_mode})
        if self.error:
            raise self.error
        return ChatResult(
            content=self.content,
            finish_reason="stop",
            usage=Usage(calls=1, prompt_tokens=100, completion_tokens=20),
        )


async def test_judge_page_calls_once_and_records_usage():
    """One JSON-mode call; verdicts parsed; usage under the verify stage."""
    llm = FakeLLM(json.dumps({"objects": [{"object_id": "N1", "verdict": "confirmed"}]}))
    outcome = await judge_page(llm, "judge-m", [_obj("N1", source_text="x")], "x", IMAGES)
    assert outcome.judged and outcome.verdicts["N1"].verdict == "confirmed"
    assert outcome.usage == {"verify": Usage(calls=1, prompt_tokens=100, completion_tokens=20)}
    assert len(llm.calls) == 1 and llm.calls[0]["model"] == "judge-m" and llm.calls[0]["json_mode"]


async def test_failed_call_is_unjudged_and_zero_images_never_call():
    """A model error leaves the page unjudged; a scope with no image is skipped without a call."""
    outcome = await judge_page(FakeLLM(error=LLMError("HTTP 500")), "m", [_obj("N1")], "x", IMAGES)
    assert not outcome.judged and "HTTP 500" in outcome.reason
    llm = FakeLLM("{}")
    outcome = await judge_page(llm, "m", [_obj("N1")], "x", [])
    assert not outcome.judged and outcome.skipped == "no_images" and llm.calls == []


def test_long_page_text_is_cut_around_the_evidence():
    """Text over the cap keeps the words around located claims; short text is kept whole."""
    words = [Word(text=f"w{i}", bbox=(0, 0, 1, 1)) for i in range(2000)]
    text = " ".join(w.text for w in words)
    assert text_excerpt("short", words, [], 100) == "short"
    excerpt = text_excerpt(text, words, [(1500, 1503)], 1000)
    assert len(excerpt) <= 1000 and "w1500 w1501 w1502" in excerpt and "w0 " not in excerpt
    assert text_excerpt(text, words, [], 50) == text[:50]


def test_overlapping_evidence_context_is_not_repeated():
    """Two claims close together share one piece of context."""
    words = [Word(text=f"w{i}", bbox=(0, 0, 1, 1)) for i in range(2000)]
    text = " ".join(w.text for w in words)
    excerpt = text_excerpt(text, words, [(1500, 1502), (1510, 1512)], 2000)
    assert excerpt.count("w1505 ") == 1 and "[…]" not in excerpt
