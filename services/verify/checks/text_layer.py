"""The text-layer check: every claim held to the page words it cites (``oracle``), the
sheet's identity to its title block, and the page's coverage to its floor."""

import asyncio

from services.verify.checks.base import CheckResult, Finding, PageEvidence
from services.verify.oracle import check_content, check_identity, check_object
from shared.contracts.models import ObjectVerification, PageObject
from shared.pagetext import TextLayer
from shared.sheet.identity import claimed_number

# Objects the extraction cut from the page's own words: checking them against those words
# cannot fail.
SELF_READ_RUNGS = frozenset({"offline", "fallback"})
SELF_READ_OBJECT = "cut from the page's own words: checking it against them proves nothing"
CITED_OBJECT = (
    "its text is the words it cites, filled in from its citation: checking it against them "
    "proves nothing"
)


def self_read(obj: PageObject) -> bool:
    """Whether the object's text is the page's own words it would be checked against: cut
    from them (offline and fallback rungs), or filled in from its citation by the grounding
    guard (``source_cited``). Checking it against them cannot fail, so it is no verdict."""
    return obj.rung in SELF_READ_RUNGS or obj.source_cited


def text_check(obj: PageObject, text_layer: TextLayer) -> ObjectVerification:
    """The oracle's verdict on the object, or, for an object cut from the words it cites,
    ``not_judged`` (located, with the reason) unless the oracle refutes it: an extraction
    that broke its own construction is a problem whoever finds it."""
    verification = check_object(obj, text_layer.words)
    if not self_read(obj) or verification.verdict == "refuted":
        return verification
    reason = CITED_OBJECT if obj.rung not in SELF_READ_RUNGS else SELF_READ_OBJECT
    return ObjectVerification(
        verdict="not_judged", evidence_bbox=verification.evidence_bbox, reason=reason
    )


def read_against_text_layer(page: PageEvidence, objects: list[PageObject]) -> CheckResult:
    """The check itself (CPU-bound). On a text-bearing page every object with a
    ``source_text`` gets the oracle's verdict; graphical claims get ``not_judged``.
    Page-level: the sheet's identity against its title block (as the page's reading, made
    once in extract, states it) and content missing."""
    layer = page.text_layer
    result = CheckResult()
    if layer.words:
        result.findings = {o.object_id: Finding(text_check(o, layer)) for o in objects}
    covered = page.covered
    if layer.has_text_layer:
        printed = covered.reading.sheet_number if covered.reading else None
        extracted = claimed_number(covered.sheet)
        if sentence := check_identity(extracted, printed):
            result.problems.append(("identity_wrong", sentence))
    if sentence := check_content(covered):
        result.problems.append(("content_missing", sentence))
    return result


class TextLayerCheck:
    """Basis ``text_layer``: deterministic, on every page."""

    def applies(self, page: PageEvidence, objects: list[PageObject], spoken: bool) -> bool:
        return True

    async def run(self, page: PageEvidence, objects: list[PageObject]) -> CheckResult:
        return await asyncio.to_thread(read_against_text_layer, page, objects)
