"""The page's geometry: boxes, and the frame of a text direction.

Coordinates are displayed page coordinates (the page's rotation applied, y down, PDF
points). A frame turns them so that x runs along a text direction and y across it, growing
to the next line: vertical and diagonal text is then read as horizontal text is.
"""

import math
from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial
from typing import Any, NamedTuple

from pydantic import GetCoreSchemaHandler
from pydantic_core import CoreSchema, core_schema

# Directions within this angle (degrees) are one direction.
ANGLE_STEP = 5.0


class Point(NamedTuple):
    x: float
    y: float


class Box(NamedTuple):
    """A box (x0, y0) – (x1, y1), top left to bottom right. It is stored, validated and
    compared as its four numbers: ``[x0, y0, x1, y1]`` in JSON, equal to the same tuple."""

    x0: float
    y0: float
    x1: float
    y1: float

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        # Four numbers in, four numbers out (JSON Schema included); the value is a Box.
        four = core_schema.tuple_schema([core_schema.float_schema()] * 4)
        # tuple.__new__ bound to the class: a Box made in C, no Python call per box.
        return core_schema.no_info_after_validator_function(partial(tuple.__new__, cls), four)

    @property
    def width(self) -> float:
        return self.x1 - self.x0

    @property
    def height(self) -> float:
        return self.y1 - self.y0

    @property
    def centre(self) -> Point:
        return Point((self.x0 + self.x1) / 2, (self.y0 + self.y1) / 2)

    @classmethod
    def union(cls, boxes: Iterable["Box"]) -> "Box":
        """The smallest box holding every box."""
        x0s, y0s, x1s, y1s = zip(*boxes, strict=True)
        return cls(min(x0s), min(y0s), max(x1s), max(y1s))

    def contains(self, point: Point) -> bool:
        """Whether a point lies in the box, its edges included."""
        return self.x0 <= point.x <= self.x1 and self.y0 <= point.y <= self.y1

    def overlap_x(self, other: "Box") -> float:
        """How far two boxes overlap along x (negative: the gap between them)."""
        return min(self.x1, other.x1) - max(self.x0, other.x0)

    def overlap_y(self, other: "Box") -> float:
        """How far two boxes overlap along y (negative: the gap between them)."""
        return min(self.y1, other.y1) - max(self.y0, other.y0)

    def overlaps(self, other: "Box") -> bool:
        """Whether two boxes share some area."""
        return self.overlap_x(other) > 0 and self.overlap_y(other) > 0

    def in_frame(self, frame: "Frame") -> "Box":
        """The box in a frame's coordinates (x along its direction, y across): exact for
        axis-aligned frames, the enclosing box for diagonal ones."""
        dx, dy = frame.dx, frame.dy
        if dx == 1.0 and dy == 0.0:  # most text: the frame is the page's
            return self
        x0, y0, x1, y1 = self
        # Each coordinate is linear in x and in y: its extremes are at the box's extremes.
        return Box(
            min(x0 * dx, x1 * dx) + min(y0 * dy, y1 * dy),
            min(-x0 * dy, -x1 * dy) + min(y0 * dx, y1 * dx),
            max(x0 * dx, x1 * dx) + max(y0 * dy, y1 * dy),
            max(-x0 * dy, -x1 * dy) + max(y0 * dx, y1 * dx),
        )

    def from_frame(self, frame: "Frame") -> "Box":
        """A box given in a frame's coordinates, back on the page (``in_frame`` undone)."""
        return self.in_frame(Frame(frame.dx, -frame.dy))


@dataclass(frozen=True)
class Frame:
    """The frame of a text direction: the unit vector (dx, dy) the text runs along."""

    dx: float
    dy: float


def direction_key(direction: tuple[float, float]) -> int:
    """Directions within ANGLE_STEP degrees of each other share a key."""
    angle = math.degrees(math.atan2(direction[1], direction[0]))
    return round(angle / ANGLE_STEP) % round(360 / ANGLE_STEP)


def frame_of(key: int) -> Frame:
    """The frame of a direction key."""
    angle = math.radians(key * ANGLE_STEP)
    # Snap cos/sin of right angles to exact values so axis-aligned frames stay exact.
    return Frame(round(math.cos(angle), 12), round(math.sin(angle), 12))
