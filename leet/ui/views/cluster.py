"""What the cluster screen shows besides its charts: node rows, the GPU heatmap, the header and status.

Pure builders, no widget calls: the source's ``NodeState``s and
``PrometheusStatus``, and the store's newest values, go in; ``NodeRow``s, a
``HeatmapModel`` and runs of styled text come out. The W&B keys the heatmap
reads (``gpu.N.gpu``, ``gpu.N.temp`` …) are named here, so the widgets
never see one. Everything from Prometheus (node names, URLs, messages) is
untrusted text and goes through ``leet.common.text.clean``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Mapping, Sequence

from leet.common.text import clean
from leet.model.cluster import NodeState, PrometheusStatus
from leet.model.keys import natural_key
from leet.model.node_filter import LabelFilter
from leet.model.store import SeriesKey
from widgets.chartframe import Row, fit
from widgets.gpuheatmap import HeatmapModel, HeatNode
from widgets.nodetable import UNKNOWN, NodeRow

HOT_C = 85.0  # a GPU this hot is marked in the node table
STALE_INTERVALS = 3.0  # a node whose newest sample is older than this many intervals is marked stale
MAX_GPU_INDEX = 63  # gpu.N with a larger N (a hostile or broken exporter) is left out of the heatmap
MESSAGE_SHARE = 0.5  # of the header's width, at most, for Prometheus's error message


@dataclass(frozen=True)
class HeatMetric:
    """One figure the heatmap can shade: ``gpu.N.<suffix>`` over ``lo``…``hi`` (None: up to the largest reading)."""

    name: str  # as the heatmap's title lists it, and ``m`` steps through
    title: str
    suffix: str
    unit: str
    lo: float
    hi: float | None
    step: float = 1.0  # an open top is rounded up to a multiple of this


HEAT_METRICS: tuple[HeatMetric, ...] = (
    HeatMetric("util", "GPU utilisation", "gpu", "%", 0.0, 100.0),
    HeatMetric("temp", "GPU temperature", "temp", "°C", 30.0, 90.0),
    HeatMetric("memory", "GPU memory", "memoryAllocated", "%", 0.0, 100.0),
    HeatMetric("power", "GPU power", "powerWatts", "W", 0.0, None, 100.0),
)


def next_metric(current: str) -> HeatMetric:
    """The heatmap metric after ``current`` (the first after the last, or after a name not known)."""
    names = [metric.name for metric in HEAT_METRICS]
    at = names.index(current) + 1 if current in names else 0
    return HEAT_METRICS[at % len(HEAT_METRICS)]


def metric_named(name: str) -> HeatMetric:
    return next((metric for metric in HEAT_METRICS if metric.name == name), HEAT_METRICS[0])


# -- words -----------------------------------------------------------------------------------


def short_age(seconds: float | None) -> str:
    """``12s``, ``3m``, ``2h``, ``4d``: how long ago, in at most four cells for a year; ``-`` when unknown."""
    if seconds is None or not math.isfinite(seconds):
        return UNKNOWN
    seconds = max(0.0, seconds)
    for size, unit in ((86400.0, "d"), (3600.0, "h"), (60.0, "m")):
        if seconds >= size:
            return f"{min(999, int(seconds // size))}{unit}"
    return f"{int(seconds)}s"


def display_url(url: str) -> str:
    """``url`` as the header shows it: no user or password, no query or fragment (tokens live there)."""
    text = url.strip().split("#", 1)[0].split("?", 1)[0]
    scheme, separator, rest = text.partition("://")
    if not separator:
        scheme, rest = "", text
    authority, slash, path = rest.partition("/")
    authority = authority.rpartition("@")[2]
    shown = (f"{scheme}://" if separator else "") + authority + (slash + path if path.strip("/") else "")
    return clean(shown)


# -- the node table ---------------------------------------------------------------------------


def node_order(labels: Iterable[str], nodes: Sequence[NodeState]) -> list[str]:
    """Every node name the source knows, from its series or its records, in natural order."""
    names = set(labels) | {node.node for node in nodes}
    return sorted(names, key=natural_key)


def node_rows(nodes: Sequence[NodeState], now: float, interval: float, shown: LabelFilter) -> list[NodeRow]:
    """One row per node, its texts worded; ``shown`` marks the nodes the charts leave out."""
    rank = {name: index for index, name in enumerate(node_order((), nodes))}
    rows = []
    for node in nodes:
        age = now - node.last_scrape if node.last_scrape is not None else None
        if node.up:
            state = "up"
        else:
            state = "down" if node.since is None else f"down {short_age(now - node.since)}"
        temp = node.hottest_gpu_temp
        rows.append(
            NodeRow(
                node=node.node,
                up=node.up,
                state=state,
                rank=rank[node.node],
                gpus=node.gpus,
                gpu_util=node.gpu_util_mean,
                memory=node.memory_percent,
                hot_temp=temp,
                hot_gpu=node.hottest_gpu,
                age=max(0.0, age) if age is not None else None,
                age_text=short_age(age),
                hot=temp is not None and temp >= HOT_C,
                stale=node.up and age is not None and age > STALE_INTERVALS * max(interval, 1.0),
                shown=shown.matches(node.node),
            )
        )
    return rows


# -- the heatmap ----------------------------------------------------------------------------------

_GPU_KEY = re.compile(r"gpu\.(\d{1,4})\.(.+)\Z")


@lru_cache(maxsize=65536)
def gpu_key(key: str) -> tuple[int, str] | None:
    """``gpu.3.temp`` → ``(3, "temp")``; None for another key or an index past ``MAX_GPU_INDEX``."""
    found = _GPU_KEY.match(key)
    if found is None or int(found.group(1)) > MAX_GPU_INDEX:
        return None
    return int(found.group(1)), found.group(2)


def gpu_readings(latest: Mapping[SeriesKey, float], suffix: str) -> dict[str, dict[int, float]]:
    """``{node: {GPU index: newest value}}`` of ``gpu.N.<suffix>``; non-finite values are no reading."""
    found: dict[str, dict[int, float]] = {}
    for series, value in latest.items():
        if series.label is None or not math.isfinite(value):
            continue
        parsed = gpu_key(series.key)
        if parsed is not None and parsed[1] == suffix:
            found.setdefault(series.label, {})[parsed[0]] = value
    return found


def heatmap_model(
    metric: HeatMetric,
    latest: Mapping[SeriesKey, float],
    nodes: Sequence[NodeState],
    order: Sequence[str],
    selected: str | None = None,
) -> HeatmapModel:
    """The nodes of ``order`` that have GPUs, each with ``metric``'s newest value per GPU."""
    readings = gpu_readings(latest, metric.suffix)
    states = {node.node: node for node in nodes}
    heat: list[HeatNode] = []
    without = 0
    for name in order:
        state = states.get(name)
        values = readings.get(name, {})
        gpus = max(state.gpus if state is not None else 0, max(values) + 1 if values else 0)
        if gpus == 0:
            without += 1
            continue
        down = state is not None and not state.up
        heat.append(HeatNode(name, tuple(values.get(index) for index in range(gpus)), gpus, down))
    hi = metric.hi
    if hi is None:
        top = max((value for node in heat if not node.down for value in node.values if value is not None), default=0.0)
        hi = max(metric.step, math.ceil(top / metric.step) * metric.step)
    note = f"{without} without GPUs" if without else ""
    return HeatmapModel(
        title=metric.title,
        unit=metric.unit,
        lo=metric.lo,
        hi=hi,
        nodes=tuple(heat),
        selected=selected,
        metrics=tuple(m.name for m in HEAT_METRICS),
        metric=metric.name,
        note=note,
    )


