"""Braille dot canvas: 2×4 dots per terminal cell, one colour owner per cell.

A cell's glyph is U+2800 plus a bit pattern. Left column, top to bottom:
0x01 0x02 0x04 0x40; right column: 0x08 0x10 0x20 0x80. Dot coordinates
have y = 0 at the top. Pure Python, no Textual.
"""

from __future__ import annotations

import math
from typing import Sequence

Run = tuple[str, int]  # (text, owner); owner -1 marks empty cells

BRAILLE_BASE = 0x2800
EMPTY = -1

# _DOT_BITS[dot row within cell][dot column within cell]
_DOT_BITS = ((0x01, 0x08), (0x02, 0x10), (0x04, 0x20), (0x40, 0x80))

# An empty cell is a space, not U+2800, so it costs one byte on the wire.
_GLYPHS = (" ",) + tuple(chr(BRAILLE_BASE + bits) for bits in range(1, 256))


def _span_masks() -> tuple[tuple[tuple[int, ...], ...], ...]:
    """_SPAN_MASK[column][top][bottom]: bits of dot rows top..bottom in one cell."""
    masks = []
    for column in range(2):
        by_top = []
        for top in range(4):
            row = []
            for bottom in range(4):
                bits = 0
                for dot_row in range(top, bottom + 1):
                    bits |= _DOT_BITS[dot_row][column]
                row.append(bits)
            by_top.append(tuple(row))
        masks.append(tuple(by_top))
    return tuple(masks)


_SPAN_MASK = _span_masks()


def glyph(bits: int) -> str:
    """The character for a cell's bit pattern (a space when no dot is set)."""
    return _GLYPHS[bits & 0xFF]


def merge_runs(text: str, owners: Sequence[int]) -> list[Run]:
    """Group a row of cells into runs of equal owner; ``text`` has one char per cell."""
    runs: list[Run] = []
    if not text:
        return runs
    start = 0
    current = owners[0]
    for index in range(1, len(text)):
        owner = owners[index]
        if owner != current:
            runs.append((text[start:index], current))
            start = index
            current = owner
    runs.append((text[start:], current))
    return runs


class DotGrid:
    """Cells of ``DOT_COLUMNS`` × ``DOT_ROWS`` dots, drawn in dot coordinates (y = 0 at the top).

    Every drawing call names an ``owner`` (a series index); a cell keeps the
    owner of the last call that set a dot in it, so later series sit on top.
    Dots outside the canvas are ignored. A subclass says how a dot sets a bit
    (``set``, ``vline``) and which character each cell's bits make (``GLYPHS``).
    """

    __slots__ = ("width", "height", "dot_width", "dot_height", "_dots", "_owners")
    DOT_COLUMNS = 2
    DOT_ROWS = 4
    GLYPHS: tuple[str, ...] = _GLYPHS

    def __init__(self, width_cells: int, height_cells: int) -> None:
        if width_cells < 0 or height_cells < 0:
            raise ValueError(f"canvas size must not be negative, got {width_cells}×{height_cells}")
        self.width = width_cells
        self.height = height_cells
        self.dot_width = width_cells * self.DOT_COLUMNS
        self.dot_height = height_cells * self.DOT_ROWS
        self._dots = bytearray(width_cells * height_cells)
        # Invariant: an owner is EMPTY exactly where the cell has no dot.
        self._owners = [EMPTY] * (width_cells * height_cells)

    def clear(self) -> None:
        self._dots = bytearray(self.width * self.height)
        self._owners = [EMPTY] * (self.width * self.height)

    def cell(self, column: int, row: int) -> tuple[int, int]:
        """(bit pattern, owner) of one cell."""
        index = row * self.width + column
        return self._dots[index], self._owners[index]

    def set(self, x: int, y: int, owner: int) -> None:
        raise NotImplementedError

    def vline(self, x: int, y0: int, y1: int, owner: int) -> None:
        raise NotImplementedError

    def line(self, x0: int, y0: int, x1: int, y1: int, owner: int) -> None:
        """An integer Bresenham line, clipped to the canvas first."""
        clipped = self._clipped(x0, y0, x1, y1)
        if clipped is None:
            return
        x0, y0, x1, y1 = clipped
        dx, dy = abs(x1 - x0), -abs(y1 - y0)
        sx, sy = (1 if x0 < x1 else -1), (1 if y0 < y1 else -1)
        err = dx + dy
        while True:
            self.set(x0, y0, owner)
            if x0 == x1 and y0 == y1:
                return
            doubled = 2 * err
            if doubled >= dy:
                err += dy
                x0 += sx
            if doubled <= dx:
                err += dx
                y0 += sy

    def _clipped(self, x0: int, y0: int, x1: int, y1: int) -> tuple[int, int, int, int] | None:
        right, bottom = self.dot_width - 1, self.dot_height - 1
        if 0 <= x0 <= right and 0 <= x1 <= right and 0 <= y0 <= bottom and 0 <= y1 <= bottom:
            return x0, y0, x1, y1
        return _clip(x0, y0, x1, y1, right, bottom)

    def rows(self) -> list[list[Run]]:
        """Top to bottom; each row is runs of (text, owner) covering exactly ``width`` cells."""
        width, dots, owners, glyphs = self.width, self._dots, self._owners, self.GLYPHS
        if width == 0:
            return [[] for _ in range(self.height)]
        out: list[list[Run]] = []
        for start in range(0, width * self.height, width):
            text = "".join([glyphs[bits] for bits in dots[start : start + width]])
            out.append(merge_runs(text, owners[start : start + width]))
        return out

    def text(self) -> list[str]:
        """Rows as plain strings (handy for tests and debugging)."""
        return ["".join(text for text, _ in row) for row in self.rows()]


