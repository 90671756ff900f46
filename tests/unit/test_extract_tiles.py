"""Legible vision input: a large sheet whose small text the page image would show a few
pixels high goes to the vision pass as overlapping tiles, each legible, covering the sheet,
each with its own units; the tiles' objects merge into one page."""

import base64
import itertools
import json
import re
import struct

import pymupdf
import pytest

from services.extract.model.tiles import plan_tiles, small_text_pt, units_in
from services.extract.model.vision import TEXT_LAYER_HEADING
from services.extract.reading.render import render_zoom
from services.extract.reading.textlayer import read_text_layer
from services.extract.rung1 import extract_rung1
from services.extract.tolerances import TILES
from shared.infra.llm import LLMClient
from shared.infra.settings import Settings
from shared.pagetext import Box, TextLayer
from shared.pagetext.units import page_units
from tests.support.flows import model_settings
from tests.support.model_server import (
    ModelReply,
    ScriptedModelServer,
    request_images,
    request_text,
)

E_SIZE = (44 * 72.0, 34 * 72.0)
TILE_PX = 2048


def e_size_pdf(fontsize: float = 5.0) -> bytes:
    """An E-size sheet of small room labels in a grid, and one numbered note."""
    doc = pymupdf.open()
    page = doc.new_page(width=E_SIZE[0], height=E_SIZE[1])
    for i in range(8):
        for j in range(6):
            x, y = 100 + i * 380, 150 + j * 390
            page.insert_text((x, y), f"ROOM {i}{j} OFFICE", fontsize=fontsize)
    page.insert_text((1500, 2350), "1. VERIFY ALL DIMENSIONS IN THE FIELD.", fontsize=fontsize)
    return doc.tobytes()


def e_size_layer() -> TextLayer:
    with pymupdf.open(stream=e_size_pdf()) as doc:
        return read_text_layer(doc[0], 1, 20)


def page_zoom(layer: TextLayer, settings: Settings | None = None) -> float:
    settings = settings or Settings(_env_file=None)
    rect = pymupdf.Rect(0, 0, layer.width, layer.height)
    with pymupdf.open() as doc:
        page = doc.new_page(width=rect.width, height=rect.height)
        return render_zoom(page, settings.page_image_max_px, settings.page_image_max_pixels)


def assert_covers(clips: list[Box], width: float, height: float) -> None:
    """Every point of the sheet (on a 20 pt grid, edges included) lies in some tile."""
    for x in [*range(0, int(width), 20), width]:
        for y in [*range(0, int(height), 20), height]:
            assert any(c.x0 <= x <= c.x1 and c.y0 <= y <= c.y1 for c in clips), (x, y)


def test_tiles_of_an_e_size_sheet_are_legible_no_larger_than_the_image_and_cover_it():
    """3/32-in-class text at ~4 px in the page image: tiles at a zoom that makes it
    legible_px high, each at most the page image's side, overlapping, covering the sheet."""
    layer = e_size_layer()
    zoom = page_zoom(layer)
    assert small_text_pt(layer) * zoom < TILES.legible_px / TILES.min_gain
    plan = plan_tiles(layer, zoom, TILE_PX, max_tiles=12)
    assert 2 <= len(plan.clips) <= 12
    assert small_text_pt(layer) * plan.zoom >= TILES.legible_px - 1e-6
    for clip in plan.clips:
        assert clip.width * plan.zoom <= TILE_PX and clip.height * plan.zoom <= TILE_PX
    assert_covers(plan.clips, layer.width, layer.height)
    xs = sorted({c.x0 for c in plan.clips})
    side = plan.clips[0].width
    assert all(b - a <= side * (1 - TILES.overlap) + 1e-6 for a, b in itertools.pairwise(xs))


def test_the_tile_bound_makes_fewer_larger_tiles_that_still_cover_the_sheet():
    """Past SHEETFLOW_VISION_MAX_TILES the tiles grow: at most the bound, still larger text
    than the page image by min_gain, still covering the sheet."""
    layer = e_size_layer()
    zoom = page_zoom(layer)
    plan = plan_tiles(layer, zoom, TILE_PX, max_tiles=4)
    assert 2 <= len(plan.clips) <= 4 and plan.zoom >= TILES.min_gain * zoom
    assert_covers(plan.clips, layer.width, layer.height)
    assert plan_tiles(layer, zoom, TILE_PX, max_tiles=1).clips == []


def test_legible_small_blank_sheets_are_not_tiled_and_a_scan_is():
    """Text already legible, or a blank page: one image. A large scan (no words, but ink)
    is taken to carry small drawing text and is tiled."""
    with pymupdf.open() as doc:
        page = doc.new_page(width=612, height=792)
        page.insert_text((72, 72), "GENERAL NOTES FOR THIS SHEET", fontsize=10)
        letter = read_text_layer(page, 1, 5)
    assert plan_tiles(letter, page_zoom(letter), TILE_PX, 6).clips == []
    blank = TextLayer(page_number=1, width=E_SIZE[0], height=E_SIZE[1], has_text_layer=False)
    zoom = page_zoom(blank)
    assert plan_tiles(blank, zoom, TILE_PX, 6, inked=False).clips == []
    scan = plan_tiles(blank, zoom, TILE_PX, 6, inked=True)
    assert len(scan.clips) >= 2
    assert_covers(scan.clips, blank.width, blank.height)


