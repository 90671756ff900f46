"""A project's sheets across uploads: what changed on a sheet from one version to the next,
in words (``delta``) and in a picture (``overlay``)."""

from services.report.revisions.delta import SheetDelta, UnitChange, sheet_delta
from services.report.revisions.overlay import PageImage, overlay_png

__all__ = ["PageImage", "SheetDelta", "UnitChange", "overlay_png", "sheet_delta"]
