"""From stored series to what chart widgets draw.

Pure functions: store snapshots and catalog specs in; chart views, modes and
filtered chart lists out. Screens call these and hand the results to widgets,
so what a person sees can be tested without a terminal.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Iterable, Mapping, Sequence

from leet.common.matching import compile_filter
from leet.model.catalog import ChartSpec
from leet.model.keys import LABEL_SEPARATOR, natural_key
from leet.model.node_spread import find_outlier, node_levels, node_spread
from leet.model.store import SeriesData, SeriesKey
from widgets.chartframe import MODES, ChartView
from widgets.raster import SeriesView

# Entries worth reading per cell of a chart's width: a braille cell is two dot
# columns, and two entries a column keep each column's rise and fall.
ENTRIES_PER_CELL = 4


def read_resolution(x_range: tuple[float, float], widths: Iterable[int]) -> float | None:
    """Seconds per entry worth reading for charts this many cells wide over ``x_range``; None: read every entry."""
    widest = max(widths, default=0)
    span = x_range[1] - x_range[0]
    if widest <= 0 or not span > 0:
        return None
    return span / (ENTRIES_PER_CELL * widest)


# From this many series from several nodes, overlaid lines (and 8-cell heatmap
# row names) stop being readable: the spread across nodes says more.
_SPREAD_FROM = 4

# Percentage points a node must differ by before it is called the odd one out.
_PERCENT_GAP = 5.0


def node_labels(spec: ChartSpec) -> tuple[str | None, ...]:
    """The node labels of a chart's series, unlabelled first, then in natural order."""
    labels = {info.label for info in spec.series}
    return tuple(sorted(labels, key=lambda label: (label is not None, natural_key(label or ""))))


def node_name(label: str | None) -> str:
    return "(no label)" if label is None else label.replace(LABEL_SEPARATOR, " / ")


def modes_for(spec: ChartSpec) -> tuple[str, ...]:
    """The modes ``y`` cycles through: "spread" only where several nodes write the chart."""
    if len(node_labels(spec)) >= 2:
        return MODES
    return tuple(mode for mode in MODES if mode != "spread")


def default_mode(spec: ChartSpec) -> str:
    """Many bounded series (CPU cores, 8 GPUs) read best as a heatmap; many nodes' series as their spread."""
    if len(spec.series) >= _SPREAD_FROM and len(node_labels(spec)) >= 2:
        return "spread"
    return "heatmap" if spec.percent and len(spec.series) >= 4 else "line"


def whole_numbers(data: Sequence[SeriesView]) -> bool:
    """Whether every finite reading (each bucket's low and high) is a whole number, and there is one."""
    seen = False
    for series in data:
        for values in (series.lo, series.hi):
            for value in values:
                if not math.isfinite(value):
                    continue
                if value != math.floor(value):
                    return False
                seen = True
    return seen


def counts(spec: ChartSpec, data: Sequence[SeriesView]) -> bool:
    """A chart of counts: the catalog says so, or a plain-number chart only ever held whole numbers.

    A run's metrics carry no unit, so the values decide there (steps,
    epochs, tokens seen); a plain-number key from the host no rule knows, too.
    """
    if spec.integer:
        return True
    return spec.unit == "" and not spec.percent and whole_numbers(data)


def _scaled(data: SeriesData, scale: float) -> SeriesView:
    if scale == 1.0:
        return SeriesView(data.t, data.lo, data.hi, data.mean)
    return SeriesView(
        data.t,
        [v * scale for v in data.lo],
        [v * scale for v in data.hi],
        [v * scale for v in data.mean],
    )


def chart_view(
    spec: ChartSpec,
    snapshots: Mapping[SeriesKey, SeriesData],
    x_range: tuple[float, float],
    mode: str,
    x_kind: str = "time",
    markers: tuple[tuple[float, str], ...] = (),
) -> ChartView:
    """What one chart shows in ``mode``; with several node labels, nodes get a colour each
    in line and log mode, and "spread" shows how the nodes compare ("line" for one node).
    ``markers``: ``(x, level)`` events for the x-axis row (a run's alerts by step)."""
    labels = node_labels(spec)
    if mode == "spread" and len(labels) >= 2:
        return replace(_spread_view(spec, snapshots, x_range, x_kind), markers=markers)
    names: list[str] = []
    data: list[SeriesView] = []
    groups: list[int] = []
    for info, key in zip(spec.series, spec.keys):
        snapshot = snapshots.get(key)
        if snapshot is None:
            continue
        # A lone unnamed series needs no name: the title says what it is.
        names.append("" if info.legend == "Default" else info.legend)
        data.append(_scaled(snapshot, info.scale))
        groups.append(labels.index(info.label))
    by_node = len(labels) >= 2
    return ChartView(
        title=spec.title,
        unit=spec.unit,
        series_names=tuple(names),
        data=tuple(data),
        x_range=x_range,
        y_min=spec.y_min,
        y_max=spec.y_max,
        percent=spec.percent,
        mode="line" if mode == "spread" else mode,
        x_kind=x_kind,
        groups=tuple(node_name(label) for label in labels) if by_node else (),
        series_group=tuple(groups) if by_node else (),
        integer=counts(spec, data),
        markers=markers,
    )


def _spread_view(
    spec: ChartSpec,
    snapshots: Mapping[SeriesKey, SeriesData],
    x_range: tuple[float, float],
    x_kind: str,
) -> ChartView:
    """Min to max across nodes as a band, their median, and the node that stands apart."""
    by_node: dict[str, list[SeriesView]] = {node_name(label): [] for label in node_labels(spec)}
    for info, key in zip(spec.series, spec.keys):
        snapshot = snapshots.get(key)
        if snapshot is not None:
            by_node[node_name(info.label)].append(_scaled(snapshot, info.scale))
    spread = node_spread(by_node, x_range)
    band = SeriesView(spread.t, spread.lo, spread.hi, spread.median) if spread else SeriesView((), (), (), ())
    outlier = find_outlier(node_levels(spread), abs_gap=_PERCENT_GAP if spec.percent else 0.0) if spread else None
    highlight = (SeriesView.points(spread.t, spread.nodes[outlier.label]),) if spread and outlier else ()
    return ChartView(
        title=spec.title,
        unit=spec.unit,
        series_names=(outlier.label,) if outlier else (),
        data=highlight,
        x_range=x_range,
        y_min=spec.y_min,
        y_max=spec.y_max,
        percent=spec.percent,
        mode="spread",
        x_kind=x_kind,
        band=band,
        band_name=f"{len(by_node)} nodes",
        note=outlier.describe(spec.unit) if outlier else "",
        integer=counts(spec, (band, *highlight)),
    )


def filter_specs(specs: Sequence[ChartSpec], pattern: str) -> list[ChartSpec]:
    """Charts whose title, keys or node labels match ``pattern``."""
    if not pattern:
        return list(specs)
    matches = compile_filter(pattern)

    def wanted(spec: ChartSpec) -> bool:
        if matches(spec.full_title) or matches(spec.title):
            return True
        return any(matches(info.key) or (info.label and matches(info.label)) or matches(info.series) for info in spec.series)

    return [spec for spec in specs if wanted(spec)]
