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

Writers name a run's series by ``(key, label)``, already split: a source
that reads ``/l:`` suffixes splits them once where it reads them.

A run namespace holds at most ``max_series`` series: past that,
``append_many`` and ``extend_many`` make no new series and count the names
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

from leet.model.keys import KeyLabel, join_label
from leet.model.series_levels import SeriesLevels

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
        self._series: dict[SeriesKey, SeriesLevels] = {}
        self._by_run: dict[str, list[SeriesKey]] = {}
        # Each run's series by name, so a sample's writes skip building SeriesKeys.
        self._by_name: dict[str, dict[KeyLabel, SeriesLevels]] = {}
        self._version = 0
        self._roster_version = 0  # bumped whenever any run gains or loses a series
        self._roster_of: dict[str, int] = {}  # run -> _roster_version at its last such change
        self._warned: set[tuple[str, KeyLabel]] = set()
        self._max_series = max_series
        self._refused: dict[str, set[KeyLabel]] = {}
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

    def append_many(self, run: str, t: float, values: Mapping[KeyLabel, float]) -> tuple[KeyLabel, ...]:
        """Add one sample of ``run``: ``{(key, label): value}`` at time ``t``.

        Values that are not numbers are skipped (and logged once per series);
        every other value is kept. Returns the names skipped.
        """
        t = _check_time(t)
        points: list[tuple[KeyLabel, float]] = []
        skipped: list[KeyLabel] = []
        for name, raw_value in values.items():
            try:
                points.append((name, float(raw_value)))
            except (TypeError, ValueError, OverflowError):
                skipped.append(name)
        with self._lock:
            by_name = self._by_name.setdefault(run, {})
            for name, value in points:
                found = by_name.get(name)
                if found is None:
                    found = self._named(run, name, by_name)
                    if found is None:
                        continue
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

    def extend_many(self, run: str, batch: Mapping[KeyLabel, tuple[Sequence[float], Sequence[float]]]) -> tuple[KeyLabel, ...]:
        """Add ``{(key, label): (times, values)}`` to ``run`` under one lock.

        As ``extend`` for each series, except that a point with a non-finite
        time or a non-number value is left out (logged once per series) and
        the rest kept. Returns the names that lost points. Raises ValueError,
        adding nothing, when a series has more times than values or the other
        way round.
        """
        checked: list[tuple[KeyLabel, _Points]] = []
        for name, pair in batch.items():
            try:
                ts, values = pair
                checked.append((name, _points(ts, values, strict=False)))
            except (TypeError, ValueError) as exc:
                raise ValueError(f"run {run}, {_shown(name)}: expected (times, values): {exc}") from None
        if any(points.t for _, points in checked):
            with self._lock:
                by_name = self._by_name.setdefault(run, {})
                for name, points in checked:
                    if not points.t:
                        continue
                    found = by_name.get(name)
                    if found is None:
                        found = self._named(run, name, by_name)
                        if found is None:
                            continue
                    found.extend(points.t, points.v, points.ascending)
                self._version += 1
        lossy = [(name, points) for name, points in checked if points.rejected]
        for name, points in lossy:
            self._warn_rejected(run, name, points)
        return tuple(name for name, _ in lossy)

    def drop_run(self, run: str) -> int:
        """Forget every series of ``run``; returns how many there were."""
        with self._lock:
            keys = self._by_run.pop(run, [])
            self._by_name.pop(run, None)
            self._refused.pop(run, None)
            for series in keys:
                del self._series[series]
            if keys:
                self._roster_changed(run)
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
            by_name = self._by_name.get(run, {})
            for series in gone:
                del self._series[series]
                by_name.pop((series.key, series.label), None)
            self._roster_changed(run)
            self._version += 1
        return len(gone)

    def _named(self, run: str, name: KeyLabel, by_name: dict[KeyLabel, SeriesLevels]) -> SeriesLevels | None:
        """The series ``name`` of ``run``, made if need be; None, and the name counted as refused, when ``run`` is full."""
        series = SeriesKey(run, *name)
        if series not in self._series and len(self._by_run.get(run, ())) >= self._max_series:
            refused = self._refused.setdefault(run, set())
            if len(refused) < _MAX_REFUSED_NAMES:
                refused.add(name)
            return None
        found = by_name[name] = self._get_or_add(series)
        return found

    def _get_or_add(self, series: SeriesKey) -> SeriesLevels:
        found = self._series.get(series)
        if found is None:
            series = SeriesKey(*series)
            found = SeriesLevels(self._capacity, self._fold, self._levels, self._preallocate > 0)
            self._preallocate = max(0, self._preallocate - 1)
            self._series[series] = found
            self._by_run.setdefault(series.run, []).append(series)
            self._roster_changed(series.run)
        return found

    def _roster_changed(self, run: str) -> None:
        self._roster_version += 1
        self._roster_of[run] = self._roster_version

    def _warn_skipped(self, run: str, skipped: list[KeyLabel], values: Mapping[KeyLabel, float]) -> None:
        for name in skipped:
            if (run, name) in self._warned or len(self._warned) >= _MAX_WARNED_KEYS:
                continue
            self._warned.add((run, name))
            _log.warning("run %s: ignoring non-numeric value %r for %s", run, values[name], _shown(name))

    def _warn_rejected(self, run: str, name: KeyLabel, points: _Points) -> None:
        if (run, name) in self._warned or len(self._warned) >= _MAX_WARNED_KEYS:
            return
        self._warned.add((run, name))
        _log.warning(
            "run %s: ignoring %d point(s) of %s, the first because its %s",
            run, points.rejected, _shown(name), points.first_problem,
        )

    # --- reading ------------------------------------------------------------

    def snapshot(
        self, series: Iterable[SeriesKey], since: float | None = None, resolution: float | None = None
    ) -> dict[SeriesKey, SeriesData]:
        """Copies of the given series, oldest first; unknown series are left out.

        With ``since``, only entries with ``t >= since`` plus the one before.
        With ``since`` and ``resolution`` (seconds), a series in time order is
        also folded on read to about one entry per ``resolution``, the way the
        store folds its older points (``SeriesLevels.thinned``): a chart gets about
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

    def roster_version(self, run: str) -> int:
        """Changes whenever ``run`` gains or loses a series; equal versions mean ``series(run)`` is the same list."""
        return self._roster_of.get(run, 0)

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


def _shown(name: KeyLabel) -> str:
    """A series' name in a log line, as W&B writes the key."""
    return join_label(*name)


def _check_time(t: float) -> float:
    t = float(t)
    if not math.isfinite(t):
        raise ValueError(f"sample time must be a finite number of seconds, got {t}")
    return t


__all__ = ["SeriesData", "SeriesKey", "Store"]
