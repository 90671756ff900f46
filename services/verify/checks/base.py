"""What a check is: it reads the page's evidence and the verdicts given so far, and returns
its own verdicts, each with its basis, and what it says of the page as a whole."""

from dataclasses import dataclass, field
from typing import Any, Protocol

from services.verify.blank import Emptiness
from services.verify.tolerances import VerifyTolerances
from shared.contracts.models import CoveredPage, ObjectVerification, PageObject, Usage
from shared.infra.settings import Settings
from shared.pagetext import Box, PageWords, TextLayer


@dataclass(frozen=True)
class PageEvidence:
    """Everything a check may read of a page, gathered once before any check runs."""

    covered: CoveredPage
    text_layer: TextLayer
    pdf: bytes | None  # the source document (or a one-page PDF of this page)
    png: bytes | None  # the stored page image
    settings: Settings
    tolerances: VerifyTolerances
    judge_enabled: bool  # the job's option
    emptiness: Emptiness
    # object_id -> where the words it cites sit (the text layer locates the claim)
    located: dict[str, Box]
    # object_id -> where its claim sits: located, else the box extraction gave it
    where: dict[str, Box]
    page: PageWords | None  # the text layer's words, to align a reading; None without


@dataclass
class Finding:
    """A check's verdict on one object; ``said`` is the check's own answer, kept on the
    verification where it disagrees with a verdict that stands (a second opinion's)."""

    verification: ObjectVerification
    said: dict[str, Any] | None = None


@dataclass
class CheckResult:
    """What one check found: verdicts by object id, and its word on the page."""

    findings: dict[str, Finding] = field(default_factory=dict)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (kind, sentence)
    page_judged: bool = False  # a definite page-level verdict (an identity or blank claim)
    speaks_for_page: bool = False  # it ruled on the page as a whole (the judge did)
    skipped: str | None = None
    reason: str | None = None
    usage: dict[str, Usage] = field(default_factory=dict)
    crops: dict[str, bytes] = field(default_factory=dict)  # key under jobs/{id}/ -> JPEG
    model_failure: str | None = None  # a model call failed (the server, not the reply)
    lines_read: int = 0  # lines of the page read by OCR
    title_block_read: bool = False  # the title block's number read alike by OCR


class Check(Protocol):
    """One way of checking a page. ``objects`` are the page's objects with the verdicts the
    checks before it gave (read only: a check returns verdicts, it never sets them)."""

    def applies(self, page: PageEvidence, objects: list[PageObject], spoken: bool) -> bool:
        """Whether the check runs on this page (``spoken``: a check before it has ruled on
        the page as a whole)."""
        ...

    async def run(self, page: PageEvidence, objects: list[PageObject]) -> CheckResult: ...
