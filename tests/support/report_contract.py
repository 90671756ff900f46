"""The report.json names issue 6 fixes (keep these; add freely): one place for every test."""

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
