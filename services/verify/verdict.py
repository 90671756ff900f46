"""The page verdict: the shape that lets a fleet of runs be tallied."""

from collections.abc import Sequence

from shared.contracts.models import (
    PROBLEM_KIND_ORDER,
    BasisShare,
    CheckedShare,
    PageObject,
    PageVerdict,
)

# Object verdicts that settle the object; "uncertain" has looked and not decided.
DEFINITE = frozenset({"confirmed", "refuted"})
# Verdicts that are the result of looking at the object (others are not judged).
_LOOKED_AT = DEFINITE | {"uncertain"}
# The kind of a problem no known kind fits (the contract's "untagged").
UNTAGGED = "untagged"
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

    ``page_problems`` are ``(kind, sentence)`` pairs (identity_wrong, content_missing); a
    problem of kind ``UNTAGGED`` (no known kind) counts in ``untagged``, not in ``kinds``.
    ``ok`` is False on any problem. The page is judged when it has a problem, when at
    least one object is confirmed or refuted, or when ``page_judged`` (a definite
    page-level verdict, e.g. the judge confirming a page with no objects is empty);
    otherwise it is ``unjudged`` — ``ok`` then means nothing and is never a pass — and
    carries ``reason`` (a general one when none is given). ``skipped`` names why the page
    was not judged ("blank", "no_images").
    """
    problems = [sentence for _, sentence in page_problems]
    kinds = {kind for kind, _ in page_problems if kind != UNTAGGED}
    not_judged = 0
    definite = page_judged
    for obj in objects:
        v = obj.verification
        if v is None or v.verdict not in _LOOKED_AT:
            not_judged += 1
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
        objects_not_judged=not_judged,
        untagged=sum(kind == UNTAGGED for kind, _ in page_problems),
        unjudged=unjudged,
        skipped=skipped,
        reason=reason or (NOTHING_DEFINITE if unjudged else None),
    )


def checked_share(
    objects: Sequence[PageObject],
    *,
    ocr_lines: int = 0,
    title_block_read: bool = False,
) -> CheckedShare:
    """How much of the page the checks read: the objects with a verdict (confirmed,
    refuted or uncertain), by basis, as shares of the page's objects and of the words they
    cite; and the lines the OCR check read."""
    looked = [o for o in objects if o.verification and o.verification.verdict in _LOOKED_AT]
    by_basis: dict[str, list[PageObject]] = {}
    for obj in looked:
        basis = obj.verification.basis if obj.verification else None
        by_basis.setdefault(basis or "none", []).append(obj)
    overall = _share(looked, objects)
    return CheckedShare(
        objects=len(objects),
        checked=len(looked),
        share_of_objects=overall.share_of_objects,
        share_of_text=overall.share_of_text,
        by_basis={basis: _share(some, objects) for basis, some in sorted(by_basis.items())},
        ocr_lines=ocr_lines,
        fonts_cited=sum(bool(o.verification and o.verification.font_check) for o in looked),
        title_block_read=title_block_read,
    )


def _share(some: Sequence[PageObject], objects: Sequence[PageObject]) -> BasisShare:
    cited = {i for o in objects for i in o.evidence}
    words = {i for o in some for i in o.evidence}
    return BasisShare(
        objects=len(some),
        confirmed=sum(bool(o.verification and o.verification.verdict == "confirmed") for o in some),
        share_of_objects=round(len(some) / len(objects), 4) if objects else 0.0,
        share_of_text=round(len(words) / len(cited), 4) if cited else 0.0,
    )
