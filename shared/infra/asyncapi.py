"""The AsyncAPI document of every sheetflow event, generated from the message models."""

from typing import Any
from urllib.parse import urlsplit

from faststream.nats import NatsBroker
from faststream.specification import AsyncAPI

from shared.contracts import subjects
from shared.contracts.subjects import Subject
from shared.infra.settings import Settings

# Every subject, with what its event means (its model is the subject's own).
EVENTS: dict[Subject, str] = {
    subjects.JOB_ACCEPTED: "ingest accepted an upload; its pages are queued",
    subjects.JOB_PROGRESS: "a page reached a stage (live progress)",
    subjects.PAGE_EXTRACT: "command: extract one page",
    subjects.PAGE_EXTRACTED: "rung 1 finished for a page",
    subjects.PAGE_STRUCTURE: "command: text-only structuring (rung 2)",
    subjects.PAGE_FALLBACK: "command: deterministic fallback (rung 3)",
    subjects.PAGE_STRUCTURED: "rung 2 or 3 finished for a page",
    subjects.PAGE_COVERED: "a page left the coverage ladder",
    subjects.PAGE_VERIFIED: "a page was checked against its text layer",
    subjects.PAGE_FAILED: "a page exhausted its deliveries; named in the report",
    subjects.PAGE_READ_CELL: "command: read a page again in the cell where the set's other "
    "sheets print their number (the report's set step, for a page that read none)",
    subjects.PAGE_CELL_READ: "a page was read again in the cell the report's set step named",
    subjects.REPORT_READY: "a job's report is written (again, with a higher revision, after a "
    "person's review)",
    subjects.SHEET_CORRECTED: "a person corrected a page's sheet identity",
    subjects.PROBLEM_REVIEWED: "a person dismissed or confirmed a reported problem",
    subjects.WEBHOOK_DELIVER: "command: attempt one webhook delivery (the webhooks service's own)",
    subjects.SHEET_REVISED: "a project's sheet has a new version: what changed, counted, with "
    "the keys of its delta and overlay",
    subjects.REGISTER_UPDATED: "a job's sheets joined its project's register (once per job), "
    "or a person's review changed it (once per record)",
    subjects.PROPOSAL_DECIDED: "a person accepted or rejected a proposed match of a project's "
    "register",
}


def asyncapi_document(settings: Settings) -> dict[str, Any]:
    """Build the document without connecting: publishers only describe the contract. Its
    server is the NATS the settings configure (no credentials), named after the
    deployment's environment; with none configured the document names no server."""
    broker = NatsBroker(settings.nats_url or "nats://127.0.0.1:4222")
    for subject, description in EVENTS.items():
        broker.publisher(
            settings.subject(subject),
            schema=subject.event,
            title=settings.subject(subject),
            description=description,
        )
    spec = AsyncAPI(
        broker,
        title="sheetflow events",
        version="0.1.0",
        description="Every event sheetflow publishes. Subscribe from any language; "
        "payloads are JSON. Object keys point into the job's S3 bucket.",
    )
    return _configured_server(spec.to_specification().to_jsonable(), settings)


def _configured_server(document: dict[str, Any], settings: Settings) -> dict[str, Any]:
    """``document`` naming only the configured server (FastStream names whatever URL the
    broker was given "development")."""
    document.pop("servers", None)
    for channel in document.get("channels", {}).values():
        channel.pop("servers", None)
    if not settings.nats_url:
        return document
    url = urlsplit(settings.nats_url.split(",")[0].strip())
    host = url.hostname or "localhost"
    secure = url.scheme == "tls" or bool(settings.nats_tls_ca_file or settings.nats_tls_cert_file)
    document["servers"] = {
        settings.environment: {
            "host": f"{host}:{url.port or 4222}",
            "protocol": "tls" if secure else "nats",
            "description": f"the NATS server of this {settings.environment} deployment "
            f"(subjects under {settings.namespace}.)",
        }
    }
    for channel in document.get("channels", {}).values():
        channel["servers"] = [{"$ref": f"#/servers/{settings.environment}"}]
    return document
