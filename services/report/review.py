"""A person's review laid over the pipeline's report: pure functions.

The pipeline's results are never changed. ``corrected_pages`` gives the set step the pages
as a person corrected them (so the index, duplicates and references are reconciled again);
``apply_review`` then shows each corrected value in the report with the pipeline's beside it
(``sheet_number_source: "person"``), marks each reviewed problem dismissed or confirmed —
still listed, counted apart — and numbers the report's revision."""

from services.report import priority
from shared.contracts.models import VerifiedPage
from shared.contracts.report import PageReport, PageReview, ProblemState, Report, ReviewSummary
from shared.contracts.review import ProblemReview, SheetCorrection, decisions, sheet_values
from shared.sheet.identity import decide_identity

Records = list[SheetCorrection | ProblemReview]


def corrected_pages(pages: list[VerifiedPage], records: Records) -> list[VerifiedPage]:
    """The verified pages as a person corrected their identities: what the set step reads."""
    values = sheet_values(records)
    return [
        p.model_copy(
            update={
                "sheet": decide_identity(p.reading, header=p.sheet, person=values[p.page_number])
            }
        )
        if p.page_number in values
        else p
        for p in pages
    ]


def _original(page: PageReport, field: str) -> str | None:
    return getattr(page.sheet, field, None)


def _page(
    page: PageReport, values: dict[str, str | None], decided: dict[int, ProblemReview]
) -> PageReport:
    problems = page.verification.problems if page.verification else []
    states = [
        ProblemState(
            number=n,
            text=text,
            state=decided[n].after if n in decided else "open",
            by=decided[n].by if n in decided else None,
            reason=decided[n].reason if n in decided else None,
        )
        for n, text in enumerate(problems, start=1)
    ]
    if not values and not decided:
        return page
    review = PageReview(
        corrected=values,
        original={field: _original(page, field) for field in values},
        problems=states if decided else [],
    )
    # The page carries the set's decision and discipline already: the person's values go over it.
    sheet = decide_identity(None, header=page.sheet, person=values)
    return page.model_copy(update={"sheet": sheet, "review": review})


def _open_problems(page: PageReport) -> bool:
    if not page.verification or page.verification.ok:
        return False
    if page.review is None or not page.review.problems:
        return True
    return any(p.state != "dismissed" for p in page.review.problems)


def apply_review(report: Report, records: Records) -> Report:
    """``report`` (built from the pipeline's results, the set reconciled from the corrected
    pages) with a person's review shown in it."""
    values = sheet_values(records)
    decided = decisions(records)
    pages = [
        _page(
            page,
            values.get(page.page_number, {}),
            {n: r for (p, n), r in decided.items() if p == page.page_number},
        )
        for page in report.pages
    ]
    pages = [
        p.model_copy(update={"review_priority": priority.after_review(p, _open_problems(p))})
        for p in pages
    ]
    # A number a person gave wins over one the drawing index would set.
    sheet_set = report.set.model_copy(
        update={
            "corrections": [
                c
                for c in report.set.corrections
                if "sheet_number" not in values.get(c.page_number, {})
            ]
        }
    )
    verified = [p for p in pages if p.status == "verified"]
    identified = sum(bool(p.sheet.sheet_number) for p in verified)
    review = ReviewSummary(
        corrections=sum(isinstance(r, SheetCorrection) for r in records),
        pages_corrected=len(values),
        problems_dismissed=sum(r.after == "dismissed" for r in decided.values()),
        problems_confirmed=sum(r.after == "confirmed" for r in decided.values()),
        pages_with_open_problems=sum(_open_problems(p) for p in verified),
    )
    summary = report.summary.model_copy(
        update={
            "set": sheet_set.summary(),
            "review": review,
            "pages_by_priority": priority.by_level(p.review_priority for p in pages),
            "sheets": report.summary.sheets.model_copy(
                update={"identified": identified, "missing": len(verified) - identified}
            ),
        }
    )
    return report.model_copy(
        update={
            "pages": pages,
            "set": sheet_set,
            "summary": summary,
            "revision": 1 + len(records),
            "review": records,
        }
    )
