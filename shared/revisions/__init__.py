"""A sheet across uploads: what changed on a sheet from one version to the next,
in words (``delta``) and in a picture (``overlay``)."""

from shared.revisions.delta import SheetDelta, UnitChange, sheet_delta
from shared.revisions.drawing import PageImage, Region
from shared.revisions.overlay import overlay_png

__all__ = ["PageImage", "Region", "SheetDelta", "UnitChange", "overlay_png", "sheet_delta"]
