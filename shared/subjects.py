"""Every subject sheetflow publishes on, in one place.

Names are relative to the namespace (``SHEETFLOW_NAMESPACE``, default
``sheetflow``) so that a test, or a second deployment on the same NATS
cluster, gets its own stream without touching code: the full subject is
``f"{namespace}.{name}"``.
"""

JOB_ACCEPTED = "job.accepted"
JOB_PROGRESS = "job.progress"
PAGE_EXTRACT = "page.extract"
PAGE_EXTRACTED = "page.extracted"
PAGE_STRUCTURE = "page.structure"
PAGE_FALLBACK = "page.fallback"
PAGE_STRUCTURED = "page.structured"
PAGE_COVERED = "page.covered"
PAGE_VERIFIED = "page.verified"
PAGE_FAILED = "page.failed"
REPORT_READY = "report.ready"

ALL = (
    JOB_ACCEPTED,
    JOB_PROGRESS,
    PAGE_EXTRACT,
    PAGE_EXTRACTED,
    PAGE_STRUCTURE,
    PAGE_FALLBACK,
    PAGE_STRUCTURED,
    PAGE_COVERED,
    PAGE_VERIFIED,
    PAGE_FAILED,
    REPORT_READY,
)
