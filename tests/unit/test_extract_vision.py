"""Rung 1 and rung 2 prompts, and parsing of model replies."""

import base64
import json

import pytest

from services.extract.model.structuring import build_structuring_messages
from services.extract.model.vision import (
    COMPACT_RETRY,
    TEXT_LAYER_HEADING,
    ReplyUnparseable,
    build_compact_retry_messages,
    build_vision_messages,
    parse_reply,
)
from shared.pagetext import TextLayer, Word, laid_out

REPLY = {
    "sheet": {"sheet_number": "A101", "sheet_title": "FIRST FLOOR PLAN"},
    "objects": [
        {"object_id": "n1", "object_type": "general_note", "source_text": "1. VERIFY"},
        {"object_type": "schedule_row", "source_text": "D1 3'-0\"", "attributes": {"w": "3'-0\""}},
    ],
    "unresolved_items": ["smudged detail"],
}


def _layer(text: str = "1. VERIFY ALL DIMENSIONS", has_text: bool = True) -> TextLayer:
    """A page whose text-layer lines are ``text``'s lines."""
    words = []
    for row, line in enumerate(text.splitlines()):
        x = 72.0
        for word in line.split():
            words.append(
                Word(text=word, bbox=(x, 100 + 20 * row, x + 6 * len(word), 110 + 20 * row))
            )
            x += 6 * len(word) + 4
    return laid_out(page_number=2, width=612, height=792, words=words, has_text_layer=has_text)


def test_vision_message_carries_image_and_text_layer_block():
    """The user message has the PNG as a data URL and the TEXT LAYER block: one line per
    unit with its id, capped by whole units, saying what the cap left out."""
    messages = build_vision_messages(b"PNGDATA", _layer("FIRST NOTE\n\nSECOND NOTE"), 20)
    parts = messages[1]["content"]
    text = next(p["text"] for p in parts if p["type"] == "text")
    block = text.split(f"{TEXT_LAYER_HEADING}\n")[1]
    assert block == "L1 FIRST NOTE\n[… 1 more unit (15 characters) left out]"
    url = next(p["image_url"]["url"] for p in parts if p["type"] == "image_url")
    assert url == "data:image/png;base64," + base64.b64encode(b"PNGDATA").decode()
    assert "one object per note" in messages[0]["content"].lower()


def test_vision_prompt_says_the_text_layer_wins_and_the_image_gives_the_rest():
    """The text layer wins for every alphanumeric value it carries; the image is the source
    for geometry, symbols, line work and what the text layer lacks (never the reverse)."""
    prompt = " ".join(build_vision_messages(b"PNG", _layer(), 100)[0]["content"].split())
    assert "it wins for every alphanumeric value it carries" in prompt
    assert "the text layer is right" in prompt
    assert "source for geometry, symbols, line work" in prompt
    assert "anything the text layer lacks" in prompt
    assert "never change a digit you read in the image" not in prompt


def test_vision_message_without_text_layer_has_no_block():
    """A scanned page is sent with its image only."""
    messages = build_vision_messages(b"PNG", _layer("", has_text=False), max_chars=100)
    assert "TEXT LAYER" not in json.dumps(messages[1])


def test_structuring_message_has_no_image_and_the_segment_all_line():
    """Rung 2 sends text only, after the line "TEXT LAYER (segment ALL of it):"."""
    messages = build_structuring_messages(_layer("NOTE ONE\n\nNOTE TWO"), max_chars=100)
    assert "image_url" not in json.dumps(messages)
    assert messages[1]["content"].endswith(
        "TEXT LAYER (segment ALL of it):\nL1 NOTE ONE\nL2 NOTE TWO"
    )
    assert "VERBATIM" in messages[0]["content"]


def test_compact_retry_appends_an_instruction():
    """The retry is the same request plus one instruction to answer with compact JSON."""
    messages = build_vision_messages(b"PNG", _layer(), 100)
    retry = build_compact_retry_messages(messages)
    assert retry[:-1] == messages and retry[-1]["content"] == COMPACT_RETRY


@pytest.mark.parametrize(
    "content",
    [
        json.dumps(REPLY),
        "```json\n" + json.dumps(REPLY, indent=2) + "\n```",
        "Here is the extraction you asked for:\n" + json.dumps(REPLY) + "\nLet me know!",
    ],
    ids=["plain", "fenced", "prefixed"],
)
def test_reply_parsed_plain_fenced_or_prefixed(content):
    """The envelope is found whether bare, in a code fence or after prose."""
    parsed = parse_reply(content, "stop", id_prefix="p2-v")
    assert parsed.sheet.sheet_number == "A101" and parsed.sheet.sheet_number_source == "extraction"
    assert [o.object_id for o in parsed.objects] == ["n1", "p2-v2"]
    assert parsed.objects[1].attributes == {"w": "3'-0\""}
    assert parsed.unresolved_items == ["smudged detail"] and not parsed.truncated


def test_bare_list_is_wrapped():
    """A bare list of objects is read as the objects of an empty sheet."""
    parsed = parse_reply(json.dumps(REPLY["objects"]), "stop")
    assert len(parsed.objects) == 2 and parsed.sheet.sheet_number is None


def test_truncated_reply_keeps_the_objects_that_closed():
    """Cut off by the token limit: closed objects kept, the cut one dropped, truncated set."""
    whole = json.dumps(REPLY)
    cut = whole[: whole.index('"D1') + 3]
    parsed = parse_reply(cut, "length")
    assert parsed.truncated and [o.source_text for o in parsed.objects] == ["1. VERIFY"]
    assert parsed.sheet.sheet_number == "A101"


@pytest.mark.parametrize("content", ["", "I cannot help with that.", '{"foo": 1}', "[1, 2]", "{"])
def test_garbage_is_unparseable(content):
    """Replies with no usable JSON raise ReplyUnparseable."""
    with pytest.raises(ReplyUnparseable):
        parse_reply(content, "stop")


def test_truncated_before_any_object_is_unparseable():
    """A reply cut off before its first object closed is worth the compact retry."""
    with pytest.raises(ReplyUnparseable):
        parse_reply('{"sheet": {"sheet_number": "A1"}, "objects": [{"object_id": "x", "s', "length")


def test_model_fields_we_own_are_discarded_and_ids_made_unique():
    """grounding/rung/bbox from the model are ignored; duplicate ids are replaced."""
    objects = [
        {"object_id": "a", "grounding": "source_text", "bbox": [1, 2, 3, 4], "rung": "x"},
        {"object_id": "a", "confidence": {"odd": 1}, "review_uses": "qa"},
    ]
    parsed = parse_reply(json.dumps({"objects": objects}), "stop", id_prefix="v")
    first, second = parsed.objects
    assert first.grounding is None and first.bbox is None and first.rung is None
    assert second.object_id == "v2" and second.confidence is None
    assert second.review_uses == ["qa"]
