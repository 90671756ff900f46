"""The model judge: prompts, scope, reply contract, and its place below the oracle."""

import json
import re

import pytest

from services.verify import judge as judge_module
from services.verify.checks.base import Finding
from services.verify.checks.registry import registered, settle
from services.verify.crops import JudgeImage
from services.verify.judge import (
    JudgeVerdict,
    build_judge_messages,
    judge_finding,
    judge_page,
    parse_judge_reply,
    select_scope,
    text_excerpt,
)
from shared.contracts.models import ObjectVerification, PageObject
from shared.infra.llm import LLMClient
from shared.infra.settings import Settings
from shared.pagetext import PageWords, TextLayer, Word, laid_out, page_reading
from shared.pagetext.units import page_units
from tests.support.flows import model_settings
from tests.support.model_server import ModelReply, ScriptedModelServer

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
        json.dumps({"objects": [{"object_id": "N1", "verdict": None}]}),
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
        and "1 judge entries ignored" in (outcome.reason or "")
    )


def test_verdict_label_outside_the_vocabulary_is_a_refutation_quoting_it():
    """A label the judge was not offered ("partially correct") is a refutation that quotes it,
    with the judge's own kind kept; the vocabulary is read without regard to case."""
    content = json.dumps(
        {
            "objects": [
                {"object_id": "N1", "verdict": "partially correct", "kind": "misread"},
                {"object_id": "N2", "verdict": " Confirmed "},
            ]
        }
    )
    outcome = parse_judge_reply(content, ["N1", "N2"])
    n1 = outcome.verdicts["N1"]
    assert n1.verdict == "refuted" and n1.label == "partially correct" and n1.kind == "misread"
    assert '"partially correct"' in (n1.problem or "")
    assert outcome.verdicts["N2"].verdict == "confirmed" and outcome.reason is None


def test_out_of_vocabulary_label_on_a_confirmed_object_is_a_judge_refuted_problem():
    """The oracle's confirmation does not swallow the judge's named problem: the object is
    judge_refuted, the problem quotes the label, and the judge's kind is kept beside ours."""
    obj = _obj("N1", source_text="ROOM 101", verification=ObjectVerification(verdict="confirmed"))
    content = json.dumps({"objects": [{"object_id": "N1", "verdict": "wrong", "kind": "misread"}]})
    judged = parse_judge_reply(content, ["N1"]).verdicts["N1"]
    result, disagreement = merge_judge(obj, judged, NO_TEXT_LAYER)
    assert result.verdict == "refuted" and result.kind == "judge_refuted"
    assert result.judge_kind == "misread" and '"wrong"' in (result.problem or "")
    assert disagreement is not None
    assert disagreement["kept"] == "judge" and disagreement["judge"]["label"] == "wrong"


def test_judges_own_kind_is_kept_beside_the_normalised_one():
    """A judge refutation of kind content_wrong is judge_refuted for us, content_wrong for it."""
    obj = _obj("N1", source_text="ROOM 101", verification=ObjectVerification(verdict="confirmed"))
    judged = JudgeVerdict("N1", "refuted", kind="content_wrong")
    result, _ = merge_judge(obj, judged, NO_TEXT_LAYER)
    assert (result.kind, result.judge_kind) == ("judge_refuted", "content_wrong")


def merge_judge(obj: PageObject, judged: JudgeVerdict, page_reading):
    """The object's verification once the judge has spoken, and the disagreement recorded:
    the judge's finding settled in the judge's place among the registered checks."""
    judge = next(e for e in registered(None, None) if e.second_opinion)
    return settle(judge, obj, Finding(judge_finding(obj, judged, page_reading), judged.as_dict()))


def text_layer_of(*lines: str):
    """``page_reading`` over a page whose text layer holds ``lines``, one per row."""
    words = [
        Word(text=token, bbox=(60.0 * i, 20.0 * row, 60.0 * i + 50, 20.0 * row + 12))
        for row, line in enumerate(lines)
        for i, token in enumerate(line.split())
    ]
    layer = laid_out(page_number=1, width=612, height=792, words=words, has_text_layer=True)
    page = PageWords(layer)
    return lambda reading: page_reading(reading, page)


