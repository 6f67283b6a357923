"""An ASCII dot canvas: 2×3 dots per cell, drawn with ``' - _ . | : / \\``.

The braille canvas's twin for terminals without UTF-8: the same drawing calls
in dot coordinates (y = 0 at the top), so ``raster`` draws on either. A cell
shows the ASCII character nearest its dots: one row of dots is ``'``, ``-``
or ``_`` (a lone dot low in the cell is ``.``), dots climbing from left to
right are ``/``, falling ``\\``, a column of dots ``|`` (``:`` with a gap).
Pure Python, no Textual.
"""

from __future__ import annotations

from widgets.braille import DotGrid

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


class AsciiCanvas(DotGrid):
    """A grid of ASCII cells: 2×3 dots each, drawn in dot coordinates (y = 0 at the top)."""

    __slots__ = ()
    DOT_ROWS = DOT_ROWS
    GLYPHS = GLYPHS

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
