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
from array import array
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from itertools import compress, repeat
from operator import add, itemgetter, mul, not_, sub, truediv
from statistics import median
from typing import Mapping, Protocol, Sequence

from leet.common.units import format_value

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
    groups = {label: [_Columns(series) for series in group] for label, group in nodes.items()}
    count = max(1, min(buckets, max((_points_in(s.t, t0, t1) for group in groups.values() for s in group), default=1)))
    width = (t1 - t0) / count
    centres = tuple(t0 + (i + 0.5) * width for i in range(count))
    per_node = _per_node(groups, _Plans(t0, width, centres))
    lo, middle, hi = [], [], []
    for values in zip(*per_node.values()):
        finite = values if math.isfinite(sum(values)) else list(filter(math.isfinite, values))
        if finite:
            lo.append(min(finite))
            middle.append(_median(sorted(finite)))
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
#
# A chart holds hundreds of series (64 nodes × 8 GPUs) that mostly share their
# sample times: a Prometheus range answer is on one grid of steps, and a node's
# GPUs are sampled together. So how a list of times falls into the buckets (a
# bucket holding one point, several, or none and a line between neighbours) is
# worked out once (``_Plan``), and the series with those times are then taken
# together: one row per bucket holding each series' value there, built with
# ``zip`` and ``map`` over builtins, and each node's mean is the sum of its
# slice of the row. The arithmetic is the same, in the same order, as resampling
# each series bucket by bucket and averaging a node's series.


class _Columns:
    """A series' times and means as sequences that can be indexed and sliced, and its times as a key."""

    __slots__ = ("t", "mean", "key")

    def __init__(self, series: Points) -> None:
        self.t = _indexable(series.t)
        self.mean = _indexable(series.mean)
        # The store's arrays compare as bytes (one memcmp); identical bytes are identical times.
        self.key = (self.t.typecode, self.t.tobytes()) if type(self.t) is array else tuple(self.t)


def _indexable(values: Sequence[float]) -> Sequence[float]:
    return values if type(values) in _SLICEABLE else list(values)  # e.g. a deque


_SLICEABLE = (list, tuple, array)


class _Plan:
    """How one list of times falls into the buckets: what each bucket takes from a series with those times.

    Indices count from ``start``, the first point any bucket reads. ``pick[i]``
    is the point bucket ``i`` takes as it is (its only point, or a neighbour
    held past the series' first or last point); the buckets in ``lerp_at``
    draw a line between two neighbours, those in ``gaps`` have no value, and
    those in ``means_at`` average several points. ``empty``: no bucket reads
    a point.
    """

    def __init__(self, times: Sequence[float], t0: float, width: float, centres: Sequence[float]) -> None:
        count = len(centres)
        self.pick = [0] * count
        self.lerp_at: list[int] = []
        self.lerp_before: list[int] = []
        self.lerp_after: list[int] = []
        self.lerp_share: list[float] = []
        self.gaps: list[int] = []
        self.means_at: list[int] = []
        self.means_slice: list[slice] = []
        self.means_count: list[int] = []
        self._gap_set: frozenset[int] | None = None
        picked = [False] * count
        if times:
            # Bucket i holds the points with index edges[i] <= k < edges[i + 1]; the last bucket keeps t1.
            edges = list(map(bisect_left, repeat(times, count), [t0 + i * width for i in range(count)]))
            edges.append(bisect_right(times, t0 + count * width))
            interval = _usual_interval(times, max(0, edges[0] - 1), min(len(times), edges[-1] + 1))
            for index, centre in enumerate(centres):
                first, stop = edges[index], edges[index + 1]
                if stop - first == 1:
                    self.pick[index], picked[index] = first, True
                elif stop > first:
                    self.means_at.append(index)
                    self.means_slice.append(slice(first, stop))
                    self.means_count.append(stop - first)
                else:
                    picked[index] = self._between(times, index, first, centre, interval)
        else:
            self.gaps = list(range(count))
        read = [k for k, chosen in zip(self.pick, picked) if chosen] + self.lerp_before + self.lerp_after
        read += [part.start for part in self.means_slice] + [part.stop - 1 for part in self.means_slice]
        self.empty = not read
        self.start, self.stop = (min(read), max(read) + 1) if read else (0, 0)
        if self.start:
            shift = self.start
            self.pick = [k - shift if chosen else 0 for k, chosen in zip(self.pick, picked)]
            self.lerp_before = [k - shift for k in self.lerp_before]
            self.lerp_after = [k - shift for k in self.lerp_after]
            self.means_slice = [slice(part.start - shift, part.stop - shift) for part in self.means_slice]

    def _between(self, times: Sequence[float], index: int, after: int, centre: float, interval: float) -> bool:
        """Places a bucket with no point of its own (``after`` is the first point past it); True when it picks one.

        Between neighbours it draws a line, unless they are a gap apart. Past
        its first or last point a series holds its value for one usual
        interval: nodes sample at their own instants, and the newest bucket
        should not lose the nodes that have not reported in it yet.
        """
        before = after - 1
        has_before, has_after = before >= 0, after < len(times)
        if has_before and has_after:
            span = times[after] - times[before]
            if span > _GAP_INTERVALS * interval:
                self.gaps.append(index)
                return False
            self.lerp_at.append(index)
            self.lerp_before.append(before)
            self.lerp_after.append(after)
            self.lerp_share.append((centre - times[before]) / span if span > 0 else 0.0)
            return False
        if has_before and centre - times[before] <= interval:
            self.pick[index] = before
            return True
        if has_after and times[after] - centre <= interval:
            self.pick[index] = after
            return True
        self.gaps.append(index)
        return False

    def gap_set(self) -> frozenset[int]:
        """The buckets where a series with these times has no value."""
        if self._gap_set is None:
            self._gap_set = frozenset(range(len(self.pick))) if self.empty else frozenset(self.gaps)
        return self._gap_set

    def rows(self, columns: Sequence[Sequence[float]]) -> list[Sequence[float]]:
        """Per bucket, each series' value there, for series with these times (their means in ``columns``).

        A bucket that takes one point takes it as it is, non-finite or not
        (a node's mean leaves those out either way); one that averages several
        points averages the finite ones.
        """
        count = len(self.pick)
        blank = (math.nan,) * len(columns)
        if self.empty:
            return [blank] * count
        points = list(zip(*[column[self.start : self.stop] for column in columns]))
        rows: list[Sequence[float]] = list(map(points.__getitem__, self.pick))
        for at, before, after, share in zip(self.lerp_at, self.lerp_before, self.lerp_after, self.lerp_share):
            low, high = points[before], points[after]
            rows[at] = tuple(map(add, low, map(mul, map(sub, high, low), repeat(share))))
        for at, part, size in zip(self.means_at, self.means_slice, self.means_count):
            # Two points (a bucket edge on a sample) are the most common: a + b is what sum() gives for them.
            totals = list(map(add, points[part.start], points[part.start + 1]) if size == 2 else map(sum, zip(*points[part])))
            means = list(map(truediv, totals, repeat(size)))
            if not math.isfinite(sum(totals)):
                for series, total in enumerate(totals):
                    if not math.isfinite(total):
                        means[series] = _mean_of(columns[series][self.start : self.stop][part])
            rows[at] = means
        for at in self.gaps:
            rows[at] = blank
        return rows


