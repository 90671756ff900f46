"""The page's own words (PyMuPDF or OCR): the oracle every later claim is checked against."""

import pymupdf

from shared.models import TextLayer, Word


def meaningful_chars(text: str) -> int:
    """Count the characters that carry content (letters and digits): punctuation and
    whitespace alone do not make a text layer."""
    return sum(1 for ch in text if ch.isalnum())


def read_text_layer(page: pymupdf.Page, page_number: int, min_chars: int) -> TextLayer:
    """Read a PDF page's words (bboxes in PDF points), its plain text, whether it has a
    usable text layer (at least ``min_chars`` letters/digits) and whether it carries any
    vector drawing."""
    words = [
        Word(text=w[4], bbox=(w[0], w[1], w[2], w[3]))
        for w in page.get_text("words")
        if w[4].strip()
    ]
    text = page.get_text("text")
    return TextLayer(
        page_number=page_number,
        width=page.rect.width,
        height=page.rect.height,
        text=text,
        words=words,
        has_text_layer=meaningful_chars(text) >= min_chars,
        source="pdf",
        # get_cdrawings is the C-level path listing: far cheaper than get_drawings.
        has_drawings=bool(page.get_cdrawings()),
    )


def ocr_text_layer(
    words: list[Word], page_number: int, width: float, height: float, has_drawings: bool = False
) -> TextLayer:
    """A text layer built from OCR words on a page that has none of its own.

    ``has_text_layer`` stays False: the words are a reading of the image, not the page's
    own text, so coverage does not hold the page to the text-layer floor.
    """
    return TextLayer(
        page_number=page_number,
        width=width,
        height=height,
        text=" ".join(w.text for w in words),
        words=words,
        has_text_layer=False,
        source="ocr",
        has_drawings=has_drawings,
    )
