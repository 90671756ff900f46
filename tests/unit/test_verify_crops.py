"""Evidence crops: rendered from the PDF around a bbox; chosen over the full page when located."""

import pymupdf
import pytest

from services.verify.crops import choose_images, render_crop_jpeg
from shared.contracts.models import PageObject
from shared.infra.storage import Keys
from shared.pagetext import Box


@pytest.fixture
def page():
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    page.insert_text((100, 140), "(5) 2X6 STUD PACK", fontsize=10)
    yield page
    doc.close()


def _size(jpeg: bytes) -> tuple[int, int]:
    pix = pymupdf.Pixmap(jpeg)
    return pix.width, pix.height


def test_crop_is_a_jpeg_sized_by_dpi_and_margin(page):
    """bbox 100x50 pt + 36 pt margin each side at 144 dpi is 344x244 px."""
    jpeg = render_crop_jpeg(page, Box(100, 100, 200, 150), dpi=144, margin_pts=36)
    assert jpeg[:3] == b"\xff\xd8\xff"
    assert _size(jpeg) == pytest.approx((344, 244), abs=1)
    wide = render_crop_jpeg(page, Box(100, 100, 200, 150), dpi=288, margin_pts=36)
    assert _size(wide) == pytest.approx((688, 488), abs=1)
    tight = render_crop_jpeg(page, Box(100, 100, 200, 150), dpi=144, margin_pts=0)
    assert _size(tight) == pytest.approx((200, 100), abs=1)


def test_crop_is_clipped_to_the_page(page):
    """A bbox in the corner grows only inward: the margin stops at the page edge."""
    jpeg = render_crop_jpeg(page, Box(0, 0, 50, 20), dpi=72, margin_pts=36)
    assert _size(jpeg) == pytest.approx((86, 56), abs=1)
    jpeg = render_crop_jpeg(page, Box(590, 770, 612, 792), dpi=72, margin_pts=36)
    assert _size(jpeg) == pytest.approx((58, 58), abs=1)


def test_huge_crop_is_capped_in_pixels(page):
    """A whole-page evidence area at 300 dpi is rendered under the pixel cap."""
    w, h = _size(
        render_crop_jpeg(page, Box(0, 0, 612, 792), dpi=300, margin_pts=0, max_pixels=1_000_000)
    )
    assert w * h <= 1_000_000 and w > 500


def _objects(*ids: str) -> list[PageObject]:
    return [PageObject(object_id=i, source_text=i) for i in ids]


def _render(bbox) -> bytes:
    return f"crop{bbox}".encode()


def test_located_objects_get_crops_instead_of_the_full_page():
    """Every object located: only crops, keyed under pages/{n}/crops/."""
    choice = choose_images(
        _objects("N1", "N/2"),
        {"N1": Box(1, 1, 2, 2), "N/2": Box(3, 3, 4, 4)},
        page_number=3,
        page_png=b"png",
        render=_render,
        hi_dpi=True,
        max_images=6,
    )
    assert not choice.full_page and not choice.skipped
    assert [i.mime for i in choice.images] == ["image/jpeg", "image/jpeg"]
    assert set(choice.crops) == {"pages/3/crops/N1.jpg", "pages/3/crops/N_2.jpg"}
    assert Keys.crop(3, "N/2") == "pages/3/crops/N_2.jpg"


def test_a_miss_adds_the_full_page():
    """One object in scope without a located bbox brings the full page image too."""
    choice = choose_images(
        _objects("N1", "G1"),
        {"N1": Box(1, 1, 2, 2)},
        page_number=1,
        page_png=b"png",
        render=_render,
        hi_dpi=True,
        max_images=6,
    )
    assert choice.full_page
    assert [i.label for i in choice.images] == ["crop around object N1", "the full page"]
    assert choice.images[-1].data == b"png"


def test_crops_off_or_no_renderer_means_full_page_only():
    """Without hi-DPI crops (or a PDF to render from) the judge sees the full page."""
    for hi_dpi, render in ((False, _render), (True, None)):
        choice = choose_images(
            _objects("N1"),
            {"N1": Box(1, 1, 2, 2)},
            page_number=1,
            page_png=b"png",
            render=render,
            hi_dpi=hi_dpi,
            max_images=6,
        )
        assert [i.data for i in choice.images] == [b"png"] and not choice.crops


def test_image_budget_keeps_a_slot_for_the_full_page():
    """Over max_images located objects: crops fill all slots but one, the page takes the last."""
    ids = ["a", "b", "c", "d"]
    choice = choose_images(
        _objects(*ids),
        dict.fromkeys(ids, Box(1, 1, 2, 2)),
        page_number=1,
        page_png=b"png",
        render=_render,
        hi_dpi=True,
        max_images=3,
    )
    assert len(choice.images) == 3 and len(choice.crops) == 2 and choice.full_page


def test_scope_with_no_image_is_skipped():
    """Nothing located and no page image: zero images, so the scope is skipped."""
    choice = choose_images(
        _objects("G1"),
        {},
        page_number=1,
        page_png=None,
        render=_render,
        hi_dpi=True,
        max_images=6,
    )
    assert choice.skipped and choice.images == []


def test_a_crop_that_fails_to_render_falls_back_to_the_full_page(page):
    """A crop MuPDF cannot render (here: its box lies off the page) does not fail the
    verification: the object is shown on the full page image, in the slot the crop left."""

    def render(bbox) -> bytes:
        return render_crop_jpeg(page, bbox, dpi=144, margin_pts=0)

    choice = choose_images(
        _objects("N1", "N2"),
        {"N1": Box(100, 130, 200, 145), "N2": Box(5000, 5000, 5100, 5100)},
        page_number=1,
        page_png=b"png",
        render=render,
        hi_dpi=True,
        max_images=2,
    )
    assert [i.label for i in choice.images] == ["crop around object N1", "the full page"]
    assert set(choice.crops) == {"pages/1/crops/N1.jpg"} and choice.full_page
