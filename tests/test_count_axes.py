"""Charts of counts tick whole numbers: no 0.5 processes, no 1.5 GPUs."""

from __future__ import annotations

import re

from stored_series import stored

from leet.model.catalog import describe, group
from leet.model.store import SeriesData, SeriesKey
from leet.ui.views.charts import chart_view, whole_numbers
from leet.ui.views.overlay import OverlayChart, overlay_view
from leet.ui.views.run import metric_specs
from widgets.chartframe import ChartView, compose_rows, row_text
from widgets.raster import SeriesView

T0 = 1_772_700_000.0


def y_labels(view: ChartView, width: int = 40, height: int = 16) -> list[str]:
    """The y-axis labels, top to bottom."""
    rows = [row_text(row) for row in compose_rows(view, width, height)[1:-2]]
    return [match.group(1).strip() for row in rows if (match := re.match(r"│\s*([^│┤]*)┤", row))]


def whole(labels: list[str]) -> bool:
    return len(labels) >= 2 and all(label.isdigit() for label in labels)


def whole_labels(view: ChartView) -> bool:
    return whole(y_labels(view))


def data(values: list[float], start: float = T0) -> SeriesData:
    t = [start + i for i in range(len(values))]
    return SeriesData(t, list(values), list(values), list(values))


def test_the_catalog_knows_which_metrics_are_counts():
    for key in ("proc.cpu.threads", "proc.memory.oomKills", "network.tcpRetransmits", "gpu.0.correctedMemoryErrors", "gpu.0.pcieLinkGen"):
        assert describe(key).integer, key
    for key in ("cpu", "memory_percent", "gpu.0.temp", "network.recvBps", "some.unknown.key"):
        assert not describe(key).integer, key
    (spec,) = group(stored(["proc.cpu.threads"]))
    assert spec.integer


def test_a_chart_of_thread_counts_ticks_whole_numbers():
    (spec,) = group(stored(["proc.cpu.threads"], run="live"))
    snapshots = {SeriesKey("live", "proc.cpu.threads", None): data([1, 2, 2, 1])}
    view = chart_view(spec, snapshots, (T0, T0 + 4), "line")
    assert view.integer
    labels = y_labels(view)
    assert whole(labels), labels  # before: 0, 0.5, 1.0, 1.5, 2.0


def test_a_plain_number_chart_of_whole_values_is_a_count_and_of_fractions_is_not():
    assert whole_numbers([SeriesView.points([0, 1], [1.0, 3.0])])
    assert not whole_numbers([SeriesView.points([0, 1], [1.0, 2.5])])
    assert not whole_numbers([SeriesView.points([0, 1], [float("nan"), float("nan")])])
    (spec,) = metric_specs([("gpus_in_use", None)], run="run")
    counted = chart_view(spec, {SeriesKey("run", "gpus_in_use", None): data([0, 1, 2, 1], start=0)}, (0, 4), "line", "step")
    assert counted.integer and whole_labels(counted)
    (spec,) = metric_specs([("loss", None)], run="run")
    fractional = chart_view(spec, {SeriesKey("run", "loss", None): data([0.2, 1.7], start=0)}, (0, 4), "line", "step")
    assert not fractional.integer


def test_workspace_overlays_of_counts_tick_whole_numbers():
    snapshots = {SeriesKey("a", "epoch", None): data([0, 1, 2], start=0), SeriesKey("b", "epoch", None): data([0, 1], start=0)}
    view = overlay_view(OverlayChart("epoch"), [("a", "run a"), ("b", "run b")], snapshots, (0, 3))
    assert view.integer and whole_labels(view)


def test_a_percent_chart_is_not_made_a_count():
    (spec,) = group(stored(["gpu.0.gpu"], run="live"))
    view = chart_view(spec, {SeriesKey("live", "gpu.0.gpu", None): data([40, 60])}, (T0, T0 + 2), "line")
    assert not view.integer