@pytest.fixture(scope="module")
def server():
    with ScriptedModelServer() as server:
        yield server


def _png_size(data_url: str) -> tuple[int, int]:
    raw = base64.b64decode(data_url.split(",", 1)[1])
    width, height = struct.unpack(">II", raw[16:24])
    return width, height


def copy_each_line(request: dict) -> ModelReply:
    """A scripted model that returns each TEXT LAYER line as one object citing its id, its
    object ids counted from o1 in every reply (as models do)."""
    block = request_text(request).split(TEXT_LAYER_HEADING, 1)[1]
    objects = [
        {
            "object_id": f"o{n}",
            "object_type": "text",
            "source_text": m.group(2),
            "ids": [m.group(1)],
        }
        for n, m in enumerate(re.finditer(r"^(L\d+) (.*)$", block, re.MULTILINE), start=1)
    ]
    return ModelReply(content=json.dumps({"sheet": {}, "objects": objects}))


async def test_an_e_size_sheet_goes_to_the_vision_pass_in_legible_tiles(server, readers):
    """One call per tile, each with the tile (at most the page image's side) and the whole
    sheet small, and the units in that tile only; the tiles are counted in the usage, and
    objects seen by two overlapping tiles are one object placed by its ids (object ids the
    tiles' replies share are told apart)."""
    server.requests.clear()
    server.responder = copy_each_line
    settings = model_settings(
        Settings(_env_file=None), server, llm_extract_model="vision", vision_max_tiles=4
    )
    client = LLMClient(settings)
    try:
        out = await extract_rung1(
            e_size_pdf(), 1, settings, client, readers=readers, worker_id="w", job_id="j"
        )
    finally:
        await client.aclose()
    result = out.result
    units = page_units(out.text_layer)
    tiles = len(server.requests)
    assert 2 <= tiles <= 4 and result.status == "ok"
    assert result.usage["extract"].tiles == tiles and result.usage["extract"].calls == tiles
    for request in server.requests:
        tile, overview = request_images(request)
        assert max(_png_size(tile)) <= settings.page_image_max_px
        assert max(_png_size(overview)) < max(_png_size(tile))
        assert len(re.findall(r"^L\d+ ", request_text(request), re.MULTILINE)) < len(units.units)
    # Every unit is one object, once, though tiles overlap.
    assert sorted(o.evidence for o in result.objects) == sorted(
        list(u.word_ids) for u in units.units
    )
    shown = sum(len(re.findall(r"^L\d+ ", request_text(r), re.MULTILINE)) for r in server.requests)
    assert shown > len(result.objects), "the tiles overlap"
    assert result.guard.placed_by_ids == shown and result.guard.placed_by_alignment == 0


def test_a_reading_too_long_for_one_prompt_is_read_in_tiles_that_each_fit():
    """Legible text, but more of it than one prompt holds: the page is tiled so that each
    tile's units fit in the cap (every unit still in some tile); without the cap, one
    image."""
    with pymupdf.open() as doc:
        page = doc.new_page(width=17 * 72, height=11 * 72)
        for i in range(12):
            for j in range(30):
                page.insert_text((30 + 100 * i, 30 + 25 * j), f"NOTE {i}-{j} HERE", fontsize=9)
        layer = read_text_layer(page, 1, 20)
    units = page_units(layer).units
    zoom = page_zoom(layer)
    assert small_text_pt(layer) * zoom * TILES.min_gain > TILES.legible_px, "the text is legible"
    assert plan_tiles(layer, zoom, TILE_PX, 6, units=units).clips == []
    plan = plan_tiles(layer, zoom, TILE_PX, 12, units=units, max_chars=3000)
    assert 2 <= len(plan.clips) <= 12
    for clip in plan.clips:
        assert sum(len(u.line) + 1 for u in units_in(units, clip)) <= 3000
    assert all(any(u in units_in(units, c) for c in plan.clips) for u in units)


async def test_a_tile_whose_call_fails_leaves_the_page_degraded_with_the_others_objects(
    server, readers
):
    """One tile's call fails for good: the page keeps the other tiles' objects and is
    degraded, naming how many tiles failed."""
    server.requests.clear()

    top_left = re.compile(r"the part from 0–\d+% of its width and 0–\d+% of its height")

    def top_left_fails(request: dict) -> ModelReply:
        if top_left.search(request_text(request)):
            return ModelReply(status=400, content="context length exceeded")
        return copy_each_line(request)

    server.responder = top_left_fails
    settings = model_settings(
        Settings(_env_file=None), server, llm_extract_model="vision", vision_max_tiles=4
    )
    client = LLMClient(settings)
    try:
        out = await extract_rung1(
            e_size_pdf(), 1, settings, client, readers=readers, worker_id="w", job_id="j"
        )
    finally:
        await client.aclose()
    result = out.result
    assert result.status == "degraded" and result.rung == "vision"
    assert re.search(r"1 of \d tiles failed", result.reason or "")
    assert result.objects and result.model_failure is None