NO_TEXT_LAYER = text_layer_of()


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
    result, disagreement = merge_judge(obj, JudgeVerdict("N1", "confirmed"), NO_TEXT_LAYER)
    assert result.verdict == "refuted" and result.kind == "content_wrong"
    assert result.actual_text == "(5) 2X6 STUD PACK"
    assert result.judge and result.judge["verdict"] == "confirmed"
    assert disagreement and disagreement["kept"] == "oracle" and disagreement["object_id"] == "N1"


def test_judge_refutation_of_a_confirmed_object_is_kept_as_judge_refuted():
    """The oracle checks source_text only: a judge refutation is kept, the disagreement
    recorded, and the judge's reading, which the text layer carries, is the actual text."""
    obj = _obj("R1", source_text="ROOM 101", verification=ObjectVerification(verdict="confirmed"))
    page = text_layer_of("ROOM 101 OFFICE", "room 110 storage")
    judged = JudgeVerdict("R1", "refuted", actual_text="ROOM 110")
    result, disagreement = merge_judge(obj, judged, page)
    assert result.verdict == "refuted" and result.kind == "judge_refuted"
    assert result.actual_text == "room 110"  # the page's own words
    assert disagreement is not None
    assert 'the sheet says "room 110"' in (result.problem or "") and disagreement["kept"] == "judge"


def test_judge_reading_the_text_layer_does_not_carry_is_never_the_actual_text():
    """A judge that says the sheet reads something the text layer does not carry (another
    number) is named in the problem as the judge's word; ``actual_text`` stays empty, while
    the judge's own reply is kept under ``judge``."""
    obj = _obj("R1", source_text="ROOM 101", verification=ObjectVerification(verdict="confirmed"))
    page = text_layer_of("ROOM 101 OFFICE", "ROOM 110 STORAGE")
    for judged in (
        JudgeVerdict("R1", "refuted", actual_text="ROOM 111"),
        JudgeVerdict("R1", "refuted", actual_text="ROOM 111", problem="Wrong room number."),
    ):
        result, _ = merge_judge(obj, judged, page)
        assert result.kind == "judge_refuted" and result.actual_text is None
        assert "ROOM 111" in (result.problem or "") and "text layer" in (result.problem or "")
        assert result.judge and result.judge["actual_text"] == "ROOM 111"
    result, _ = merge_judge(
        obj, JudgeVerdict("R1", "refuted", actual_text="ROOM 110"), NO_TEXT_LAYER
    )
    assert result.actual_text is None and "does not carry" in (result.problem or "")


def test_judge_decides_what_the_oracle_did_not_judge():
    """A graphical claim takes the judge's verdict; agreement records nothing."""
    obj = _obj("G1", graphical_basis="door", verification=ObjectVerification(verdict="not_judged"))
    result, disagreement = merge_judge(obj, JudgeVerdict("G1", "uncertain"), NO_TEXT_LAYER)
    assert result.verdict == "uncertain" and disagreement is None
    agreed = _obj("N1", verification=ObjectVerification(verdict="confirmed"))
    agreement = merge_judge(agreed, JudgeVerdict("N1", "confirmed"), NO_TEXT_LAYER)
    assert agreement == (agreed.verification, None)


VALID_VERDICT = json.dumps({"objects": [{"object_id": "N1", "verdict": "confirmed"}]})


@pytest.fixture(scope="module")
def server():
    with ScriptedModelServer() as server:
        yield server


@pytest.fixture
async def llm(server):
    """The real client against the scripted server, whose replies each test scripts."""
    server.requests.clear()
    quick = {"llm_max_retries": 1, "retry_backoff_s": 0.01, "retry_backoff_max_s": 0.02}
    client = LLMClient(model_settings(Settings(_env_file=None), server, **quick))
    yield client
    await client.aclose()


def script(server: ScriptedModelServer, *replies: ModelReply) -> None:
    """Answer the next requests with ``replies`` in turn (the last one repeats)."""
    queue = list(replies)
    server.responder = lambda request: queue.pop(0) if len(queue) > 1 else queue[0]


