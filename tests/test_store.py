"""Series memory: folding maths, bounded size, snapshots, labels and threads."""

from __future__ import annotations

import math
import random
import threading
import tracemalloc

import pytest

from leet.model.store import SeriesKey, Store

CPU = SeriesKey("live", "cpu", None)


def test_recent_points_are_kept_exactly():
    store = Store(capacity=8, fold=2, levels=3)
    for i in range(5):
        store.append(CPU, float(i), i * 10.0)
    data = store.snapshot([CPU])[CPU]
    assert list(data.t) == [0, 1, 2, 3, 4]
    assert list(data.lo) == list(data.hi) == list(data.mean) == [0, 10, 20, 30, 40]


def test_full_level_folds_oldest_points_into_a_min_max_mean_bucket():
    store = Store(capacity=4, fold=2, levels=3)
    for t, v in enumerate([5.0, 1.0, 7.0, 3.0, 9.0]):
        store.append(CPU, float(t), v)
    data = store.snapshot([CPU])[CPU]
    # (t=0, 5) and (t=1, 1) became one bucket stamped with its last time.
    assert list(data.t) == [1, 2, 3, 4]
    assert (data.lo[0], data.hi[0], data.mean[0]) == (1.0, 5.0, 3.0)
    assert list(data.mean[1:]) == [7.0, 3.0, 9.0]


def test_coarser_buckets_weight_the_mean_by_point_count():
    store = Store(capacity=2, fold=2, levels=3)
    values = [1.0, 2.0, 3.0, 10.0, 20.0, 30.0, 40.0, 50.0]
    for t, v in enumerate(values):
        store.append(CPU, float(t), v)
    data = store.snapshot([CPU])[CPU]
    # level 2 holds the first four points folded twice, level 1 the next two
    # as one bucket, level 0 the newest two points.
    assert list(data.t) == [3, 5, 6, 7]
    assert (data.lo[0], data.hi[0], data.mean[0]) == (1.0, 10.0, 4.0)
    assert (data.lo[1], data.hi[1], data.mean[1]) == (20.0, 30.0, 25.0)
    assert list(data.mean[2:]) == [40.0, 50.0]
    # A fold larger than two takes the whole group at once.
    store = Store(capacity=3, fold=3, levels=2)
    for t, v in enumerate([0.0, 3.0, 6.0, 9.0]):
        store.append(CPU, float(t), v)
    data = store.snapshot([CPU])[CPU]
    assert (data.t[0], data.lo[0], data.hi[0], data.mean[0]) == (2.0, 0.0, 6.0, 3.0)


def test_mean_of_buckets_with_different_counts():
    # NaN points do not count, so buckets end up with 1 and 2 points.
    store = Store(capacity=2, fold=2, levels=3)
    for t, v in enumerate([math.nan, 4.0, 1.0, 2.0, 100.0, 100.0, 100.0]):
        store.append(CPU, float(t), v)
    data = store.snapshot([CPU])[CPU]
    assert data.t[0] == 3.0
    assert data.mean[0] == pytest.approx((4.0 + 1.0 + 2.0) / 3)
    assert (data.lo[0], data.hi[0]) == (1.0, 4.0)


def test_nan_and_inf_are_stored_as_given():
    store = Store(capacity=2, fold=2, levels=2)
    store.append(CPU, 0.0, math.nan)
    store.append(CPU, 1.0, math.nan)
    store.append(CPU, 2.0, math.inf)
    data = store.snapshot([CPU])[CPU]
    assert math.isnan(data.lo[0]) and math.isnan(data.hi[0]) and math.isnan(data.mean[0])
    assert data.mean[-1] == math.inf
    assert store.latest(CPU) == (2.0, math.inf)


def test_last_level_drops_its_oldest_entry():
    store = Store(capacity=2, fold=2, levels=1)
    for t in range(5):
        store.append(CPU, float(t), float(t))
    assert list(store.snapshot([CPU])[CPU].t) == [3, 4]


