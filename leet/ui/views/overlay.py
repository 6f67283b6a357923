"""The workspace's overlay: one chart per metric across the selected runs, on the axis their ``define_metric`` gives.

A metric is drawn against its step metric (``val/loss · by epoch``) when
every run that shows it says so; where runs disagree (one by ``epoch``, one
by step) it is drawn by step and the chart says which axes differ. A metric
a run's ``define_metric`` hides gets no series from that run, and no chart
when every run that logged it hides it.

Pure: run snapshots and store series in, ``OverlayChart`` and ``ChartView`` out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from leet.common.matching import compile_filter
from leet.common.ticks import step_range
from leet.model.keys import axis_key, natural_key
from leet.model.run import RunSnapshot
from leet.model.store import SeriesData, SeriesKey
from leet.ui.views.charts import whole_numbers
from widgets.chartframe import ChartView
from widgets.raster import SeriesView


@dataclass(frozen=True)
class OverlayChart:
    """One metric's chart in the overlay: its x axis ("" for the step) and who leaves it out."""

    metric: str
    axis: str = ""
    note: str = ""  # the runs disagree on the axis: which axes, and that it is drawn by step
    hidden_in: frozenset[str] = frozenset()  # run keys whose define_metric hides it

    @property
    def title(self) -> str:
        return self.metric + (f" · by {self.axis}" if self.axis else "")

    def key_of(self, run: str) -> SeriesKey:
        """Where run ``run``'s series of this chart is in the store."""
        return SeriesKey(axis_key(run, self.axis) if self.axis else run, self.metric, None)


def overlay_charts(runs: Sequence[tuple[str, RunSnapshot]], pattern: str = "") -> list[OverlayChart]:
    """The overlay's charts for ``runs`` (store key, snapshot), in natural order; ``pattern`` filters by name."""
    matches = compile_filter(pattern)
    logged: dict[str, list[RunSnapshot]] = {}
    keys: dict[int, str] = {}
    for key, snapshot in runs:
        keys[id(snapshot)] = key
        for metric in dict.fromkeys(metric for metric, _ in snapshot.history_keys):  # a chart per metric, whichever writer logged it
            logged.setdefault(metric, []).append(snapshot)
    charts = []
    for metric in sorted(logged, key=natural_key):
        if pattern and not matches(metric):
            continue
        showing = [snapshot for snapshot in logged[metric] if metric not in snapshot.hidden]
        if not showing:
            continue
        hidden_in = frozenset(keys[id(snapshot)] for snapshot in logged[metric] if metric in snapshot.hidden)
        axes = {snapshot.axes.get(metric, "") for snapshot in showing}
        if len(axes) == 1:
            charts.append(OverlayChart(metric, axes.pop(), "", hidden_in))
        else:
            named = ", ".join(sorted(f"by {axis or 'step'}" for axis in axes))
            charts.append(OverlayChart(metric, "", f"axes differ: {named} · drawn by step", hidden_in))
    return charts


def overlay_view(
    chart: OverlayChart,
    runs: Sequence[tuple[str, str]],
    snapshots: Mapping[SeriesKey, SeriesData],
    x_range: tuple[float, float],
    mode: str = "line",
) -> ChartView:
    """One metric across several runs: a series per run (store key, display name), in selection order.

    A run without this metric (or hiding it) keeps its place (an empty
    series), so each run has the same colour in every chart and in the runs list.
    """
    names: list[str] = []
    data: list[SeriesView] = []
    for key, name in runs:
        found = None if key in chart.hidden_in else snapshots.get(chart.key_of(key))
        names.append(name)
        data.append(SeriesView(found.t, found.lo, found.hi, found.mean) if found is not None else SeriesView((), (), (), ()))
    shown = tuple(data)
    return ChartView(
        title=chart.title, series_names=tuple(names), data=shown, x_range=x_range, mode=mode, x_kind="step", integer=whole_numbers(shown), note=chart.note,
    )


def overlay_range(chart: OverlayChart, runs: Sequence[str], last_step: float, span: Callable[[str], tuple[float, float] | None]) -> tuple[float, float]:
    """The chart's x range: the step from 0 to ``last_step`` (the runs' last), or what its axis spans in ``runs`` (``span``: a store namespace's)."""
    if not chart.axis:
        return step_range(0.0, last_step)
    spans = [found for run in runs if (found := span(axis_key(run, chart.axis))) is not None]
    if not spans:
        return 0.0, 1.0
    return step_range(min(0.0, *(lo for lo, _ in spans)), max(hi for _, hi in spans))
