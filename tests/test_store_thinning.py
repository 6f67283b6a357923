"""A live chart reads about one entry per dot column: the store folds on read, as it folds old points."""

from __future__ import annotations

import math
import random

import pytest

from leet.model.store import SeriesKey, Store
from leet.ui.views.charts import read_resolution

KEY = SeriesKey("live", "cpu")


def filled(points: int, interval: float = 0.1, seed: int = 7, gaps: bool = False) -> tuple[Store, list[tuple[float, float]]]:
    store = Store(preallocate=True)
    rng = random.Random(seed)
    raw = []
    for i in range(1, points + 1):
        value = math.nan if gaps and rng.random() < 0.05 else rng.uniform(0, 100)
        raw.append((i * interval, value))
        store.append(KEY, i * interval, value)
    return store, raw


def test_a_ten_minute_window_at_a_tenth_of_a_second_reads_as_a_few_hundred_entries():
    store, raw = filled(7000)
    now = raw[-1][0]
    full = store.snapshot([KEY], since=now - 600)[KEY]
    thin = store.snapshot([KEY], since=now - 600, resolution=600 / (4 * 70))[KEY]
    assert len(full.t) > 2000
    assert len(thin.t) < 450
    # The same stretch of time, the same extremes, in time order.
    assert (thin.t[0], thin.t[-1]) == (full.t[0], full.t[-1])
    assert (min(thin.lo), max(thin.hi)) == (min(full.lo), max(full.hi))
    assert all(earlier < later for earlier, later in zip(thin.t, thin.t[1:]))


def test_each_entry_holds_the_extremes_and_mean_of_the_points_it_stands_for():
    store, raw = filled(3000)
    now = raw[-1][0]
    thin = store.snapshot([KEY], since=now - 90, resolution=1.6)[KEY]  # within level 0: raw points
    assert len(thin.t) < 60
    assert now - 92 < thin.t[0] < now - 90  # the line enters from just outside, as with every point
    entries = list(zip(thin.t, thin.lo, thin.hi, thin.mean))
    for (previous, *_), (t, lo, hi, mean) in zip(entries, entries[1:]):
        members = [v for pt, v in raw if previous < pt <= t]
        assert (lo, hi) == (min(members), max(members))
        assert mean == pytest.approx(sum(members) / len(members))


def test_a_new_point_changes_only_the_newest_entry():
    store, raw = filled(5000)
    since = raw[-1][0] - 400
    t = raw[-1][0]
    while True:  # a point that folds nothing in the store
        before = store.snapshot([KEY], since=since, resolution=2.0)[KEY]
        count = store.entry_count(KEY)
        t += 0.1
        store.append(KEY, t, 42.0)
        if store.entry_count(KEY) == count + 1:
            break
    after = store.snapshot([KEY], since=since, resolution=2.0)[KEY]
    assert list(zip(*before))[:-1] == list(zip(*after))[: len(before.t) - 1]


def test_sparse_points_are_read_as_they_are():
    store, raw = filled(400, interval=2.0)
    now = raw[-1][0]
    resolution = read_resolution((now - 600, now), [70])
    assert store.snapshot([KEY], since=now - 600, resolution=resolution) == store.snapshot([KEY], since=now - 600)


def test_gaps_stay_gaps():
    store, raw = filled(4000, gaps=True)
    now = raw[-1][0]
    thin = store.snapshot([KEY], since=now - 300, resolution=1.6)[KEY]
    finite = [m for m in thin.mean if not math.isnan(m)]
    assert finite and len(finite) <= len(thin.mean)
    assert min(thin.lo) >= 0 and max(thin.hi) <= 100


def test_points_out_of_time_order_are_read_whole():
    store = Store()
    for t in (1.0, 3.0, 2.0, 4.0):
        store.append(KEY, t, t)
    assert list(store.snapshot([KEY], since=0.0, resolution=10.0)[KEY].t) == [1.0, 2.0, 3.0, 4.0]


def test_read_resolution_follows_the_widest_chart():
    assert read_resolution((0.0, 600.0), [70, 35]) == pytest.approx(600 / 280)
    assert read_resolution((0.0, 600.0), []) is None
    assert read_resolution((0.0, 0.0), [70]) is None
