"""How the nodes of a shared run compare on one chart: their spread and the odd one out.

In a W&B shared-mode run every node writes its own copy of each system
metric (``gpu.0.gpu/l:rank3``), and one slow node holds back the whole job.
Thirty-two overlaid lines do not show which; the spread of the nodes (min,
median, max at each moment) and the one node whose level sits apart do.

A node's value is the mean of its series in the chart (its GPUs, say). Nodes
sample at their own instants, so each series is first put on the same time
buckets: the mean of its points inside a bucket, or, for a bucket it has no
point in, a straight line between its neighbouring points when they are
close (a few of its own sample intervals apart). Pure functions, no I/O.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from itertools import islice
from statistics import median
from typing import Mapping, Protocol, Sequence

from widgets.units import format_value

# Enough buckets for a wide chart (two braille dots per cell); fewer when the
# series have fewer points in the window, so sparse nodes are not spread thin.
SPREAD_BUCKETS = 240

# Neighbouring points further apart than this many of the series' own usual
# intervals are a gap, not something to draw a line across.
_GAP_INTERVALS = 3.0

# The median absolute deviation times this estimates a standard deviation.
_MAD_TO_SIGMA = 1.4826


class Points(Protocol):
    """A series as the store and the charts hold it; only times and means are read."""

    @property
    def t(self) -> Sequence[float]: ...

    @property
    def mean(self) -> Sequence[float]: ...


@dataclass(frozen=True)
class Spread:
    """The nodes of one chart on shared time buckets, oldest first.

    ``t`` holds bucket centres; ``lo``, ``median`` and ``hi`` are taken across
    the nodes that have a value in the bucket (NaN where none has). ``nodes``
    maps each node to its own value per bucket (NaN where it has none).
    """

    t: tuple[float, ...]
    lo: tuple[float, ...]
    median: tuple[float, ...]
    hi: tuple[float, ...]
    nodes: Mapping[str, tuple[float, ...]]


@dataclass(frozen=True)
class Outlier:
    """The node whose level sits furthest from the other nodes', when it clearly does."""

    label: str
    value: float  # the node's mean over the window
    median: float  # the median of all nodes' means
    direction: str  # "low" or "high"
    score: float  # distance from the median in robust standard deviations (inf when the rest agree exactly)

    def describe(self, unit: str = "") -> str:
        """``"rank2 low (41% vs median 95%)"``."""
        value, middle = format_value(self.value, unit), format_value(self.median, unit)
        return f"{self.label} {self.direction} ({value} vs median {middle})"


def node_spread(
    nodes: Mapping[str, Sequence[Points]],
    x_range: tuple[float, float],
    buckets: int = SPREAD_BUCKETS,
) -> Spread | None:
    """Min, median and max across ``nodes`` over ``x_range``; None for fewer than two nodes.

    ``buckets`` is an upper bound: no more buckets are made than the densest
    series has points in the window.
    """
    if len(nodes) < 2:
        return None
    t0, t1 = x_range
    if not (math.isfinite(t0) and math.isfinite(t1)) or t1 <= t0:
        return None
    count = max(1, min(buckets, max((_points_in(s, t0, t1) for group in nodes.values() for s in group), default=1)))
    width = (t1 - t0) / count
    centres = tuple(t0 + (i + 0.5) * width for i in range(count))
    per_node = {label: _node_values(group, t0, width, centres) for label, group in nodes.items()}
    lo, middle, hi = [], [], []
    for values in zip(*per_node.values()):
        finite = [v for v in values if math.isfinite(v)]
        if finite:
            lo.append(min(finite))
            middle.append(median(finite))
            hi.append(max(finite))
        else:
            lo.append(math.nan)
            middle.append(math.nan)
            hi.append(math.nan)
    return Spread(centres, tuple(lo), tuple(middle), tuple(hi), per_node)


def node_levels(spread: Spread) -> dict[str, float]:
    """Each node's mean over the window; nodes without a value are left out."""
    levels = {}
    for label, values in spread.nodes.items():
        level = _finite_mean(values)
        if level is not None:
            levels[label] = level
    return levels


