"""Verify's tolerances: frozen settings objects with today's values as defaults, passed per
call (``verify_page(..., tolerances=...)``), so a test or a caller tunes one without editing
a module. Each says here what it weighs."""

from pydantic import BaseModel, ConfigDict, Field


class OcrCheckTolerances(BaseModel):
    """How the OCR check renders, samples and compares a claim's line."""

    model_config = ConfigDict(frozen=True)

    line_px: int = Field(
        48, gt=0, description="pixels a line is rendered tall (the recogniser scales to 48)"
    )
    max_zoom: float = Field(
        8.0, gt=0, description="render zoom at most (576 dpi: a 5 pt line read from 40 px)"
    )
    min_chars: int = Field(
        3, ge=1, description="letters and digits a claim's line carries to say anything"
    )
    read_chars: int = Field(
        10,
        ge=1,
        description="of a longer line, its first words up to this many letters and digits "
        "are read (the recogniser's time grows with a line's length)",
    )
    agree: float = Field(
        0.9,
        ge=0,
        le=1,
        description="similarity (letters and digits, look-alikes folded) at or above which "
        "the reading agrees with the text",
    )
    mismatch: float = Field(
        0.2,
        ge=0,
        le=1,
        description="similarity at or below which a reading of at least mismatch_chars says "
        "something else than the text (text_layer_mismatch)",
    )
    mismatch_chars: int = Field(
        5, ge=1, description="letters and digits both sides carry before a mismatch counts"
    )


class VerifyTolerances(BaseModel):
    """What verify weighs besides the OCR check's reading."""

    model_config = ConfigDict(frozen=True)

    near_white: int = Field(
        230, ge=0, le=255, description="a gray level at or above this is paper, not ink"
    )
    max_blank_ink: float = Field(
        0.001, ge=0, le=1, description="share of ink pixels at or below which an image is empty"
    )
    excerpt_context_units: int = Field(
        3,
        ge=0,
        description="units of the page's reading kept either side of a located claim when "
        "the judge's page text is cut down",
    )
    hidden_sample_chars: int = Field(
        300, ge=0, description="characters of hidden text quoted on the verified page"
    )
    evidence_max_crops: int = Field(
        20, ge=0, description="evidence crops for people on one page, at most"
    )
    ocr: OcrCheckTolerances = OcrCheckTolerances()
