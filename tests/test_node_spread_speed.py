"""The spread across nodes gives what it gave before it was made fast, on random inputs.

``reference_spread`` below is the straightforward version ``node_spread``
replaced: every series resampled bucket by bucket on its own. The fast one
works out how a list of times falls into the buckets once and reuses it for
every series with those times; the charts must not see the difference. The
inputs are random: NaN gaps and infinities, series of unequal lengths, times
shared between series or not, nodes that stopped reporting, denser and
sparser series than the buckets, integers, deques, and labels in no order.
"""

from __future__ import annotations

import math
import random
from array import array
from bisect import bisect_left, bisect_right
from collections import deque
from itertools import islice
from statistics import median

import pytest

from leet.model.node_spread import SPREAD_BUCKETS, Spread, find_outlier, node_levels, node_spread
from widgets.raster import SeriesView

# -- the reference: node_spread as it was, bucket by bucket --------------------------------

_GAP_INTERVALS = 3.0
_INTERVAL_SAMPLES = 64


def reference_spread(nodes, x_range, buckets=SPREAD_BUCKETS):
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


def _points_in(series, t0, t1):
    return bisect_right(series.t, t1) - bisect_left(series.t, t0)


def _node_values(group, t0, width, centres):
    columns = [_resample(series, t0, width, centres) for series in group]
    if not columns:
        return tuple(math.nan for _ in centres)
    out = []
    for values in zip(*columns):
        finite = [v for v in values if math.isfinite(v)]
        out.append(sum(finite) / len(finite) if finite else math.nan)
    return tuple(out)


def _resample(series, t0, width, centres):
    times, means = series.t, series.mean
    count = len(centres)
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


def _slice(values, start, stop):
    try:
        return values[start:stop]
    except TypeError:
        return list(islice(values, start, stop))


def _mean_of(values):
    total = sum(values)
    if math.isfinite(total):
        return total / len(values)
    finite = [v for v in values if math.isfinite(v)]
    return sum(finite) / len(finite) if finite else math.nan