def test_size_stays_bounded_after_100k_points():
    store = Store(capacity=128, fold=4, levels=3)
    for i in range(100_000):
        store.append(CPU, float(i), float(i % 7))
    assert store.entry_count(CPU) <= 3 * 128
    data = store.snapshot([CPU])[CPU]
    assert len(data.t) == store.entry_count(CPU)
    assert list(data.t) == sorted(data.t)
    assert data.t[-1] == 99_999
    assert min(data.lo) == 0.0 and max(data.hi) == 6.0  # the envelope survives folding


def test_ten_minute_run_of_sixty_series_at_a_tenth_of_a_second():
    store = Store()
    values = {(f"cpu.{i}.cpu_percent", None): float(i) for i in range(60)}
    for step in range(6000):
        store.append_many("live", step * 0.1, values)
    assert len(store) == 60
    assert all(store.entry_count(key) <= 5 * 1024 for key in store.series())


def test_memory_stays_flat_once_levels_are_full():
    store = Store(capacity=64, fold=4, levels=3)
    keys = [SeriesKey("live", f"gpu.{i}.gpu", None) for i in range(4)]
    t = 0.0
    for _ in range(2000):  # > 64 * (1 + 4 + 16) points: every level is full
        t += 0.1
        for key in keys:
            store.append(key, t, 50.0)
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        for _ in range(5000):
            t += 0.1
            for key in keys:
                store.append(key, t, 50.0)
        after, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert after - before < 16 * 1024


def test_snapshot_since_keeps_one_entry_before_the_window():
    store = Store()
    for t in range(10):
        store.append(CPU, float(t), float(t))
    assert list(store.snapshot([CPU], since=6.0)[CPU].t) == [5, 6, 7, 8, 9]
    assert list(store.snapshot([CPU], since=6.5)[CPU].t) == [6, 7, 8, 9]
    assert list(store.snapshot([CPU], since=-1.0)[CPU].t) == list(range(10))
    assert list(store.snapshot([CPU], since=100.0)[CPU].t) == [9]


def test_snapshot_leaves_out_unknown_series_and_is_a_copy():
    store = Store()
    store.append(CPU, 1.0, 1.0)
    other = SeriesKey("live", "nope", None)
    snap = store.snapshot([CPU, other])
    assert list(snap) == [CPU]
    snap[CPU].mean[0] = 99.0
    assert store.snapshot([CPU])[CPU].mean[0] == 1.0


def test_out_of_order_points_come_back_sorted():
    store = Store(capacity=4, fold=2, levels=2)
    for t in [1.0, 2.0, 5.0, 3.0, 4.0, 6.0]:
        store.append(CPU, t, t * 10)
    data = store.snapshot([CPU])[CPU]
    assert list(data.t) == sorted(data.t)
    assert store.latest(CPU) == (6.0, 60.0)
    assert list(store.snapshot([CPU], since=4.5)[CPU].t) == [4.0, 5.0, 6.0]


def test_latest_is_the_newest_point_by_time():
    store = Store()
    assert store.latest(CPU) is None
    store.append(CPU, 10.0, 1.0)
    store.append(CPU, 9.0, 2.0)  # a late point from another writer
    assert store.latest(CPU) == (10.0, 1.0)


def test_append_many_takes_node_labels_apart_from_keys():
    store = Store()
    store.append_many("run1", 1.0, {("gpu.0.gpu", "rank0"): 10, ("gpu.0.gpu", "rank1"): 20, ("cpu", None): 5})
    assert store.series("run1") == [
        SeriesKey("run1", "gpu.0.gpu", "rank0"),
        SeriesKey("run1", "gpu.0.gpu", "rank1"),
        SeriesKey("run1", "cpu", None),
    ]
    assert store.latest_values("run1") == {
        SeriesKey("run1", "gpu.0.gpu", "rank0"): 10.0,
        SeriesKey("run1", "gpu.0.gpu", "rank1"): 20.0,
        SeriesKey("run1", "cpu", None): 5.0,
    }


