"""The report document: its shape, every page present, statuses and summary tallies."""

import json
from collections.abc import Sequence
from datetime import UTC, datetime

import pytest

from services.report import assemble
from services.report.assemble import NO_OUTCOME_REASON, FailedPage, JobInfo, PageOutcome
from shared.contracts.messages import ReportReady
from shared.contracts.models import (
    BasisShare,
    CheckedShare,
    Coverage,
    GuardCounts,
    ObjectVerification,
    PageObject,
    PageVerdict,
    Usage,
    VerifiedPage,
)
from shared.contracts.report import ReadySummary, Report
from shared.sheet.header import SheetHeader
from tests.support.report_contract import (
    OBJECT_KEYS,
    PAGE_KEYS,
    REPORT_KEYS,
    SHEET_KEYS,
    SUMMARY_KEYS,
    VERDICT_KEYS,
    assert_valid_report,
)

CREATED = datetime(2026, 5, 29, 9, 0, tzinfo=UTC)
FINISHED = datetime(2026, 5, 29, 9, 5, tzinfo=UTC)


def build_report(job: JobInfo, pages: Sequence[PageOutcome], *, finished_at: datetime) -> dict:
    """The report as report.json holds it, checked against its JSON Schema."""
    report = assemble.build_report(job, pages, finished_at=finished_at)
    return assert_valid_report(report.model_dump(mode="json"))


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
    rung_status: dict[str, str] | None = None,
    guard: GuardCounts | None = None,
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
        rung_status=rung_status or dict.fromkeys(rungs, "ok"),
        guard=guard or GuardCounts(),
        usage=usage or {},
        timings_ms=timings or {},
        verdict=verdict or PageVerdict(ok=True),
    )


