"""The page's geometry: a box read by name, stored as its four numbers, and turned into the
frame of a text direction and back."""

import json
import math

import pytest
from pydantic import BaseModel, ValidationError

from shared.contracts.models import EvidenceCrop
from shared.pagetext import Box, Point, Word, direction_key, frame_of


class _Holder(BaseModel):
    box: Box
    maybe: Box | None = None


def test_a_box_is_stored_validated_and_compared_as_its_four_numbers():
    """JSON holds ``[x0, y0, x1, y1]`` exactly as a tuple did; a list or tuple validates into
    a Box, which equals the same tuple."""
    held = _Holder.model_validate_json('{"box": [1, 2.5, 3, 4]}')
    assert isinstance(held.box, Box) and held.box == (1.0, 2.5, 3.0, 4.0)
    assert held.model_dump_json() == '{"box":[1.0,2.5,3.0,4.0],"maybe":null}'
    assert _Holder(box=[1, 2, 3, 4]).box == Box(1, 2, 3, 4)
    word = Word(text="A", bbox=(0.5, 1, 2, 3))
    assert json.loads(word.model_dump_json())["bbox"] == [0.5, 1.0, 2.0, 3.0]
    with pytest.raises(ValidationError):
        _Holder.model_validate({"box": [1, 2, 3]})


def test_the_json_schema_of_a_box_is_a_four_number_array():
    """report.json's schema describes a box as it did: an array of exactly four numbers."""
    schema = EvidenceCrop.model_json_schema()["properties"]["bbox"]
    assert schema["type"] == "array" and schema["minItems"] == schema["maxItems"] == 4
    assert schema["prefixItems"] == [{"type": "number"}] * 4
    maybe = _Holder.model_json_schema()["properties"]["maybe"]["anyOf"]
    assert {"type": "null"} in maybe


def test_a_box_measures_itself():
    """Width, height, centre, union, containment and overlap, by name."""
    box = Box(10, 20, 30, 60)
    assert (box.width, box.height, box.centre) == (20, 40, Point(20, 40))
    assert Box.union([box, Box(0, 30, 15, 70)]) == Box(0, 20, 30, 70)
    assert box.contains(Point(10, 60)) and not box.contains(Point(9.9, 40))
    assert box.overlap_x(Box(25, 0, 40, 5)) == 5 and box.overlap_y(Box(25, 0, 40, 5)) == -15
    assert box.overlaps(Box(25, 50, 40, 70)) and not box.overlaps(Box(30, 20, 40, 60))


@pytest.mark.parametrize("angle", [0, 90, 180, 270])
def test_a_box_goes_into_an_axis_frame_and_back_exactly(angle):
    """In the frame of text running at a right angle the box is the same box turned, and
    turning it back gives the page's box again."""
    box = Box(100.25, 40.5, 180.75, 52.0)
    frame = frame_of(direction_key(_unit(angle)))
    turned = box.in_frame(frame)
    assert (turned.width, turned.height) == (
        (box.width, box.height) if angle in (0, 180) else (box.height, box.width)
    )
    assert turned.from_frame(frame) == box


def test_vertical_text_reads_along_x_in_its_frame():
    """Text running up the page (direction (0, -1)) has its length along the frame's x."""
    word = Box(500, 100, 510, 180)  # a tall, narrow word written bottom to top
    turned = word.in_frame(frame_of(direction_key((0.0, -1.0))))
    assert (turned.width, turned.height) == (80, 10)


def test_a_diagonal_frame_gives_the_enclosing_box():
    """Text at 45 degrees: the frame's box encloses the turned box."""
    box = Box(0, 0, 10, 10)
    turned = box.in_frame(frame_of(direction_key(_unit(45))))
    assert turned.width == pytest.approx(2**0.5 * 10) and turned.height == pytest.approx(
        2**0.5 * 10
    )


def _unit(degrees: float) -> tuple[float, float]:
    return (math.cos(math.radians(degrees)), math.sin(math.radians(degrees)))
