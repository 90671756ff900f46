"""The page verdict: the shape that lets a fleet of runs be tallied."""

from collections.abc import Sequence

from shared.models import PROBLEM_KIND_ORDER, PageObject, PageVerdict

# Object verdicts that mean something looked at the object and said so.
_JUDGED = frozenset({"confirmed", "refuted", "uncertain"})


def page_verdict(
    objects: Sequence[PageObject],
    page_problems: Sequence[tuple[str, str]] = (),
    *,
    skipped: str | None = None,
) -> PageVerdict:
    """Sum up a page from its objects' verifications and its page-level problems.

    ``page_problems`` are ``(kind, sentence)`` pairs (identity_wrong, content_missing).
    ``ok`` is False on any problem. ``unjudged`` is True when no problem was found
    and no object got a verdict — ``ok`` then means nothing, and is never a pass.
    ``skipped`` names why the page was not judged ("blank", "no_images").
    """
    problems = [sentence for _, sentence in page_problems]
    kinds = {kind for kind, _ in page_problems}
    untagged = 0
    judged_any = False
    for obj in objects:
        v = obj.verification
        if v is None or v.verdict not in _JUDGED:
            untagged += 1
            continue
        judged_any = True
        if v.verdict == "refuted":
            kinds.add(v.kind or "judge_refuted")
            problems.append(v.problem or f"Object {obj.object_id} is refuted.")
    return PageVerdict(
        ok=not problems,
        problems=problems,
        kinds=[k for k in PROBLEM_KIND_ORDER if k in kinds],
        untagged=untagged,
        unjudged=not problems and not judged_any,
        skipped=skipped,
    )
