"""What the set step takes from each verified page."""

from shared.contracts.models import VerifiedPage
from shared.sheet.reconcile import PageFacts


def page_facts(page: VerifiedPage) -> PageFacts:
    """A page's identity, the drawing index it prints (if any), its cross-references and
    its reading, as extract and coverage read them from its words."""
    reading = page.reading
    return PageFacts(
        page_number=page.page_number,
        sheet_number=page.sheet.sheet_number,
        sheet_title=page.sheet.sheet_title,
        index=reading.index_rows if reading and reading.index_rows else page.drawing_index,
        references=reading.references if reading and reading.references else page.references,
        reading=reading,
    )
