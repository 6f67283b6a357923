"""The debiased EMA behind `e`, and the smoothed view that keeps the raw line faint behind."""

from __future__ import annotations

import math

import pytest

from widgets.chartframe import ChartView, compose_rows
from widgets.raster import SeriesView
from widgets.smoothing import WEIGHTS, ema, next_weight, smoothed_view


def test_ema_worked_example():
    # w = 0.5 over 1, 2, 3:
    #   last: 0.5, 1.25, 2.125   weights' sum 1 - w^n: 0.5, 0.75, 0.875
    #   smoothed = last / sum: 1, 5/3, 17/7
    assert ema([1.0, 2.0, 3.0], 0.5) == pytest.approx([1.0, 5 / 3, 17 / 7])


def test_the_first_point_is_never_pulled_towards_zero():
    assert ema([100.0], 0.99) == pytest.approx([100.0])
    assert ema([4.0, 4.0, 4.0, 4.0], 0.9) == pytest.approx([4.0] * 4)


def test_weight_zero_is_the_raw_series():
    assert ema([3.0, -1.0, 7.0], 0.0) == [3.0, -1.0, 7.0]


def test_gaps_stay_gaps_and_do_not_count():
    smoothed = ema([1.0, math.nan, 3.0], 0.5)
    assert math.isnan(smoothed[1])
    assert smoothed[0] == 1.0 and smoothed[2] == pytest.approx(ema([1.0, 3.0], 0.5)[1])


def test_e_cycles_off_then_each_weight_then_off():
    seen = [0.0]
    for _ in WEIGHTS:
        seen.append(next_weight(seen[-1]))
    assert seen == [0.0, 0.6, 0.8, 0.9, 0.95, 0.99, 0.0]


def test_smoothed_view_names_the_weight_and_draws_the_raw_line_dim():
    raw = SeriesView.points([0.0, 1.0, 2.0, 3.0], [0.0, 10.0, 0.0, 10.0])
    view = ChartView(title="loss", data=(raw,), x_range=(0.0, 3.0), x_kind="step")
    smoothed = smoothed_view(view, 0.9)
    assert smoothed.title == "loss ~0.9"
    assert smoothed.faint == (raw,)
    styles = {style for row in compose_rows(smoothed, 40, 12) for _, style in row}
    assert {"muted", "s0"} <= styles
    assert smoothed_view(view, 0.0) is view
