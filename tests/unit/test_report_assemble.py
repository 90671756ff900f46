"""The report document: its shape, every page present, statuses and summary tallies."""

import json
from datetime import UTC, datetime

import pytest

from services.report.assemble import (
    NO_OUTCOME_REASON,
    FailedPage,
    JobInfo,
    build_report,
    report_ready_summary,
)
from shared.models import (
    Coverage,
    ObjectVerification,
    PageObject,
    PageVerdict,
    SheetHeader,
    Usage,
    VerifiedPage,
)
from tests.support.report_contract import (
    OBJECT_KEYS,
    PAGE_KEYS,
    REPORT_KEYS,
    SHEET_KEYS,
    SUMMARY_KEYS,
    VERDICT_KEYS,
)

CREATED = datetime(2026, 5, 29, 9, 0, tzinfo=UTC)
FINISHED = datetime(2026, 5, 29, 9, 5, tzinfo=UTC)


def job(page_count: int, *, canceled: bool = False) -> JobInfo:
    return JobInfo(
        job_id="j_test",
        file_name="set.pdf",
        page_count=page_count,
        created_at=CREATED,
        canceled=canceled,
        coverage_floor=0.6,
    )


def verified(
    n: int,
    *,
    ratio: float = 1.0,
    total_lines: int = 10,
    verdict: PageVerdict | None = None,
    sheet_number: str | None = None,
    source: str | None = "extraction",
    rungs: tuple[str, ...] = ("offline",),
    degraded: bool = False,
    usage: dict[str, Usage] | None = None,
    timings: dict[str, float] | None = None,
    objects: list[PageObject] | None = None,
) -> VerifiedPage:
    coverage = Coverage(
        total_lines=total_lines, covered_lines=round(total_lines * ratio), ratio=ratio
    )
    return VerifiedPage(
        job_id="j_test",
        page_number=n,
        has_text_layer=total_lines > 0,
        degraded=degraded,
        sheet=SheetHeader(
            sheet_number=sheet_number,
            sheet_title="FLOOR PLAN" if sheet_number else None,
            discipline="Architectural" if sheet_number else None,
            sheet_number_source=source if sheet_number else None,
        ),
        objects=objects or [],
        coverage_before=coverage,
        coverage=coverage,
        floor=0.6,
        below_floor=ratio < 0.6 and total_lines > 0,
        rungs=list(rungs),
        usage=usage or {},
        timings_ms=timings or {},
        verdict=verdict or PageVerdict(ok=True),
    )


def test_report_has_every_documented_key():
    """report.json carries every name issue 6 lists, at each level, for verified and failed pages."""
    obj = PageObject(
        object_id="p1-o1",
        object_type="note",
        source_text="(5) 2X6 STUD PACK",
        attributes={"count": 5},
        bbox=(1, 2, 3, 4),
        grounding="source_text",
        confidence=0.9,
        verification=ObjectVerification(verdict="confirmed", evidence_bbox=(1, 2, 3, 4)),
        extra_field="kept",
    )
    report = build_report(
        job(2),
        [
            verified(1, sheet_number="A101", objects=[obj]),
            FailedPage(page_number=2, stage="extract", reason="boom"),
        ],
        finished_at=FINISHED,
    )
    assert REPORT_KEYS <= report.keys()
    assert SUMMARY_KEYS <= report["summary"].keys()
    for page in report["pages"]:
        assert PAGE_KEYS <= page.keys()
        assert SHEET_KEYS <= page["sheet"].keys()
    page1 = report["pages"][0]
    assert set(page1["coverage"]) == {"total_lines", "covered_lines", "ratio"}
    assert VERDICT_KEYS <= page1["verification"].keys()
    entry = page1["objects"][0]
    assert OBJECT_KEYS <= entry.keys()
    assert entry["extra_field"] == "kept"
    assert entry["verification"]["verdict"] == "confirmed"
    assert set(report["summary"]["extraction_coverage"]) >= {
        "pages_below_floor",
        "mean_ratio",
        "text_structured_pages",
        "fallback_pages",
    }
    assert set(report["summary"]["verification"]) >= {
        "pages_verified",
        "pages_unjudged",
        "pages_skipped_blank",
        "verify_failed",
        "kinds",
    }
    assert set(report["summary"]["sheets"]) == {
        "identified",
        "recovered_from_text_layer",
        "missing",
    }
    assert report["created_at"] == CREATED.isoformat()
    assert report["finished_at"] == FINISHED.isoformat()


