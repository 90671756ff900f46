"""Render ``report.json`` as a self-contained HTML page a reviewer can read."""

import base64
from datetime import datetime
from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape

# The stage of a page that a canceled job never extracted (as the extract service names it).
CANCELED = "canceled"


def render_report_html(
    report: dict[str, Any],
    thumbnails: dict[int, bytes],
    evidence: dict[str, bytes] | None = None,
) -> str:
    """Render a ``build_report`` document as one HTML file (images embedded as data URIs).

    ``thumbnails`` maps page number → JPEG or PNG bytes (``pages/{n}/thumb.jpg``);
    a page without one shows a placeholder. ``evidence`` maps an evidence crop's key (as
    the page's ``evidence_crops`` name it) → JPEG, shown beside its problem.
    """
    pages = [
        _page_view(page, thumbnails.get(page["page_number"]), evidence or {})
        for page in report["pages"]
    ]
    failed = [f for f in report["summary"]["failed_pages"] if f["stage"] != CANCELED]
    canceled = [
        f["page_number"] for f in report["summary"]["failed_pages"] if f["stage"] == CANCELED
    ]
    return (
        _environment()
        .get_template("report.html.j2")
        .render(
            report=report,
            summary=report["summary"],
            pages=pages,
            failed=failed,
            canceled=canceled,
            counts=_counts(report, pages, failed, canceled),
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
    if page["status"] == "failed" and page.get("failure_stage") == CANCELED:
        return "canceled", "canceled"
    if page["status"] == "failed":
        return "failed", "failed"
    if verdict.get("skipped") == "blank":
        return "blank", "skipped blank"
    if not verdict.get("ok", False):
        return "problems", "problems"
    if verdict.get("unjudged"):
        return "unjudged", "unjudged"
    return "ok", "ok"


def _page_view(
    page: dict[str, Any], thumbnail: bytes | None, evidence: dict[str, bytes]
) -> dict[str, Any]:
    badge_class, badge_label = _badge(page)
    crops = {c["object_id"]: c for c in page.get("evidence_crops") or []}
    coverage = page.get("coverage")
    floor = page.get("floor")
    return {
        "entry": page,
        "number": page["page_number"],
        "sheet": page["sheet"],
        "badge_class": badge_class,
        "badge_label": badge_label,
        "thumbnail": _data_uri(thumbnail) if thumbnail else None,
        # The page's shape, for the evidence view that outlines a box over the thumbnail.
        "aspect": next((round(c["page_width"] / c["page_height"], 4) for c in crops.values()), 1.0),
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
                **_evidence_view(crops.get(obj.get("object_id")), evidence),
            }
            for obj in page["objects"]
            if (obj.get("verification") or {}).get("verdict") == "refuted"
        ],
        "objects": page["objects"],
    }


def _evidence_view(crop: dict[str, Any] | None, evidence: dict[str, bytes]) -> dict[str, Any]:
    """A problem row's evidence: the crop as a data URI, and where its box sits on the page
    (percentages, to outline it over the page thumbnail)."""
    if not crop or crop["key"] not in evidence:
        return {"crop": None, "box": None}
    x0, y0, x1, y1 = crop["bbox"]
    width, height = crop["page_width"], crop["page_height"]
    box = {
        "left": round(100 * x0 / width, 2),
        "top": round(100 * y0 / height, 2),
        "width": round(100 * (x1 - x0) / width, 2),
        "height": round(100 * (y1 - y0) / height, 2),
    }
    return {"crop": _data_uri(evidence[crop["key"]]), "box": box}


def _counts(
    report: dict[str, Any],
    pages: list[dict[str, Any]],
    failed: list[dict[str, Any]],
    canceled: list[int],
) -> list[tuple[str, Any, str]]:
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
        ("failed", len(failed), "failed"),
        *([("canceled", len(canceled), "blank")] if canceled else []),
        ("degraded", len(summary["degraded_pages"]), "unjudged"),
        ("mean coverage", f"{_pct(mean)}%" if mean is not None else "–", ""),
        ("objects", sum(len(p["objects"]) for p in pages), ""),
    ]


def _pct(ratio: float) -> int:
    return max(0, min(100, round(ratio * 100)))


def _data_uri(image: bytes) -> str:
    mime = "image/png" if image.startswith(b"\x89PNG") else "image/jpeg"
    return f"data:{mime};base64,{base64.b64encode(image).decode('ascii')}"
