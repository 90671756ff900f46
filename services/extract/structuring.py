"""Rung 2, text-only structuring: the page's text layer, no image (so nothing can be
misread), segmented into one object per note, row, tag and field. Replies are parsed by
``vision.parse_reply`` (same schema)."""

from services.extract.vision import REPLY_SCHEMA
from shared.models import TextLayer

TEXT_HEADING = "TEXT LAYER (segment ALL of it):"

STRUCTURING_PROMPT = f"""You turn the text layer of one sheet of a construction drawing set into
structured objects. There is no image: the text below is everything you have.

Segment EVERY note, schedule row, callout, tag, legend entry and title-block field into its
own object: one object per numbered note (with its wrapped lines), one per schedule/table
row, one per title-block field (label and value together). Never summarise several into one.

"source_text" is copied VERBATIM from the text layer — the exact characters, never
paraphrased, corrected or reordered. Numbers, tags and dimensions in your values must come
from the text. Put what cannot be segmented in "unresolved_items".

object_type is one of: general_note, schedule_row, title_block_field, tag, dimension,
callout, legend_entry, text.

Reply with one JSON object and nothing else, in this shape:
{REPLY_SCHEMA}"""


def build_structuring_messages(text_layer: TextLayer, max_chars: int) -> list[dict]:
    """System prompt plus one user message holding the page's text (capped at
    ``max_chars``) after the line ``TEXT LAYER (segment ALL of it):``."""
    text = text_layer.text[:max_chars]
    prompt = f"Sheet {text_layer.page_number} of the drawing set.\n\n{TEXT_HEADING}\n{text}"
    return [
        {"role": "system", "content": STRUCTURING_PROMPT},
        {"role": "user", "content": prompt},
    ]
