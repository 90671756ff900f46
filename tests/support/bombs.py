"""Hostile PDFs, built small in memory: each is a few KB to a few MB, and costs a reader far
more than its size (a lying page tree, endless drawing, a flood of objects)."""

import re
import struct
import zlib

import pymupdf


def lying_page_count_pdf(count: bytes) -> bytes:
    """One real page under a page tree whose /Count claims ``count`` pages."""
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "ONE REAL PAGE")
    return re.sub(rb"/Count 1\b", b"/Count " + count, doc.tobytes())


def endless_lines_pdf(lines: int, *, text: str = "A PAGE OF ENDLESS LINES") -> bytes:
    """One page of text plus ``lines`` full-page diagonals: a few KB on disk, well under the
    content-stream limit, yet each line costs the rasteriser the whole page."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 72), text)
    xref = page.get_contents()[0]
    ops = doc.xref_stream(xref) + b"\n" + b"0 0 m 612 792 l S\n" * lines
    doc.update_stream(xref, zlib.compress(ops, 9), compress=False)
    doc.xref_set_key(xref, "Filter", "/FlateDecode")
    return doc.tobytes()


def many_objects_pdf(count: int, *, per_stream: int = 10_000) -> bytes:
    """A one-page PDF carrying ``count`` tiny extra objects packed in compressed object
    streams (PDF 1.5), so a reader that visits every object works hard on a small file."""
    out = bytearray(b"%PDF-1.7\n")
    offsets: dict[int, int] = {}

    def put(num: int, body: bytes) -> None:
        offsets[num] = len(out)
        out.extend(b"%d 0 obj\n%s\nendobj\n" % (num, body))

    content = b"BT /F1 24 Tf 72 720 Td (MANY OBJECTS) Tj ET"
    put(1, b"<< /Type /Catalog /Pages 2 0 R >>")
    put(2, b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>")
    put(3, b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>")
    put(4, b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content))
    first, streams = 5, -(-count // per_stream)
    stream_base = first + count
    rows = [struct.pack(">BIH", 0, 0, 65535)]
    rows += [struct.pack(">BIH", 1, 0, 0)] * 4  # offsets filled in below
    for s in range(streams):
        nums = range(first + s * per_stream, min(first + (s + 1) * per_stream, first + count))
        bodies = [b"<</A %d>>" % n for n in nums]
        header, pos = bytearray(), 0
        for n, body in zip(nums, bodies, strict=True):
            header += b"%d %d " % (n, pos)
            pos += len(body) + 1
        data = zlib.compress(bytes(header) + b"\n" + b"\n".join(bodies), 6)
        put(
            stream_base + s,
            b"<< /Type /ObjStm /N %d /First %d /Filter /FlateDecode /Length %d >>\n"
            b"stream\n%s\nendstream" % (len(nums), len(header) + 1, len(data), data),
        )
        rows += [struct.pack(">BIH", 2, stream_base + s, i) for i in range(len(nums))]
    for num in range(1, 5):
        rows[num] = struct.pack(">BIH", 1, offsets[num], 0)
    rows += [struct.pack(">BIH", 1, offsets[stream_base + s], 0) for s in range(streams)]
    xref_num = stream_base + streams
    xref_at = len(out)
    rows.append(struct.pack(">BIH", 1, xref_at, 0))
    table = zlib.compress(b"".join(rows), 6)
    put(
        xref_num,
        b"<< /Type /XRef /Size %d /W [1 4 2] /Root 1 0 R /Filter /FlateDecode /Length %d >>\n"
        b"stream\n%s\nendstream" % (xref_num + 1, len(table), table),
    )
    out.extend(b"startxref\n%d\n%%%%EOF\n" % xref_at)
    return bytes(out)


def many_pages_pdf(count: int) -> bytes:
    """``count`` blank pages, each an object of its own under one page tree: written
    directly, as PyMuPDF adds pages one by one in time that grows with the document (ten
    thousand take it seconds)."""
    out = bytearray(b"%PDF-1.7\n")
    offsets = []

    def put(body: bytes) -> None:
        offsets.append(len(out))
        out.extend(b"%d 0 obj\n%s\nendobj\n" % (len(offsets), body))

    kids = b" ".join(b"%d 0 R" % n for n in range(3, count + 3))
    put(b"<< /Type /Catalog /Pages 2 0 R >>")
    put(b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, count))
    for _ in range(count):
        put(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>")
    xref_at = len(out)
    out.extend(b"xref\n0 %d\n0000000000 65535 f \n" % (len(offsets) + 1))
    out.extend(b"".join(b"%010d 00000 n \n" % offset for offset in offsets))
    out.extend(b"trailer\n<< /Size %d /Root 1 0 R >>\n" % (len(offsets) + 1))
    out.extend(b"startxref\n%d\n%%%%EOF\n" % xref_at)
    return bytes(out)
