"""A logged histogram as one bar chart: columns of eighth blocks, the tallest bin's count, the range below.

A pure Rich renderable sized by the space it is given: bins wider than the
width are summed into columns, narrower ones share them.
"""

from __future__ import annotations

from typing import Iterator, Sequence

from rich.console import Console, ConsoleOptions
from rich.segment import Segment
from rich.style import Style

from leet.common.units import format_value

EIGHTHS = " ▁▂▃▄▅▆▇█"


def columns_of(counts: Sequence[float], width: int) -> list[float]:
    """``counts`` spread over ``width`` columns: each column the sum of the bins whose middle falls in it."""
    if width <= 0 or not counts:
        return []
    columns = [0.0] * width
    bins = len(counts)
    if bins <= width:
        for column in range(width):
            columns[column] = counts[min(bins - 1, column * bins // width)]
        return columns
    for index, count in enumerate(counts):
        columns[min(width - 1, (2 * index + 1) * width // (2 * bins))] += count
    return columns


def bar_rows(values: Sequence[float], height: int) -> list[str]:
    """Rows of eighth blocks, top first, for ``values`` scaled so the largest fills ``height`` rows."""
    top = max(values, default=0.0)
    if height <= 0:
        return []
    eighths = [round(max(0.0, value) / top * height * 8) if top > 0 else 0 for value in values]
    rows = []
    for row in range(height - 1, -1, -1):
        floor = row * 8
        rows.append("".join(EIGHTHS[min(8, max(0, filled - floor))] for filled in eighths))
    return rows


class HistogramBars:
    """``counts`` between ``edges`` drawn into the space Rich gives it (``height`` rows at most)."""

    def __init__(self, counts: Sequence[float], edges: Sequence[float], height: int, bar: Style | str = "", muted: Style | str = "") -> None:
        self.counts = counts
        self.edges = edges
        self.height = height
        self.bar = bar
        self.muted = muted

    def lines(self, width: int) -> list[list[Segment]]:
        bar = Style.parse(self.bar) if isinstance(self.bar, str) else self.bar
        muted = Style.parse(self.muted) if isinstance(self.muted, str) else self.muted
        values = columns_of(self.counts, width)
        peak = max(values, default=0.0)
        lines = [[Segment(f"max {format_value(peak, '')}"[:width].ljust(width), muted)]]
        lines += [[Segment(row, bar)] for row in bar_rows(values, max(1, self.height - 2))]
        low, high = format_value(self.edges[0], ""), format_value(self.edges[-1], "")
        gap = max(1, width - len(low) - len(high))
        lines.append([Segment((low + " " * gap + high)[:width], muted)])
        return lines

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Segment]:
        for index, line in enumerate(self.lines(options.max_width)):
            if index:
                yield Segment.line()
            yield from line
