"""Which pages a person should look at first: each page's ``review_priority`` and its
reasons, from what the pipeline found (pure)."""

from collections import Counter
from collections.abc import Iterable

from shared.contracts.models import VerifiedPage
from shared.contracts.report import (
    PRIORITY_ORDER,
    PageReport,
    PriorityLevel,
    PriorityReason,
    ReviewPriority,
)
from shared.sheet.identity import title_from_template
from shared.sheet.sheet_set import Correction

# OCR's confidence in a line below which a number or title it read is worth a look: the
# recogniser gives 0.9 and more to lines it reads surely, 0.6-0.8 to a misread.
LOW_OCR_CONFIDENCE = 0.85
HIGH = frozenset({"failed", "problem_open", "low_ocr_confidence", "set_override"})
# Reasons that stand on the page's number or title: a person's correction of it ends them.
IDENTITY = frozenset({"low_ocr_confidence", "set_override", "title_from_template"})


def level(reasons: Iterable[PriorityReason]) -> PriorityLevel:
    kinds = {r.kind for r in reasons}
    if kinds & HIGH:
        return "high"
    return "normal" if kinds else "low"


def of_failed(canceled: bool) -> ReviewPriority:
    if canceled:
        return ReviewPriority(level="low")  # nothing was read: the job was canceled
    reason = PriorityReason(kind="failed", says="the page reached no verdict")
    return ReviewPriority(level="high", reasons=[reason])


def of_page(page: VerifiedPage, correction: Correction | None) -> ReviewPriority:
    """The page's priority from its verdict, its own reading and what the set decided."""
    reasons: list[PriorityReason] = []
    verdict = page.verdict
    if not verdict.ok:
        reasons.append(
            PriorityReason(kind="problem_open", says=f"{len(verdict.problems)} open problem(s)")
        )
    reading = page.reading
    for name, field in (
        ("number", reading and reading.number),
        ("title", reading and reading.title),
    ):
        if field and field.confidence is not None and field.confidence < LOW_OCR_CONFIDENCE:
            says = f"OCR read the sheet {name} with confidence {field.confidence:.2f}"
            reasons.append(PriorityReason(kind="low_ocr_confidence", says=says))
    if correction is not None:
        if correction.was != correction.now:  # not a title alone
            was = f'"{correction.was}"' if correction.was else "no number"
            says = f'the set decided "{correction.now}" ({correction.basis}); the page read {was}'
            reasons.append(PriorityReason(kind="set_override", says=says))
        if title_from_template(correction, reading.sheet_title if reading else None):
            says = "its title was read only where the set's title block template puts it"
            reasons.append(PriorityReason(kind="title_from_template", says=says))
    if verdict.unjudged and verdict.skipped != "blank":
        says = verdict.reason or "nothing independent checked it"
        reasons.append(PriorityReason(kind="unchecked", says=f"not checked: {says}"))
    if page.hidden_text:
        says = f"{page.hidden_text.count} word(s) of hidden text"
        reasons.append(PriorityReason(kind="hidden_text", says=says))
    return ReviewPriority(level=level(reasons), reasons=reasons)


def after_review(page: PageReport, open_problems: bool) -> ReviewPriority | None:
    """The page's priority once a person has reviewed it: problems all decided leave no
    open problem; a number or title a person gave ends the reasons that stood on it."""
    priority = page.review_priority
    if priority is None or page.review is None:
        return priority
    corrected = set(page.review.corrected) & {"sheet_number", "sheet_title"}
    reasons = [
        r
        for r in priority.reasons
        if not (r.kind == "problem_open" and not open_problems)
        and not (r.kind in IDENTITY and corrected)
    ]
    return ReviewPriority(level=level(reasons), reasons=reasons)


def by_level(priorities: Iterable[ReviewPriority | None]) -> dict[str, int]:
    """Pages per level, every level named, in the order high, normal, low."""
    counted = Counter(p.level for p in priorities if p is not None)
    return {name: counted[name] for name in PRIORITY_ORDER}
