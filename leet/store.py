"""Bounded, thread-safe memory of metric series.

A series is one key of one run from one node: ``SeriesKey(run, key, label)``.
Each series keeps its newest points at full resolution (level 0) and folds
older ones into min/max/mean buckets on coarser levels: when a level is full,
its oldest ``fold`` entries become one bucket on the next level, and the last
level drops its oldest entry. Memory per series is therefore at most
``levels × capacity`` entries, whatever the run length, and a long run still
draws its envelope.

Entries live in ``array('d')`` ring buffers, one column per field, so a series
costs a few bytes per entry rather than a Python object per point.

NaN values are stored as given (charts draw them as gaps). A bucket's
min/max/mean cover only its non-NaN values; they are NaN only when every value
folded into the bucket was NaN. Infinities are kept as given.

Out-of-order points (several writers of one shared run, merged) are appended
as they come; a series that ever received a point older than its newest is
sorted by time when it is read, so snapshots are always in time order.
"""

from __future__ import annotations

import logging
import math
import threading
from array import array
from bisect import bisect_left
from typing import Iterable, Mapping, NamedTuple, Sequence

from leet.catalog import split_label

_log = logging.getLogger(__name__)

_MAX_WARNED_KEYS = 1000


class SeriesKey(NamedTuple):
    run: str
    key: str  # W&B key without the ``/l:`` suffix
    label: str | None = None  # node label, or None


class SeriesData(NamedTuple):
    """A snapshot of one series, oldest first. Raw points have lo == hi == mean."""

    t: Sequence[float]
    lo: Sequence[float]
    hi: Sequence[float]
    mean: Sequence[float]



class _Ring:
    """Fixed-capacity FIFO of parallel float columns, grown lazily to capacity."""

    __slots__ = ("columns", "capacity", "start", "size")

    def __init__(self, width: int, capacity: int) -> None:
        self.columns = tuple(array("d") for _ in range(width))
        self.capacity = capacity
        self.start = 0
        self.size = 0

    def full(self) -> bool:
        return self.size == self.capacity

    def push_pair(self, first: float, second: float) -> None:
        """``push`` for a two-column ring, without the generic loop (hot path)."""
        pos = self.start + self.size
        if pos >= self.capacity:
            pos -= self.capacity
        left, right = self.columns
        if pos == len(left):
            left.append(first)
            right.append(second)
        else:
            left[pos] = first
            right[pos] = second
        self.size += 1

    def push(self, row: Sequence[float]) -> None:
        pos = (self.start + self.size) % self.capacity
        if pos == len(self.columns[0]):
            for column, value in zip(self.columns, row):
                column.append(value)
        else:
            for column, value in zip(self.columns, row):
                column[pos] = value
        self.size += 1

    def oldest(self, count: int) -> list[list[float]]:
        """The oldest ``count`` entries, column by column."""
        slots = [(self.start + i) % self.capacity for i in range(count)]
        return [[column[i] for i in slots] for column in self.columns]

    def drop_oldest(self, count: int) -> None:
        self.start = (self.start + count) % self.capacity
        self.size -= count

    def ordered(self, column: int) -> array:
        """A copy of one column, oldest first."""
        data = self.columns[column]
        end = self.start + self.size
        if end <= self.capacity:
            return data[self.start:end]
        return data[self.start:] + data[: end - self.capacity]

    def last(self, column: int) -> float:
        return self.columns[column][(self.start + self.size - 1) % self.capacity]


# Bucket columns on levels >= 1.
_T, _LO, _HI, _MEAN, _COUNT = range(5)


def _fold_points(times: list[float], values: list[float]) -> tuple[float, ...]:
    """Raw points → one bucket (t, lo, hi, mean, count of non-NaN points)."""
    real = [v for v in values if not math.isnan(v)]
    if not real:
        return max(times), math.nan, math.nan, math.nan, 0.0
    return max(times), min(real), max(real), sum(real) / len(real), float(len(real))


