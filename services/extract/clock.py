"""Time spent on a page, as its result reports it."""

import time


def elapsed_ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)