class BrailleCanvas(DotGrid):
    """A grid of braille cells: 2×4 dots each."""

    __slots__ = ()

    def set(self, x: int, y: int, owner: int) -> None:
        if 0 <= x < self.dot_width and 0 <= y < self.dot_height:
            index = (y >> 2) * self.width + (x >> 1)
            self._dots[index] |= _DOT_BITS[y & 3][x & 1]
            self._owners[index] = owner

    def vline(self, x: int, y0: int, y1: int, owner: int) -> None:
        """Dots from y0 to y1 inclusive in dot column x, a whole cell at a time."""
        if not 0 <= x < self.dot_width:
            return
        if y0 > y1:
            y0, y1 = y1, y0
        if y0 < 0:
            y0 = 0
        if y1 >= self.dot_height:
            y1 = self.dot_height - 1
        if y0 > y1:
            return
        masks = _SPAN_MASK[x & 1]
        dots, owners, width = self._dots, self._owners, self.width
        first_row, last_row = y0 >> 2, y1 >> 2
        index = first_row * width + (x >> 1)
        for cell_row in range(first_row, last_row + 1):
            top = y0 & 3 if cell_row == first_row else 0
            bottom = y1 & 3 if cell_row == last_row else 3
            dots[index] |= masks[top][bottom]
            owners[index] = owner
            index += width

    def line(self, x0: int, y0: int, x1: int, y1: int, owner: int) -> None:
        """An integer Bresenham line, clipped to the canvas first (inlined: the hot path of every chart)."""
        clipped = self._clipped(x0, y0, x1, y1)
        if clipped is None:
            return
        x0, y0, x1, y1 = clipped
        dots, owners, width = self._dots, self._owners, self.width
        dx = abs(x1 - x0)
        dy = -abs(y1 - y0)
        sx = 1 if x0 < x1 else -1
        sy = 1 if y0 < y1 else -1
        err = dx + dy
        while True:
            index = (y0 >> 2) * width + (x0 >> 1)
            dots[index] |= _DOT_BITS[y0 & 3][x0 & 1]
            owners[index] = owner
            if x0 == x1 and y0 == y1:
                return
            doubled = 2 * err
            if doubled >= dy:
                err += dy
                x0 += sx
            if doubled <= dx:
                err += dx
                y0 += sy


def _clip(
    x0: float, y0: float, x1: float, y1: float, right: int, bottom: int
) -> tuple[int, int, int, int] | None:
    """Liang–Barsky clip of a segment to [0, right] × [0, bottom], rounded to dots.

    An end at infinity or NaN has no place on the canvas: no segment.
    """
    if right < 0 or bottom < 0:
        return None
    if not all(map(math.isfinite, (x0, y0, x1, y1))):
        return None
    dx, dy = x1 - x0, y1 - y0
    t_in, t_out = 0.0, 1.0
    for p, q in ((-dx, x0), (dx, right - x0), (-dy, y0), (dy, bottom - y0)):
        if p == 0:
            if q < 0:
                return None
            continue
        ratio = q / p
        if p < 0:
            if ratio > t_out:
                return None
            if ratio > t_in:
                t_in = ratio
        else:
            if ratio < t_in:
                return None
            if ratio < t_out:
                t_out = ratio
    cx0, cy0 = round(x0 + t_in * dx), round(y0 + t_in * dy)
    cx1, cy1 = round(x0 + t_out * dx), round(y0 + t_out * dy)
    return (
        min(max(cx0, 0), right),
        min(max(cy0, 0), bottom),
        min(max(cx1, 0), right),
        min(max(cy1, 0), bottom),
    )