def test_series_keep_first_seen_order_per_run():
    store = Store()
    store.append_many("a", 1.0, {("x", None): 1, ("y", None): 2})
    store.append_many("b", 1.0, {("z", None): 1})
    store.append_many("a", 2.0, {("w", None): 1, ("x", None): 3})
    assert [s.key for s in store.series()] == ["x", "y", "z", "w"]
    assert [s.key for s in store.series("a")] == ["x", "y", "w"]
    assert store.series("missing") == []
    assert len(store) == 4
    assert store.runs() == ["a", "b"]


def test_bad_values_are_skipped_and_the_rest_kept(caplog):
    store = Store()
    skipped = store.append_many("r", 1.0, {("good", None): 1.5, ("bad", None): "n/a", ("none", None): None, ("also", "x"): "2"})
    assert skipped == (("bad", None), ("none", None))
    assert {s.key: v for s, v in store.latest_values("r").items()} == {"good": 1.5, "also": 2.0}
    store.append_many("r", 1.0, {("lbl", "node1"): "?"})
    assert "non-numeric value '?' for lbl/l:node1" in caplog.text  # logs name the key as W&B writes it
    assert "ignoring non-numeric value 'n/a' for bad" in caplog.text
    with pytest.raises(ValueError, match="finite"):
        store.append_many("r", math.nan, {("good", None): 1.0})
    with pytest.raises(ValueError):
        store.append(CPU, 1.0, "n/a")  # type: ignore[arg-type]


def test_invalid_settings_are_refused():
    with pytest.raises(ValueError, match="fold"):
        Store(capacity=4, fold=8)
    with pytest.raises(ValueError, match="levels"):
        Store(levels=0)


def test_versions_change_only_with_writes():
    store = Store()
    other = SeriesKey("live", "memory_percent", None)
    v0 = store.version()
    store.append(CPU, 1.0, 1.0)
    v1 = store.version()
    assert v1 != v0
    store.snapshot([CPU])
    store.latest_values("live")
    assert store.version() == v1
    cpu_version = store.series_version(CPU)
    store.append(other, 1.0, 1.0)
    assert store.series_version(CPU) == cpu_version
    assert store.series_version(other) != 0
    store.append_many("live", 2.0, {("cpu", None): 2.0})
    assert store.series_version(CPU) != cpu_version
    assert store.version() != v1
    assert store.series_version(SeriesKey("x", "y", None)) == 0


def test_drop_run_forgets_its_series():
    store = Store()
    store.append_many("a", 1.0, {("x", None): 1})
    store.append_many("b", 1.0, {("x", None): 1})
    assert store.drop_run("a") == 1
    assert store.series() == [SeriesKey("b", "x", None)]
    assert store.latest(SeriesKey("a", "x", None)) is None


def test_writers_and_a_reader_can_share_the_store():
    store = Store(capacity=64, fold=4, levels=3)
    shared = SeriesKey("run", "shared", None)
    errors: list[BaseException] = []
    per_writer = 3000

    def write(name: str, offset: float) -> None:
        try:
            for i in range(per_writer):
                t = i + offset
                store.append_many("run", t, {(f"{name}.value", None): float(i), ("shared", None): float(i)})
        except BaseException as exc:  # noqa: BLE001 - reported by the assert below
            errors.append(exc)

    def read(stop: threading.Event) -> None:
        try:
            while not stop.is_set():
                for data in store.snapshot(store.series("run"), since=100.0).values():
                    assert list(data.t) == sorted(data.t)
                store.latest_values("run")
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    stop = threading.Event()
    reader = threading.Thread(target=read, args=(stop,))
    writers = [threading.Thread(target=write, args=(n, o)) for n, o in (("a", 0.0), ("b", 0.5))]
    reader.start()
    for thread in writers:
        thread.start()
    for thread in writers:
        thread.join()
    stop.set()
    reader.join()
    assert errors == []
    assert store.latest(SeriesKey("run", "a.value", None)) == (per_writer - 1, per_writer - 1)
    assert store.latest(shared) == (per_writer - 0.5, per_writer - 1)
    assert store.entry_count(shared) <= 3 * 64
    data = store.snapshot([shared])[shared]
    assert list(data.t) == sorted(data.t)


