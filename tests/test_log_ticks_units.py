"""Log axes of byte rates tick at round numbers in the unit they show."""

from __future__ import annotations

import re

from widgets.chartframe import ChartView, compose_rows, row_text
from widgets.raster import SeriesView

ROUND = {1, 2, 5, 10, 20, 50, 100, 200, 500}


def test_a_log_axis_of_bytes_per_second_labels_round_numbers():
    values = [2e5, 3e6, 4e7, 9e8]
    view = ChartView(
        title="disk", unit="B/s", mode="log", series_names=("sda",),
        data=(SeriesView([0.0, 1.0, 2.0, 3.0], values, values, values),), x_range=(0.0, 3.0),
    )
    rows = [row_text(row) for row in compose_rows(view, 60, 20)]
    labels = [match.group(1) for row in rows[1:] for match in [re.search(r"│?\s*([\d.]+ ?[KMG]?i?B/s)", row)] if match]
    assert labels, rows
    for label in labels:
        number = float(label.split()[0])
        assert number in ROUND, labels