def test_every_page_present_and_sorted_even_without_outcome():
    """Pages come out 1..N in order; a page nothing was recorded for is a named failed page."""
    report = build_report(job(4), [verified(4), verified(1)], finished_at=FINISHED)
    assert [p["page_number"] for p in report["pages"]] == [1, 2, 3, 4]
    assert [p["status"] for p in report["pages"]] == ["verified", "failed", "failed", "verified"]
    assert report["pages"][1]["failure_reason"] == NO_OUTCOME_REASON
    assert [f["page_number"] for f in report["summary"]["failed_pages"]] == [2, 3]
    assert report["summary"]["failed_pages"][0]["reason"] == NO_OUTCOME_REASON
    assert report["status"] == "partial"


def test_duplicate_outcomes_keep_one_page_and_verified_beats_failed():
    """At-least-once delivery: duplicates give one entry, and a late verdict wins over a failure."""
    failed = FailedPage(page_number=1, stage="verify", reason="timeout", deliveries=5)
    report = build_report(job(1), [verified(1), failed, verified(1)], finished_at=FINISHED)
    assert len(report["pages"]) == 1
    assert report["pages"][0]["status"] == "verified"
    assert report["status"] == "complete"


@pytest.mark.parametrize(
    ("canceled", "outcomes", "status"),
    [
        (False, lambda: [verified(1), verified(2)], "complete"),
        (
            False,
            lambda: [verified(1), FailedPage(page_number=2, stage="extract", reason="x")],
            "partial",
        ),
        (True, lambda: [verified(1)], "canceled"),
        (True, lambda: [verified(1), verified(2)], "canceled"),
    ],
)
def test_status(canceled, outcomes, status):
    """complete when all verified, partial when any page failed, canceled whenever the job was."""
    assert (
        build_report(job(2, canceled=canceled), outcomes(), finished_at=FINISHED)["status"]
        == status
    )


def test_failed_page_named_with_stage_and_reason():
    """A failed page shows its stage and reason in the page entry and in the summary."""
    report = build_report(
        job(1),
        [FailedPage(page_number=1, stage="extract", reason="cannot render", deliveries=5)],
        finished_at=FINISHED,
    )
    assert report["pages"][0]["failure_reason"] == "cannot render"
    assert report["pages"][0]["failure_stage"] == "extract"
    assert report["summary"]["failed_pages"] == [
        {"page_number": 1, "stage": "extract", "reason": "cannot render"}
    ]


