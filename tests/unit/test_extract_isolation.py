"""A page's render and text reading are held to a wall-clock and a memory limit in a child
process: a page over either fails by name, and meanwhile the worker's other pages go on."""

import asyncio

import pytest

from services.extract.reading.page import PageUnreadable, Readers
from services.extract.rung1 import extract_rung1
from shared.infra.settings import Settings
from tests.support.bombs import endless_lines_pdf
from tests.support.pdfs import notes_pdf

pytestmark = pytest.mark.slow  # each test waits out a limit


async def rung1(pdf: bytes, settings: Settings, readers: Readers):
    return await extract_rung1(pdf, 1, settings, None, readers=readers, worker_id="w", job_id="j")


async def test_a_page_past_the_time_limit_fails_by_name_while_other_pages_go_on(readers):
    """Endless drawing (minutes to render unbounded) fails at the 5 s limit, and a plain page
    read meanwhile finishes first: no lock or GIL held by the heavy page holds it up."""
    settings = Settings(_env_file=None, page_render_timeout_s=5.0)
    finished: list[str] = []

    async def heavy() -> None:
        with pytest.raises(PageUnreadable) as refused:
            await rung1(endless_lines_pdf(5000), settings, readers)
        finished.append("heavy")
        assert "too complex to render within 5 s" in refused.value.reason

    async def light() -> None:
        out = await rung1(notes_pdf(), settings, readers)
        finished.append("light")
        assert "GENERAL NOTES" in out.text_layer.text

    await asyncio.gather(heavy(), light())
    assert finished == ["light", "heavy"]


async def test_a_page_past_the_memory_limit_fails_by_name_and_the_next_page_reads(readers):
    """A render that needs more than the memory limit fails naming the limit; the child is
    replaced and the next page reads normally."""
    greedy = Settings(
        _env_file=None,
        page_render_max_mb=64,
        page_image_max_px=12_000,
        page_image_max_pixels=100_000_000,  # a ~160 MB pixmap for a letter page
    )
    with pytest.raises(PageUnreadable) as refused:
        await rung1(notes_pdf(), greedy, readers)
    assert "too complex to render within 64 MB" in refused.value.reason
    out = await rung1(notes_pdf(), Settings(_env_file=None), readers)
    assert out.png.startswith(b"\x89PNG") and out.text_layer.has_text_layer