async def test_judge_page_calls_once_and_records_usage(server, llm):
    """One JSON-mode call; verdicts parsed; usage under the verify stage."""
    script(server, ModelReply(content=VALID_VERDICT))
    outcome = await judge_page(llm, "judge-m", [_obj("N1", source_text="x")], "x", IMAGES)
    assert outcome.judged and outcome.verdicts["N1"].verdict == "confirmed"
    assert outcome.usage["verify"].calls == 1
    assert len(server.requests) == 1 and server.requests[0]["model"] == "judge-m"
    assert server.requests[0]["response_format"] == {"type": "json_object"}


async def test_unusable_reply_is_asked_again_once(server, llm):
    """A reply with no usable verdict gets one more request that says what to send; the
    second answer counts and both calls are in the usage."""
    script(server, ModelReply(content="Looks fine to me!"), ModelReply(content=VALID_VERDICT))
    outcome = await judge_page(llm, "m", [_obj("N1", source_text="x")], "x", IMAGES)
    assert outcome.judged and outcome.verdicts["N1"].verdict == "confirmed"
    assert outcome.usage["verify"].calls == 2
    first, second = (r["messages"] for r in server.requests)
    assert second[: len(first)] == first
    assert second[-1] == {"role": "user", "content": judge_module.JUDGE_RETRY}


async def test_unusable_twice_is_unjudged_with_the_reason(server, llm):
    """A reply that fails the contract twice is unjudged, with the reason and both calls."""
    script(server, ModelReply(content='{"objects": "none"}'))
    outcome = await judge_page(llm, "m", [_obj("N1")], "x", IMAGES)
    assert not outcome.judged and len(server.requests) == 2
    assert "no objects list (asked twice)" in (outcome.reason or "")
    assert outcome.usage["verify"].calls == 2


async def test_cut_off_reply_is_unjudged_even_where_it_parses_and_is_never_capped(server, llm):
    """finish_reason "length" means verdicts may be lost: the reply is not used, even when
    what arrived parses, and the page is unjudged with that reason; no max_tokens is sent."""
    script(server, ModelReply(content=VALID_VERDICT, finish_reason="length"))
    outcome = await judge_page(llm, "m", [_obj("N1", source_text="x")], "x", IMAGES)
    assert not outcome.judged and outcome.verdicts == {}
    assert "cut off at the token limit" in (outcome.reason or "") and len(server.requests) == 2
    assert all("max_tokens" not in request for request in server.requests)


async def test_failed_call_is_unjudged_and_zero_images_never_call(server, llm):
    """A model error leaves the page unjudged; a scope with no image is skipped without a call."""
    script(server, ModelReply(status=500, body={"error": {"message": "model overloaded"}}))
    outcome = await judge_page(llm, "m", [_obj("N1")], "x", IMAGES)
    assert not outcome.judged and (outcome.reason or "").startswith("the judge call failed")
    assert outcome.usage["verify"].calls == 1
    server.requests.clear()
    outcome = await judge_page(llm, "m", [_obj("N1")], "x", [])
    assert not outcome.judged and outcome.skipped == "no_images" and server.requests == []


def _notes_layer(count: int) -> TextLayer:
    """A page of ``count`` numbered notes, one line each, 20 pt apart."""
    words = []
    for n in range(count):
        y = 20.0 * n
        for k, text in enumerate((f"{n + 1}.", "NOTE", f"W{n}", "HERE")):
            words.append(Word(text=text, bbox=(40.0 * k, y, 40.0 * k + 30, y + 10)))
    return laid_out(page_number=1, width=200, height=20.0 * count, words=words, has_text_layer=True)


