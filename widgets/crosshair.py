"""The crosshair drawn into a laid-out chart: its column lit, the readout on the plot's top row.

Pure, no Textual. It works on the rows ``chartframe.compose_rows`` made, so
the frame, axes and legend stay as they were: only cells inside the plot
change.
"""

from __future__ import annotations

from rich.cells import cell_len

from widgets.chartframe import ChartView, Row, fit
from widgets.readout import crosshair_column, readout_text

CURSOR = "cursor"  # the style of the lit column and the readout


def plot_span(rows: list[Row]) -> tuple[int, int] | None:
    """The plot's first cell and its width, found after the y axis of the first body row; None without a plot."""
    if len(rows) < 3:
        return None
    used = 0
    for text, style in rows[1]:
        used += cell_len(text)
        if style == "axis":
            width = sum(cell_len(text) for text, _ in rows[1]) - used - 1
            return (used, width) if width > 0 else None
    return None


def _cells(row: Row) -> list[tuple[str, str]]:
    """One entry per cell; the second cell of a wide character is an empty text."""
    cells: list[tuple[str, str]] = []
    for text, style in row:
        for character in text:
            cells.append((character, style))
            cells.extend(("", style) for _ in range(cell_len(character) - 1))
    return cells


def _runs(cells: list[tuple[str, str]]) -> Row:
    row: Row = []
    for character, style in cells:
        if row and row[-1][1] == style:
            row[-1] = (row[-1][0] + character, style)
        else:
            row.append((character, style))
    return row


def _put(cells: list[tuple[str, str]], start: int, text: str, style: str) -> None:
    """Write ``text`` over ``cells`` from ``start``, never leaving half of a wide character."""
    for character, index in zip(text, range(start, len(cells))):
        cells[index] = (character, style)
    end = start + len(text)
    if start > 0 and cells[start - 1][0] and cell_len(cells[start - 1][0]) > 1:
        cells[start - 1] = (" ", cells[start - 1][1])
    while end < len(cells) and cells[end][0] == "":
        cells[end] = (" ", cells[end][1])
        end += 1


def _narrow(text: str) -> str:
    """``text`` with each wide character as ``?``: one character a cell, for ``_put``."""
    return "".join(character if cell_len(character) == 1 else "?" for character in text)


def with_crosshair(rows: list[Row], view: ChartView, x: float) -> list[Row]:
    """``rows`` with the column of ``x`` lit and the readout of every series at ``x`` on the plot's top row."""
    span = plot_span(rows)
    if span is None:
        return rows
    left, width = span
    column = crosshair_column(view.x_range, x, width)
    out = list(rows)
    if column is not None:
        for index in range(1, len(rows) - 1):
            if not any(style == "axis" for _, style in rows[index]):
                continue  # the x labels' row
            cells = _cells(rows[index])
            cells[left + column] = (cells[left + column][0] or " ", CURSOR)
            out[index] = _runs(cells)
    text = _narrow(fit(readout_text(view, x), width))
    if text:
        cells = _cells(out[1])
        # Keep the lit column clear: the readout goes to the side the crosshair is not on.
        start = left + width - len(text) if column is None or column < width // 2 else left
        _put(cells, start, text, CURSOR)
        out[1] = _runs(cells)
    return out
