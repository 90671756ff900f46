"""The page verdict: the shape that lets a fleet of runs be tallied."""

from collections.abc import Sequence

from shared.contracts.models import PROBLEM_KIND_ORDER, PageObject, PageVerdict

# Object verdicts that settle the object; "uncertain" has looked and not decided.
DEFINITE = frozenset({"confirmed", "refuted"})
# Verdicts that are the result of looking at the object (others are untagged).
_LOOKED_AT = DEFINITE | {"uncertain"}
NOTHING_DEFINITE = "no object got a definite verdict (confirmed or refuted)"


def page_verdict(
    objects: Sequence[PageObject],
    page_problems: Sequence[tuple[str, str]] = (),
    *,
    skipped: str | None = None,
    page_judged: bool = False,
    reason: str | None = None,
) -> PageVerdict:
    """Sum up a page from its objects' verifications and its page-level problems.

    ``page_problems`` are ``(kind, sentence)`` pairs (identity_wrong, content_missing).
    ``ok`` is False on any problem. The page is judged when it has a problem, when at
    least one object is confirmed or refuted, or when ``page_judged`` (a definite
    page-level verdict, e.g. the judge confirming a page with no objects is empty);
    otherwise it is ``unjudged`` — ``ok`` then means nothing and is never a pass — and
    carries ``reason`` (a general one when none is given). ``skipped`` names why the page
    was not judged ("blank", "no_images").
    """
    problems = [sentence for _, sentence in page_problems]
    kinds = {kind for kind, _ in page_problems}
    untagged = 0
    definite = page_judged
    for obj in objects:
        v = obj.verification
        if v is None or v.verdict not in _LOOKED_AT:
            untagged += 1
            continue
        definite = definite or v.verdict in DEFINITE
        if v.verdict == "refuted":
            kinds.add(v.kind or "judge_refuted")
            problems.append(v.problem or f"Object {obj.object_id} is refuted.")
    unjudged = not problems and not definite
    return PageVerdict(
        ok=not problems,
        problems=problems,
        kinds=[k for k in PROBLEM_KIND_ORDER if k in kinds],
        untagged=untagged,
        unjudged=unjudged,
        skipped=skipped,
        reason=reason or (NOTHING_DEFINITE if unjudged else None),
    )
