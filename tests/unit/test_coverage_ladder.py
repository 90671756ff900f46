"""The ladder decision and the ladder state kept in KV."""

from typing import Any

import pytest

from services.coverage.covered import covered_page
from services.coverage.ladder import LadderPolicy, LadderState, ladder_key, next_rung
from shared.contracts.messages import JobOptions
from shared.contracts.models import Coverage, ExtractionResult, GuardCounts, PageObject
from shared.infra.settings import Settings
from shared.sheet.header import SheetHeader

LOW = Coverage(total_lines=10, covered_lines=2, ratio=0.2)
HIGH = Coverage(total_lines=10, covered_lines=9, ratio=0.9)
AT_FLOOR = Coverage(total_lines=10, covered_lines=6, ratio=0.6)


def decide(**overrides) -> str | None:
    kwargs: dict[str, Any] = {
        "has_text_layer": True,
        "has_words": True,
        "coverage": LOW,
        "floor": 0.6,
        "rungs_applied": ["vision"],
        "text_retry_enabled": True,
        "fallback_enabled": True,
        "model_configured": True,
    }
    return next_rung(**(kwargs | overrides))


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({}, "text_structuring"),
        ({"coverage": HIGH}, None),
        ({"coverage": AT_FLOOR}, None),
        ({"has_text_layer": False, "has_words": False}, None),
        # A scanned page's OCR words get fallback stubs, never text structuring.
        ({"has_text_layer": False}, "fallback"),
        ({"model_configured": False}, "fallback"),
        ({"text_retry_enabled": False}, "fallback"),
        ({"rungs_applied": ["vision", "text_structuring"]}, "fallback"),
        ({"rungs_applied": ["offline", "fallback"]}, None),
        ({"rungs_applied": ["vision", "text_structuring"], "fallback_enabled": False}, None),
        ({"text_retry_enabled": False, "fallback_enabled": False}, None),
        ({"rungs_applied": ["vision", "text_structuring", "fallback"]}, None),
        ({"rungs_applied": ["vision", "text_structuring"], "coverage": HIGH}, None),
    ],
)
def test_next_rung(overrides, expected):
    """Rung 2 then rung 3, each once, only while a page with words is below the floor."""
    assert decide(**overrides) == expected


def test_rung_two_never_follows_rung_three():
    """Once fallback has run, text structuring is not asked for even if enabled."""
    assert decide(rungs_applied=["offline", "fallback"], fallback_enabled=False) is None


def test_policy_job_options_override_settings():
    """Per-job options win over settings; rung 2 needs a base URL and a model."""
    settings = Settings(
        _env_file=None,
        llm_base_url="http://127.0.0.1:9/v1",
        llm_extract_model="m",
        extract_coverage_floor=0.6,
    )
    policy = LadderPolicy.resolve(settings, JobOptions(coverage_floor=0.8, text_retry=False))
    assert policy.model_dump() == {
        "floor": 0.8,
        "text_retry_enabled": False,
        "fallback_enabled": True,
        "model_configured": True,
    }
    offline = LadderPolicy.resolve(
        Settings(_env_file=None, llm_base_url=None, extract_coverage_floor=0.6), JobOptions()
    )
    assert (offline.floor, offline.model_configured) == (0.6, False)


def test_state_round_trips_and_answers_are_idempotent():
    """The state survives JSON (the KV) and a redelivered answer is recorded once."""
    state = LadderState(
        job_id="j_1",
        page_number=3,
        extracted_key="jobs/j_1/pages/3/extracted.json",
        text_key="jobs/j_1/pages/3/text.json",
        source_key="jobs/j_1/source.pdf",
        has_text_layer=True,
        options=JobOptions(coverage_floor=0.7),
        rungs_applied=["vision"],
        coverage_before=LOW,
        coverage=LOW,
    ).asked("text_structuring")
    assert state.pending == "text_structuring"
    key = "jobs/j_1/pages/3/structured-text_structuring.json"
    answered = state.answered("text_structuring", key, HIGH)
    assert answered.answered("text_structuring", key, HIGH) == answered
    assert (answered.rungs_applied, answered.pending, answered.coverage) == (
        ["vision", "text_structuring"],
        None,
        HIGH,
    )
    restored = LadderState.model_validate_json(answered.finished().model_dump_json())
    assert restored.done and restored.result_keys == {"text_structuring": key}
    assert restored.options.coverage_floor == 0.7


def test_ladder_key_is_a_valid_kv_key():
    """The KV key uses only characters JetStream KV accepts."""
    key = ladder_key("j_4f9c2b7e1a6d4c0e9b8a7f6e5d4c3b2a", 12)
    assert key == "ladder.j_4f9c2b7e1a6d4c0e9b8a7f6e5d4c3b2a.12"
    assert all(c.isalnum() or c in "-_=." for c in key)


def _result(rung: str, status: str = "ok", reason: str | None = None, **guard) -> ExtractionResult:
    return ExtractionResult(
        job_id="j_1",
        page_number=3,
        rung=rung,
        status=status,
        reason=reason,
        has_text_layer=True,
        sheet=SheetHeader(sheet_number="S001"),
        objects=[PageObject(object_id=f"{rung}-1", source_text=f"NOTE FROM {rung}")],
        guard=GuardCounts(**guard),
    )


def _left_ladder(*rungs: str) -> LadderState:
    return LadderState(
        job_id="j_1",
        page_number=3,
        extracted_key="k",
        text_key="t",
        source_key="s",
        has_text_layer=True,
        rungs_applied=list(rungs),
        coverage_before=LOW,
        coverage=HIGH,
    )


@pytest.mark.parametrize(
    ("status", "reason"),
    [
        ("degraded", "the model's reply was cut off at the token limit"),
        ("failed", "the model's reply could not be parsed, even after a compact retry"),
    ],
)
def test_a_cut_off_or_unparseable_rung_two_degrades_the_page(status, reason):
    """Rung 2 cut off or unparseable marks the page degraded, as rung 1 does, with the reason
    named by rung; rung_status says how each rung ended."""
    results = [_result("vision"), _result("text_structuring", status, reason), _result("fallback")]
    page = covered_page(_left_ladder("vision", "text_structuring", "fallback"), results, 0.6)
    assert page.degraded and page.extraction_status == "ok"
    assert page.extraction_reason == f"text_structuring: {reason}"
    assert page.rung_status == {"vision": "ok", "text_structuring": status, "fallback": "ok"}


def test_clean_rungs_leave_the_page_undegraded_and_guard_counts_summed():
    """Every rung ok: not degraded, no reason; the guard's four counts add up over rungs."""
    results = [
        _result("vision", kept=3, vision_unverified=2, dropped=1),
        _result("text_structuring", kept=4, rescued=1),
    ]
    page = covered_page(_left_ladder("vision", "text_structuring"), results, 0.6)
    assert not page.degraded and page.extraction_reason is None
    assert page.guard == GuardCounts(kept=7, rescued=1, dropped=1, vision_unverified=2)


def test_every_rung_s_unresolved_items_travel_to_verify():
    """What each rung's model could not resolve is kept on the covered page, in rung order,
    for the judge."""
    results = [
        _result("vision").model_copy(update={"unresolved_items": ["stamp"]}),
        _result("text_structuring").model_copy(update={"unresolved_items": [{"text": "5/A-501"}]}),
    ]
    page = covered_page(_left_ladder("vision", "text_structuring"), results, 0.6)
    assert page.unresolved_items == ["stamp", {"text": "5/A-501"}]
