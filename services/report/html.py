"""Render ``report.json`` as a self-contained HTML page a reviewer can read."""

import base64
import difflib
from datetime import datetime
from functools import cache
from typing import Any

import imagecodecs
import numpy
from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup, escape
from numpy.typing import NDArray

from shared.contracts.models import EvidenceCrop
from shared.contracts.report import PRIORITY_ORDER, FailedPageSummary, PageReport, Report
from shared.pagetext import Box
from shared.revisions.delta import SheetDelta, UnitChange

# The stage of a page that a canceled job never extracted (as the extract service names it).
CANCELED = "canceled"
# A revised sheet's first regions of the drawing are shown cut out of its overlay, with this
# much of the sheet around each.
REGION_CROPS = 6
REGION_CROP_PAD_POINTS = 36.0


def render_report_html(
    report: Report,
    thumbnails: dict[int, bytes],
    evidence: dict[str, bytes] | None = None,
    revisions: dict[str, tuple[SheetDelta, bytes | None]] | None = None,
) -> str:
    """Render a ``build_report`` document as one HTML file (images embedded as data URIs).

    ``thumbnails`` maps page number → JPEG or PNG bytes (``pages/{n}/thumb.jpg``);
    a page without one shows a placeholder. ``evidence`` maps an evidence crop's key (as
    the page's ``evidence_crops`` name it) → JPEG, shown beside its problem. ``revisions``
    maps a revised sheet's delta key (``report.changes``) → its delta and overlay PNG, shown
    in the Changes section.
    """
    pages = [
        _page_view(page, thumbnails.get(page.page_number), evidence or {}) for page in report.pages
    ]
    failed = [f for f in report.summary.failed_pages if f.stage != CANCELED]
    canceled = [f.page_number for f in report.summary.failed_pages if f.stage == CANCELED]
    return (
        _environment()
        .get_template("report.html.j2")
        .render(
            report=report,
            summary=report.summary,
            pages=pages,
            pages_by_priority=sorted(pages, key=_priority_rank),
            unjudged=[why for page in report.pages if (why := page.unjudged_why())],
            failed=failed,
            canceled=canceled,
            counts=_counts(report, pages, failed, canceled),
            changes=_changes_view(report, revisions or {}),
        )
    )


def _priority_rank(page: dict[str, Any]) -> tuple[int, int]:
    """High first, then normal, then low; page order within a level."""
    priority = page["priority"]
    level = PRIORITY_ORDER.index(priority.level) if priority else len(PRIORITY_ORDER)
    return level, page["number"]


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
    if page.status == "failed" and page.failure_stage == CANCELED:
        return "canceled", "canceled"
    if page.status == "failed" or verdict is None:
        return "failed", "failed"
    if verdict.skipped == "blank":
        return "blank", "skipped blank"
    if not verdict.ok:
        return "problems", "problems"
    if verdict.unjudged:
        return "unjudged", "unjudged"
    return "ok", "ok"


def _page_view(
    page: PageReport, thumbnail: bytes | None, evidence: dict[str, bytes]
) -> dict[str, Any]:
    badge_class, badge_label = _badge(page)
    coverage = page.coverage
    verdict = page.verification
    crops = {c.object_id: c for c in page.evidence_crops}
    return {
        "entry": page,
        "number": page.page_number,
        "sheet": page.sheet,
        "badge_class": badge_class,
        "badge_label": badge_label,
        "checked": verdict.checked.sentence() if verdict and verdict.checked else None,
        "priority": page.review_priority,
        "thumbnail": _data_uri(thumbnail) if thumbnail else None,
        # The page's shape, for the evidence view that outlines a box over the thumbnail.
        "aspect": next((round(c.page_width / c.page_height, 4) for c in crops.values()), 1.0),
        "coverage": coverage,
        # A page with no text lines (blank, or a scan OCR read nothing on) has no ratio
        # worth drawing; a scan's is measured over the lines OCR read.
        "coverage_pct": _pct(coverage.ratio) if coverage and coverage.total_lines else None,
        "floor_pct": _pct(page.floor) if page.floor is not None else None,
        "below_floor": page.below_floor,
        "problems": verdict.problems if verdict else [],
        # A person's review: each problem's state (open, dismissed, confirmed) by number.
        "review": page.review,
        "problem_states": {p.number: p for p in page.review.problems} if page.review else {},
        "kinds": verdict.kinds if verdict else [],
        "cited": [
            {
                "object_id": obj.object_id,
                "kind": obj.verification.kind,
                "claimed": obj.source_text,
                "actual": obj.verification.actual_text,
                **_evidence_view(crops.get(obj.object_id), evidence),
            }
            for obj in page.objects
            if obj.verification and obj.verification.verdict == "refuted"
        ],
        "objects": page.objects,
    }


def _changes_view(
    report: Report, revisions: dict[str, tuple[SheetDelta, bytes | None]]
) -> dict[str, Any] | None:
    """The Changes section: each revised sheet with its overlay and its delta's units; the
    sheets added, re-issued unchanged and proposed as renumbered, listed."""
    changes = report.changes
    if changes is None:
        return None
    revised = []
    for sheet in changes.sheets:
        if sheet.outcome != "revised":
            continue
        delta, overlay = revisions.get(sheet.delta_key or "", (None, None))
        revised.append(
            {
                "sheet": sheet,
                "overlay": _data_uri(overlay) if overlay else None,
                "units": [_unit_view(u) for u in delta.changes] if delta else [],
                "regions": _region_views(delta, overlay) if delta else [],
            }
        )
    by_outcome = {
        outcome: [s for s in changes.sheets if s.outcome == outcome]
        for outcome in ("added", "reissued", "proposed")
    }
    return {"outcome": changes, "revised": revised, **by_outcome}


