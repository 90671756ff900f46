"""The page-text model: a page's words, grouped once into lines and blocks
(``shared.pagetext.layout``), stored as ``pages/{n}/text.json``."""

from collections.abc import Iterable, Sequence
from functools import cached_property
from typing import Literal

from pydantic import BaseModel, Field, model_validator

from shared.pagetext.geometry import Box

WordOrigin = Literal["pdf", "annotation", "ocr"]
# Why the page does not show a word of its text layer: drawn in render mode 3 or fully
# transparent (invisible), in the colour of the ground it sits on (ground_coloured), under
# something opaque drawn after it (covered), or too small to read (tiny). Text clipped away
# or off the page never becomes a word: MuPDF drops it as it reads.
HiddenKind = Literal["invisible", "ground_coloured", "covered", "tiny"]


class Word(BaseModel):
    """One word of the page, as the page's text layer (or OCR) gives it."""

    id: int = Field(-1, description="index in TextLayer.words: the text layer's own order")
    text: str
    bbox: Box = Field(description="displayed page coordinates (rotation applied), PDF points")
    size: float = Field(0.0, description="font size in points (OCR: the box height)")
    dir: tuple[float, float] = Field(
        (1.0, 0.0), description="unit vector the text runs along, displayed frame, y down"
    )
    origin: WordOrigin = Field(
        "pdf",
        description="pdf: the text layer; annotation: an annotation's text (CAD exports put "
        "text drawn as outlines there); ocr: read from the page image",
    )
    hidden: HiddenKind | None = Field(
        None,
        description="why the page does not show this word (absent: it shows). A hidden word "
        "stays in words, and is in no line or block: nothing reads it as the page's text",
        # Omitted when shown: text.json stays as it was for the words of almost every page.
        exclude_if=lambda hidden: hidden is None,
    )
    font: int | None = Field(
        None,
        description="the font the word is set in, an index in TextLayer.fonts (text-layer "
        "words; absent for OCR and annotation words)",
        exclude_if=lambda font: font is None,
    )
    confidence: float | None = Field(
        None,
        description="OCR words: the recogniser's confidence in the line it read (0-1); "
        "absent for the text layer's own words",
        exclude_if=lambda confidence: confidence is None,
    )


class TextLayer(BaseModel):
    """``pages/{n}/text.json``: the page's own words, grouped once into lines and blocks
    (``shared.pagetext.laid_out`` builds one). Every object cites these words; every stage
    reads them."""

    page_number: int
    width: float = Field(description="displayed page width in PDF points")
    height: float = Field(description="displayed page height in PDF points")
    rotation: int = Field(0, description="the page's /Rotate, already applied to every bbox")
    words: list[Word] = []
    lines: list[list[int]] = Field([], description="word ids per line, reading order")
    blocks: list[list[int]] = Field([], description="line ids per block, reading order")
    has_text_layer: bool
    source: Literal["pdf", "ocr", "none"] = "pdf"
    has_drawings: bool = Field(
        False, description="vector drawings on a page without a text layer (not read otherwise)"
    )
    rules: list[Box] = Field(
        [],
        description="the long horizontal and vertical lines of the page's drawing, displayed "
        "coordinates (the walls of title-block cells), where the drawing was listed",
    )
    fonts: list[str] = Field(
        [],
        description="the fonts the text layer's words are set in (Word.font), as the PDF "
        "names them: a broken text encoding is a font's, so checks sample by font; two "
        "entries may share a name (two font objects)",
    )
    font_xrefs: list[int | None] = Field(
        [],
        description="each font's object number in the document (same order as fonts; none "
        "for a font outside the page's resources): a font is its object, read once per "
        "document",
    )

    @model_validator(mode="after")
    def _laid_out(self) -> "TextLayer":
        # Every shown word is in a line once laid out: shown words without lines were never
        # laid out.
        if not self.lines and any(w.hidden is None for w in self.words):
            raise ValueError("a text layer's words have no lines: build it with laid_out()")
        return self

    def __reduce__(self):
        # Across processes (a page read in a bounded child) as JSON: thousands of words
        # travel several times faster than as pickled models.
        return (TextLayer.model_validate_json, (self.model_dump_json(),))

    @cached_property
    def line_texts(self) -> list[str]:
        """Each line's words joined by spaces."""
        return [join_words(self.words, line) for line in self.lines]

    @cached_property
    def text(self) -> str:
        """The page's text, one line per line of the model, in reading order."""
        return "\n".join(self.line_texts)

    @cached_property
    def hidden_words(self) -> list[Word]:
        """The words the page does not show, in the layer's order."""
        return [w for w in self.words if w.hidden is not None]

    @cached_property
    def line_of_word(self) -> list[int]:
        """Word id -> the id of its line."""
        return _owners(self.lines, len(self.words))

    @cached_property
    def block_of_line(self) -> list[int]:
        """Line id -> the id of its block."""
        return _owners(self.blocks, len(self.lines))


def _owners(groups: list[list[int]], size: int) -> list[int]:
    """Member id -> the index of the group holding it (-1 for none)."""
    owner = [-1] * size
    for group_id, members in enumerate(groups):
        for member in members:
            owner[member] = group_id
    return owner


def join_words(words: Sequence[Word], ids: Iterable[int]) -> str:
    """The cited words' text, in the order cited, joined by spaces."""
    return " ".join(words[i].text for i in ids)
