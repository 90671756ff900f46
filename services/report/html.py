"""Render ``report.json`` as a self-contained HTML page a reviewer can read."""

import base64
from datetime import datetime
from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape

from shared.report import PageReport, Report


def render_report_html(report: Report, thumbnails: dict[int, bytes]) -> str:
    """Render a ``build_report`` document as one HTML file (thumbnails embedded as data URIs).

    ``thumbnails`` maps page number → JPEG or PNG bytes (``pages/{n}/thumb.jpg``);
    a page without one shows a placeholder.
    """
    pages = [_page_view(page, thumbnails.get(page.page_number)) for page in report.pages]
    return (
        _environment()
        .get_template("report.html.j2")
        .render(
            report=report,
            summary=report.summary,
            pages=pages,
            counts=_counts(report, pages),
        )
    )


@cache
def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("services.report", "templates"),
        autoescape=select_autoescape(["html", "j2"], default=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["when"] = _when
    return env


def _when(moment: datetime) -> str:
    """A timestamp as a reviewer reads it (``2026-05-29 09:00:00 UTC``)."""
    return moment.strftime("%Y-%m-%d %H:%M:%S %Z").strip()


def _badge(page: PageReport) -> tuple[str, str]:
    """(css class, label) of the page's verdict badge; the first matching state wins."""
    verdict = page.verification
    if page.status == "failed" or verdict is None:
        return "failed", "failed"
    if verdict.skipped == "blank":
        return "blank", "skipped blank"
    if not verdict.ok:
        return "problems", "problems"
    if verdict.unjudged:
        return "unjudged", "unjudged"
    return "ok", "ok"


def _page_view(page: PageReport, thumbnail: bytes | None) -> dict[str, Any]:
    badge_class, badge_label = _badge(page)
    coverage = page.coverage
    verdict = page.verification
    return {
        "entry": page,
        "number": page.page_number,
        "sheet": page.sheet,
        "badge_class": badge_class,
        "badge_label": badge_label,
        "thumbnail": _data_uri(thumbnail) if thumbnail else None,
        "coverage": coverage,
        # A page with no text lines (blank, scanned) has no ratio worth drawing.
        "coverage_pct": (
            _pct(coverage.ratio)
            if coverage and coverage.total_lines and page.has_text_layer
            else None
        ),
        "floor_pct": _pct(page.floor) if page.floor is not None else None,
        "below_floor": page.below_floor,
        "problems": verdict.problems if verdict else [],
        "kinds": verdict.kinds if verdict else [],
        "cited": [
            {
                "object_id": obj.object_id,
                "kind": obj.verification.kind,
                "claimed": obj.source_text,
                "actual": obj.verification.actual_text,
            }
            for obj in page.objects
            if obj.verification and obj.verification.verdict == "refuted"
        ],
        "objects": page.objects,
    }


def _counts(report: Report, pages: list[dict[str, Any]]) -> list[tuple[str, Any, str]]:
    """Header tiles: (label, value, css class)."""
    summary = report.summary
    verification = summary.verification
    mean = summary.extraction_coverage.mean_ratio
    rate = verification.problem_rate
    return [
        ("pages", report.page_count, ""),
        ("passed", verification.pages_passed, "ok"),
        ("with problems", verification.verify_failed, "problems"),
        ("problem rate", f"{_pct(rate)}%" if rate is not None else "–", "problems"),
        ("unjudged", verification.pages_unjudged, "unjudged"),
        ("skipped blank", verification.pages_skipped_blank, "blank"),
        ("failed", len(summary.failed_pages), "failed"),
        ("mean coverage", f"{_pct(mean)}%" if mean is not None else "–", ""),
        ("objects", sum(len(p["objects"]) for p in pages), ""),
        ("vision unverified", summary.guard.vision_unverified, "unjudged"),
    ]


def _pct(ratio: float) -> int:
    return max(0, min(100, round(ratio * 100)))


def _data_uri(image: bytes) -> str:
    mime = "image/png" if image.startswith(b"\x89PNG") else "image/jpeg"
    return f"data:{mime};base64,{base64.b64encode(image).decode('ascii')}"
