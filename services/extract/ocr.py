"""OCR for pages without a text layer: RapidOCR on onnxruntime, models shipped in the wheel
(no download at run time)."""

import logging
import threading

from shared.models import Word

# Measured on a scanned 36x24 in sheet at 2048 px, 2 busy cores: together these take a
# third off OCR's CPU time and about half off its wall time, reading the same words.
ENGINE_PARAMS = {
    "Global.log_level": "error",
    # The angle classifier only flips lines printed upside down, which drawing sheets do
    # not have (vertical text is rotated 90 degrees, which it cannot fix anyway).
    "Global.use_cls": False,
    # Keep the page image's own size: the default 2000 px cap resamples a 2048 px page.
    "Global.max_side_len": 2048,
    # One thread per inference: the other services (and extract workers) share the cores,
    # and onnxruntime's spinning worker threads lose more to contention than they gain.
    "EngineConfig.onnxruntime.intra_op_num_threads": 1,
    "EngineConfig.onnxruntime.inter_op_num_threads": 1,
    # RapidOCR turns the arena off; without it every run re-allocates the detector's
    # full-page feature maps.
    "EngineConfig.onnxruntime.enable_cpu_mem_arena": True,
}

_engine = None
_lock = threading.Lock()


def _get_engine():
    """The process-wide engine, built on first use: loading the models takes about a second."""
    global _engine
    if _engine is None:
        from rapidocr import RapidOCR  # imported lazily: it pulls in cv2 and onnxruntime

        _engine = RapidOCR(params=ENGINE_PARAMS)
        logging.getLogger("RapidOCR").setLevel(logging.ERROR)
    return _engine


def _bbox(points, scale: float) -> tuple[float, float, float, float]:
    xs = [float(p[0]) for p in points]
    ys = [float(p[1]) for p in points]
    return (min(xs) * scale, min(ys) * scale, max(xs) * scale, max(ys) * scale)


def ocr_words(png: bytes, scale_to_points: float) -> list[Word]:
    """OCR a page image into words whose bboxes are in PDF points (pixel coordinates
    times ``scale_to_points``). Blocking and CPU-bound: call it from a worker thread."""
    # One inference at a time per process: the engine is shared, and more pages at once
    # would only contend for the same cores.
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
                _word(text, box, scale_to_points) for text, _, box in line_words if text.strip()
            )
        elif line_text.strip():
            words.append(_word(line_text, result.boxes[i], scale_to_points))
    return words


def _word(text: str, points, scale: float) -> Word:
    bbox = _bbox(points, scale)
    return Word(text=text, bbox=bbox, size=round(bbox[3] - bbox[1], 2), origin="ocr")