class _Plans:
    """One ``_Plan`` per distinct list of times, for one set of buckets."""

    def __init__(self, t0: float, width: float, centres: Sequence[float]) -> None:
        self.t0, self.width, self.centres = t0, width, centres
        self._known: dict[object, _Plan] = {}

    def of(self, series: _Columns) -> _Plan:
        plan = self._known.get(series.key)
        if plan is None:
            plan = self._known[series.key] = _Plan(series.t, self.t0, self.width, self.centres)
        return plan


def _points_in(times: Sequence[float], t0: float, t1: float) -> int:
    return bisect_right(times, t1) - bisect_left(times, t0)


def _per_node(groups: Mapping[str, Sequence[_Columns]], plans: _Plans) -> dict[str, tuple[float, ...]]:
    """Each node's value per bucket: the mean of its series that have a finite value there.

    A node whose series all have the same times joins every other such node
    of those times in one set of rows; a node whose series were sampled
    apart is resampled series by series.
    """
    found: dict[str, tuple[float, ...]] = {}
    shared: dict[_Plan, tuple[list[Sequence[float]], list[tuple[str, int, int]]]] = {}
    for label, group in groups.items():
        if not group:
            found[label] = tuple(math.nan for _ in plans.centres)
            continue
        key = group[0].key
        if all(series.key == key for series in group):
            columns, members = shared.setdefault(plans.of(group[0]), ([], []))
            members.append((label, len(columns), len(group)))
            columns.extend(series.mean for series in group)
        else:
            found[label] = _node_values([plans.of(series).rows([series.mean]) for series in group])
    for plan, (columns, members) in shared.items():
        rows = plan.rows(columns)
        for label, offset, size in members:
            found[label] = _node_of(rows, offset, size, plan.gap_set())
    return {label: found[label] for label in groups}


def _node_of(rows: Sequence[Sequence[float]], offset: int, size: int, gaps: frozenset[int]) -> tuple[float, ...]:
    """A node's mean per bucket from its ``size`` series at ``offset`` in ``rows``; ``gaps``: buckets none of them has."""
    if size == 1:  # a node's one series: its own value (a sum of one is that value)
        totals = list(map(itemgetter(offset), rows))
    else:
        totals = list(map(sum, map(itemgetter(slice(offset, offset + size)), rows)))
    out = list(map(truediv, totals, repeat(size)))
    if not math.isfinite(sum(totals)):
        for index in set(compress(range(len(totals)), map(not_, map(math.isfinite, totals)))) - gaps:
            out[index] = _finite_mean_or_nan(rows[index][offset : offset + size])
    return tuple(out)


def _node_values(series_rows: Sequence[Sequence[Sequence[float]]]) -> tuple[float, ...]:
    """A node's mean per bucket from each of its series' one-value rows (series sampled apart)."""
    columns = [list(map(itemgetter(0), rows)) for rows in series_rows]
    totals = list(map(sum, zip(*columns)))
    size = len(columns)
    out = list(map(truediv, totals, repeat(size)))
    if not math.isfinite(sum(totals)):
        for index in compress(range(len(totals)), map(not_, map(math.isfinite, totals))):
            out[index] = _finite_mean_or_nan([column[index] for column in columns])
    return tuple(out)


def _finite_mean_or_nan(values: Sequence[float]) -> float:
    finite = list(filter(math.isfinite, values))
    return sum(finite) / len(finite) if finite else math.nan


def _mean_of(values: Sequence[float]) -> float:
    """The mean of the finite values (NaN when none is)."""
    total = sum(values)
    if math.isfinite(total):
        return total / len(values)
    return _finite_mean_or_nan(values)


def _median(ordered: Sequence[float]) -> float:
    """``statistics.median`` of values already sorted."""
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


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


def _finite_mean(values: Sequence[float]) -> float | None:
    if values:
        total = sum(values)
        if math.isfinite(total):
            return total / len(values)
    finite = list(filter(math.isfinite, values))
    return sum(finite) / len(finite) if finite else None


__all__ = ["SPREAD_BUCKETS", "Outlier", "Points", "Spread", "find_outlier", "node_levels", "node_spread"]
