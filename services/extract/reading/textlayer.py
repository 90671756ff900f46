"""The page's own words (PyMuPDF, annotations, or OCR), read once into the page-text model.

PyMuPDF gives words in the unrotated page's coordinates; every box and direction is turned
into the displayed page's frame here, once, so that "right edge" and "bottom strip" mean
what a person looking at the sheet sees, and crops cut from the displayed page hit the words.
"""

import pymupdf

from services.extract.reading.fonts import FontKey, PageFonts
from services.extract.reading.render import render_page, render_zoom
from services.extract.reading.rulings import MIN_WALL, ruled_lines
from services.extract.reading.vectors import vector_boxes
from services.extract.reading.visibility import PageRender, over_image, property_hidden
from shared.pagetext import Box, TextLayer, Word, alnum_count, laid_out, normalize

# The render words are judged on when the caller has none: the page image's default size.
DEFAULT_RENDER_PX = 2048
DEFAULT_RENDER_PIXELS = 16_000_000
# Annotation kinds whose text the page shows: a free-text box draws its contents.
_DRAWN_TEXT_ANNOTS = frozenset({pymupdf.mupdf.PDF_ANNOT_FREE_TEXT})


def read_text_layer(
    page: pymupdf.Page,
    page_number: int,
    min_chars: int,
    display: pymupdf.DisplayList | None = None,
    render: PageRender | None = None,
) -> TextLayer:
    """Read a PDF page's words with their size and direction (and the text its annotations
    carry) and whether it has a usable text layer (at least ``min_chars`` letters/digits of
    words the page shows); on a page without one, whether it carries vector drawings, and
    their long ruled lines.

    Every word says whether the page shows it (``Word.hidden``, from the text's properties
    and from the pixels under and around it on the page's ``render``, made here when the
    caller has none); hidden words are
    in no line. Invisible words laid over an image (a searchable scan's OCR text) are kept
    as OCR words (``origin="ocr"``), a reading of the image, not the page's own text.

    The words are read from ``display``, the page's display list, when the caller renders
    from it too (the page's content is then interpreted once for both)."""
    matrix = page.rotation_matrix
    display = display or page.get_displaylist()
    if render is None:
        # Read alone (not beside extract's own render): the words are still judged on one.
        zoom = render_zoom(display, DEFAULT_RENDER_PX, DEFAULT_RENDER_PIXELS)
        render = PageRender(render_page(display, DEFAULT_RENDER_PX, DEFAULT_RENDER_PIXELS), zoom)
    fonts: dict[FontKey, int] = {}
    words = _layer_words(page, display, render, fonts)
    words += _annotation_words(page, matrix, words)
    own = [w for w in words if "hidden" not in w and w.get("origin") != "ocr"]
    has_text_layer = sum(alnum_count(w["text"]) for w in own) >= min_chars
    scanned = not has_text_layer and any(w.get("origin") == "ocr" for w in words)
    # The ruled lines are the walls of the title block's cells, on any page (issue 36: a
    # value never crosses a cell's wall), read from the display list the words came from.
    drawn, vectors = vector_boxes(display, render, shortest=MIN_WALL)
    return laid_out(
        page_number=page_number,
        width=page.rect.width,
        height=page.rect.height,
        rotation=page.rotation,
        words=words,
        has_text_layer=has_text_layer,
        source="ocr" if scanned else "pdf",
        has_drawings=bool(drawn) and not has_text_layer,
        rules=ruled_lines(vectors, Box(*page.rect)),
        fonts=[name for name, _ in fonts],
        font_xrefs=[xref if xref > 0 else None for _, xref in fonts],
    )


def _displayed(rect: pymupdf.Rect, matrix: pymupdf.Matrix) -> Box:
    r = rect * matrix
    return Box(r.x0, r.y0, r.x1, r.y1)


