"""Active content in an upload: scripts, launch actions, embedded and attached files.

sheetflow never runs any of it, yet drawing sets exported from CAD tools often carry some
(document JavaScript, an OpenAction). So it is stripped before the upload is stored as the
job's source, and what was removed is recorded by kind; a deployment may refuse such files
instead (``SHEETFLOW_ACTIVE_CONTENT=refuse``).

Kinds, by where the content sat: ``document_javascript`` (the document's JavaScript name
tree), ``open_action`` (run when the file opens), ``additional_actions`` (run on a page,
annotation, form-field or document event), ``link_actions`` (behind a link, bookmark or
button), ``chained_actions`` (run after another action), ``embedded_files``,
``attached_files`` (file-attachment annotations) and ``other_scripts`` (script or launch
actions found anywhere else, e.g. left over from an earlier revision of the file).
"""

import re
from collections import Counter

import pymupdf

# Actions that run something: a script, or another program.
RUNNING_ACTIONS = ("/JavaScript", "/Launch")
# Text that any object holding such an action, or a file, contains.
SUSPECT_TEXT = ("/JavaScript", "/Launch", "/JS", "/EmbeddedFile", "/FileAttachment")
# Keys whose value is an action, and the kind of content an action there is.
ACTION_KEYS = {"OpenAction": "open_action", "A": "link_actions", "Next": "chained_actions"}
# Triggers of an additional-actions (/AA) dictionary: annotation, page, form field, document.
AA_TRIGGERS = (
    *("E", "X", "D", "U", "Fo", "Bl", "PO", "PC", "PV", "PI"),
    *("O", "C", "K", "F", "V", "WC", "WS", "DS", "WP", "DP"),
)
# Every entry a document's /Names dictionary may have (PDF 2.0, 7.7.4).
NAME_TREES = (
    *("Dests", "AP", "JavaScript", "Pages", "Templates", "IDS", "URLS"),
    *("EmbeddedFiles", "AlternatePresentations", "Renditions"),
)
_REF = re.compile(r"(\d+)\s+\d+\s+R")


def has_active_content(doc: pymupdf.Document) -> bool:
    """A quick look: could the document hold anything :func:`strip_active_content` removes?
    (One pass over the objects' text; a False is certain.)"""
    if doc.embfile_count():
        return True
    return any(any(s in text for s in SUSPECT_TEXT) for text in _texts(doc).values())


def strip_active_content(doc: pymupdf.Document) -> dict[str, int]:
    """Remove, in place, every script and launch action, embedded and attached file from
    ``doc``; how many of each kind were removed (empty when nothing was)."""
    removed: Counter[str] = Counter()
    present = list(_texts(doc))
    running = {xref for xref in present if _runs_something(doc, xref)}
    reached: set[int] = set()
    catalog = doc.pdf_catalog()
    removed["document_javascript"] = _count_name_tree(
        doc, catalog, "Names/JavaScript", running, reached
    )
    removed["embedded_files"] = doc.embfile_count()
    _drop_entries(doc, catalog, "Names", NAME_TREES, ["JavaScript", "EmbeddedFiles"])
    for xref in present:
        for key, kind in ACTION_KEYS.items():
            if _is_running_value(doc, xref, key, running, reached):
                doc.xref_set_key(xref, key, "null")
                removed[kind] += 1
        if _key(doc, xref, "AA")[0] != "null":
            triggers = [
                t for t in AA_TRIGGERS if _is_running_value(doc, xref, f"AA/{t}", running, reached)
            ]
            _drop_entries(doc, xref, "AA", AA_TRIGGERS, triggers)
            removed["additional_actions"] += len(triggers)
    removed["attached_files"] = _detach_files(doc, present)
    for xref in running - reached:  # referenced from somewhere unusual, or by nothing
        doc.update_object(xref, "<<>>")
        removed["other_scripts"] += 1
    for xref in present:  # file contents still referenced (e.g. a PDF 2.0 /AF) are emptied
        if _key(doc, xref, "Type")[1] == "/EmbeddedFile" and doc.xref_is_stream(xref):
            doc.update_stream(xref, b"")
    return {kind: count for kind, count in removed.items() if count}


