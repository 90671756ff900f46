"""Drawing primitives of the generated sheets: real text (a text layer with the fonts
PyMuPDF carries: the Base-14 families, which cover Latin, Latin Extended and Cyrillic, and
Droid Sans Fallback for Japanese and Chinese), ruled cells, and a little drawing content so a
page looks like a sheet."""

import random
from dataclasses import dataclass
from functools import cache

import pymupdf

# A rotation of text: 0 (left to right), 90 (reading upwards), -90 (reading downwards).
Turn = int


@cache
def font(name: str) -> pymupdf.Font:
    return pymupdf.Font(name)


@dataclass(frozen=True)
class Style:
    """How one firm's title block prints: fonts, sizes, rule weights, label habits."""

    label_font: str
    value_font: str
    label_size: float
    value_size: float
    number_size: float
    title_size: float
    rule: float  # cell rules' width
    frame: float  # the block's outer rule
    colon: bool  # labels end with ':'
    upper: bool  # labels in capitals

    @staticmethod
    def pick(rng: random.Random, cjk: bool) -> "Style":
        latin = ("helv", "helv", "hebo", "tiro", "cour")
        label = "cjk" if cjk else rng.choice(latin)
        value = "cjk" if cjk else rng.choice(("helv", "hebo", "tiro"))
        return Style(
            label_font=label,
            value_font=value,
            label_size=rng.choice((5.0, 5.5, 6.0, 6.5, 7.0)),
            value_size=rng.choice((7.5, 8.0, 9.0, 10.0)),
            number_size=rng.choice((12.0, 14.0, 16.0, 20.0, 24.0)),
            title_size=rng.choice((9.0, 10.0, 11.0, 12.0, 14.0)),
            rule=rng.choice((0.3, 0.5, 0.7)),
            frame=rng.choice((1.0, 1.4, 2.0)),
            colon=not cjk and rng.random() < 0.3,
            upper=not cjk and rng.random() < 0.3,
        )


class Ink:
    """Draws on one page: lines and text gathered, written once by ``done``."""

    def __init__(self, page: pymupdf.Page):
        self.page = page
        self.shape = page.new_shape()
        self.writer = pymupdf.TextWriter(page.rect)

    def text(
        self,
        x: float,
        y: float,
        text: str,
        size: float,
        font_name: str = "helv",
        turn: Turn = 0,
    ) -> None:
        """``text`` with its baseline starting at (x, y), turned ``turn`` degrees about
        that point."""
        if not text:
            return
        if not turn:
            self.writer.append((x, y), text, font=font(font_name), fontsize=size)
            return
        writer = pymupdf.TextWriter(self.page.rect)
        writer.append((x, y), text, font=font(font_name), fontsize=size)
        writer.write_text(self.page, morph=(pymupdf.Point(x, y), pymupdf.Matrix(turn)))

    def rect(self, r: pymupdf.Rect, width: float, fill: tuple[float, ...] | None = None) -> None:
        self.shape.draw_rect(r)
        self.shape.finish(color=(0, 0, 0), width=width, fill=fill)

    def line(self, a: tuple[float, float], b: tuple[float, float], width: float) -> None:
        self.shape.draw_line(a, b)
        self.shape.finish(color=(0, 0, 0), width=width)

    def circle(self, centre: tuple[float, float], radius: float, width: float) -> None:
        self.shape.draw_circle(centre, radius)
        self.shape.finish(color=(0, 0, 0), width=width)

    def done(self) -> None:
        self.shape.commit()
        self.writer.write_text(self.page)


def width_of(text: str, font_name: str, size: float) -> float:
    return font(font_name).text_length(text, fontsize=size)


def fit(lines: list[str], font_name: str, size: float, width: float, height: float) -> float:
    """The largest size up to ``size`` at which ``lines`` fit ``width`` x ``height``."""
    while size > 3.0:
        widest = max((width_of(line, font_name, size) for line in lines), default=0.0)
        if widest <= width and len(lines) * size * 1.2 <= height:
            return size
        size -= 0.5
    return 3.0
