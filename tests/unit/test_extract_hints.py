"""The file's page labels, read as the PDF defines them."""

import pymupdf

from services.extract.reading.hints import page_label


def _labelled(page_labels: str, pages: int = 4) -> pymupdf.Document:
    doc = pymupdf.open()
    for _ in range(pages):
        doc.new_page()
    doc.xref_set_key(doc.pdf_catalog(), "PageLabels", page_labels)
    return pymupdf.open("pdf", doc.tobytes())


def test_prefixes_are_decoded_pdf_text_strings():
    """A UTF-16 hex prefix is its text, not "<FEFF…>", and a literal keeps its escaped
    parentheses and its slash; numbering follows each rule's style and start."""
    doc = _labelled(
        "<</Nums[0<</P<FEFF005B0031005D00200053002D0043006F007600650072>>>"
        r"1<</P(A/1 \(T01\) )/S/D/St 5>>"
        "3<</P<FEFF041B0438044104420020>/S/A>>]>>"
    )
    assert [page_label(p) for p in doc.pages()] == [
        "[1] S-Cover",
        "A/1 (T01) 5",
        "A/1 (T01) 6",
        "Лист A",
    ]


def test_styles_and_kids_of_the_number_tree():
    """Rules under /Kids are read like those at the root; roman and letter numbering count
    from the rule's page."""
    doc = pymupdf.open()
    for _ in range(5):
        doc.new_page()
    doc.set_page_labels(
        [
            {"startpage": 0, "prefix": "", "style": "r", "firstpagenum": 1},
            {"startpage": 2, "prefix": "S-", "style": "D", "firstpagenum": 1},
            {"startpage": 4, "prefix": "", "style": "a", "firstpagenum": 2},
        ]
    )
    flat = [page_label(p) for p in doc.pages()]
    kids = doc.get_new_xref()
    doc.update_object(kids, doc.xref_get_key(doc.pdf_catalog(), "PageLabels")[1])
    doc.xref_set_key(doc.pdf_catalog(), "PageLabels", f"<</Kids[{kids} 0 R]>>")
    assert flat == ["i", "ii", "S-1", "S-2", "b"]
    assert [page_label(p) for p in doc.pages()] == flat


def test_a_file_without_labels_has_none():
    """No /PageLabels: no label, and no invented one."""
    doc = pymupdf.open()
    doc.new_page()
    assert page_label(doc[0]) is None
