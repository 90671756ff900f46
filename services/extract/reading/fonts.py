"""Which font object each word is set in: a font is its object (its xref in the document),
not its name. Two font objects of one page can share a name (``ArialMT`` twice, one with a
broken ``/ToUnicode``); MuPDF's spans tell fonts apart by name only, so where a page has such
a pair its words are told apart by the font each character was drawn with."""

import re
from collections import Counter
from collections.abc import Iterable

import pymupdf
from pymupdf import mupdf

# A subset font's name starts with six capitals and a plus: the font is the name after it.
_SUBSET = re.compile(r"^[A-Z]{6}\+")

# Forms walked through for an annotation's fonts, at most (a hostile file may nest many).
_MAX_FORMS = 64
FontKey = tuple[str, int]  # (name, xref), or (name, -n) for a font object no xref was found for
# A text line's box -> the centre of each character of it set in a shared name, and its font.
CharFonts = dict[tuple[float, ...], list[tuple[float, float, int]]]


def font_objects(page: pymupdf.Page) -> dict[str, list[int]]:
    """The xrefs of the page's font objects (its forms' and its annotations' appearances'
    included) by name, subset prefix dropped; a composite (Type0) font also by its
    descendant's name, which MuPDF names its text by."""
    by_name: dict[str, list[int]] = {}
    doc = page.parent

    def add(xref: int, basefont: str, composite: bool) -> None:
        names = {_SUBSET.sub("", basefont)}
        if composite:
            names.add(_SUBSET.sub("", _descendant_name(doc, xref)))
        for name in names - {""}:
            xrefs = by_name.setdefault(name, [])
            if xref not in xrefs:
                xrefs.append(xref)

    for xref, _ext, kind, basefont, *_ in page.get_fonts(full=True):
        add(xref, basefont, kind == "Type0")
    seen: set[int] = set()
    for annot in page.annots():
        kind, appearance = doc.xref_get_key(annot.xref, "AP/N")
        if kind == "xref":
            for xref in _stream_fonts(doc, int(appearance.split()[0]), seen):
                kind, basefont = doc.xref_get_key(xref, "BaseFont")
                subtype = doc.xref_get_key(xref, "Subtype")[1]
                add(xref, basefont.lstrip("/") if kind == "name" else "", subtype == "/Type0")
    return by_name


def _stream_fonts(doc: pymupdf.Document, xref: int, seen: set[int]) -> list[int]:
    """The font objects a content stream's resources name, its forms' included."""
    if xref in seen or len(seen) > _MAX_FORMS:
        return []
    seen.add(xref)
    fonts = _refs(doc, xref, "Resources/Font")
    for form in _refs(doc, xref, "Resources/XObject"):
        if doc.xref_get_key(form, "Subtype")[1] == "/Form":
            fonts += _stream_fonts(doc, form, seen)
    return fonts


def _refs(doc: pymupdf.Document, xref: int, key: str) -> list[int]:
    """The objects a dictionary entry of ``xref`` refers to (the entry itself may stand
    elsewhere)."""
    kind, value = doc.xref_get_key(xref, key)
    if kind == "xref":
        value = doc.xref_object(int(value.split()[0]), compressed=True)
    elif kind != "dict":
        return []
    return [int(n) for n in re.findall(r"(\d+) 0 R", value)]


def _descendant_name(doc: pymupdf.Document, xref: int) -> str:
    kind, value = doc.xref_get_key(xref, "DescendantFonts")
    if kind == "xref":  # the array itself stands elsewhere
        value = doc.xref_object(int(value.split()[0]), compressed=True)
    refs = re.findall(r"(\d+) 0 R", value)
    if not refs:
        return ""
    kind, name = doc.xref_get_key(int(refs[0]), "BaseFont")
    return name.lstrip("/") if kind == "name" else ""


class PageFonts:
    """The font object of a word on one page, from its span's font name and, where the page
    has two font objects of that name, from the characters under the word."""

    def __init__(self, page: pymupdf.Page, textpage: pymupdf.TextPage, blocks: list[dict]) -> None:
        self.by_name = font_objects(page)
        self._page = page
        self._textpage = textpage
        self._blocks = blocks  # the text page's blocks, as PyMuPDF's "dict" gives them
        self._lines: CharFonts | None = None

    def key(self, name: str, line_bbox: Iterable[float], word_bbox: Iterable[float]) -> FontKey:
        xrefs = self.by_name.get(name, [])
        if len(xrefs) == 1:
            return name, xrefs[0]
        if not xrefs:  # a font outside the page's resources (an annotation's appearance)
            return name, -1
        if self._lines is None:
            self._lines = self._char_fonts({n for n, x in self.by_name.items() if len(x) > 1})
        x0, y0, x1, y1 = word_bbox
        votes = Counter(
            ident
            for cx, cy, ident in self._lines.get(_rounded(line_bbox), [])
            if x0 <= cx <= x1 and y0 <= cy <= y1
        )
        return name, votes.most_common(1)[0][0] if votes else -1

    def _char_fonts(self, names: set[str]) -> CharFonts:
        """Per text line (by its box) with a span set in a shared name: each character's
        origin and its font object (xref, or a negative number per unmatched font), for the
        characters set in such a name. Only those lines are walked: it is slow."""
        wanted = {
            _rounded(line["bbox"])
            for block in self._blocks
            for line in block.get("lines", ())
            if any(span["font"] in names for span in line["spans"])
        }
        idents: dict[int, int] = self._xref_of_font(names)
        unmatched = 0
        lines: CharFonts = {}
        for block in self._textpage.this:
            if block.m_internal.type != mupdf.FZ_STEXT_BLOCK_TEXT:
                continue
            for line in block:
                r = line.m_internal.bbox
                key = _rounded((r.x0, r.y0, r.x1, r.y1))
                if key not in wanted:
                    continue
                chars = []
                # The raw chain of characters: MuPDF's iterator wraps each one, which costs
                # more than the walk itself.
                ch = line.m_internal.first_char
                while ch is not None:
                    font = ch.font
                    pointer = int(font.this)
                    ident = idents.get(pointer)
                    if ident is None:
                        if mupdf.ll_fz_font_name(font) in names:
                            unmatched += 1
                            ident = -1 - unmatched
                        else:
                            ident = 0  # another name: its span says which font it is
                        idents[pointer] = ident
                    if ident:
                        origin = ch.origin
                        chars.append((origin.x + 0.1, origin.y - 0.1, ident))
                    ch = ch.next
                lines[key] = chars
        return lines

    def _xref_of_font(self, names: set[str]) -> dict[int, int]:
        """MuPDF's loaded font (its address) -> the xref of the font object it was loaded
        from, for the fonts named ``names``: loading a font object again finds the one the
        page's run loaded, while it is in MuPDF's store."""
        doc = mupdf.pdf_document_from_fz_document(self._page.parent.this)
        stack = mupdf.pdf_resource_stack()
        found: dict[int, int] = {}
        for name in names:
            for xref in self.by_name[name]:
                try:
                    ref = mupdf.pdf_new_indirect(doc, xref, 0)
                    desc = mupdf.ll_pdf_load_font(doc.m_internal, stack, ref.m_internal)
                except Exception:  # MuPDF raises many kinds on a broken font
                    continue
                found[int(desc.font.this)] = xref
                mupdf.ll_pdf_drop_font(desc)
        return found


def _rounded(box: Iterable[float]) -> tuple[float, ...]:
    return tuple(round(v, 2) for v in box)
