"""Exponential smoothing of a chart's series, and the view that draws it over the raw line.

Pure, no Textual. The smoothing is the debiased exponential moving average:
with weight ``w`` and the finite values ``y_1 … y_n`` read so far,

    last_n = w · last_{n-1} + (1 − w) · y_n,   last_0 = 0
    s_n    = last_n / (1 − w^n)

Dividing by ``1 − w^n`` (the weights' sum) removes the pull towards zero the
zero start gives the first points. Values that are not finite are gaps: they
stay gaps and take no part in the average.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Sequence

from widgets.chartframe import ChartView
from widgets.raster import SeriesView

# What `e` steps through; 0.0 is off.
WEIGHTS = (0.0, 0.6, 0.8, 0.9, 0.95, 0.99)


def next_weight(weight: float) -> float:
    """The weight after ``weight`` in ``WEIGHTS`` (one not listed goes back to off)."""
    if weight not in WEIGHTS:
        return WEIGHTS[0]
    return WEIGHTS[(WEIGHTS.index(weight) + 1) % len(WEIGHTS)]


def ema(values: Sequence[float], weight: float) -> list[float]:
    """The debiased exponential moving average of ``values`` with ``weight`` (0 ≤ weight < 1)."""
    last = 0.0
    total = 0.0  # 1 − w^n, grown step by step
    smoothed: list[float] = []
    for value in values:
        if not math.isfinite(value):
            smoothed.append(value)
            continue
        last = weight * last + (1.0 - weight) * value
        total = weight * total + (1.0 - weight)
        smoothed.append(last / total)
    return smoothed


def smooth_series(series: SeriesView, weight: float) -> SeriesView:
    """One line of the smoothed means (a bucket's low and high are not smoothed)."""
    return SeriesView.points(series.t, ema(series.mean, weight))


def weight_label(weight: float) -> str:
    """What the title line adds for a smoothed chart."""
    return f"~{weight:g}"


def smoothed_view(view: ChartView, weight: float) -> ChartView:
    """``view`` with each series smoothed; in line and log mode the raw lines stay, drawn faint behind."""
    if not weight or not (view.data or view.band):
        return view
    smoothed = tuple(smooth_series(series, weight) for series in view.data)
    faint = view.data if view.mode in ("line", "log") else ()
    band = view.band
    if band is not None:  # across nodes: the band's edges and median each smoothed
        band = SeriesView(band.t, ema(band.lo, weight), ema(band.hi, weight), ema(band.mean, weight))
    return replace(view, data=smoothed, faint=faint, band=band, title=f"{view.title} {weight_label(weight)}")