def test_long_page_text_is_cut_around_the_evidence_by_whole_units():
    """The reading over the cap keeps the units around located claims, whole, and says how
    much was left out; a reading that fits is kept whole, ids and all."""
    units = page_units(_notes_layer(300))
    assert text_excerpt(page_units(_notes_layer(2)), [], 1000) == (
        "L1 1. NOTE W0 HERE\nL2 2. NOTE W1 HERE"
    )
    claim = list(units.units[200].word_ids)
    excerpt = text_excerpt(units, [claim], 1000)
    lines = excerpt.splitlines()
    assert len(excerpt) <= 1000 and "L201 201. NOTE W200 HERE" in lines
    assert "L198 198. NOTE W197 HERE" in lines and "L1 1. NOTE W0 HERE" not in lines
    assert lines[-1].startswith("[… 293 more units") and lines[-1].endswith("left out]")
    start = text_excerpt(units, [], 100).splitlines()
    assert start[0] == "L1 1. NOTE W0 HERE" and start[-1].startswith("[… ")


def test_overlapping_evidence_context_is_not_repeated():
    """Two claims close together share one piece of context."""
    units = page_units(_notes_layer(300))
    claims = [list(units.units[n].word_ids) for n in (150, 153)]
    excerpt = text_excerpt(units, claims, 2000)
    assert excerpt.count("L152 ") == 1 and "[…]" not in excerpt


def test_a_problem_named_without_a_verdict_label_is_never_dropped():
    """An entry naming a kind and a problem but no verdict is a refutation quoting the
    problem; merged onto an object the oracle confirmed, it is a judge_refuted problem."""
    content = json.dumps(
        {"objects": [{"object_id": "G1", "kind": "content_wrong", "problem": "Swing is wrong."}]}
    )
    outcome = parse_judge_reply(content, ["G1"])
    assert outcome.judged and outcome.reason is None
    g1 = outcome.verdicts["G1"]
    assert (g1.verdict, g1.kind) == ("refuted", "content_wrong")
    assert "Swing is wrong." in (g1.problem or "")
    confirmed = _obj("G1", verification=ObjectVerification(verdict="confirmed", basis="text_layer"))
    merged, disagreement = merge_judge(confirmed, g1, lambda _: None)
    assert (merged.verdict, merged.kind, merged.basis) == ("refuted", "judge_refuted", "judge")
    assert "Swing is wrong." in (merged.problem or "") and disagreement is not None


def test_a_problem_on_no_object_is_kept_with_its_text():
    """A bare string and a problem under an id the judge was not asked about are page
    problems quoting the judge; a confirmation under an unknown id says nothing."""
    content = json.dumps(
        {
            "objects": [
                "Door swing is drawn the wrong way.",
                {"object_id": "X9", "verdict": "refuted", "problem": "Tag 12 is missing."},
                {"object_id": "X8", "verdict": "confirmed"},
                {"object_id": "N1", "verdict": "confirmed"},
            ]
        }
    )
    outcome = parse_judge_reply(content, ["N1"])
    assert outcome.judged and list(outcome.verdicts) == ["N1"]
    assert outcome.page_problems == [
        'The judge says: "Door swing is drawn the wrong way."',
        (
            'The judge names a problem on object "X9", which it was not asked about: '
            "Tag 12 is missing."
        ),
    ]
    assert outcome.reason == "1 judge entries ignored (unknown id or no verdict)"
    only = parse_judge_reply(json.dumps(["Nothing matches the sheet."]), ["N1"])
    assert only.judged and only.verdicts == {} and len(only.page_problems) == 1


def test_the_extraction_s_unresolved_items_are_told_to_the_judge():
    """What the extraction could not resolve goes to the judge, one JSON value a line,
    before the page text; without any, the prompt does not mention them."""
    items = [{"text": "DETAIL 5/A-501", "why": "no leader"}, "illegible stamp"]
    [_, user] = build_judge_messages([_obj("N1", source_text="x")], "t", IMAGES, unresolved=items)
    prompt = user["content"][0]["text"]
    assert prompt.startswith("THE EXTRACTION COULD NOT RESOLVE THESE ITEMS")
    assert '{"text": "DETAIL 5/A-501", "why": "no leader"}\n"illegible stamp"' in prompt
    [_, plain] = build_judge_messages([_obj("N1", source_text="x")], "t", IMAGES)
    assert "COULD NOT RESOLVE" not in plain["content"][0]["text"]
