"""The report.json contract every test holds reports to: the names readers rely on (keep
these; add freely), and validation against the JSON Schema generated from the report models."""

from functools import cache
from typing import Any

from jsonschema import Draft202012Validator

from shared.contracts.report import report_json_schema

REPORT_KEYS = {
    "job_id",
    "file_name",
    "page_count",
    "status",
    "created_at",
    "finished_at",
    "pages",
    "summary",
}
PAGE_KEYS = {
    "page_number",
    "status",
    "failure_reason",
    "has_text_layer",
    "degraded",
    "sheet",
    "objects",
    "coverage",
    "rungs",
    "verification",
}
SHEET_KEYS = {"sheet_number", "sheet_title", "discipline", "sheet_number_source"}
OBJECT_KEYS = {
    "object_id",
    "object_type",
    "source_text",
    "attributes",
    "bbox",
    "grounding",
    "confidence",
    "verification",
}
VERDICT_KEYS = {"ok", "problems", "kinds", "untagged", "unjudged", "skipped"}
SUMMARY_KEYS = {
    "extraction_coverage",
    "verification",
    "sheets",
    "failed_pages",
    "degraded_pages",
    "usage",
    "timings",
}


@cache
def _validator() -> Draft202012Validator:
    schema = report_json_schema()
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


def assert_valid_report(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` (a report.json as read back) is valid against the JSON Schema generated
    from the report models, and its summary arithmetic holds; returned for chaining."""
    errors = sorted(_validator().iter_errors(document), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:10])
    v = document["summary"]["verification"]
    assert v["pages_verified"] == v["pages_passed"] + v["verify_failed"] + v["pages_unjudged"]
    assert v["pages_skipped_blank"] <= v["pages_unjudged"]
    assert (
        v["pages_skipped_blank"] <= v["pages_blank"] and v["pages_self_read"] <= v["pages_unjudged"]
    )
    verified = [p for p in document["pages"] if p["status"] == "verified"]
    assert v["pages_verified"] == len(verified)
    return document