# -- the header and the status line ------------------------------------------------------------------


def header_parts(
    status: PrometheusStatus, nodes: Sequence[NodeState], now: float, interval: float, width: int = 160, reserved: int = 0
) -> tuple[Row, Row]:
    """(left, right) of a header ``width`` cells wide, ``reserved`` of them taken on the right by the caller.

    Left: where from and how many nodes are up; right: how Prometheus
    answers. Narrower than ``WIDE``, the counts come before the URL, the URL
    is cut to the room left, and the right side says less.
    """
    up = sum(1 for node in nodes if node.up)
    down = len(nodes) - up
    title: Row = [(" leet cluster", "heading")]
    counts: Row = [(f" · {len(nodes)} node{'s' if len(nodes) != 1 else ''}", "muted")]
    if nodes:
        counts.append((f" · {up} up", "ok"))
    if down:
        counts.append((f" · {down} down", "error"))
    wide = width >= WIDE
    right = connection_parts(status, now, interval, width, compact=not wide)
    url = display_url(status.url)
    if wide:
        return [*title, (" " + url, "value"), *counts], right
    room = width - reserved - _width(right) - _width(title) - _width(counts) - 4
    host = url.partition("://")[2] or url  # the scheme is the first thing a narrow header can spare
    link: Row = [(" · " + fit(host, room), "value")] if room >= URL_MIN else []
    return [*title, *counts, *link], right


WIDE = 120  # a header at least this wide says everything
URL_MIN = 12  # a URL cut shorter than this says nothing


def _width(runs: Row) -> int:
    return sum(len(text) for text, _ in runs)


def connection_parts(status: PrometheusStatus, now: float, interval: float, width: int = 160, compact: bool = False) -> Row:
    """`` answered 3s ago in 38 ms · every 15s``, `` ⚠ connection refused · retry in 12s``, or `` connecting…``.

    ``compact`` leaves out the query's time, the interval and, while Prometheus does not answer, when it last did.
    """
    every: Row = [] if compact else [(f" · every {interval:g}s", "muted")]
    last = f"last answer {short_age(now - status.last_ok)} ago" if status.last_ok is not None else ""
    if status.reachable is None:
        return [(" connecting…", "muted"), *every, (" ", "muted")]
    if status.reachable:
        took = f" in {status.last_query_ms:.0f} ms" if status.last_query_ms is not None and not compact else ""
        said = f" {last.replace('last answer', 'answered')}{took}" if last else " answered"
        return [(said, "muted"), *every, (" ", "muted")]
    share = MESSAGE_SHARE / (2 if compact else 1)
    message = fit(clean(status.message) or "no answer", max(12, int(width * share)))
    runs: Row = [(f" ⚠ {message}", "error")]
    if status.retry_in is not None:
        runs.append((f" · retry in {max(0, math.ceil(status.retry_in))}s", "error"))
    if last and not compact:
        runs.append((f" · {last}", "muted"))
    runs.append((" ", "muted"))
    return runs


def status_problem(status: PrometheusStatus, error: str) -> Row:
    """What the status line says on its right: why the source stopped, why Prometheus does not answer, or its warning."""
    if error:
        return [(f" ⚠ {clean(error)} ", "error")]
    if status.reachable is False:
        message = clean(status.message) or "no answer"
        said = message if "prometheus" in message.lower() else f"Prometheus: {message}"
        return [(f" ⚠ {said} ", "error")]
    warning = status.message or (status.notes[0] if status.notes else "")
    return [(f" ⚠ {clean(warning)} ", "warn")] if warning else []
