"""What extract's reading weighs: frozen settings objects with today's values as defaults,
passed per call (``PageRender(..., tolerances=...)``, ``plan_tiles(..., tolerances=...)``),
so a test or a caller tunes one without editing a module. A new tolerance is one field here,
read where it is used. (The page-text model's own, the layout's, tables' and evidence's, are
``shared.pagetext.tolerances``.)"""

from pydantic import BaseModel, ConfigDict, Field


class VisibilityTolerances(BaseModel):
    """When a word of the text layer counts as shown on the page
    (``services.extract.reading.visibility``)."""

    model_config = ConfigDict(frozen=True)

    min_readable_pt: float = Field(
        1.0,
        ge=0,
        description="below this size (points) no one reads a word on any sheet: a point is "
        "a third of a millimetre",
    )
    ground_tolerance: int = Field(
        24,
        ge=0,
        le=255,
        description="a word leaves no mark when every pixel of its box is within this many "
        "levels (per channel) of its ground: anti-aliased glyphs of readable text differ far "
        "more",
    )
    ring_px: int = Field(
        2, ge=1, description="the ground is read in a ring this many pixels wide around a word"
    )
    min_box_px: int = Field(
        2,
        ge=1,
        description="a box smaller than this on the render (pixels, either side) cannot be "
        "told from it",
    )


class TileTolerances(BaseModel):
    """When and how a large sheet is shown to the vision model as tiles
    (``services.extract.model.tiles``)."""

    model_config = ConfigDict(frozen=True)

    legible_px: float = Field(
        10.0, gt=0, description="text rendered at least this many pixels high is legible"
    )
    small_text_share: float = Field(
        0.1,
        ge=0,
        le=1,
        description="the page's small text: this share of its words is smaller (a stray tiny "
        "word, a superscript or a hatch label, does not decide)",
    )
    default_text_pt: float = Field(
        6.75,
        gt=0,
        description="the text height taken on a sheet without words (a scan OCR could not "
        "read): 3/32 in, the smallest drawing standards allow",
    )
    overlap: float = Field(
        0.1,
        ge=0,
        lt=1,
        description="neighbouring tiles overlap by this share of a tile's side, so a label "
        "on a seam is whole in one of them",
    )
    overview_px: int = Field(
        1024, ge=1, description="the whole sheet, small, beside the tiles: its long side"
    )
    min_gain: float = Field(
        1.25,
        ge=1,
        description="tiles are worth their calls only when they show the text at least this "
        "much larger than the page image",
    )
    zoom_step: float = Field(
        1.1, gt=1, description="each larger grid tried zooms in this much more"
    )


VISIBILITY = VisibilityTolerances()
TILES = TileTolerances()
