"""The checks verify runs, in order, and the rules for whose verdict stands: the one place
that says how checks meet. A new basis is a module with its check and a line here."""

from dataclasses import dataclass, field
from typing import Any

from services.verify.checks.base import Check, CheckResult, Finding, PageEvidence
from services.verify.checks.judge import JudgeCheck
from services.verify.checks.ocr import OcrCheck
from services.verify.checks.reread import RereadCheck
from services.verify.checks.text_layer import TextLayerCheck
from services.verify.checks.witnesses import WitnessCheck
from services.verify.fonts import FontLedger
from shared.contracts.interfaces import ModelClient, Ocr
from shared.contracts.models import ObjectVerification, PageObject, Usage, merge_usage

EVERY = frozenset({"confirmed", "refuted", "uncertain", "not_judged"})
UNREAD = frozenset({"not_judged"})  # no check has read the object
UNDECIDED = frozenset({"not_judged", "uncertain"})  # nothing definite stands
# Refutations of the words every other check trusted (the text layer is not what the page
# shows): they replace whatever stands.
OVERRIDING_KINDS = frozenset({"text_layer_mismatch"})


@dataclass(frozen=True)
class Registered:
    """A check in its place: which standing verdicts its own replace, and whether it is a
    second opinion (its word against a definite verdict is recorded as a disagreement, and
    its refutation of a confirmed object stands)."""

    check: Check
    replaces: frozenset[str]
    second_opinion: bool = False


def registered(
    llm: ModelClient | None, ocr: Ocr | None, fonts: FontLedger | None = None
) -> tuple[Registered, ...]:
    """The checks in the order they run: each sees the verdicts of those before it."""
    return (
        Registered(TextLayerCheck(), replaces=EVERY),
        Registered(OcrCheck(ocr, fonts), replaces=UNREAD),
        Registered(RereadCheck(ocr), replaces=frozenset()),
        Registered(JudgeCheck(llm), replaces=UNDECIDED, second_opinion=True),
        Registered(WitnessCheck(), replaces=frozenset()),
    )


def settle(
    entry: Registered, obj: PageObject, finding: Finding
) -> tuple[ObjectVerification, dict[str, Any] | None]:
    """The object's verification once ``entry``'s check has given ``finding``, and the
    disagreement to record.

    The finding stands where nothing stood, where the standing verdict is one the check
    replaces, or where it refutes the text layer itself (``OVERRIDING_KINDS``). Otherwise the
    standing verdict stays; a second opinion that differs from it is recorded (its own
    answer kept on the verification), and its refutation of a confirmed object stands
    instead — a refutation of the first checks' stands whatever it says."""
    current = obj.verification
    proposed = finding.verification
    if current is None or current.verdict in entry.replaces or proposed.kind in OVERRIDING_KINDS:
        return proposed, None
    if not entry.second_opinion or proposed.verdict == current.verdict:
        return current, None
    if current.verdict == "confirmed" and proposed.verdict == "refuted":
        result, kept = proposed, "judge"
    else:
        result, kept = current, "oracle"
    disagreement = {
        "object_id": obj.object_id,
        "oracle": {
            "verdict": current.verdict,
            "kind": current.kind,
            "actual_text": current.actual_text,
        },
        "judge": finding.said,
        "kept": kept,
    }
    return result.model_copy(update={"judge": finding.said}), disagreement


@dataclass
class Checked:
    """What the checks found on a page together."""

    objects: list[PageObject]  # with the verifications that stood
    problems: list[tuple[str, str]] = field(default_factory=list)  # (kind, sentence)
    page_judged: bool = False
    skipped: str | None = None
    reason: str | None = None
    usage: dict[str, Usage] = field(default_factory=dict)
    crops: dict[str, bytes] = field(default_factory=dict)
    disagreements: list[dict[str, Any]] = field(default_factory=list)
    model_failure: str | None = None
    lines_read: int = 0
    title_block_read: bool = False

    def absorb(self, entry: Registered, result: CheckResult) -> None:
        for obj in self.objects:
            if finding := result.findings.get(obj.object_id):
                obj.verification, disagreement = settle(entry, obj, finding)
                if disagreement:
                    self.disagreements.append(disagreement)
        self.problems += result.problems
        self.page_judged |= result.page_judged
        self.skipped = self.skipped or result.skipped
        self.reason = self.reason or result.reason
        self.usage = merge_usage(self.usage, result.usage)
        self.crops |= result.crops
        self.model_failure = self.model_failure or result.model_failure
        self.lines_read += result.lines_read
        self.title_block_read |= result.title_block_read


async def run_checks(
    checks: tuple[Registered, ...], page: PageEvidence, objects: list[PageObject]
) -> Checked:
    """Each check that applies, in order, its verdicts settled onto ``objects`` (edited in
    place) before the next one runs."""
    checked = Checked(objects)
    spoken = False
    for entry in checks:
        if entry.check.applies(page, objects, spoken):
            result = await entry.check.run(page, objects)
            checked.absorb(entry, result)
            spoken |= result.speaks_for_page
    return checked
