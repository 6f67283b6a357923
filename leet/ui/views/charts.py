"""From stored series and the latest sample to what widgets draw.

Pure functions: store snapshots, catalog specs and collector extras in; chart
views, the vitals model and header text out. Screens call these and hand the
results to widgets, so what a person sees can be tested without a terminal.
"""

from __future__ import annotations

import math
import time
from typing import Any, Iterable, Mapping, Sequence

from leet.model.catalog import ChartSpec
from leet.model.keys import LABEL_SEPARATOR, natural_key
from leet.model.node_spread import find_outlier, node_levels, node_spread
from leet.model.store import SeriesData, SeriesKey
from widgets.chartframe import MODES, ChartView
from widgets.matching import compile_filter
from widgets.raster import SeriesView
from widgets.units import format_value
from widgets.vitals import GpuSection, Meter, VitalsModel


def series_keys(spec: ChartSpec, run: str) -> list[SeriesKey]:
    return [SeriesKey(run, info.key, info.label) for info in spec.series]


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
    run: str,
    x_range: tuple[float, float],
    mode: str,
    x_kind: str = "time",
) -> ChartView:
    """What one chart shows in ``mode``; with several node labels, nodes get a colour each
    in line and log mode, and "spread" shows how the nodes compare ("line" for one node)."""
    labels = node_labels(spec)
    if mode == "spread" and len(labels) >= 2:
        return _spread_view(spec, snapshots, run, x_range, x_kind)
    names: list[str] = []
    data: list[SeriesView] = []
    groups: list[int] = []
    for info, key in zip(spec.series, series_keys(spec, run)):
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
    )


def _spread_view(
    spec: ChartSpec,
    snapshots: Mapping[SeriesKey, SeriesData],
    run: str,
    x_range: tuple[float, float],
    x_kind: str,
) -> ChartView:
    """Min to max across nodes as a band, their median, and the node that stands apart."""
    by_node: dict[str, list[SeriesView]] = {node_name(label): [] for label in node_labels(spec)}
    for info, key in zip(spec.series, series_keys(spec, run)):
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


# -- vitals ------------------------------------------------------------------


def _mean(values: Iterable[float]) -> float | None:
    finite = [v for v in values if isinstance(v, (int, float)) and math.isfinite(v)]
    return sum(finite) / len(finite) if finite else None


def _fraction(percent: float | None) -> float | None:
    return None if percent is None else max(0.0, min(1.0, percent / 100.0))


def _cpu_meter(latest: Mapping[str, float]) -> Meter | None:
    cores = [v for k, v in latest.items() if k.startswith("cpu.") and k.endswith(".cpu_percent") and k[4:-12].isdigit()]
    average = _mean(cores)
    if average is None:
        return None
    text = format_value(average, "%")
    temp = latest.get("cpu.avg_temp")
    if temp is not None and math.isfinite(temp):
        text += f" {format_value(temp, '°C')}"
    return Meter("CPU", _fraction(average), text)


def _memory_meter(latest: Mapping[str, float], host: Any | None) -> Meter | None:
    percent = latest.get("memory_percent")
    if percent is None:
        return None
    used = latest.get("memory.used")
    total = getattr(host, "memory_total", None)
    if used is not None and total:
        text = f"{format_value(used, 'B')}/{format_value(float(total), 'B')}"
    else:
        text = format_value(percent, "%")
    return Meter("Mem", _fraction(percent), text)


def _swap_meter(latest: Mapping[str, float], host: Any | None) -> Meter | None:
    total = getattr(host, "swap_total", None)
    percent = latest.get("swap.used_percent")
    if percent is None and not total:
        return None
    used = latest.get("swap.used", 0.0)
    if total:
        text = f"{format_value(used, 'B')}/{format_value(float(total), 'B')}"
    else:
        text = format_value(percent or 0.0, "%")
    return Meter("Swap", _fraction(percent or 0.0), text)


def _disk_meters(latest: Mapping[str, float], disk_paths: Sequence[str]) -> list[Meter]:
    meters = []
    for path in disk_paths:
        percent = latest.get(f"disk.{path}.usagePercent")
        if percent is None:
            continue
        used_gib = latest.get(f"disk.{path}.usageGB")
        text = format_value(percent, "%")
        if used_gib is not None and percent > 0:
            total = used_gib / (percent / 100.0) * 2**30
            text = f"{format_value(used_gib * 2**30, 'B')}/{format_value(total, 'B')}"
        meters.append(Meter(f"Disk {path}", _fraction(percent), text))
    return meters


def _sum_matching(latest: Mapping[str, float], prefix: str, suffix: str) -> float | None:
    values = [v for k, v in latest.items() if k.startswith(prefix) and k.endswith(suffix)]
    return sum(values) if values else None


def _rate_lines(latest: Mapping[str, float]) -> list[tuple[str, str]]:
    lines = []
    recv, sent = latest.get("network.recvBps"), latest.get("network.sentBps")
    if recv is not None or sent is not None:
        lines.append(("Net", f"↓ {format_value(recv or 0.0, 'B/s')}  ↑ {format_value(sent or 0.0, 'B/s')}"))
    read = _sum_matching(latest, "disk.", ".readBps")
    write = _sum_matching(latest, "disk.", ".writeBps")
    if read is not None or write is not None:
        lines.append(("I/O", f"R {format_value(read or 0.0, 'B/s')}  W {format_value(write or 0.0, 'B/s')}"))
    return lines


def _host_subtitle(host: Any | None) -> str:
    if host is None:
        return ""
    parts = []
    cores = getattr(host, "logical_cores", None)
    physical = getattr(host, "physical_cores", None)
    if cores:
        parts.append(f"{cores} cores" if not physical or physical == cores else f"{physical}C/{cores}T")
    limit = getattr(host, "cpu_limit", None)
    if limit:
        parts.append(f"limit {limit:g} CPU")
    total = getattr(host, "memory_total", None)
    if total:
        memory = format_value(float(total), "B")
        parts.append(memory + (" (cgroup)" if getattr(host, "memory_limited_by_cgroup", False) else ""))
    return " • ".join(parts)


def vitals_model(
    latest: Mapping[str, float],
    host: Any | None,
    disk_paths: Sequence[str],
    notes: Sequence[str] = (),
    gpu: GpuSection | None = None,
) -> VitalsModel:
    """Host meters and rates; ``gpu`` (see ``leet.ui.views.gpu``) adds the GPU section."""
    meters = [m for m in (_cpu_meter(latest), _memory_meter(latest, host), _swap_meter(latest, host)) if m]
    meters += _disk_meters(latest, disk_paths)
    return VitalsModel(
        title=getattr(host, "cpu_model", "") or "",
        subtitle=_host_subtitle(host),
        meters=tuple(meters),
        lines=tuple(_rate_lines(latest)),
        notes=tuple(notes),
        gpu=gpu or GpuSection(),
    )


# -- header ------------------------------------------------------------------


def format_uptime(seconds: float) -> str:
    seconds = max(0, int(seconds))
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes = rest // 60
    if days:
        return f"{days}d {hours}h"
    if hours:
        return f"{hours}h {minutes}m"
    return f"{minutes}m"


def host_summary(host: Any | None, now: float | None = None) -> str:
    if host is None:
        return "collecting system metrics…"
    now = time.time() if now is None else now
    parts = [getattr(host, "hostname", "") or "host"]
    boot = getattr(host, "boot_time", None)
    if boot:
        parts.append(f"up {format_uptime(now - boot)}")
    load = getattr(host, "load_avg", None)
    if load:
        parts.append("load " + " ".join(f"{v:.2f}" for v in load))
    return " • ".join(parts)