def _fold_buckets(columns: list[list[float]]) -> tuple[float, ...]:
    """Buckets → one coarser bucket; the mean is weighted by point counts."""
    times, lows, highs, means, counts = columns
    filled = [i for i, n in enumerate(counts) if n > 0]
    if not filled:
        return max(times), math.nan, math.nan, math.nan, 0.0
    total = sum(counts[i] for i in filled)
    mean = sum(means[i] * counts[i] for i in filled) / total
    return (
        max(times),
        min(lows[i] for i in filled),
        max(highs[i] for i in filled),
        mean,
        total,
    )


class _Series:
    __slots__ = ("levels", "fold", "newest_t", "newest_v", "unordered", "version")

    def __init__(self, capacity: int, fold: int, levels: int) -> None:
        raw = _Ring(2, capacity)  # t, value
        self.levels = [raw] + [_Ring(5, capacity) for _ in range(levels - 1)]
        self.fold = fold
        self.newest_t = -math.inf
        self.newest_v = math.nan
        self.unordered = False
        self.version = 0

    def push(self, t: float, value: float) -> None:
        if t < self.newest_t:
            self.unordered = True
        else:
            self.newest_t, self.newest_v = t, value
        raw = self.levels[0]
        if raw.size == raw.capacity:
            self._make_room(0)
        raw.push_pair(t, value)
        self.version += 1

    def _make_room(self, depth: int) -> None:
        level = self.levels[depth]
        if depth + 1 == len(self.levels):
            level.drop_oldest(1)
            return
        columns = level.oldest(self.fold)
        bucket = _fold_points(*columns) if depth == 0 else _fold_buckets(columns)
        level.drop_oldest(self.fold)
        coarser = self.levels[depth + 1]
        if coarser.full():
            self._make_room(depth + 1)
        coarser.push(bucket)

    def entries(self) -> int:
        return sum(level.size for level in self.levels)

    def copy(self) -> tuple[array, array, array, array]:
        """All entries, oldest level first, as fresh arrays (t, lo, hi, mean)."""
        t, lo, hi, mean = array("d"), array("d"), array("d"), array("d")
        for level in reversed(self.levels[1:]):
            t += level.ordered(_T)
            lo += level.ordered(_LO)
            hi += level.ordered(_HI)
            mean += level.ordered(_MEAN)
        raw = self.levels[0]
        values = raw.ordered(1)
        t += raw.ordered(0)
        lo += values
        hi += values
        mean += values
        return t, lo, hi, mean


def _sorted_by_time(columns: tuple[array, array, array, array]) -> tuple[array, ...]:
    t = columns[0]
    order = sorted(range(len(t)), key=t.__getitem__)
    return tuple(array("d", (column[i] for i in order)) for column in columns)


def _since(columns: tuple[array, ...], since: float) -> tuple[array, ...]:
    """Entries with t >= since, plus the one just before (lines enter from the edge)."""
    first = max(0, bisect_left(columns[0], since) - 1)
    return tuple(column[first:] for column in columns) if first else columns


