"""What stands in for the judge on a page no judge ruled on: the page's own witnesses (its
text layer, drawings and the ink of its image) on whether it is blank."""

from services.verify.checks.base import CheckResult, PageEvidence
from shared.contracts.models import PageObject

BLANK_REASON = "blank: no text layer, objects, vector drawing or ink on its image"
NO_IMAGE_REASON = "nothing was extracted, and no page image is there to tell whether it is blank"


def witnesses_say(page: PageEvidence, objects: list[PageObject]) -> CheckResult:
    """A blank page is skipped; an empty page no witness contradicts and without its image
    is unjudged, saying so; a contradicted empty page is content_missing, unless its
    image's ink is the only witness (nothing can say whether that is content)."""
    emptiness = page.emptiness
    result = CheckResult()
    if emptiness.blank:
        result.skipped, result.reason = "blank", BLANK_REASON
    elif not objects and not emptiness.contradiction:
        result.reason = NO_IMAGE_REASON
    elif emptiness.ink_only:
        result.reason = f"{emptiness.contradiction} No text layer or judge can say what it is."
    elif emptiness.contradiction:
        missing = f"{emptiness.contradiction.rstrip('.')}: its content is missing."
        result.problems.append(("content_missing", missing))
    elif not page.text_layer.has_text_layer:
        result.reason = "the page has no text layer to check objects against, and no judge"
    return result


class WitnessCheck:
    """No basis of its own (no object verdict): it speaks for a page no check before it
    ruled on as a whole."""

    def applies(self, page: PageEvidence, objects: list[PageObject], spoken: bool) -> bool:
        return not spoken

    async def run(self, page: PageEvidence, objects: list[PageObject]) -> CheckResult:
        return witnesses_say(page, objects)