def _texts(doc: pymupdf.Document) -> dict[int, str]:
    """The text of every object the file holds, read once. A file may declare far more
    objects than it has (a hostile one, hundreds of thousands): only those present are
    looked at again."""
    texts = {}
    for xref in range(1, doc.xref_length()):
        try:
            text = doc.xref_object(xref, compressed=True)
        except Exception:  # declared but missing or broken: it holds nothing to strip
            continue
        if text != "null":
            texts[xref] = text
    return texts


def _key(doc: pymupdf.Document, xref: int, key: str) -> tuple[str, str]:
    """``doc.xref_get_key``, with a broken object read as having no such key."""
    try:
        return doc.xref_get_key(xref, key)
    except Exception:  # a broken object is not active content; its pages decide later
        return "null", "null"


def _runs_something(doc: pymupdf.Document, xref: int) -> bool:
    """Whether object ``xref`` is an action that runs a script or a program."""
    return _key(doc, xref, "S")[1] in RUNNING_ACTIONS or _key(doc, xref, "JS")[0] != "null"


def _is_running_value(
    doc: pymupdf.Document, xref: int, key: str, running: set[int], reached: set[int]
) -> bool:
    """Whether ``key`` of object ``xref`` (a path like ``AA/O``) holds, or points to, an
    action that runs something, itself or chained after it; referenced ones join ``reached``."""
    kind, value = _key(doc, xref, key)
    if kind == "null":
        return False
    refs = {int(r) for r in _REF.findall(value)} & running
    reached |= refs
    return bool(refs) or (kind in ("dict", "array") and any(a in value for a in RUNNING_ACTIONS))


def _count_name_tree(
    doc: pymupdf.Document, xref: int, key: str, running: set[int], reached: set[int]
) -> int:
    """Entries of the name tree at ``key`` of ``xref`` that run something (leaves whose
    value is a running action, by reference or written in place); tree nodes are followed
    through their /Kids."""
    nodes, seen, count = [(xref, key + "/")], set(), 0
    while nodes:
        node, path = nodes.pop()
        names = _key(doc, node, f"{path}Names")[1]
        refs = {int(r) for r in _REF.findall(names)} & running
        reached |= refs
        inline = sum(names.count(f"/S{a}") + names.count(f"/S {a}") for a in RUNNING_ACTIONS)
        count += len(refs) + inline
        for kid in map(int, _REF.findall(_key(doc, node, f"{path}Kids")[1])):
            if kid not in seen:
                seen.add(kid)
                nodes.append((kid, ""))
    return count


def _drop_entries(
    doc: pymupdf.Document, xref: int, key: str, entries: tuple[str, ...], drop: list[str]
) -> None:
    """Rewrite the dictionary at ``key`` of ``xref`` without the ``drop`` entries (of the
    ``entries`` it may have): no trace of them stays, not even a null."""
    kind, value = _key(doc, xref, key)
    if kind == "null" or not any(_key(doc, xref, f"{key}/{e}")[0] != "null" for e in drop):
        return
    kept = []
    for entry in entries:
        if entry in drop:
            continue
        sub_kind, sub_value = _key(doc, xref, f"{key}/{entry}")
        if sub_kind == "string":
            sub_value = pymupdf.get_pdf_str(sub_value)
        if sub_kind != "null":
            kept.append(f"/{entry} {sub_value}")
    rewritten = "<<" + "".join(kept) + ">>"
    if kind == "xref" and (ref := _REF.match(value)):
        doc.update_object(int(ref.group(1)), rewritten)
    else:
        doc.xref_set_key(xref, key, rewritten)


def _detach_files(doc: pymupdf.Document, present: list[int]) -> int:
    """Take the file out of every file-attachment annotation; how many held one. The
    annotation itself stays: its icon is part of what the page shows."""
    detached = 0
    for xref in present:
        if (
            _key(doc, xref, "Subtype")[1] == "/FileAttachment"
            and _key(doc, xref, "FS")[0] != "null"
        ):
            pdf = pymupdf.mupdf.pdf_document_from_fz_document(doc.this)
            pymupdf.mupdf.pdf_dict_dels(pymupdf.mupdf.pdf_load_object(pdf, xref), "FS")
            detached += 1
    return detached
