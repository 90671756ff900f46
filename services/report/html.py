"""Render ``report.json`` as a self-contained HTML page a reviewer can read."""

import base64
from datetime import datetime
from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape


def render_report_html(report: dict[str, Any], thumbnails: dict[int, bytes]) -> str:
    """Render a ``build_report`` document as one HTML file (thumbnails embedded as data URIs).

    ``thumbnails`` maps page number → JPEG or PNG bytes (``pages/{n}/thumb.jpg``);
    a page without one shows a placeholder.
    """
    pages = [_page_view(page, thumbnails.get(page["page_number"])) for page in report["pages"]]
    return (
        _environment()
        .get_template("report.html.j2")
        .render(
            report=report,
            summary=report["summary"],
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


def _when(iso: str) -> str:
    """An ISO timestamp as a reviewer reads it (``2026-05-29 09:00:00 UTC``)."""
    moment = datetime.fromisoformat(iso)
    return moment.strftime("%Y-%m-%d %H:%M:%S %Z").strip()


def _badge(page: dict[str, Any]) -> tuple[str, str]:
    """(css class, label) of the page's verdict badge; the first matching state wins."""
    verdict = page.get("verification") or {}
    if page["status"] == "failed":
        return "failed", "failed"
    if verdict.get("skipped") == "blank":
        return "blank", "skipped blank"
    if not verdict.get("ok", False):
        return "problems", "problems"
    if verdict.get("unjudged"):
        return "unjudged", "unjudged"
    return "ok", "ok"


def _page_view(page: dict[str, Any], thumbnail: bytes | None) -> dict[str, Any]:
    badge_class, badge_label = _badge(page)
    coverage = page.get("coverage")
    floor = page.get("floor")
    return {
        "entry": page,
        "number": page["page_number"],
        "sheet": page["sheet"],
        "badge_class": badge_class,
        "badge_label": badge_label,
        "thumbnail": _data_uri(thumbnail) if thumbnail else None,
        "coverage": coverage,
        # A page with no text lines (blank, scanned) has no ratio worth drawing.
        "coverage_pct": (
            _pct(coverage["ratio"])
            if coverage and coverage["total_lines"] and page.get("has_text_layer")
            else None
        ),
        "floor_pct": _pct(floor) if floor is not None else None,
        "below_floor": bool(page.get("below_floor")),
        "problems": (page.get("verification") or {}).get("problems", []),
        "kinds": (page.get("verification") or {}).get("kinds", []),
        "cited": [
            {
                "object_id": obj.get("object_id"),
                "kind": obj["verification"].get("kind"),
                "claimed": obj.get("source_text"),
                "actual": obj["verification"].get("actual_text"),
            }
            for obj in page["objects"]
            if (obj.get("verification") or {}).get("verdict") == "refuted"
        ],
        "objects": page["objects"],
    }


def _counts(report: dict[str, Any], pages: list[dict[str, Any]]) -> list[tuple[str, Any, str]]:
    """Header tiles: (label, value, css class)."""
    summary = report["summary"]
    verification = summary["verification"]
    mean = summary["extraction_coverage"]["mean_ratio"]
    return [
        ("pages", report["page_count"], ""),
        ("verified", verification["pages_verified"], "ok"),
        ("with problems", verification["verify_failed"], "problems"),
        ("unjudged", verification["pages_unjudged"], "unjudged"),
        ("skipped blank", verification["pages_skipped_blank"], "blank"),
        ("failed", len(summary["failed_pages"]), "failed"),
        ("degraded", len(summary["degraded_pages"]), "unjudged"),
        ("mean coverage", f"{_pct(mean)}%" if mean is not None else "–", ""),
        ("objects", sum(len(p["objects"]) for p in pages), ""),
    ]


def _pct(ratio: float) -> int:
    return max(0, min(100, round(ratio * 100)))


def _data_uri(image: bytes) -> str:
    mime = "image/png" if image.startswith(b"\x89PNG") else "image/jpeg"
    return f"data:{mime};base64,{base64.b64encode(image).decode('ascii')}"
