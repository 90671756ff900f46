"""Verify's use case: a covered page in, the page with every object's verdict stored and
announced."""

import asyncio
from dataclasses import dataclass, field

from services.verify.fonts import FontLedger
from services.verify.pipeline import verify_page
from services.verify.tolerances import VerifyTolerances
from shared.contracts import subjects
from shared.contracts.interfaces import Bucket, ModelClient, ObjectMissing, Ocr, Publisher
from shared.contracts.messages import PageCovered, PageVerified
from shared.contracts.models import CoveredPage
from shared.infra.broker import msg_id
from shared.infra.jobs import JobStore, record_progress
from shared.infra.settings import Settings
from shared.infra.storage import Keys
from shared.pagetext import TextLayer
from shared.pdf.sources import SourceCache


@dataclass(frozen=True)
class Collaborators:
    """What verify's use case works with (built by ``services.verify.bootstrap``): the real
    stores, publisher and model client in the service, in-memory fakes in unit tests.
    ``sources`` keeps the source PDFs the judge's evidence crops are rendered from; ``ocr``
    reads the OCR check's sample (none: no OCR check)."""

    bucket: Bucket
    jobs: JobStore
    publisher: Publisher
    settings: Settings
    llm: ModelClient | None
    sources: SourceCache
    ocr: Ocr | None = None  # reads a sample of each page's claims (the OCR check)
    tolerances: VerifyTolerances = field(default_factory=VerifyTolerances)  # what checks weigh
    # The fonts each job's pages read alike already (none: every page reads its own).
    fonts: FontLedger = field(default_factory=lambda: FontLedger(None))


async def verify(io: Collaborators, event: PageCovered) -> None:
    job, n = event.job_id, event.page_number
    covered, text_layer = await asyncio.gather(
        io.bucket.get_model(event.covered_key, CoveredPage),
        io.bucket.get_model(event.text_key, TextLayer),
    )
    judge_enabled = event.options.judge is not False
    judging = judge_enabled and bool(io.llm and io.settings.llm_verify_model)
    png = None
    # The page image only matters to the judge and to telling a blank page from a scan.
    if judging or not text_layer.has_text_layer:
        try:
            png = await io.bucket.get_bytes(Keys.image(job, n))
        except ObjectMissing:
            png = None
    # The PDF renders evidence crops: high-DPI ones for the judge, small ones for the report.
    pdf = await io.sources.get(event.source_key)
    out = await verify_page(
        covered,
        text_layer,
        pdf,
        png,
        io.settings,
        io.llm,
        judge_enabled=judge_enabled,
        ocr=io.ocr,
        tolerances=io.tolerances,
        fonts=io.fonts,
    )
    await asyncio.gather(
        *(
            io.bucket.put_bytes(Keys.job(job) + key, jpeg, "image/jpeg")
            for key, jpeg in out.crops.items()
        )
    )
    verified_key = Keys.verified(job, n)
    await io.bucket.put_json(verified_key, out.verified)
    event_out = PageVerified(
        job_id=job, page_number=n, verified_key=verified_key, verdict=out.verified.verdict
    )
    await record_progress(io.jobs, io.publisher, job, n, "verified")
    await io.publisher.publish(subjects.PAGE_VERIFIED, event_out, dedup_id=msg_id(job, n))
