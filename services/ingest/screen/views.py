"""What the screen's pages show, built from the report, a page's reading and words, and the
register: plain functions from the stored models to what the templates print (no I/O)."""

import json
from dataclasses import dataclass, field
from typing import Any

from shared.contracts.report import PRIORITY_ORDER, PageReport, Report
from shared.pagetext import Box, TextLayer
from shared.sheet.reading import FieldReading, SheetReading

# The verdict a page shows, in the words of the report (first matching state wins).
VERDICTS = ("ok", "problems", "unjudged", "blank", "failed", "canceled")
SORTS = {
    "page": "page",
    "number": "sheet number",
    "title": "title",
    "verdict": "verdict",
    "problems": "open problems",
    "priority": "review priority",
}
# The title block's fields a reviewer compares, in the order people read them.
FIELD_ROWS = (
    ("number", "sheet_number", "Sheet number"),
    ("title", "sheet_title", "Title"),
    ("revision", "revision", "Revision"),
    ("issue_date", "issue_date", "Date"),
    ("project_number", "project_number", "Project number"),
    ("project_name", "project_name", "Project name"),
    ("scale", "scale", "Scale"),
)


def verdict(page: PageReport) -> str:
    """The page's verdict as the screen and the report's badges name it."""
    result = page.verification
    if page.status == "failed":
        return "canceled" if page.failure_stage == "canceled" else "failed"
    if result is None:
        return "failed"
    if result.skipped == "blank":
        return "blank"
    if not result.ok:
        return "problems"
    return "unjudged" if result.unjudged else "ok"


def priority_rank(page: PageReport) -> int:
    """High first, then normal, then low (a page without one last)."""
    priority = page.review_priority
    return PRIORITY_ORDER.index(priority.level) if priority else len(PRIORITY_ORDER)


def open_problems(page: PageReport) -> int:
    problems = page.verification.problems if page.verification else []
    decided = (
        {p.number for p in page.review.problems if p.state == "dismissed"} if page.review else set()
    )
    return sum(1 for n in range(1, len(problems) + 1) if n not in decided)


@dataclass(frozen=True)
class SheetRow:
    page: PageReport
    verdict: str
    open_problems: int
    corrected: bool

    @property
    def number(self) -> int:
        return self.page.page_number


def sheet_rows(report: Report) -> list[SheetRow]:
    return [
        SheetRow(
            page=p,
            verdict=verdict(p),
            open_problems=open_problems(p),
            corrected=bool(p.review and p.review.corrected),
        )
        for p in report.pages
    ]


@dataclass(frozen=True)
class Filter:
    """The sheets table's filter and order, as the query string gives them."""

    q: str = ""
    discipline: str = ""
    verdict: str = ""
    sort: str = "page"
    descending: bool = False

    @classmethod
    def of(cls, params: dict[str, str]) -> "Filter":
        sort = params.get("sort", "page")
        return cls(
            q=params.get("q", "").strip()[:100],
            discipline=params.get("discipline", ""),
            verdict=params.get("verdict", "") if params.get("verdict") in VERDICTS else "",
            sort=sort if sort in SORTS else "page",
            descending=params.get("order") == "desc",
        )


def filtered(rows: list[SheetRow], chosen: Filter) -> list[SheetRow]:
    """The rows ``chosen`` keeps, in its order."""
    needle = chosen.q.casefold()

    def keeps(row: SheetRow) -> bool:
        sheet = row.page.sheet
        text = f"{sheet.sheet_number or ''} {sheet.sheet_title or ''}".casefold()
        return (
            (not needle or needle in text)
            and (not chosen.discipline or (sheet.discipline or "") == chosen.discipline)
            and (not chosen.verdict or row.verdict == chosen.verdict)
        )

    def key(row: SheetRow) -> Any:
        sheet = row.page.sheet
        return {
            "page": row.number,
            "number": ((sheet.sheet_number or "~").casefold(), row.number),
            "title": ((sheet.sheet_title or "~").casefold(), row.number),
            "verdict": (VERDICTS.index(row.verdict), row.number),
            "problems": (-row.open_problems, row.number),
            "priority": (priority_rank(row.page), row.number),
        }[chosen.sort]

    return sorted(filter(keeps, rows), key=key, reverse=chosen.descending)


def disciplines(report: Report) -> list[str]:
    return sorted({p.sheet.discipline for p in report.pages if p.sheet.discipline})


@dataclass(frozen=True)
class Mark:
    """A box drawn over the page: where a value was read, in percent of the shown area."""

    label: str
    left: float
    top: float
    width: float
    height: float
    chosen: bool = False


