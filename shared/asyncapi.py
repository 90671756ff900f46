"""The AsyncAPI document of every sheetflow event, generated from the message models."""

from typing import Any

from faststream.nats import NatsBroker
from faststream.specification import AsyncAPI

from shared import messages, subjects
from shared.settings import Settings

EVENTS: dict[str, tuple[type, str]] = {
    subjects.JOB_ACCEPTED: (
        messages.JobAccepted,
        "ingest accepted an upload; its pages are queued",
    ),
    subjects.JOB_PROGRESS: (messages.JobProgress, "a page reached a stage (live progress)"),
    subjects.PAGE_EXTRACT: (messages.ExtractPage, "command: extract one page"),
    subjects.PAGE_EXTRACTED: (messages.PageExtracted, "rung 1 finished for a page"),
    subjects.PAGE_STRUCTURE: (messages.StructurePage, "command: text-only structuring (rung 2)"),
    subjects.PAGE_FALLBACK: (messages.FallbackPage, "command: deterministic fallback (rung 3)"),
    subjects.PAGE_STRUCTURED: (messages.PageStructured, "rung 2 or 3 finished for a page"),
    subjects.PAGE_COVERED: (messages.PageCovered, "a page left the coverage ladder"),
    subjects.PAGE_VERIFIED: (messages.PageVerified, "a page was checked against its text layer"),
    subjects.PAGE_FAILED: (
        messages.PageFailed,
        "a page exhausted its deliveries; named in the report",
    ),
    subjects.REPORT_READY: (messages.ReportReady, "a job's report is written"),
}


def asyncapi_document(settings: Settings) -> dict[str, Any]:
    """Build the document without connecting: publishers only describe the contract."""
    broker = NatsBroker(settings.nats_url or "nats://127.0.0.1:4222")
    for name, (model, description) in EVENTS.items():
        broker.publisher(
            settings.subject(name),
            schema=model,
            title=settings.subject(name),
            description=description,
        )
    spec = AsyncAPI(
        broker,
        title="sheetflow events",
        version="0.1.0",
        description="Every event sheetflow publishes. Subscribe from any language; "
        "payloads are JSON. Object keys point into the job's S3 bucket.",
    )
    return spec.to_specification().to_jsonable()