def test_report_has_every_documented_key():
    """report.json carries every name the contract lists, at each level, for verified and
    failed pages."""
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
    assert datetime.fromisoformat(report["created_at"]) == CREATED
    assert datetime.fromisoformat(report["finished_at"]) == FINISHED


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
    pages: list[PageOutcome] = [
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
    assert cov["pages_below_floor"] == [2] and cov["pages_below_floor_count"] == 1
    # the blank page (no lines) is not averaged in
    assert cov["mean_ratio"] == pytest.approx((1.0 + 0.5 + 0.75 + 1.0) / 4, abs=1e-4)
    assert cov["text_structured_pages"] == 2 and cov["text_structuring_failed_pages"] == 0
    assert cov["fallback_pages"] == [2] and cov["fallback_pages_count"] == 1
    assert cov["rungs"] == {"fallback": 1, "offline": 3, "text_structuring": 2, "vision": 2}
    ver = summary["verification"]
    assert ver["pages_verified"] == 5
    assert ver["pages_unjudged"] == 2
    assert ver["pages_skipped_blank"] == 1
    assert ver["pages_passed"] == 1
    assert ver["verify_failed"] == 2
    assert ver["kinds"] == {"content_missing": 1, "content_wrong": 2}
    assert list(ver["kinds"]) == ["content_missing", "content_wrong"]
    assert summary["sheets"] == {"identified": 4, "recovered_from_text_layer": 1, "missing": 1}
    assert summary["degraded_pages"] == [2]
    assert summary["failed_pages"] == [{"page_number": 6, "stage": "verify", "reason": "gave up"}]


def test_verification_arithmetic_on_blank_unjudged_and_problem_pages():
    """One blank, one unjudged (its objects self-read), one problem page, a page declared
    blank that its text layer contradicts (and a pass and a failed page): pages_verified
    counts every page that went through verify, pages_unjudged holds the blank and the
    unjudged page, pages_self_read the latter, verify_failed the problem pages,
    pages_passed the pass, pages_blank both declared-empty pages, and the problem rate is
    verify_failed over the judged pages."""
    missing = PageVerdict(
        ok=False, problems=["m"], kinds=["content_missing"], blank_contradicted=True
    )
    pages: list[PageOutcome] = [
        verified(1, verdict=PageVerdict(ok=True, unjudged=True, skipped="blank")),
        verified(2, verdict=PageVerdict(ok=True, unjudged=True, reason="own", self_read=True)),
        verified(3, verdict=PageVerdict(ok=False, problems=["p"], kinds=["content_wrong"])),
        verified(4, verdict=PageVerdict(ok=True)),
        FailedPage(page_number=5, stage="extract", reason="x"),
        verified(6, verdict=missing),
    ]
    ver = build_report(job(6), pages, finished_at=FINISHED)["summary"]["verification"]
    assert ver == {
        "pages_verified": 5,
        "pages_unjudged": 2,
        "pages_skipped_blank": 1,
        "pages_blank": 2,
        "pages_self_read": 1,
        "pages_passed": 1,
        "pages_passed_by_basis": {},  # none of these pages says what checked it
        "objects": 0,
        "objects_checked": 0,
        "ocr_lines": 0,
        "verify_failed": 2,
        "problem_rate": round(2 / 3, 4),
        "kinds": {"content_missing": 1, "content_wrong": 1},
        "hidden_text_pages": [],
        "blank_pages": [1, 6],
    }
    assert ver["pages_verified"] == ver["pages_passed"] + ver["verify_failed"] + 2


def test_problem_rate_is_null_when_nothing_was_judged():
    """A set of only unjudged pages has no problem rate rather than a made-up 0%."""
    pages = [verified(1, verdict=PageVerdict(ok=True, unjudged=True, skipped="blank"))]
    ver = build_report(job(1), pages, finished_at=FINISHED)["summary"]["verification"]
    assert ver["problem_rate"] is None and ver["pages_passed"] == 0


def test_failed_structuring_attempt_is_counted_apart():
    """A rung-2 reply that failed is not a text-structured page: it is counted apart, and the
    page's rung_status says so."""
    tried = ("vision", "text_structuring", "fallback")
    pages = [
        verified(1, rungs=tried, rung_status={"vision": "ok", "text_structuring": "failed"}),
        verified(2, rungs=tried[:2], rung_status={"vision": "ok", "text_structuring": "degraded"}),
        verified(3, rungs=tried[:2]),
    ]
    report = build_report(job(3), pages, finished_at=FINISHED)
    cov = report["summary"]["extraction_coverage"]
    assert (cov["text_structured_pages"], cov["text_structuring_failed_pages"]) == (2, 1)
    assert report["pages"][0]["rung_status"]["text_structuring"] == "failed"


def test_guard_counts_are_kept_per_page_and_summed():
    """The guard's four counts, vision_unverified among them, and how model-made claims were
    placed (by their cited ids, by alignment), appear per page and in total."""
    pages = [
        verified(1, guard=GuardCounts(kept=4, rescued=1, vision_unverified=2, dropped=1)),
        verified(
            2,
            guard=GuardCounts(kept=3, vision_unverified=1, placed_by_ids=3, placed_by_alignment=1),
        ),
    ]
    report = build_report(job(2), pages, finished_at=FINISHED)
    assert report["pages"][0]["guard"]["vision_unverified"] == 2
    assert report["summary"]["guard"] == {
        "kept": 7,
        "rescued": 1,
        "dropped": 1,
        "vision_unverified": 3,
        "placed_by_ids": 3,
        "placed_by_alignment": 1,
        "citations_refused": 0,
    }


def test_mean_ratio_none_without_text_pages():
    """A set of only blank/scanned pages has no mean coverage rather than a made-up one."""
    report = build_report(job(1), [verified(1, total_lines=0, ratio=0.0)], finished_at=FINISHED)
    assert report["summary"]["extraction_coverage"]["mean_ratio"] is None


def test_usage_and_timings_aggregate_over_pages():
    """Usage sums per stage across pages; timings give the per-stage median and max."""
    pages: list[PageOutcome] = [
        verified(
            1,
            usage={"extract": Usage(calls=1, prompt_tokens=100, completion_tokens=10)},
            timings={"extract": 100.0, "verify": 10.0},
        ),
        verified(
            2,
            usage={
                "extract": Usage(calls=2, prompt_tokens=50, completion_tokens=5, tiles=2),
                "verify": Usage(calls=1, prompt_tokens=7, completion_tokens=3),
            },
            timings={"extract": 300.0, "verify": 30.0},
        ),
        verified(3, timings={"extract": 200.0}),
        FailedPage(page_number=4, stage="extract", reason="x"),
    ]
    summary = build_report(job(4), pages, finished_at=FINISHED)["summary"]
    assert summary["usage"] == {
        "extract": {"calls": 3, "prompt_tokens": 150, "completion_tokens": 15, "tiles": 2},
        "verify": {"calls": 1, "prompt_tokens": 7, "completion_tokens": 3, "tiles": 0},
    }
    assert summary["timings"]["extract"]["p50_ms"] == 200.0
    assert summary["timings"]["extract"]["max_ms"] == 300.0
    assert summary["timings"]["verify"]["p50_ms"] == 20.0
    assert summary["timings"]["verify"]["max_ms"] == 30.0


def test_report_is_json_serialisable_and_ready_summary_is_compact():
    """The report survives json round-trip and the ReportReady summary carries the headline counts."""

    pages: list[PageOutcome] = [
        verified(
            1, ratio=0.8, verdict=PageVerdict(ok=False, problems=["x"], kinds=["content_wrong"])
        ),
        FailedPage(page_number=2, stage="extract", reason="x"),
    ]
    built = assemble.build_report(job(2), pages, finished_at=FINISHED)
    report = assert_valid_report(built.model_dump(mode="json"))
    assert json.loads(json.dumps(report)) == report
    assert Report.model_validate(report) == built
    ready = ReadySummary.of(built).model_dump(mode="json")
    assert ready["failed_pages"] == [2]
    assert ready["pages_failed"] == 1
    assert ready["page_count"] == 2
    assert ready["extraction_coverage"]["mean_ratio"] == 0.8
    assert ready["verification"]["kinds"] == {"content_wrong": 1}
    assert ready["verification"]["verify_failed"] == 1
    assert "usage" not in ready and "timings" not in ready
    assert json.loads(json.dumps(ready)) == ready


def test_report_ready_carries_the_page_lists():
    """report.ready carries the below-floor and fallback page lists, not only their counts."""
    pages = [
        verified(1, ratio=0.4, rungs=("vision", "fallback")),
        verified(2, ratio=0.9),
        verified(3, ratio=0.3, rungs=("offline", "fallback")),
    ]
    built = assemble.build_report(job(3), pages, finished_at=FINISHED)
    event = ReportReady(
        job_id="j_test",
        file_name="set.pdf",
        page_count=3,
        status=built.status,
        summary=ReadySummary.of(built),
        report_key="k",
        html_key="h",
    )
    coverage = json.loads(event.model_dump_json())["summary"]["extraction_coverage"]
    assert coverage["pages_below_floor"] == [1, 3] and coverage["fallback_pages"] == [1, 3]
    assert coverage["pages_below_floor_count"] == coverage["fallback_pages_count"] == 2


def test_the_summary_counts_pages_passed_by_basis_and_what_was_checked():
    """A passed page counts under every basis that confirmed on it (the OCR check's read of
    the title block's number included); failed and unjudged pages under none; the objects
    checked and the lines OCR read add up over the set."""

    def share(by_basis: dict[str, int], *, objects: int = 4, title: bool = False):
        return CheckedShare(
            objects=objects,
            checked=sum(by_basis.values()),
            share_of_objects=0.0,
            share_of_text=0.0,
            by_basis={
                b: BasisShare(objects=n, confirmed=n, share_of_objects=0, share_of_text=0)
                for b, n in by_basis.items()
            },
            ocr_lines=2,
            title_block_read=title,
        )

    pages = [
        verified(1, verdict=PageVerdict(ok=True, checked=share({"ocr": 1}))),
        verified(2, verdict=PageVerdict(ok=True, checked=share({"text_layer": 2, "judge": 1}))),
        verified(3, verdict=PageVerdict(ok=True, checked=share({}, title=True))),
        verified(4, verdict=PageVerdict(ok=True, unjudged=True, checked=share({}))),
        verified(
            5,
            verdict=PageVerdict(
                ok=False, problems=["p"], kinds=["content_wrong"], checked=share({"ocr": 1})
            ),
        ),
    ]
    v = build_report(job(5), pages, finished_at=FINISHED)["summary"]["verification"]
    assert v["pages_passed"] == 3
    assert v["pages_passed_by_basis"] == {"judge": 1, "ocr": 2, "text_layer": 1}
    assert (v["objects"], v["objects_checked"], v["ocr_lines"]) == (20, 5, 10)
