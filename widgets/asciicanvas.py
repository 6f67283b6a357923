"""An ASCII dot canvas: 2×3 dots per cell, drawn with ``' - _ . | : / \\``.

The braille canvas's twin for terminals without UTF-8: the same drawing calls
in dot coordinates (y = 0 at the top), so ``raster`` draws on either. A cell
shows the ASCII character nearest its dots: one row of dots is ``'``, ``-``
or ``_`` (a lone dot low in the cell is ``.``), dots climbing from left to
right are ``/``, falling ``\\``, a column of dots ``|`` (``:`` with a gap).
Pure Python, no Textual.
"""

from __future__ import annotations

from widgets.braille import EMPTY, Run, _clip, merge_runs

DOT_COLUMNS = 2
DOT_ROWS = 3

# _BIT[dot row][dot column]
_BIT = ((0x01, 0x02), (0x04, 0x08), (0x10, 0x20))


def _glyph(bits: int) -> str:
    left = [row for row in range(DOT_ROWS) if bits & _BIT[row][0]]
    right = [row for row in range(DOT_ROWS) if bits & _BIT[row][1]]
    rows = sorted(set(left) | set(right))
    if not rows:
        return " "
    if len(rows) == 1:
        # A line across the cell sits at its height; a lone dot at the bottom is a full stop.
        return ("'", "-", "_" if left and right else ".")[rows[0]]
    if left and right:
        rise = sum(left) / len(left) - sum(right) / len(right)  # rows count down: > 0 climbs to the right
        if rise > 0:
            return "/"
        if rise < 0:
            return "\\"
    return "|" if rows[-1] - rows[0] + 1 == len(rows) else ":"


GLYPHS = tuple(_glyph(bits) for bits in range(1 << (DOT_COLUMNS * DOT_ROWS)))


def glyph(bits: int) -> str:
    """The character for a cell's dots (a space when none is set)."""
    return GLYPHS[bits & 0x3F]


class AsciiCanvas:
    """A grid of ASCII cells drawn in dot coordinates (y = 0 at the top).

    Every drawing call names an ``owner``; a cell keeps the owner of the last
    call that set a dot in it. Dots outside the canvas are ignored.
    """

    __slots__ = ("width", "height", "dot_width", "dot_height", "_dots", "_owners")

    def __init__(self, width_cells: int, height_cells: int) -> None:
        if width_cells < 0 or height_cells < 0:
            raise ValueError(f"canvas size must not be negative, got {width_cells}x{height_cells}")
        self.width = width_cells
        self.height = height_cells
        self.dot_width = width_cells * DOT_COLUMNS
        self.dot_height = height_cells * DOT_ROWS
        self._dots = bytearray(width_cells * height_cells)
        self._owners = [EMPTY] * (width_cells * height_cells)

    def clear(self) -> None:
        self._dots = bytearray(self.width * self.height)
        self._owners = [EMPTY] * (self.width * self.height)

    def cell(self, column: int, row: int) -> tuple[int, int]:
        """(dot pattern, owner) of one cell."""
        index = row * self.width + column
        return self._dots[index], self._owners[index]

    def set(self, x: int, y: int, owner: int) -> None:
        if 0 <= x < self.dot_width and 0 <= y < self.dot_height:
            cell_row, dot_row = divmod(y, DOT_ROWS)
            index = cell_row * self.width + (x >> 1)
            self._dots[index] |= _BIT[dot_row][x & 1]
            self._owners[index] = owner

    def vline(self, x: int, y0: int, y1: int, owner: int) -> None:
        """Dots from y0 to y1 inclusive in dot column x."""
        if not 0 <= x < self.dot_width:
            return
        if y0 > y1:
            y0, y1 = y1, y0
        for y in range(max(y0, 0), min(y1, self.dot_height - 1) + 1):
            self.set(x, y, owner)

    def line(self, x0: int, y0: int, x1: int, y1: int, owner: int) -> None:
        """An integer Bresenham line, clipped to the canvas first."""
        right, bottom = self.dot_width - 1, self.dot_height - 1
        if not (0 <= x0 <= right and 0 <= x1 <= right and 0 <= y0 <= bottom and 0 <= y1 <= bottom):
            clipped = _clip(x0, y0, x1, y1, right, bottom)
            if clipped is None:
                return
            x0, y0, x1, y1 = clipped
        dx = abs(x1 - x0)
        dy = -abs(y1 - y0)
        sx = 1 if x0 < x1 else -1
        sy = 1 if y0 < y1 else -1
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

    def rows(self) -> list[list[Run]]:
        """Top to bottom; each row is runs of (text, owner) covering exactly ``width`` cells."""
        width, dots, owners = self.width, self._dots, self._owners
        if width == 0:
            return [[] for _ in range(self.height)]
        out: list[list[Run]] = []
        for start in range(0, width * self.height, width):
            text = "".join([GLYPHS[bits] for bits in dots[start : start + width]])
            out.append(merge_runs(text, owners[start : start + width]))
        return out

    def text(self) -> list[str]:
        """Rows as plain strings (handy for tests and debugging)."""
        return ["".join(text for text, _ in row) for row in self.rows()]
