"""Rung 3: one low-confidence stub per text segment, so no text-bearing page is dark."""

from services.extract.segment import segment_text
from shared.models import PageObject, TextLayer


def fallback_stubs(text_layer: TextLayer, max_objects: int) -> list[PageObject]:
    """One ``general_note`` stub per segment of the page's text (at most ``max_objects``),
    with the segment's verbatim text as ``source_text`` and its bbox."""
    page = text_layer.page_number
    return [
        PageObject(
            object_id=f"p{page}-f{i}",
            object_type="general_note",
            source_text=segment.text,
            bbox=segment.bbox,
            page_number=page,
            confidence="low",
            grounding="text_layer_fallback",
            rung="fallback",
        )
        for i, segment in enumerate(segment_text(text_layer)[:max_objects], start=1)
    ]
