"""OCR for pages without a text layer: RapidOCR on onnxruntime, models shipped in the wheel
(no download at run time)."""

import logging
import threading

from shared.models import Word

_engine = None
_lock = threading.Lock()


def _get_engine():
    """The process-wide engine, built on first use: loading the models takes about a second."""
    global _engine
    if _engine is None:
        from rapidocr import RapidOCR  # imported lazily: it pulls in cv2 and onnxruntime

        _engine = RapidOCR(params={"Global.log_level": "error"})
        logging.getLogger("RapidOCR").setLevel(logging.ERROR)
    return _engine


def _bbox(points, scale: float) -> tuple[float, float, float, float]:
    xs = [float(p[0]) for p in points]
    ys = [float(p[1]) for p in points]
    return (min(xs) * scale, min(ys) * scale, max(xs) * scale, max(ys) * scale)


def ocr_words(png: bytes, scale_to_points: float) -> list[Word]:
    """OCR a page image into words whose bboxes are in PDF points (pixel coordinates
    times ``scale_to_points``). Blocking and CPU-bound: call it from a worker thread."""
    # One inference at a time per process: the engine is shared and onnxruntime already
    # spreads a single run over the cores.
    with _lock:
        result = _get_engine()(png, return_word_box=True)
    if not result.txts:
        return []
    words: list[Word] = []
    word_lines = result.word_results or ()
    for i, line_text in enumerate(result.txts):
        line_words = word_lines[i] if i < len(word_lines) else ()
        if line_words:
            words.extend(
                Word(text=text, bbox=_bbox(box, scale_to_points))
                for text, _score, box in line_words
                if text.strip()
            )
        elif line_text.strip():
            words.append(Word(text=line_text, bbox=_bbox(result.boxes[i], scale_to_points)))
    return words