def _layer_words(
    page: pymupdf.Page,
    display: pymupdf.DisplayList,
    render: PageRender,
    fonts: dict[FontKey, int],
) -> list[dict]:
    """The text layer's words in its own order, each with its line's direction, the size
    of the span it sits in, its font object (``services.extract.reading.fonts``; one text page
    serves every reading; ``fonts`` gathers the fonts' indexes, in order of first use) and,
    for a word the page
    does not show, why (``hidden``), as plain dicts: validating thousands of them in one go
    is cheaper than making each a model here. A display list's text is in the displayed
    page's frame already (turned with the page's /Rotate)."""
    textpage = pymupdf.TextPage(display.get_textpage(flags=pymupdf.TEXTFLAGS_WORDS))
    textpage.parent = page  # PyMuPDF's readers check the text page is the page's
    blocks = page.get_text("dict", textpage=textpage)["blocks"]
    page_fonts = PageFonts(page, textpage, blocks)
    lines: dict[tuple[int, int], tuple[tuple[float, float], list[dict], tuple]] = {}
    words: list[dict] = []
    unmarked: list[dict] = []  # drawn invisibly: shown only if something else draws them
    for x0, y0, x1, y1, text, block_no, line_no, _ in page.get_text("words", textpage=textpage):
        if not text.strip():
            continue
        line = lines.get((block_no, line_no))
        if line is None:
            raw = blocks[block_no]["lines"][line_no]
            dx, dy = raw["dir"]
            line = lines[(block_no, line_no)] = (
                (round(dx, 4) + 0.0, round(dy, 4) + 0.0),
                raw["spans"],
                raw["bbox"],
            )
        direction, spans, line_bbox = line
        span = spans[0] if len(spans) == 1 else _span_of(spans, x0, y0, x1, y1)
        word = {
            "id": len(words),
            "text": text,
            "bbox": Box(x0, y0, x1, y1),
            "size": span["size"],
            "dir": direction,
            "font": fonts.setdefault(
                page_fonts.key(span["font"], line_bbox, (x0, y0, x1, y1)), len(fonts)
            ),
        }
        hidden = property_hidden(span)
        if hidden is None:
            hidden = render.unseen(word["bbox"], span.get("color", 0))
        elif hidden == "invisible":
            unmarked.append(word)
        if hidden is not None:
            word["hidden"] = hidden
        words.append(word)
    if unmarked:
        _search_layer(page, display, render, unmarked)
    return words


def _span_of(spans: list[dict], x0: float, y0: float, x1: float, y1: float) -> dict:
    """The span that overlaps the word most."""
    best, found = -1.0, spans[0]
    for span in spans:
        sx0, sy0, sx1, sy1 = span["bbox"]
        overlap = max(0.0, min(x1, sx1) - max(x0, sx0)) * max(0.0, min(y1, sy1) - max(y0, sy0))
        if overlap > best:
            best, found = overlap, span
    return found


def _search_layer(
    page: pymupdf.Page,
    display: pymupdf.DisplayList,
    render: PageRender,
    invisible: list[dict],
) -> None:
    """Invisible words over marks the page draws are a search layer: over an image of the
    page, a scanner's OCR text, kept as OCR words (a reading of the image, never the page's
    own text); over linework (on the page's ``render``), the text a CAD export drew as
    outlines, kept as the page's text. Over bare ground they stay hidden: nobody sees them."""
    # Image blocks come from a text page of their own, in the display list's frame as the
    # words are: only pages with invisible text pay for it.
    textpage = pymupdf.TextPage(display.get_textpage(flags=pymupdf.TEXT_PRESERVE_IMAGES))
    textpage.parent = page
    images = [Box(*b[:4]) for b in page.get_text("blocks", textpage=textpage) if b[6] == 1]
    for word in invisible:
        if over_image(word["bbox"], images):
            del word["hidden"]
            word["origin"] = "ocr"
        elif render.marked(word["bbox"]):
            del word["hidden"]


