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

A run namespace holds at most ``max_series`` series: past that,
``append_many`` and ``extend_many`` make no new series and count the keys
they refused (``refused``), so a file that names millions of keys costs
bounded memory.

``extend`` and ``extend_many`` add whole batches (a run file being loaded)
with array slicing and ``map`` over the levels instead of a Python step per
point. They end in exactly the state that ``append`` point by point would:
the same number of folds per level, so the same bucket boundaries, each
bucket covering ``fold ** level`` consecutive raw points in arrival order.
Bucket means can differ from the point-by-point ones in the last bits when
``fold`` is not a power of two (the mean of equal-weight buckets is taken
unweighted).
"""

from __future__ import annotations

import logging
import math
import struct
import threading
from array import array
from bisect import bisect_left
from operator import itemgetter
from typing import Iterable, Mapping, NamedTuple, Sequence

from leet.model.keys import split_label
from leet.model.series_levels import _Series

_log = logging.getLogger(__name__)

_MAX_WARNED_KEYS = 1000
# Series one run namespace may hold. The run model charts at most catalog.MAX_METRICS keys
# per writer and stores no others; this is the backstop for any other writer of the store
# (a shared run's writers share a namespace, so it is several times that).
MAX_SERIES = 40_000
PREALLOCATED_SERIES = 64  # see Store(preallocate=True)
_MAX_REFUSED_NAMES = 100_000  # refused keys remembered so each counts once


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


def _sorted_by_time(columns: tuple[array, array, array, array]) -> tuple[array, ...]:
    times = columns[0].tolist()
    if sorted(times) == times:  # late points often end up inside one bucket
        return columns
    pick = itemgetter(*sorted(range(len(times)), key=times.__getitem__))
    return tuple(array("d", pick(column.tolist())) for column in columns)


def _since(columns: tuple[array, ...], since: float) -> tuple[array, ...]:
    """Entries with t >= since, plus the one just before (lines enter from the edge)."""
    first = max(0, bisect_left(columns[0], since) - 1)
    return tuple(column[first:] for column in columns) if first else columns


class Store:
    """Series memory shared by source threads (writers) and the UI (reader)."""

    def __init__(
        self, capacity: int = 1024, fold: int = 4, levels: int = 5, max_series: int = MAX_SERIES, preallocate: bool = False
    ) -> None:
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
        self._max_series = max_series
        self._refused: dict[str, set[str]] = {}
        # Every level of a series at full size when it is made, for the first
        # PREALLOCATED_SERIES series: a host's few dozen series then take their
        # whole bound (about 176 KiB each) at once and memory is flat from the
        # first minute; a big node's hundreds grow to the same bound lazily.
        self._preallocate = PREALLOCATED_SERIES if preallocate else 0

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
                    if self._full(run, raw_key):
                        continue
                    key, label = split_label(str(raw_key))
                    found = by_raw_key[raw_key] = self._get_or_add(SeriesKey(run, key, label))
                found.push(t, value)
            self._version += 1
        if skipped:
            self._warn_skipped(run, skipped, values)
        return tuple(skipped)

    def extend(self, series: SeriesKey, ts: Sequence[float], values: Sequence[float]) -> None:
        """Add points to one series, oldest first: ``append`` for each, only fast.

        Raises ValueError, adding nothing, when the lengths differ, a time is
        not finite or a value is not a number.
        """
        points = _points(ts, values, strict=True)
        if not points.t:
            return
        with self._lock:
            self._get_or_add(series).extend(points.t, points.v, points.ascending)
            self._version += 1

    def extend_many(
        self, run: str, batch: Mapping[str, tuple[Sequence[float], Sequence[float]]], labelled: bool = True
    ) -> tuple[str, ...]:
        """Add ``{wandb_key[/l:LABEL]: (times, values)}`` to ``run`` under one lock.

        ``labelled=False`` takes keys whole: a metric a user logged as
        ``loss/l:x`` is one history series, not ``loss`` of node ``x``.

        As ``extend`` for each key, except that a point with a non-finite time
        or a non-number value is left out (logged once per key) and the rest
        kept. Returns the keys that lost points. Raises ValueError, adding
        nothing, when a key has more times than values or the other way round.
        """
        checked: list[tuple[str, _Points]] = []
        for raw_key, pair in batch.items():
            try:
                ts, values = pair
                checked.append((raw_key, _points(ts, values, strict=False)))
            except (TypeError, ValueError) as exc:
                raise ValueError(f"run {run}, {raw_key}: expected (times, values): {exc}") from None
        if any(points.t for _, points in checked):
            with self._lock:
                by_raw_key = self._by_raw_key.setdefault(run, {})
                for raw_key, points in checked:
                    if not points.t:
                        continue
                    found = by_raw_key.get(raw_key)
                    if found is None:
                        if self._full(run, raw_key):
                            continue
                        key, label = split_label(str(raw_key)) if labelled else (str(raw_key), None)
                        found = by_raw_key[raw_key] = self._get_or_add(SeriesKey(run, key, label))
                    found.extend(points.t, points.v, points.ascending)
                self._version += 1
        lossy = [(raw_key, points) for raw_key, points in checked if points.rejected]
        for raw_key, points in lossy:
            self._warn_rejected(run, raw_key, points)
        return tuple(raw_key for raw_key, _ in lossy)

    def drop_run(self, run: str) -> int:
        """Forget every series of ``run``; returns how many there were."""
        with self._lock:
            keys = self._by_run.pop(run, [])
            self._by_raw_key.pop(run, None)
            self._refused.pop(run, None)
            for series in keys:
                del self._series[series]
            self._version += 1
        return len(keys)

    def drop_label(self, run: str, label: str | None) -> int:
        """Forget the series of ``run`` with node label ``label`` (None: the unlabelled ones); returns how many."""
        with self._lock:
            keys = self._by_run.get(run, [])
            gone = [series for series in keys if series.label == label]
            if not gone:
                return 0
            self._by_run[run] = [series for series in keys if series.label != label]
            self._by_raw_key.pop(run, None)  # rebuilt as series are added again
            for series in gone:
                del self._series[series]
            self._version += 1
        return len(gone)

    def _full(self, run: str, raw_key: str) -> bool:
        """True, and the key counted as refused, when ``run`` holds as many series as it may."""
        if len(self._by_run.get(run, ())) < self._max_series:
            return False
        refused = self._refused.setdefault(run, set())
        if len(refused) < _MAX_REFUSED_NAMES:
            refused.add(raw_key)
        return True

    def _get_or_add(self, series: SeriesKey) -> _Series:
        found = self._series.get(series)
        if found is None:
            series = SeriesKey(*series)
            found = _Series(self._capacity, self._fold, self._levels, self._preallocate > 0)
            self._preallocate = max(0, self._preallocate - 1)
            self._series[series] = found
            self._by_run.setdefault(series.run, []).append(series)
        return found

    def _warn_skipped(self, run: str, skipped: list[str], values: Mapping[str, float]) -> None:
        for key in skipped:
            if (run, key) in self._warned or len(self._warned) >= _MAX_WARNED_KEYS:
                continue
            self._warned.add((run, key))
            _log.warning("run %s: ignoring non-numeric value %r for %s", run, values[key], key)

    def _warn_rejected(self, run: str, key: str, points: _Points) -> None:
        if (run, key) in self._warned or len(self._warned) >= _MAX_WARNED_KEYS:
            return
        self._warned.add((run, key))
        _log.warning(
            "run %s: ignoring %d point(s) of %s, the first because its %s",
            run, points.rejected, key, points.first_problem,
        )

    # --- reading ------------------------------------------------------------

    def snapshot(
        self, series: Iterable[SeriesKey], since: float | None = None, resolution: float | None = None
    ) -> dict[SeriesKey, SeriesData]:
        """Copies of the given series, oldest first; unknown series are left out.

        With ``since``, only entries with ``t >= since`` plus the one before.
        With ``since`` and ``resolution`` (seconds), a series in time order is
        also folded on read to about one entry per ``resolution``, the way the
        store folds its older points (``_Series.thinned``): a chart gets about
        as many entries as it has columns to draw, and what a redraw copies
        stops growing with the time the chart spans.
        """
        copies: list[tuple[SeriesKey, tuple[array, ...], bool]] = []
        thin = since is not None and resolution is not None and resolution > 0
        with self._lock:
            for key in series:
                found = self._series.get(key)
                if found is None:
                    continue
                if thin and not found.unordered:
                    copies.append((key, found.thinned(since, resolution), False))  # type: ignore[arg-type]
                else:
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

    def time_span(self, run: str) -> tuple[float, float] | None:
        """Oldest and newest time over every series of ``run``, or None when it has none."""
        with self._lock:
            first, last = math.inf, -math.inf
            for key, found in self._series.items():
                if key.run != run:
                    continue
                for level in reversed(found.levels):  # the coarsest level holds the oldest entries
                    if level.size:
                        first = min(first, level.columns[0][level.start])
                        break
                last = max(last, found.newest_t)
            return (first, last) if first <= last else None

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

    def refused(self, run: str) -> int:
        """Keys ``run`` got no series for because it held ``max_series`` already (counted up to 100,000)."""
        with self._lock:
            return len(self._refused.get(run, ()))

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


class _Points(NamedTuple):
    """One series' batch, checked: float columns in arrival order."""

    t: array
    v: array
    ascending: bool  # no time is earlier than the one before it
    rejected: int = 0  # points left out as bad
    first_problem: str = ""