def find_outlier(
    levels: Mapping[str, float],
    *,
    min_nodes: int = 3,
    threshold: float = 3.5,
    rel_gap: float = 0.1,
    abs_gap: float = 0.0,
) -> Outlier | None:
    """The node furthest from the median of ``levels``, or None when none stands out.

    A node is named only when at least ``min_nodes`` nodes have a level (with
    two, neither is "the odd one"), its distance from the median is at least
    ``threshold`` robust standard deviations (1.4826 × the median absolute
    deviation) and at least ``max(abs_gap, rel_gap × |median|)``, so noise
    among nodes that agree never names one.
    """
    finite = {label: v for label, v in levels.items() if math.isfinite(v)}
    if len(finite) < max(2, min_nodes):
        return None
    middle = median(finite.values())
    label, level = max(finite.items(), key=lambda item: abs(item[1] - middle))
    gap = abs(level - middle)
    if gap == 0 or gap < max(abs_gap, rel_gap * abs(middle)):
        return None
    sigma = _MAD_TO_SIGMA * median(abs(v - middle) for v in finite.values())
    score = gap / sigma if sigma > 0 else math.inf
    if score < threshold:
        return None
    return Outlier(label, level, middle, "low" if level < middle else "high", score)


# -- resampling ------------------------------------------------------------------


def _points_in(series: Points, t0: float, t1: float) -> int:
    return bisect_right(series.t, t1) - bisect_left(series.t, t0)


def _node_values(group: Sequence[Points], t0: float, width: float, centres: Sequence[float]) -> tuple[float, ...]:
    """Per bucket, the mean of the node's series that have a value there."""
    columns = [_resample(series, t0, width, centres) for series in group]
    if not columns:
        return tuple(math.nan for _ in centres)
    out = []
    for values in zip(*columns):
        finite = [v for v in values if math.isfinite(v)]
        out.append(sum(finite) / len(finite) if finite else math.nan)
    return tuple(out)


def _resample(series: Points, t0: float, width: float, centres: Sequence[float]) -> list[float]:
    times, means = series.t, series.mean
    count = len(centres)
    # Bucket i holds the points with index edges[i] <= k < edges[i + 1]; the last bucket keeps t1.
    edges = [bisect_left(times, t0 + i * width) for i in range(count)]
    edges.append(bisect_right(times, t0 + count * width))
    interval = _usual_interval(times, max(0, edges[0] - 1), min(len(times), edges[-1] + 1))
    out = []
    for index, centre in enumerate(centres):
        first, stop = edges[index], edges[index + 1]
        if stop > first:
            out.append(_mean_of(_slice(means, first, stop)))
        else:
            out.append(_between(times, means, first, centre, interval))
    return out


def _slice(values: Sequence[float], start: int, stop: int) -> Sequence[float]:
    try:
        return values[start:stop]
    except TypeError:  # e.g. a deque
        return list(islice(values, start, stop))


def _mean_of(values: Sequence[float]) -> float:
    """The mean of the finite values (NaN when none is)."""
    total = sum(values)
    if math.isfinite(total):
        return total / len(values)
    finite = [v for v in values if math.isfinite(v)]
    return sum(finite) / len(finite) if finite else math.nan


_INTERVAL_SAMPLES = 64


def _usual_interval(times: Sequence[float], start: int, stop: int) -> float:
    """The median spacing of points ``start`` to ``stop`` (0 with fewer than two), from a sample of them."""
    stride = max(1, (stop - start) // _INTERVAL_SAMPLES)
    steps = []
    for k in range(start + 1, stop, stride):
        step = times[k] - times[k - 1]
        if step > 0:
            steps.append(step)
    return median(steps) if steps else 0.0


def _between(times: Sequence[float], values: Sequence[float], after: int, centre: float, interval: float) -> float:
    """The series' value at ``centre`` from its neighbours (``after`` is the first point past it), or NaN across a gap.

    Past its first or last point a series holds its value for one usual
    interval: nodes sample at their own instants, and the newest bucket
    should not lose the nodes that have not reported in it yet. A
    non-finite neighbour is a gap.
    """
    before = after - 1
    has_before, has_after = before >= 0, after < len(times)
    if has_before and has_after:
        span = times[after] - times[before]
        if span > _GAP_INTERVALS * interval:
            return math.nan
        share = (centre - times[before]) / span if span > 0 else 0.0
        return values[before] + (values[after] - values[before]) * share
    if has_before and centre - times[before] <= interval:
        return values[before]
    if has_after and times[after] - centre <= interval:
        return values[after]
    return math.nan


def _finite_mean(values: Sequence[float]) -> float | None:
    finite = [v for v in values if math.isfinite(v)]
    return sum(finite) / len(finite) if finite else None


__all__ = ["SPREAD_BUCKETS", "Outlier", "Points", "Spread", "find_outlier", "node_levels", "node_spread"]