class Store:
    """Series memory shared by source threads (writers) and the UI (reader)."""

    def __init__(self, capacity: int = 1024, fold: int = 4, levels: int = 5) -> None:
        if capacity < 2:
            raise ValueError(f"capacity must be at least 2, got {capacity}")
        if not 2 <= fold <= capacity:
            raise ValueError(f"fold must be between 2 and capacity ({capacity}), got {fold}")
        if levels < 1:
            raise ValueError(f"levels must be at least 1, got {levels}")
        self._capacity = capacity
        self._fold = fold
        self._levels = levels
        self._lock = threading.Lock()
        self._series: dict[SeriesKey, _Series] = {}
        self._by_run: dict[str, list[SeriesKey]] = {}
        # append_many's parsed keys, so steady-state samples skip split_label.
        self._by_raw_key: dict[str, dict[str, _Series]] = {}
        self._version = 0
        self._warned: set[tuple[str, str]] = set()

    # --- writing ------------------------------------------------------------

    def append(self, series: SeriesKey, t: float, value: float) -> None:
        """Add one point. Raises ValueError for a non-finite time or a non-number."""
        t = _check_time(t)
        value = float(value)
        with self._lock:
            self._get_or_add(series).push(t, value)
            self._version += 1

    def append_many(self, run: str, t: float, values: Mapping[str, float]) -> tuple[str, ...]:
        """Add one sample: ``{wandb_key[/l:LABEL]: value}`` at time ``t``.

        Values that are not numbers are skipped (and logged once per key);
        every other value is kept. Returns the skipped keys.
        """
        t = _check_time(t)
        points: list[tuple[str, float]] = []
        skipped: list[str] = []
        for raw_key, raw_value in values.items():
            try:
                points.append((raw_key, float(raw_value)))
            except (TypeError, ValueError, OverflowError):
                skipped.append(raw_key)
        with self._lock:
            by_raw_key = self._by_raw_key.setdefault(run, {})
            for raw_key, value in points:
                found = by_raw_key.get(raw_key)
                if found is None:
                    key, label = split_label(str(raw_key))
                    found = by_raw_key[raw_key] = self._get_or_add(SeriesKey(run, key, label))
                found.push(t, value)
            self._version += 1
        if skipped:
            self._warn_skipped(run, skipped, values)
        return tuple(skipped)

    def drop_run(self, run: str) -> int:
        """Forget every series of ``run``; returns how many there were."""
        with self._lock:
            keys = self._by_run.pop(run, [])
            self._by_raw_key.pop(run, None)
            for series in keys:
                del self._series[series]
            self._version += 1
        return len(keys)

    def _get_or_add(self, series: SeriesKey) -> _Series:
        found = self._series.get(series)
        if found is None:
            series = SeriesKey(*series)
            found = _Series(self._capacity, self._fold, self._levels)
            self._series[series] = found
            self._by_run.setdefault(series.run, []).append(series)
        return found

    def _warn_skipped(self, run: str, skipped: list[str], values: Mapping[str, float]) -> None:
        for key in skipped:
            if (run, key) in self._warned or len(self._warned) >= _MAX_WARNED_KEYS:
                continue
            self._warned.add((run, key))
            _log.warning("run %s: ignoring non-numeric value %r for %s", run, values[key], key)

    # --- reading ------------------------------------------------------------

    def snapshot(
        self, series: Iterable[SeriesKey], since: float | None = None
    ) -> dict[SeriesKey, SeriesData]:
        """Copies of the given series, oldest first; unknown series are left out.

        With ``since``, only entries with ``t >= since`` plus the one before.
        """
        copies: list[tuple[SeriesKey, tuple[array, ...], bool]] = []
        with self._lock:
            for key in series:
                found = self._series.get(key)
                if found is not None:
                    copies.append((key, found.copy(), found.unordered))
        result: dict[SeriesKey, SeriesData] = {}
        for key, columns, unordered in copies:
            if unordered:
                columns = _sorted_by_time(columns)  # type: ignore[arg-type]
            if since is not None:
                columns = _since(columns, since)
            result[key] = SeriesData(*columns)
        return result

    def latest(self, series: SeriesKey) -> tuple[float, float] | None:
        """(t, value) of the newest point by time, or None for an unknown series."""
        with self._lock:
            found = self._series.get(series)
            if found is None:
                return None
            return found.newest_t, found.newest_v

    def latest_values(self, run: str) -> dict[SeriesKey, float]:
        """The newest value of every series of ``run``."""
        with self._lock:
            return {key: self._series[key].newest_v for key in self._by_run.get(run, ())}

    def series(self, run: str | None = None) -> list[SeriesKey]:
        """Known series in the order they first appeared."""
        with self._lock:
            if run is None:
                return list(self._series)
            return list(self._by_run.get(run, ()))

    def runs(self) -> list[str]:
        with self._lock:
            return list(self._by_run)

    def entry_count(self, series: SeriesKey) -> int:
        """Entries held for one series (raw points plus buckets); 0 if unknown."""
        with self._lock:
            found = self._series.get(series)
            return 0 if found is None else found.entries()

    def version(self) -> int:
        """Changes on every write; equal versions mean nothing changed."""
        return self._version

    def series_version(self, series: SeriesKey) -> int:
        """Changes on every write to this series; 0 for an unknown series."""
        with self._lock:
            found = self._series.get(series)
            return 0 if found is None else found.version

    def __len__(self) -> int:
        return len(self._series)


def _check_time(t: float) -> float:
    t = float(t)
    if not math.isfinite(t):
        raise ValueError(f"sample time must be a finite number of seconds, got {t}")
    return t


__all__ = ["SeriesData", "SeriesKey", "Store"]