def _region_views(delta: SheetDelta, overlay: bytes | None) -> list[dict[str, Any]]:
    """The drawing's changed regions as the Changes section lists them: what changed, where
    (PDF points, and the share of the sheet), and the overlay cut around the first few (a
    region is a small part of a large sheet's overlay)."""
    image = imagecodecs.png_decode(overlay) if overlay and delta.graphics else None
    views = []
    for n, region in enumerate(delta.graphics):
        box = region.after_bbox
        views.append(
            {
                "kind": region.kind,
                "label": {"added": "linework added", "removed": "linework removed"}.get(
                    region.kind, "linework changed"
                ),
                "where": f"{box.width:.0f}×{box.height:.0f} pt at ({box.x0:.0f}, {box.y0:.0f})",
                "share": f"{100 * region.share:.2g}%",
                "title_block": region.title_block,
                "crop": _region_crop(image, region.after_bbox, delta.page_size)
                if n < REGION_CROPS
                else None,
            }
        )
    return views


def _region_crop(
    image: NDArray[numpy.uint8] | None, box: Box, page_size: tuple[float, float] | None
) -> str | None:
    """The overlay's pixels around a region (padded), as a PNG data URI; None without the
    overlay."""
    if image is None or page_size is None:
        return None
    zoom = image.shape[1] / page_size[0]
    pad = REGION_CROP_PAD_POINTS
    x0, y0 = max(int((box.x0 - pad) * zoom), 0), max(int((box.y0 - pad) * zoom), 0)
    x1 = min(int((box.x1 + pad) * zoom) + 1, image.shape[1])
    y1 = min(int((box.y1 + pad) * zoom) + 1, image.shape[0])
    if x1 <= x0 or y1 <= y0:
        return None
    return _data_uri(bytes(imagecodecs.png_encode(image[y0:y1, x0:x1])))


def _unit_view(unit: UnitChange) -> dict[str, Any]:
    """A changed unit as the Changes section lists it: what it is (a title-block field by
    name), and its text before and after with the words that differ marked."""
    before, after = _marked(unit.before or "", unit.after or "")
    label = unit.field if unit.unit_kind == "title_field" and unit.field else unit.unit_kind
    return {"kind": unit.kind, "label": label.replace("_", " "), "before": before, "after": after}


def _marked(before: str, after: str) -> tuple[Markup, Markup]:
    """The two texts with the words that differ between them marked."""
    old, new = before.split(), after.split()
    marked_old: list[str] = []
    marked_new: list[str] = []
    opcodes = difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes()
    for tag, i1, i2, j1, j2 in opcodes:
        for words, out in ((old[i1:i2], marked_old), (new[j1:j2], marked_new)):
            if not words:
                continue
            text = str(escape(" ".join(words)))
            out.append(text if tag == "equal" else f"<mark>{text}</mark>")
    return Markup(" ".join(marked_old)), Markup(" ".join(marked_new))


def _evidence_view(crop: EvidenceCrop | None, evidence: dict[str, bytes]) -> dict[str, Any]:
    """A problem row's evidence: the crop as a data URI, and where its box sits on the page
    (percentages, to outline it over the page thumbnail)."""
    if not crop or crop.key not in evidence:
        return {"crop": None, "box": None}
    x0, y0, x1, y1 = crop.bbox
    width, height = crop.page_width, crop.page_height
    box = {
        "left": round(100 * x0 / width, 2),
        "top": round(100 * y0 / height, 2),
        "width": round(100 * (x1 - x0) / width, 2),
        "height": round(100 * (y1 - y0) / height, 2),
    }
    return {"crop": _data_uri(evidence[crop.key]), "box": box}


def _counts(
    report: Report,
    pages: list[dict[str, Any]],
    failed: list[FailedPageSummary],
    canceled: list[int],
) -> list[tuple[str, Any, str]]:
    """Header tiles: (label, value, css class); a count of nothing takes no colour (a red 0
    reads as an alarm)."""
    summary = report.summary
    verification = summary.verification
    mean = summary.extraction_coverage.mean_ratio
    rate = verification.problem_rate
    tiles = [
        ("pages", report.page_count, ""),
        ("passed", verification.pages_passed, "ok"),
        ("with problems", verification.verify_failed, "problems"),
        ("problem rate", f"{_pct(rate)}%" if rate is not None else "–", "problems"),
        ("unjudged", verification.pages_unjudged, "unjudged"),
        ("skipped blank", verification.pages_skipped_blank, "blank"),
        ("failed", len(failed), "failed"),
        *([("canceled", len(canceled), "blank")] if canceled else []),
        ("degraded", len(summary.degraded_pages), "unjudged"),
        ("mean coverage", f"{_pct(mean)}%" if mean is not None else "–", ""),
        ("objects", sum(len(p["objects"]) for p in pages), ""),
        ("vision unverified", summary.guard.vision_unverified, "unjudged"),
        *(
            [("corrected by a person", summary.review.pages_corrected, "")]
            if summary.review.pages_corrected
            else []
        ),
        *(
            [("problems dismissed", summary.review.problems_dismissed, "blank")]
            if summary.review.problems_dismissed
            else []
        ),
    ]
    return [(label, value, "" if value in (0, "0%") else css) for label, value, css in tiles]


def _pct(ratio: float) -> int:
    return max(0, min(100, round(ratio * 100)))


def _data_uri(image: bytes) -> str:
    mime = "image/png" if image.startswith(b"\x89PNG") else "image/jpeg"
    return f"data:{mime};base64,{base64.b64encode(image).decode('ascii')}"
