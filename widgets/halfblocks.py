"""An RGB image drawn with ``▀``: two pixels a cell, the upper as the foreground, the lower as the background.

A pure Rich renderable: it works on any terminal with colour (Textual
lowers truecolor to 256 colours where the terminal has no more), and it
draws the same cells every time, so snapshots of it are exact.
"""

from __future__ import annotations

from typing import Any, Iterator

from rich.color import Color
from rich.console import Console, ConsoleOptions
from rich.segment import Segment
from rich.style import Style

NEAREST = 0  # Pillow's resampling filter number: small images grow as crisp squares


def fitted(size: tuple[int, int], cells: tuple[int, int]) -> tuple[int, int]:
    """The cells (width, height) an image of ``size`` pixels takes in ``cells``, keeping its shape."""
    width, height = size
    columns, rows = cells
    if width <= 0 or height <= 0 or columns <= 0 or rows <= 0:
        return 0, 0
    scale = min(columns / width, 2 * rows / height)
    return max(1, min(columns, round(width * scale))), max(1, min(rows, round(height * scale / 2)))


class HalfBlocks:
    """``image`` (a PIL RGB image) fitted into ``width`` × ``height`` cells."""

    def __init__(self, image: Any, width: int, height: int) -> None:
        self.image = image
        self.width = width
        self.height = height

    def rows(self) -> list[list[Segment]]:
        columns, rows = fitted(self.image.size, (self.width, self.height))
        if not columns:
            return []
        raw = self.image.resize((columns, rows * 2), NEAREST).convert("RGB").tobytes()
        pixels = [raw[at : at + 3] for at in range(0, len(raw), 3)]
        styles: dict[tuple[bytes, bytes], Style] = {}
        lines = []
        for row in range(rows):
            upper = pixels[2 * row * columns : (2 * row + 1) * columns]
            lower = pixels[(2 * row + 1) * columns : (2 * row + 2) * columns]
            line = []
            for top, bottom in zip(upper, lower):
                style = styles.get((top, bottom))
                if style is None:
                    style = styles[top, bottom] = Style(color=Color.from_rgb(*top), bgcolor=Color.from_rgb(*bottom))
                line.append(Segment("▀", style))
            lines.append(Segment.simplify(line))
        return [list(line) for line in lines]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Segment]:
        for index, line in enumerate(self.rows()):
            if index:
                yield Segment.line()
            yield from line
