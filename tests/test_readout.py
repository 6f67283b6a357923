"""The crosshair's readout: the nearest point of each series, and how it is drawn into a chart."""

from __future__ import annotations

from widgets.chartframe import ChartView, compose_rows, row_text
from widgets.crosshair import plot_span, with_crosshair
from widgets.raster import SeriesView
from widgets.readout import crosshair_column, nearest_index, readout_text


def test_nearest_index_takes_the_closer_point_the_earlier_on_a_tie():
    t = [0.0, 10.0, 20.0]
    assert nearest_index(t, 4.0) == 0
    assert nearest_index(t, 6.0) == 1
    assert nearest_index(t, 5.0) == 0
    assert nearest_index(t, -3.0) == 0
    assert nearest_index(t, 99.0) == 2
    assert nearest_index([], 1.0) is None


def view() -> ChartView:
    loss = SeriesView.points([0.0, 100.0, 200.0], [2.5, 1.25, 0.5])
    acc = SeriesView.points([0.0, 100.0, 200.0], [0.1, 0.5, 0.9])
    return ChartView(title="train", unit="", series_names=("loss", "acc"), data=(loss, acc), x_range=(0.0, 200.0), x_kind="step")


def test_readout_names_the_step_and_each_series_value():
    assert readout_text(view(), 110.0) == "step 100 │ loss 1.25 │ acc 0.5"


def test_readout_uses_the_charts_unit():
    power = ChartView(title="GPU power", unit="W", data=(SeriesView.points([5.0, 6.0], [120.0, 250.0]),), x_range=(0.0, 10.0), x_kind="step")
    assert readout_text(power, 6.0) == "step 6 │ 250 W"


def test_crosshair_column_is_the_cell_x_falls_in():
    assert crosshair_column((0.0, 100.0), 0.0, 10) == 0
    assert crosshair_column((0.0, 100.0), 55.0, 10) == 5
    assert crosshair_column((0.0, 100.0), 100.0, 10) == 9
    assert crosshair_column((0.0, 100.0), 101.0, 10) is None


def test_the_crosshair_keeps_the_frame_and_size_and_shows_the_readout():
    plain = compose_rows(view(), 60, 14)
    drawn = with_crosshair(plain, view(), 200.0)
    assert [row_text(row) for row in (drawn[0], drawn[-1])] == [row_text(row) for row in (plain[0], plain[-1])]
    assert all(len(row_text(row)) == 60 and row_text(row)[0] == "│" and row_text(row)[-1] == "│" for row in drawn[1:-1])
    assert "step 200 │ loss 500m │ acc 900m" in row_text(drawn[1]) or "step 200 │ loss 0.5 │ acc 0.9" in row_text(drawn[1])
    left, width = plot_span(plain) or (0, 0)
    lit = [row for row in drawn[2:-2] if any(style == "cursor" for _, style in row)]
    assert lit  # the column is lit down the plot
