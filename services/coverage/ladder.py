"""The coverage ladder: which rung a low-coverage page climbs next, and its saved state.

Rung 1 (vision or offline) has run when coverage sees a page. Rung 2 is a
text-only structuring pass, rung 3 deterministic stubs; each is asked for at
most once, in that order, and only while the page stays below the floor.
The state lives in the job/page KV so a restarted coverage service resumes a
page's ladder instead of forgetting it.
"""

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field

from shared.contracts.messages import JobOptions
from shared.contracts.models import Coverage, Rung
from shared.infra.settings import Settings

LadderRung = Literal["text_structuring", "fallback"]


def next_rung(
    *,
    has_text_layer: bool,
    has_words: bool,
    coverage: Coverage,
    floor: float,
    rungs_applied: Sequence[str],
    text_retry_enabled: bool,
    fallback_enabled: bool,
    model_configured: bool,
) -> LadderRung | None:
    """The rung to ask for next, or None when the page is done climbing.

    A page without words (no text layer, nothing OCR could read) has nothing to measure. A
    scanned page's OCR words are measured and can get fallback stubs, but are never sent to
    text structuring (a reading of the image is not text a model may take as given). Rung 2
    never follows rung 3.
    """
    if not has_words or coverage.ratio >= floor:
        return None
    if (
        text_retry_enabled
        and has_text_layer
        and model_configured
        and "text_structuring" not in rungs_applied
        and "fallback" not in rungs_applied
    ):
        return "text_structuring"
    if fallback_enabled and "fallback" not in rungs_applied:
        return "fallback"
    return None


class LadderPolicy(BaseModel):
    """The knobs `next_rung` reads, after a job's options override the deployment's settings."""

    floor: float
    text_retry_enabled: bool
    fallback_enabled: bool
    model_configured: bool

    @classmethod
    def resolve(cls, settings: Settings, options: JobOptions) -> "LadderPolicy":
        """Job options win where set; rung 2 needs a model that can structure text."""
        return cls(
            floor=(
                settings.extract_coverage_floor
                if options.coverage_floor is None
                else options.coverage_floor
            ),
            text_retry_enabled=(
                settings.extract_text_retry_enabled
                if options.text_retry is None
                else options.text_retry
            ),
            fallback_enabled=(
                settings.extract_fallback_enabled if options.fallback is None else options.fallback
            ),
            model_configured=bool(settings.llm_base_url and settings.structure_model),
        )


class LadderState(BaseModel):
    """One page's ladder, as kept in the job/page KV (`ladder_key`).

    `rungs_applied` starts with rung 1 ("vision" or "offline"), as `CoveredPage.rungs` does.
    The merged page is never stored here: it is rebuilt by merging the rung-1
    result (`extracted_key`) with each result in `result_keys`, in the order of
    `rungs_applied`, which is deterministic and so survives a restart.
    """

    job_id: str
    page_number: int
    extracted_key: str
    text_key: str
    source_key: str
    has_text_layer: bool
    has_words: bool = Field(
        False, description="the page has words to measure: its text layer, or OCR words"
    )
    options: JobOptions = JobOptions()
    rungs_applied: list[Rung] = []
    pending: LadderRung | None = None
    coverage_before: Coverage
    coverage: Coverage
    result_keys: dict[LadderRung, str] = {}
    done: bool = False

    def asked(self, rung: LadderRung) -> "LadderState":
        """The state once `rung` has been requested from extract."""
        return self.model_copy(update={"pending": rung})

    def answered(self, rung: LadderRung, result_key: str, coverage: Coverage) -> "LadderState":
        """The state once `rung`'s result is merged; a redelivered answer changes nothing."""
        if rung in self.result_keys:
            return self
        return self.model_copy(
            update={
                "rungs_applied": [*self.rungs_applied, rung],
                "result_keys": {**self.result_keys, rung: result_key},
                "pending": None,
                "coverage": coverage,
            }
        )

    def finished(self) -> "LadderState":
        """The state once the page has left the ladder (covered.json written)."""
        return self.model_copy(update={"pending": None, "done": True})


def ladder_key(job_id: str, page_number: int) -> str:
    """The KV key of a page's ladder state (KV keys allow letters, digits, `-_=.`)."""
    return f"ladder.{job_id}.{page_number}"
