"""Series memory: folding maths, bounded size, snapshots, labels and threads."""

from __future__ import annotations

import math
import threading
import tracemalloc

import pytest

from leet.store import SeriesKey, Store

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
    values = {f"cpu.{i}.cpu_percent": float(i) for i in range(60)}
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


def test_append_many_splits_node_labels():
    store = Store()
    store.append_many("run1", 1.0, {"gpu.0.gpu/l:rank0": 10, "gpu.0.gpu/l:rank1": 20, "cpu": 5})
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
    store.append_many("a", 1.0, {"x": 1, "y": 2})
    store.append_many("b", 1.0, {"z": 1})
    store.append_many("a", 2.0, {"w": 1, "x": 3})
    assert [s.key for s in store.series()] == ["x", "y", "z", "w"]
    assert [s.key for s in store.series("a")] == ["x", "y", "w"]
    assert store.series("missing") == []
    assert len(store) == 4
    assert store.runs() == ["a", "b"]


def test_bad_values_are_skipped_and_the_rest_kept(caplog):
    store = Store()
    skipped = store.append_many("r", 1.0, {"good": 1.5, "bad": "n/a", "none": None, "also": "2"})
    assert skipped == ("bad", "none")
    assert {s.key: v for s, v in store.latest_values("r").items()} == {"good": 1.5, "also": 2.0}
    assert "ignoring non-numeric value 'n/a' for bad" in caplog.text
    with pytest.raises(ValueError, match="finite"):
        store.append_many("r", math.nan, {"good": 1.0})
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
    store.append_many("live", 2.0, {"cpu": 2.0})
    assert store.series_version(CPU) != cpu_version
    assert store.version() != v1
    assert store.series_version(SeriesKey("x", "y", None)) == 0


def test_drop_run_forgets_its_series():
    store = Store()
    store.append_many("a", 1.0, {"x": 1})
    store.append_many("b", 1.0, {"x": 1})
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
                store.append_many("run", t, {f"{name}.value": float(i), "shared": float(i)})
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