def test_summary_counts():
    """Coverage, rung, verdict, kinds and sheet tallies count the right pages."""
    pages = [
        verified(1, ratio=1.0, sheet_number="A101", rungs=("vision",)),
        verified(
            2,
            ratio=0.5,
            sheet_number="S001",
            source="text_layer",
            rungs=("vision", "text_structuring", "fallback"),
            degraded=True,
            verdict=PageVerdict(
                ok=False, problems=["p"], kinds=["content_missing", "content_wrong"]
            ),
        ),
        verified(
            3,
            ratio=0.75,
            sheet_number="A601",
            rungs=("offline", "text_structuring"),
            verdict=PageVerdict(ok=False, problems=["p"], kinds=["content_wrong"]),
        ),
        verified(
            4,
            total_lines=0,
            ratio=0.0,
            verdict=PageVerdict(ok=True, unjudged=True, skipped="blank"),
        ),
        verified(5, ratio=1.0, sheet_number="G001", verdict=PageVerdict(ok=True, unjudged=True)),
        FailedPage(page_number=6, stage="verify", reason="gave up"),
    ]
    summary = build_report(job(6), pages, finished_at=FINISHED)["summary"]
    cov = summary["extraction_coverage"]
    assert cov["pages_below_floor"] == 1
    # the blank page (no lines) is not averaged in
    assert cov["mean_ratio"] == pytest.approx((1.0 + 0.5 + 0.75 + 1.0) / 4, abs=1e-4)
    assert cov["text_structured_pages"] == 2
    assert cov["fallback_pages"] == 1
    assert cov["rungs"] == {"fallback": 1, "offline": 3, "text_structuring": 2, "vision": 2}
    ver = summary["verification"]
    assert ver["pages_verified"] == 1
    assert ver["pages_unjudged"] == 1
    assert ver["pages_skipped_blank"] == 1
    assert ver["verify_failed"] == 2
    assert ver["kinds"] == {"content_missing": 1, "content_wrong": 2}
    assert list(ver["kinds"]) == ["content_missing", "content_wrong"]
    assert summary["sheets"] == {"identified": 4, "recovered_from_text_layer": 1, "missing": 1}
    assert summary["degraded_pages"] == [2]
    assert summary["failed_pages"] == [{"page_number": 6, "stage": "verify", "reason": "gave up"}]


def test_mean_ratio_none_without_text_pages():
    """A set of only blank/scanned pages has no mean coverage rather than a made-up one."""
    report = build_report(job(1), [verified(1, total_lines=0, ratio=0.0)], finished_at=FINISHED)
    assert report["summary"]["extraction_coverage"]["mean_ratio"] is None


def test_usage_and_timings_aggregate_over_pages():
    """Usage sums per stage across pages; timings give the per-stage median and max."""
    pages = [
        verified(
            1,
            usage={"extract": Usage(calls=1, prompt_tokens=100, completion_tokens=10)},
            timings={"extract": 100.0, "verify": 10.0},
        ),
        verified(
            2,
            usage={
                "extract": Usage(calls=2, prompt_tokens=50, completion_tokens=5),
                "verify": Usage(calls=1, prompt_tokens=7, completion_tokens=3),
            },
            timings={"extract": 300.0, "verify": 30.0},
        ),
        verified(3, timings={"extract": 200.0}),
        FailedPage(page_number=4, stage="extract", reason="x"),
    ]
    summary = build_report(job(4), pages, finished_at=FINISHED)["summary"]
    assert summary["usage"] == {
        "extract": {"calls": 3, "prompt_tokens": 150, "completion_tokens": 15},
        "verify": {"calls": 1, "prompt_tokens": 7, "completion_tokens": 3},
    }
    assert summary["timings"]["extract"]["p50_ms"] == 200.0
    assert summary["timings"]["extract"]["max_ms"] == 300.0
    assert summary["timings"]["verify"]["p50_ms"] == 20.0
    assert summary["timings"]["verify"]["max_ms"] == 30.0


def test_report_is_json_serialisable_and_ready_summary_is_compact():
    """The report survives json round-trip and the ReportReady summary carries the headline counts."""

    pages = [
        verified(
            1, ratio=0.8, verdict=PageVerdict(ok=False, problems=["x"], kinds=["content_wrong"])
        ),
        FailedPage(page_number=2, stage="extract", reason="x"),
    ]
    report = build_report(job(2), pages, finished_at=FINISHED)
    assert json.loads(json.dumps(report)) == report
    ready = report_ready_summary(report)
    assert ready["failed_pages"] == [2]
    assert ready["pages_failed"] == 1
    assert ready["page_count"] == 2
    assert ready["extraction_coverage"]["mean_ratio"] == 0.8
    assert ready["verification"]["kinds"] == {"content_wrong": 1}
    assert ready["verification"]["verify_failed"] == 1
    assert "usage" not in ready and "timings" not in ready
    assert json.loads(json.dumps(ready)) == ready