@dataclass
class TitleBlock:
    """The title block's crop (its box in page points) and what was read in it."""

    region: Box | None
    page_width: float
    page_height: float
    rows: list[dict[str, Any]] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)
    candidates: list[dict[str, Any]] = field(default_factory=list)

    @property
    def crop(self) -> dict[str, float] | None:
        """The crop as CSS: the page image scaled so that the region fills the box."""
        if self.region is None:
            return None
        x0, y0, x1, y1 = self.region
        width, height = max(x1 - x0, 1.0), max(y1 - y0, 1.0)
        return {
            "aspect": round(width / height, 4),
            "size_x": round(100 * self.page_width / width, 3),
            "size_y": round(100 * self.page_height / height, 3),
            "pos_x": round(100 * x0 / max(self.page_width - width, 1.0), 3),
            "pos_y": round(100 * y0 / max(self.page_height - height, 1.0), 3),
        }


def _box(layer: TextLayer, reading: FieldReading | None) -> Box | None:
    words = [layer.words[i] for i in (reading.word_ids if reading else []) if i < len(layer.words)]
    if not words:
        return None
    return Box(
        min(w.bbox.x0 for w in words),
        min(w.bbox.y0 for w in words),
        max(w.bbox.x1 for w in words),
        max(w.bbox.y1 for w in words),
    )


def _mark(label: str, box: Box, region: Box, chosen: bool = False) -> Mark:
    x0, y0, x1, y1 = region
    # A value's words may reach past the title block's region: the mark stays inside it.
    box = Box(max(box.x0, x0), max(box.y0, y0), min(box.x1, x1), min(box.y1, y1))
    width, height = max(x1 - x0, 1.0), max(y1 - y0, 1.0)
    return Mark(
        label=label,
        left=round(100 * (box.x0 - x0) / width, 2),
        top=round(100 * (box.y0 - y0) / height, 2),
        width=round(100 * box.width / width, 2),
        height=round(100 * box.height / height, 2),
        chosen=chosen,
    )


def title_block(page: PageReport, reading: SheetReading | None, layer: TextLayer) -> TitleBlock:
    """The crop of the title block, each field as read and as chosen (the set's decision or
    a person's correction), and the sheet-number candidates that won and lost, with why."""
    reading = reading or SheetReading()
    block = TitleBlock(reading.region, layer.width, layer.height)
    sheet = page.sheet
    for name, attribute, label in FIELD_ROWS:
        if name in ("number", "title"):
            read = reading.number if name == "number" else reading.title
        else:
            read = reading.fields.get(name)
        chosen = getattr(sheet, attribute, None)
        if read is None and chosen is None:
            continue
        block.rows.append(
            {
                "label": label,
                "read": read.text if read else None,
                "chosen": chosen,
                "differs": bool(read and chosen and read.text != chosen),
            }
        )
        box = _box(layer, read)
        if box and reading.region:
            block.marks.append(_mark(label, box, reading.region, chosen=name == "number"))
    ranked = sorted(reading.candidates, key=lambda c: (not c.chosen, -c.evidence, -c.score))
    block.candidates = [
        {
            "text": c.text,
            "label": c.label or c.field or "",
            "chosen": c.chosen,
            "evidence": c.evidence,
            "score": c.score,
            "why": c.why,
        }
        for c in ranked
    ]
    return block


def neighbours(report: Report, page_number: int) -> tuple[int | None, int | None]:
    """The pages before and after ``page_number`` in the set."""
    numbers = [p.page_number for p in report.pages]
    at = numbers.index(page_number)
    return (
        numbers[at - 1] if at > 0 else None,
        numbers[at + 1] if at + 1 < len(numbers) else None,
    )


def region_rows(delta_json: bytes) -> list[dict[str, Any]]:
    """A delta's changed regions of the drawing as the change page lists them: what changed,
    where on the new sheet (PDF points) and the share of the sheet."""
    labels = {"added": "linework added", "removed": "linework removed"}
    rows = []
    for region in json.loads(delta_json).get("graphics", []):
        x0, y0, x1, y1 = region["after_bbox"]
        rows.append(
            {
                "kind": region["kind"],
                "label": labels.get(region["kind"], "linework changed"),
                "where": f"{x1 - x0:.0f}×{y1 - y0:.0f} pt at ({x0:.0f}, {y0:.0f})",
                "share": f"{100 * region['share']:.2g}%",
                "title_block": region.get("title_block", False),
            }
        )
    return rows


def delta_rows(delta_json: bytes) -> list[dict[str, Any]]:
    """A delta's changed units as the change page lists them: what changed (a title-block
    field by name), its text before and after."""
    delta = json.loads(delta_json)
    rows = []
    for change in delta.get("changes", []):
        kind = change.get("unit_kind") or "text"
        label = change.get("field") if kind == "title_field" and change.get("field") else kind
        rows.append(
            {
                "kind": change.get("kind", ""),
                "label": str(label).replace("_", " "),
                "before": change.get("before") or "",
                "after": change.get("after") or "",
            }
        )
    return rows