def _points(ts: Sequence[float], values: Sequence[float], strict: bool) -> _Points:
    """Convert and check a batch; a bad point raises (``strict``) or is left out.

    Whole-array conversion and one ``sum`` check the usual batch; only a batch
    with a bad point goes through it point by point.
    """
    if len(ts) != len(values):
        raise ValueError(f"{len(ts)} times but {len(values)} values")
    try:
        t = _doubles(ts)
        v = _doubles(values)
    except (struct.error, TypeError, ValueError, OverflowError):
        return _points_one_by_one(ts, values, strict)
    times = ts if type(ts) is list else t.tolist()
    try:
        finite = math.isfinite(sum(times))
    except (TypeError, OverflowError):  # mixed number types; floats add fine
        times = t.tolist()
        finite = math.isfinite(sum(times))
    # A sum that is not finite may only have overflowed; look closer.
    if not finite and not all(map(math.isfinite, t)):
        return _points_one_by_one(ts, values, strict)
    return _Points(t, v, sorted(times) == times)


def _doubles(numbers: Sequence[float]) -> array:
    """``array('d', numbers)``; packing through ``struct`` is twice as fast for a list."""
    if isinstance(numbers, array) and numbers.typecode == "d":
        return array("d", numbers)
    return array("d", struct.pack(f"{len(numbers)}d", *numbers))


def _points_one_by_one(ts: Sequence[float], values: Sequence[float], strict: bool) -> _Points:
    t, v = array("d"), array("d")
    rejected, first_problem = 0, ""
    for index, (raw_t, raw_value) in enumerate(zip(ts, values)):
        point = _checked_point(raw_t, raw_value)
        if isinstance(point, str):
            if strict:
                raise ValueError(f"point {index}: {point}")
            rejected += 1
            first_problem = first_problem or point
            continue
        t.append(point[0])
        v.append(point[1])
    times = t.tolist()
    return _Points(t, v, sorted(times) == times, rejected, first_problem)


def _checked_point(raw_t: object, raw_value: object) -> tuple[float, float] | str:
    """(t, value) as floats, or what is wrong with them."""
    try:
        t = float(raw_t)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        t = math.nan
    if not math.isfinite(t):
        return f"time {raw_t!r} is not a finite number"
    try:
        return t, float(raw_value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return f"value {raw_value!r} is not a number"


def _check_time(t: float) -> float:
    t = float(t)
    if not math.isfinite(t):
        raise ValueError(f"sample time must be a finite number of seconds, got {t}")
    return t


__all__ = ["SeriesData", "SeriesKey", "Store"]
