"""What the crosshair reads: the nearest point of each series to an x, as one line of text.

Pure, no Textual. The chart widget draws the line on the plot's top row and
lights the crosshair's column.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from typing import Sequence

from leet.common.clock import clock_text
from leet.common.text import clean
from leet.common.units import format_value
from widgets.chartframe import ChartView
from widgets.raster import SeriesView


def nearest_index(t: Sequence[float], x: float) -> int | None:
    """The index of the point of ``t`` (sorted) nearest ``x``; the earlier one on a tie; None when empty."""
    if not t or math.isnan(x):
        return None
    at = bisect_left(t, x)
    if at == 0:
        return 0
    if at == len(t):
        return len(t) - 1
    return at - 1 if x - t[at - 1] <= t[at] - x else at


def x_text(view: ChartView, x: float) -> str:
    """``x`` as the axis names it: a step, or a time of day."""
    if view.x_kind == "step":
        return f"step {x:.0f}"
    if view.time_format is not None:
        return view.time_format(x)
    return clock_text(x, "%H:%M:%S")


def _named(view: ChartView) -> list[tuple[str, SeriesView]]:
    names = (*view.series_names, *[""] * (len(view.data) - len(view.series_names)))
    named = [(name or view.title, series) for name, series in zip(names, view.data)]
    if view.mode == "spread" and view.band is not None:
        named.insert(0, ("median", view.band))
    return named


def readings(view: ChartView, x: float) -> tuple[float, list[tuple[str, float]]]:
    """The x of the point nearest ``x`` (of the first series that has one) and each series' value there."""
    at_x = math.nan
    values: list[tuple[str, float]] = []
    for name, series in _named(view):
        index = nearest_index(series.t, x)
        if index is None:
            continue
        if math.isnan(at_x):
            at_x = series.t[index]
        values.append((clean(name), series.mean[index]))
    return at_x, values


def readout_text(view: ChartView, x: float) -> str:
    """One line: the x, then ``name value`` for each series, values in the chart's unit."""
    at_x, values = readings(view, x)
    if math.isnan(at_x):
        return ""
    parts = [x_text(view, at_x)]
    single = len(values) == 1
    for name, value in values:
        shown = format_value(value, view.unit) if math.isfinite(value) else "—"
        parts.append(shown if single else f"{name} {shown}")
    return " │ ".join(parts)


def crosshair_column(x_range: tuple[float, float], x: float, width: int) -> int | None:
    """The cell of a ``width``-cell plot over ``x_range`` that ``x`` falls in; None outside."""
    t0, t1 = x_range
    if width <= 0 or not t1 > t0 or not t0 <= x <= t1:
        return None
    return min(width - 1, int((x - t0) / (t1 - t0) * width))
