"""Additive merge of a later rung's objects into what earlier rungs found.

Earlier objects are never dropped or reordered: a vision object may be the only record of
something drawn (a `graphical_basis` with no `source_text`). A later object adds to the page
unless what it says is already there, so merging the same answer twice changes nothing.
"""

from shared.contracts.models import PageObject
from shared.pagetext import normalize


def merge_objects(base: list[PageObject], later: list[PageObject]) -> list[PageObject]:
    """Base objects first, in order, all kept; then each later object that adds something.

    A later object citing page words (``evidence``) is a duplicate when every word it cites
    is already cited by an object kept so far. One without evidence is a duplicate when its
    normalized `source_text` already appears as a word run in a kept object, or, without
    `source_text` either, when an identical object is kept. Kept later objects get a fresh
    `object_id` on collision.
    """
    merged = list(base)
    cited = {i for obj in base for i in obj.evidence}
    haystack = "".join(f" {text} \n" for obj in base if (text := normalize(obj.source_text or "")))
    ids = {obj.object_id for obj in base}
    for obj in later:
        text = normalize(obj.source_text or "")
        if obj.evidence:
            if cited.issuperset(obj.evidence):
                continue
        elif text:
            if f" {text} " in haystack:
                continue
        elif any(_same_content(obj, kept) for kept in merged):
            continue
        if obj.object_id in ids:
            obj = obj.model_copy(update={"object_id": _unique_id(obj.object_id, ids)})
        ids.add(obj.object_id)
        merged.append(obj)
        cited.update(obj.evidence)
        if text:
            haystack += f" {text} \n"
    return merged


def _same_content(a: PageObject, b: PageObject) -> bool:
    return a.model_dump(exclude={"object_id"}) == b.model_dump(exclude={"object_id"})


def _unique_id(object_id: str, taken: set[str]) -> str:
    n = 2
    while f"{object_id}-{n}" in taken:
        n += 1
    return f"{object_id}-{n}"


def _blank(value: str | None) -> bool:
    return value is None or not value.strip()