# --- bulk writes ----------------------------------------------------------------


def _same_number(a: float, b: float, rel: float = 0.0) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b or math.isclose(a, b, rel_tol=rel)


def _assert_same_series(bulk: Store, single: Store, key: SeriesKey = CPU) -> None:
    """What a chart draws from both stores is the same (means to rounding)."""
    got, want = bulk.snapshot([key])[key], single.snapshot([key])[key]
    assert list(got.t) == list(want.t)
    for column in ("lo", "hi", "mean"):
        pairs = zip(getattr(got, column), getattr(want, column))
        assert all(_same_number(g, w, rel=1e-9) for g, w in pairs), column
    (t1, v1), (t2, v2) = bulk.latest(key), single.latest(key)  # type: ignore[misc]
    assert t1 == t2 and _same_number(v1, v2)
    assert bulk.entry_count(key) == single.entry_count(key)


def _random_stream(rng: random.Random, n: int, shuffled: bool) -> tuple[list[float], list[float]]:
    times = [float(i) for i in range(n)]
    if shuffled:  # a second writer's points arrive late
        for _ in range(n // 10):
            i, j = rng.randrange(n), rng.randrange(n)
            times[i], times[j] = times[j], times[i]
    special = [math.nan, math.inf, -math.inf]
    values = [
        rng.choice(special) if rng.random() < 0.05 else rng.uniform(-100, 100) for _ in range(n)
    ]
    return times, values


def _split(rng: random.Random, n: int, largest: int) -> list[slice]:
    cuts, start = [], 0
    while start < n:
        size = rng.randint(1, largest)
        cuts.append(slice(start, start + size))
        start += size
    return cuts


@pytest.mark.parametrize("shuffled", [False, True])
def test_extend_matches_point_by_point_appends(shuffled):
    rng = random.Random(7 + shuffled)
    for _ in range(60):
        capacity = rng.choice([2, 3, 5, 8, 16])
        settings = dict(capacity=capacity, fold=rng.randint(2, capacity), levels=rng.randint(1, 4))
        times, values = _random_stream(rng, rng.randint(1, 500), shuffled)
        single, bulk = Store(**settings), Store(**settings)
        for t, v in zip(times, values):
            single.append(CPU, t, v)
        for part in _split(rng, len(times), largest=rng.choice([3, 40, 600])):
            bulk.extend(CPU, times[part], values[part])
        _assert_same_series(bulk, single)


def _levels(store: Store, key: SeriesKey):
    """(raw values, bucket (lo, hi, mean, count) rows) held for one series."""
    series = store._series[key]
    raw = series.levels[0].ordered(1).tolist()
    rows = []
    for level in series.levels[1:]:
        rows += zip(*(level.ordered(column) for column in range(1, 5)))
    return raw, rows


def test_extend_loses_and_double_counts_no_point():
    rng = random.Random(3)
    store = Store(capacity=8, fold=2, levels=9)  # room for 4088 points: nothing dropped
    times, values = _random_stream(rng, 3000, shuffled=False)
    values = [v if math.isfinite(v) or math.isnan(v) else 1.0 for v in values]
    for part in _split(rng, len(times), largest=300):
        store.extend(CPU, times[part], values[part])
    raw, rows = _levels(store, CPU)
    real = [v for v in values if not math.isnan(v)]
    raw_real = [v for v in raw if not math.isnan(v)]
    filled = [row for row in rows if row[3] > 0]
    assert sum(row[3] for row in rows) + len(raw_real) == len(real)
    assert min(min(r[0] for r in filled), *raw_real) == min(real)
    assert max(max(r[1] for r in filled), *raw_real) == max(real)
    mean = (sum(r[2] * r[3] for r in filled) + sum(raw_real)) / len(real)
    assert mean == pytest.approx(sum(real) / len(real), rel=1e-9)


def test_many_small_batches_and_one_big_batch_agree():
    times = [float(i) for i in range(50_000)]  # longer than one internal slice
    values = [math.sin(i / 100) * 10 for i in range(50_000)]
    one, many = Store(capacity=16, fold=4, levels=4), Store(capacity=16, fold=4, levels=4)
    one.extend(CPU, times, values)
    for start in range(0, len(times), 1000):
        many.extend(CPU, times[start : start + 1000], values[start : start + 1000])
    _assert_same_series(one, many)
    assert one.latest(CPU) == (49_999.0, values[-1])


def test_batches_straddling_level_boundaries_fold_like_appends():
    single, bulk = Store(capacity=4, fold=2, levels=3), Store(capacity=4, fold=2, levels=3)
    values = [5.0, 1.0, 7.0, 3.0, 9.0, 2.0, 8.0, 4.0, 6.0, 0.0, 11.0, 12.0, 13.0]
    for t, v in enumerate(values):
        single.append(CPU, float(t), v)
    bulk.extend(CPU, [0.0, 1.0, 2.0], values[:3])  # fits, no fold
    bulk.extend(CPU, [3.0, 4.0, 5.0, 6.0, 7.0, 8.0], values[3:9])  # folds twice into level 1
    bulk.extend(CPU, [9.0, 10.0, 11.0, 12.0], values[9:])  # level 1 spills into level 2
    _assert_same_series(bulk, single)
    data = bulk.snapshot([CPU])[CPU]
    assert (data.lo[0], data.hi[0]) == (1.0, 7.0)  # first four points, folded twice


def test_nan_only_chunks_become_gaps_and_do_not_count():
    store = Store(capacity=4, fold=2, levels=3)
    times = [float(t) for t in range(12)]
    values = [math.nan] * 8 + [1.0, 2.0, 3.0, 4.0]
    store.extend(CPU, times, values)
    single = Store(capacity=4, fold=2, levels=3)
    for t, v in zip(times, values):
        single.append(CPU, t, v)
    _assert_same_series(store, single)
    data = store.snapshot([CPU])[CPU]
    assert all(math.isnan(v) for v in data.mean[:-4])  # buckets of NaN only
    assert list(data.mean[-4:]) == [1.0, 2.0, 3.0, 4.0]
    store.extend(CPU, [12.0, 13.0, 14.0, 15.0], [10.0, math.nan, 20.0, 30.0])
    raw, rows = _levels(store, CPU)
    assert sum(row[3] for row in rows) + sum(not math.isnan(v) for v in raw) == 7


def test_infinities_are_kept_in_buckets():
    store = Store(capacity=4, fold=2, levels=2)
    values = [1.0, math.inf, -math.inf, math.inf, 1.0, 2.0, 3.0, 4.0, 5.0, -math.inf]
    store.extend(CPU, [float(t) for t in range(10)], values)
    data = store.snapshot([CPU])[CPU]
    assert (data.lo[0], data.hi[0], data.mean[0]) == (1.0, math.inf, math.inf)
    # +inf and -inf in one bucket: the envelope spans everything, the mean is undefined
    assert (data.lo[1], data.hi[1]) == (-math.inf, math.inf) and math.isnan(data.mean[1])
    assert (data.lo[2], data.hi[2], data.mean[2]) == (1.0, 2.0, 1.5)
    assert list(data.mean[3:]) == [3.0, 4.0, 5.0, -math.inf]


def test_out_of_order_batches_read_back_sorted_with_the_right_latest():
    single, bulk = Store(capacity=8, fold=2, levels=3), Store(capacity=8, fold=2, levels=3)
    batches = [
        [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0],
        [20.0, 15.0, 12.0, 18.0, 11.0, 20.0, 13.0, 14.0, 16.0, 17.0],
        [5.5, 6.5, 7.5, 8.5, 9.5, 10.5, 11.5, 12.5],  # all late
    ]
    start = 0
    for times in batches:
        values = [float(i) for i in range(start, start + len(times))]
        start += len(times)
        bulk.extend(CPU, times, values)
        for t, v in zip(times, values):
            single.append(CPU, t, v)
    _assert_same_series(bulk, single)
    data = bulk.snapshot([CPU])[CPU]
    assert list(data.t) == sorted(data.t)
    assert bulk.latest(CPU) == (20.0, 15.0)  # the last point at the latest time wins


def test_size_stays_bounded_after_a_million_points():
    store = Store(capacity=256, fold=4, levels=4)
    values = [float(i % 11) for i in range(20_000)]
    for start in range(0, 1_000_000, 20_000):
        store.extend(CPU, [float(start + i) for i in range(20_000)], values)
    assert store.entry_count(CPU) <= 4 * 256
    data = store.snapshot([CPU])[CPU]
    assert len(data.t) == store.entry_count(CPU)
    assert list(data.t) == sorted(data.t) and data.t[-1] == 999_999.0
    assert min(data.lo) == 0.0 and max(data.hi) == 10.0


def test_extend_bumps_versions_once_per_call_with_points():
    store = Store()
    v0 = store.version()
    store.extend(CPU, [], [])
    assert store.version() == v0 and store.series_version(CPU) == 0 and len(store) == 0
    store.extend(CPU, [1.0, 2.0], [1.0, 2.0])
    v1, cpu1 = store.version(), store.series_version(CPU)
    assert v1 != v0 and cpu1 != 0
    store.extend(CPU, [float(t) for t in range(3, 100)], [1.0] * 97)
    assert store.version() != v1 and store.series_version(CPU) != cpu1
    v2, cpu2 = store.version(), store.series_version(CPU)
    store.extend_many("live", {("memory_percent", None): ([5.0], [1.0])})
    assert store.version() != v2 and store.series_version(CPU) == cpu2


def test_extend_refuses_bad_points_and_adds_nothing():
    store = Store()
    with pytest.raises(ValueError, match="finite"):
        store.extend(CPU, [1.0, math.nan], [1.0, 2.0])
    with pytest.raises(ValueError, match="'n/a' is not a number"):
        store.extend(CPU, [1.0, 2.0], [1.0, "n/a"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="2 times but 1 values"):
        store.extend(CPU, [1.0, 2.0], [1.0])
    assert store.entry_count(CPU) == 0 and store.version() == 0
    store.extend(CPU, (1, 2, 3), ["4", 5, True])  # anything float() takes, as append
    assert list(store.snapshot([CPU])[CPU].mean) == [4.0, 5.0, 1.0]


def test_extend_many_takes_labelled_series_and_keeps_good_points(caplog):
    store = Store()
    skipped = store.extend_many(
        "run1",
        {
            ("loss", None): ([1.0, 2.0, 3.0], [0.5, 0.4, 0.3]),
            ("gpu.0.gpu", "rank1"): ([1.0, 2.0], [10.0, 20.0]),
            ("acc", None): ([1.0, 2.0, math.inf, 4.0], [0.1, None, 0.3, 0.4]),
            ("empty", None): ([], []),
        },
    )
    assert skipped == (("acc", None),)
    assert "ignoring 2 point(s) of acc" in caplog.text and "None is not a number" in caplog.text
    assert store.series("run1") == [
        SeriesKey("run1", "loss", None),
        SeriesKey("run1", "gpu.0.gpu", "rank1"),
        SeriesKey("run1", "acc", None),
    ]
    acc = store.snapshot([SeriesKey("run1", "acc", None)])[SeriesKey("run1", "acc", None)]
    assert list(acc.t) == [1.0, 4.0] and list(acc.mean) == [0.1, 0.4]
    version = store.version()
    with pytest.raises(ValueError, match="run1, loss"):
        store.extend_many("run1", {("new", None): ([1.0], [1.0]), ("loss", None): ([5.0, 6.0], [1.0])})
    assert store.version() == version and len(store) == 3  # nothing of that batch went in


def test_a_reader_sees_consistent_snapshots_while_a_batch_loads():
    store = Store(capacity=64, fold=4, levels=3)
    errors: list[BaseException] = []
    done = threading.Event()

    def load() -> None:
        try:
            for start in range(0, 100_000, 2_000):
                times = [float(start + i) for i in range(2_000)]
                store.extend_many("run", {(f"m{j}", None): (times, times) for j in range(4)})
        except BaseException as exc:  # noqa: BLE001 - reported by the assert below
            errors.append(exc)
        finally:
            done.set()

    writer = threading.Thread(target=load)
    writer.start()
    try:
        while not done.is_set():
            for data in store.snapshot(store.series("run")).values():
                assert list(data.t) == sorted(data.t)
                assert len(data.t) <= 3 * 64
                assert all(lo <= hi for lo, hi in zip(data.lo, data.hi))
    finally:
        writer.join()
    assert errors == []
    assert store.latest(SeriesKey("run", "m3", None)) == (99_999.0, 99_999.0)


def test_time_span_covers_every_series_of_a_run_including_folded_points():
    store = Store(capacity=8, fold=2, levels=3)
    for i in range(30):
        store.append(SeriesKey("r", "a", None), 100.0 + i, float(i))
    store.append(SeriesKey("r", "b", None), 50.0, 1.0)
    store.append(SeriesKey("other", "a", None), 1.0, 1.0)
    first, last = store.time_span("r")
    assert last == 129.0 and first == 50.0
    assert store.time_span("nothing") is None


def test_keys_are_taken_as_given_even_when_they_look_labelled():
    store = Store()
    store.extend_many("run", {("loss/l:x", None): ([1.0], [0.5])})
    store.extend_many("run#system", {("cpu", "rank1"): ([1.0], [20.0])})
    assert store.series("run") == [SeriesKey("run", "loss/l:x", None)]
    assert store.series("run#system") == [SeriesKey("run#system", "cpu", "rank1")]


def test_the_roster_version_changes_when_a_run_gains_or_loses_a_series():
    store = Store()
    assert store.roster_version("run") == 0
    store.append_many("run", 1.0, {("cpu", None): 1.0})
    first = store.roster_version("run")
    store.append_many("run", 2.0, {("cpu", None): 2.0})
    store.append_many("other", 2.0, {("cpu", None): 2.0})
    assert store.roster_version("run") == first  # new points and other runs' series leave it be
    store.append(SeriesKey("run", "gpu.0.gpu", "rank1"), 2.0, 1.0)
    gained = store.roster_version("run")
    assert gained != first
    store.drop_label("run", "rank1")
    dropped = store.roster_version("run")
    assert dropped not in (first, gained) and store.series("run") == [SeriesKey("run", "cpu", None)]
    store.drop_run("run")
    assert store.roster_version("run") not in (first, gained, dropped)


def test_a_preallocated_store_takes_its_bound_at_once_and_keeps_every_point():
    store = Store(capacity=8, fold=2, levels=3, preallocate=True)
    key = SeriesKey("live", "cpu")
    for i in range(200):
        store.append(key, float(i), float(i % 7))
    lazy = Store(capacity=8, fold=2, levels=3)
    for i in range(200):
        lazy.append(key, float(i), float(i % 7))
    assert store.snapshot([key]) == lazy.snapshot([key]), "the same data either way"
    series = store._series[key]
    assert len(series.levels) == 3 and all(len(level.columns[0]) == 8 for level in series.levels)


def test_only_the_first_series_are_preallocated():
    from leet.model.store import PREALLOCATED_SERIES

    store = Store(capacity=8, fold=2, levels=3, preallocate=True)
    for i in range(PREALLOCATED_SERIES + 2):
        store.append(SeriesKey("live", f"k{i}"), 1.0, 1.0)
    sizes = [len(store._series[SeriesKey("live", f"k{i}")].levels) for i in range(PREALLOCATED_SERIES + 2)]
    assert sizes[:PREALLOCATED_SERIES] == [3] * PREALLOCATED_SERIES and sizes[-2:] == [1, 1]