def _annotation_words(
    page: pymupdf.Page, matrix: pymupdf.Matrix, layer_words: list[dict]
) -> list[dict]:
    """Words of the text annotations carry that the page shows: a free-text box's contents,
    and the contents of annotations that draw nothing themselves (CAD exports draw text as
    outlines and record it in such annotations). A note attached to a drawn mark is a
    comment, not the sheet's text, and stays out; so does an annotation whose text the
    text layer already prints where it sits (an appearance flattened into the page)."""
    words: list[dict] = []
    for annot in page.annots():
        contents = (annot.info.get("content") or "").strip()
        if not contents or not (annot.type[0] in _DRAWN_TEXT_ANNOTS or _draws_nothing(annot)):
            continue
        rect = annot.rect & page.mediabox
        if rect.is_empty:
            continue
        box = _displayed(rect, matrix)
        if _already_printed(contents, box, layer_words):
            continue
        words += _spread(contents, box, len(layer_words) + len(words))
    return words


def _already_printed(contents: str, box: Box, layer_words: list[dict]) -> bool:
    """Whether most of the annotation's words are text-layer words inside its box."""
    inside = {
        normalize(w["text"])
        for w in layer_words
        if "hidden" not in w and box.contains(w["bbox"].centre)
    }
    tokens = [t for t in (normalize(t) for t in contents.split()) if t]
    return bool(tokens) and sum(t in inside for t in tokens) >= 0.5 * len(tokens)


def _draws_nothing(annot: pymupdf.Annot) -> bool:
    doc = annot.parent.parent
    appearance = doc.xref_get_key(annot.xref, "AP")[0]
    return appearance == "null" and not annot.colors.get("stroke") and not annot.colors.get("fill")


def _spread(contents: str, box: Box, first_id: int) -> list[dict]:
    """An annotation's words, laid out over its box: its lines stacked across the box's
    short side, each line's words along the long side in proportion to their length."""
    lines = [line.split() for line in contents.replace("\t", " ").splitlines() if line.split()]
    x0, y0, x1, y1 = box
    width, height = x1 - x0, y1 - y0
    longest = max(len(" ".join(line)) for line in lines)
    # Text runs along the long side, unless a short single word fits better across it.
    vertical = height > width and (len(lines) > 1 or longest > 3)
    along, across = (height, width) if vertical else (width, height)
    pitch = across / len(lines)
    words: list[dict] = []
    for row, line in enumerate(lines):
        total = len(" ".join(line))
        position = 0
        for text in line:
            start, end = position / total * along, (position + len(text)) / total * along
            position += len(text) + 1
            c0, c1 = row * pitch, (row + 1) * pitch
            # Vertical annotation text reads bottom to top, lines stacked left to right.
            bbox = (
                Box(x0 + c0, y1 - end, x0 + c1, y1 - start)
                if vertical
                else Box(x0 + start, y0 + c0, x0 + end, y0 + c1)
            )
            words.append(
                {
                    "id": first_id + len(words),
                    "text": text,
                    "bbox": bbox,
                    "size": round(pitch, 2),
                    "dir": (0.0, -1.0) if vertical else (1.0, 0.0),
                    "origin": "annotation",
                }
            )
    return words


def ocr_text_layer(
    words: list[Word],
    page_number: int,
    width: float,
    height: float,
    rotation: int = 0,
    has_drawings: bool = False,
    rules: list[Box] | None = None,
) -> TextLayer:
    """A text layer built from OCR words on a page that has none of its own.

    ``has_text_layer`` stays False: the words are a reading of the image, not the page's
    own text. They are laid out like any other words and marked ``origin="ocr"``.
    """
    return laid_out(
        page_number=page_number,
        width=width,
        height=height,
        rotation=rotation,
        words=[w.model_copy(update={"id": i, "origin": "ocr"}) for i, w in enumerate(words)],
        has_text_layer=False,
        source="ocr",
        has_drawings=has_drawings,
        rules=rules or [],
    )