def _usual_interval(times, start, stop):
    stride = max(1, (stop - start) // _INTERVAL_SAMPLES)
    steps = []
    for k in range(start + 1, stop, stride):
        step = times[k] - times[k - 1]
        if step > 0:
            steps.append(step)
    return median(steps) if steps else 0.0


def _between(times, values, after, centre, interval):
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


# -- comparing ------------------------------------------------------------------------------


def same_numbers(a, b) -> bool:
    """Equal element by element, NaN matching NaN."""
    return len(a) == len(b) and all(x == y or (math.isnan(x) and math.isnan(y)) for x, y in zip(a, b))


def assert_same_spread(fast: Spread | None, slow: Spread | None) -> None:
    assert (fast is None) == (slow is None)
    if fast is None or slow is None:
        return
    assert same_numbers(fast.t, slow.t)
    assert same_numbers(fast.lo, slow.lo)
    assert same_numbers(fast.median, slow.median)
    assert same_numbers(fast.hi, slow.hi)
    assert list(fast.nodes) == list(slow.nodes)
    for label in slow.nodes:
        assert same_numbers(fast.nodes[label], slow.nodes[label]), label
    assert node_levels(fast) == node_levels(slow)
    assert find_outlier(node_levels(fast)) == find_outlier(node_levels(slow))


# -- random clusters ------------------------------------------------------------------------


def random_times(rng: random.Random, span: float) -> list[float]:
    """Sample instants over about ``span``: regular, jittered, bursty, sparse, or none."""
    kind = rng.choice(("regular", "jitter", "burst", "sparse", "empty", "one"))
    if kind == "empty":
        return []
    if kind == "one":
        return [rng.uniform(-0.2 * span, 1.2 * span)]
    start = rng.uniform(-0.3 * span, 0.5 * span)
    end = rng.uniform(start + 1.0, 1.3 * span)
    step = rng.choice((0.5, 1.0, 2.0, 5.0, 15.0, span / 7)) * rng.uniform(0.5, 2.0)
    times = []
    t = start
    while t < end and len(times) < 2000:
        times.append(t)
        if kind == "regular":
            t += step
        elif kind == "jitter":
            t += step * rng.uniform(0.6, 1.4)
        elif kind == "burst":
            t += step * (0.01 if rng.random() < 0.5 else rng.uniform(1.0, 20.0))
        else:
            t += step * rng.uniform(5.0, 40.0)
    return times


def random_values(rng: random.Random, times: list[float]) -> list[float]:
    level = rng.uniform(-50.0, 150.0)
    values = [level + rng.gauss(0.0, 10.0) for _ in times]
    holes = rng.random()
    for index in range(len(values)):
        roll = rng.random()
        if roll < holes * 0.15:
            values[index] = math.nan
        elif roll < holes * 0.17:
            values[index] = rng.choice((math.inf, -math.inf))
    if values and rng.random() < 0.1:
        values = [math.nan] * len(values)  # a series that never had a reading
    if rng.random() < 0.1:
        values = [float(round(v)) if math.isfinite(v) else v for v in values]
    return values


def as_kind(rng: random.Random, values: list[float]):
    """The containers series come in: the store's arrays, lists, tuples, now and then a deque."""
    kind = rng.choice(("array", "array", "list", "tuple", "deque"))
    if kind == "array":
        return array("d", values)
    if kind == "tuple":
        return tuple(values)
    if kind == "deque":
        return deque(values)
    return list(values)


def random_cluster(rng: random.Random, span: float) -> dict[str, list[SeriesView]]:
    """Nodes in no particular order, each with a few series; a node's series often share their times, nodes often share a grid."""
    shared_grid = random_times(rng, span) if rng.random() < 0.6 else None
    names = [f"node{i}" for i in range(rng.randint(2, 24))]
    rng.shuffle(names)
    nodes: dict[str, list[SeriesView]] = {}
    for name in names:
        own = shared_grid if shared_grid is not None and rng.random() < 0.8 else random_times(rng, span)
        if own and rng.random() < 0.15:
            own = own[: rng.randint(0, len(own))]  # stopped reporting
        series = []
        for _ in range(rng.choice((0, 1, 1, 2, 4, 8))):
            times = own if rng.random() < 0.85 else random_times(rng, span)
            values = random_values(rng, times)
            t = as_kind(rng, times)
            series.append(SeriesView(t, values, values, as_kind(rng, values)))
        nodes[name] = series
    return nodes


@pytest.mark.parametrize("seed", range(60))
def test_the_spread_is_what_it_was_on_random_clusters(seed):
    rng = random.Random(seed)
    span = rng.choice((60.0, 600.0, 3600.0))
    nodes = random_cluster(rng, span)
    x_range = (rng.uniform(-0.1 * span, 0.2 * span), span * rng.uniform(0.8, 1.1))
    buckets = rng.choice((SPREAD_BUCKETS, SPREAD_BUCKETS, 1, 7, 76, 500))
    assert_same_spread(node_spread(nodes, x_range, buckets), reference_spread(nodes, x_range, buckets))


def test_a_big_cluster_on_one_grid_is_what_it_was():
    # 64 nodes × 8 GPUs on one grid of steps, as a Prometheus range answer and live points give them.
    rng = random.Random(7)
    grid = [1000.0 + 48.0 * i for i in range(75)] + [1000.0 + 48.0 * 75 + 15.0 * i for i in range(40)]
    nodes = {}
    for node in rng.sample(range(64), 64):
        stop = len(grid) if node != 41 else 60
        nodes[f"node{node:02d}"] = [SeriesView.points(array("d", grid[:stop]), array("d", random_values(rng, grid[:stop]))) for _ in range(8)]
    for x_range in ((grid[0], grid[0] + 3600.0), (grid[-1] - 3600.0, grid[-1]), (grid[10], grid[-1] + 900.0)):
        assert_same_spread(node_spread(nodes, x_range), reference_spread(nodes, x_range))


def test_bad_ranges_and_too_few_nodes_are_still_no_spread():
    one = {"a": [SeriesView.points([0.0, 1.0], [1.0, 2.0])]}
    two = {**one, "b": [SeriesView.points([0.0, 1.0], [3.0, 4.0])]}
    assert node_spread(one, (0.0, 1.0)) is None
    for x_range in ((1.0, 1.0), (2.0, 1.0), (math.nan, 1.0), (0.0, math.inf)):
        assert node_spread(two, x_range) is None
    empty = {"a": [], "b": [SeriesView.points([], [])]}
    assert_same_spread(node_spread(empty, (0.0, 10.0)), reference_spread(empty, (0.0, 10.0)))
