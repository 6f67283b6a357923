"""One series' memory: float ring buffers, one per level, and the folding of full levels into coarser ones.

Level 0 holds raw (t, value) points; every coarser level holds
(t, lo, hi, mean, count) buckets, each the fold of ``fold`` consecutive
entries of the level below. ``store`` describes the model; this module is
its hot path (``append`` and ``extend`` of every sample go through it).
"""

from __future__ import annotations

import math
import sys
from array import array
from bisect import bisect_left
from itertools import repeat
from operator import itemgetter, mul, truediv
from typing import Sequence

# Shorter batches go point by point: below this the bulk path's fixed cost
# (copying a level's ring) outweighs what it saves per point.
_SMALL_BATCH = 8
# Longer batches go in slices of this many points.
_SLICE = 16384


class _Ring:
    """Fixed-capacity FIFO of parallel float columns, grown lazily to capacity (or all at once)."""

    __slots__ = ("columns", "capacity", "start", "size")

    def __init__(self, width: int, capacity: int, preallocate: bool = False) -> None:
        # A preallocated ring is full size from the start; entries are written in place.
        self.columns = tuple(array("d", bytes(8 * capacity) if preallocate else b"") for _ in range(width))
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

    def at(self, column: int, index: int) -> float:
        """Entry ``index`` (oldest is 0) of one column."""
        return self.columns[column][(self.start + index) % self.capacity]

    def bisect(self, value: float) -> int:
        """Where ``value`` would go among the entries of column 0, oldest first (``bisect_left``).

        The column must be in order; a wrapped ring is two ordered runs, each searched in C.
        """
        data = self.columns[0]
        end = self.start + self.size
        if end <= self.capacity:
            return bisect_left(data, value, self.start, end) - self.start
        first_run = self.capacity - self.start
        if data[self.capacity - 1] >= value:
            return bisect_left(data, value, self.start, self.capacity) - self.start
        return first_run + bisect_left(data, value, 0, end - self.capacity)

    def ordered_from(self, column: int, first: int) -> array:
        """A copy of one column from entry ``first`` (oldest is 0) to the newest."""
        data = self.columns[column]
        begin = self.start + first
        end = self.start + self.size
        if end <= self.capacity:
            return data[begin:end]
        if begin >= self.capacity:
            return data[begin - self.capacity : end - self.capacity]
        return data[begin:] + data[: end - self.capacity]

    def merged(self, columns: Sequence[array]) -> list[array]:
        """Every entry, oldest first, then ``columns`` after it: fresh arrays."""
        return [self.ordered(i) + new for i, new in enumerate(columns)]

    def replace(self, columns: Sequence[array]) -> None:
        """Hold exactly ``columns`` (at most ``capacity`` entries), oldest first."""
        self.columns = tuple(columns)
        self.start = 0
        self.size = len(self.columns[0])

    def extend(self, columns: Sequence[array]) -> None:
        """Add entries that fit without folding, column by column."""
        end = self.start + self.size
        added = len(columns[0])
        if end == len(self.columns[0]) and end + added <= self.capacity:
            for column, new in zip(self.columns, columns):
                column.extend(new)
            self.size += added
        else:
            self.replace(self.merged(columns))


# Bucket columns on levels >= 1.
_T, _LO, _HI, _MEAN, _COUNT = range(5)


def _fold_points(times: Sequence[float], values: Sequence[float]) -> tuple[float, ...]:
    """Raw points → one bucket (t, lo, hi, mean, count of non-NaN points)."""
    real = [v for v in values if not math.isnan(v)]
    if not real:
        return max(times), math.nan, math.nan, math.nan, 0.0
    return max(times), min(real), max(real), sum(real) / len(real), float(len(real))


def _fold_buckets(columns: Sequence[Sequence[float]]) -> tuple[float, ...]:
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


def _steps(column: Sequence[float], fold: int) -> list:
    """``fold`` strided views: ``_steps(c, f)[i][g]`` is entry ``i`` of group ``g``."""
    return [column[i::fold] for i in range(fold)]


def _group_times(t: array, fold: int, ordered: bool) -> array:
    """Each group's latest time; in a time-ordered series that is its last entry."""
    if ordered:
        return t[fold - 1 :: fold]
    return array("d", map(max, *_steps(t, fold)))


_first, _last = itemgetter(0), itemgetter(-1)

if sys.version_info >= (3, 13):

    def _group_ends(groups: list[list[float]]) -> tuple[array, array]:
        """Each group's (lows, highs); min() and max() are fast calls from 3.13 on."""
        return array("d", map(min, *groups)), array("d", map(max, *groups))

else:

    def _group_ends(groups: list[list[float]]) -> tuple[array, array]:
        """Each group's (lows, highs); one sort per group beats min() and max() here."""
        ranked = list(map(sorted, zip(*groups)))
        return array("d", map(_first, ranked)), array("d", map(_last, ranked))


def _set_row(columns: list[array], index: int, row: Sequence[float]) -> None:
    for column, value in zip(columns, row):
        column[index] = value


def _fold_points_bulk(columns: list[array], fold: int, ordered: bool) -> list[array]:
    """Raw (t, value) columns → one bucket per ``fold`` consecutive points.

    ``sorted``/``sum`` run over whole groups at C speed. A group whose sum
    is NaN holds a NaN (or both infinities) and is folded again the NaN-aware
    way.
    """
    t, v = columns
    values = v.tolist()
    groups = _steps(values, fold)
    sums = list(map(sum, zip(*groups)))
    buckets = [
        _group_times(t, fold, ordered),
        *_group_ends(groups),
        array("d", map(truediv, sums, repeat(float(fold)))),
        array("d", [float(fold)]) * len(sums),
    ]
    total = sum(sums)
    if total != total:
        for index, group_sum in enumerate(sums):
            if group_sum != group_sum:
                part = slice(index * fold, (index + 1) * fold)
                _set_row(buckets, index, _fold_points(t[part], values[part]))
    return buckets


def _fold_buckets_bulk(columns: list[array], fold: int, ordered: bool) -> list[array]:
    """Bucket columns → one coarser bucket per ``fold`` consecutive buckets.

    Buckets of equal count (the usual case) need no weights; empty (all-NaN)
    buckets send their group the NaN-aware way.
    """
    t, lo, hi, mean, count = columns
    groups = len(t) // fold
    buckets = [
        _group_times(t, fold, ordered),
        array("d", map(min, *_steps(lo, fold))),
        array("d", map(max, *_steps(hi, fold))),
    ]
    first = count[0]
    # Bytes compare at C speed; counts are whole numbers, so equal means equal.
    if first > 0 and count.tobytes() == array("d", [first]).tobytes() * len(count):
        sums = map(sum, zip(*_steps(mean, fold)))
        buckets.append(array("d", map(truediv, sums, repeat(float(fold)))))
        buckets.append(array("d", [first * fold]) * groups)
        return buckets
    weighted = map(sum, zip(*_steps(array("d", map(mul, mean, count)), fold)))
    totals = list(map(sum, zip(*_steps(count, fold))))
    buckets.append(array("d", [w / n if n else math.nan for w, n in zip(weighted, totals)]))
    buckets.append(array("d", totals))
    for index, smallest in enumerate(map(min, *_steps(count, fold))):
        if smallest == 0:
            part = slice(index * fold, (index + 1) * fold)
            _set_row(buckets, index, _fold_buckets([column[part] for column in columns]))
    return buckets


class SeriesLevels:
    """One series: its levels, newest point, and whether it ever took a point out of time order."""

    __slots__ = ("levels", "depth", "fold", "newest_t", "newest_v", "unordered", "version", "preallocate")

    def __init__(self, capacity: int, fold: int, levels: int, preallocate: bool = False) -> None:
        # Coarser levels are made on the first fold: a run of many short series
        # (thousands of metrics, a few points each) then costs two arrays per series.
        # A live monitor's few series take their whole bound at once instead, so
        # its memory is flat from the first minute rather than creeping for hours.
        self.preallocate = preallocate
        self.levels = [_Ring(2, capacity, preallocate)]  # t, value
        if preallocate:
            self.levels += [_Ring(5, capacity, True) for _ in range(levels - 1)]
        self.depth = levels
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

    def extend(self, t: array, values: array, ascending: bool) -> None:
        """``push`` for each point in order, a whole level at a time.

        On the 2-core development box, shared with other jobs (load about 3),
        one series of 100 000 points in batches of 1000–5000 goes in at
        3.2–3.6 M points/s, 20 series through ``extend_many`` at 2.5–3.2 M
        points/s; ``append`` manages about 0.4 M points/s there. Most of the
        time is the level-1 fold: a few C-level calls per bucket.
        """
        if len(t) < _SMALL_BATCH:
            for point in zip(t, values):
                self.push(*point)
            return
        if ascending and t[0] >= self.newest_t:
            self.newest_t, self.newest_v = t[-1], values[-1]
        else:
            self.unordered = True
            self._take_newest(t, values)
        # Slices keep the temporary lists of a huge batch small; the result
        # is the same as in one go.
        for start in range(0, len(t), _SLICE):
            self._push_many(0, [t[start : start + _SLICE], values[start : start + _SLICE]])
        self.version += len(t)

    def _take_newest(self, t: array, values: array) -> None:
        """As ``push`` would: the last point at the latest time wins."""
        latest = max(t)
        if latest >= self.newest_t:
            last = len(t) - 1 - t[::-1].index(latest)
            self.newest_t, self.newest_v = latest, values[last]

    def _push_many(self, depth: int, columns: list[array]) -> None:
        level = self.levels[depth]
        capacity = level.capacity
        total = level.size + len(columns[0])
        if total <= capacity:
            level.extend(columns)
            return
        merged = level.merged(columns)
        if depth + 1 == self.depth:
            level.replace([column[-capacity:] for column in merged])
            return
        # As many folds as one push at a time would make, oldest first: the
        # level keeps between capacity - fold + 1 and capacity entries.
        cut = -(-(total - capacity) // self.fold) * self.fold
        level.replace([column[cut:] for column in merged])
        oldest = [column[:cut] for column in merged]
        fold = _fold_points_bulk if depth == 0 else _fold_buckets_bulk
        self._coarser(depth)
        self._push_many(depth + 1, fold(oldest, self.fold, not self.unordered))

    def _coarser(self, depth: int) -> _Ring:
        """The level after ``depth``, made when first needed."""
        if depth + 1 == len(self.levels):
            self.levels.append(_Ring(5, self.levels[0].capacity, self.preallocate))
        return self.levels[depth + 1]

    def _make_room(self, depth: int) -> None:
        level = self.levels[depth]
        if depth + 1 == self.depth:
            level.drop_oldest(1)
            return
        columns = level.oldest(self.fold)
        bucket = _fold_points(*columns) if depth == 0 else _fold_buckets(columns)
        level.drop_oldest(self.fold)
        coarser = self._coarser(depth)
        if coarser.full():
            self._make_room(depth + 1)
        coarser.push(bucket)

    def entries(self) -> int:
        return sum(level.size for level in self.levels)

    def thinned(self, since: float, resolution: float) -> tuple[array, array, array, array]:
        """Entries from the one before ``since`` on, folded on read to about one per ``resolution`` seconds.

        Only for a series in time order. Each level's slice is folded by the
        largest power of ``fold`` that keeps its entries at most ``resolution``
        apart, in groups aligned the way the store itself will fold them later
        (by the count of entries the level has ever received), so a group
        holds the same points from one read to the next, and the picture
        does not shift as points arrive or move to a coarser level. Only the
        newest group of a level, still filling, changes. Coarser levels are
        older, so the levels' slices join in time order.
        """
        out: tuple[array, array, array, array] = (array("d"), array("d"), array("d"), array("d"))
        received = self.version  # entries level 0 ever received; each coarser level: its finer level's folds
        counts = []
        for level in self.levels:
            counts.append(received)
            received = (received - level.size) // self.fold
        for depth in range(len(self.levels) - 1, -1, -1):
            level = self.levels[depth]
            if level.size == 0:
                continue
            first = max(0, level.bisect(since) - 1)
            oldest_index = counts[depth] - level.size  # of the level's oldest entry, among all it received
            group = self._group_size(level, first, resolution)
            first -= (oldest_index + first) % group
            if group > 1 and first > 0:
                first -= group  # a bucket is timed by its newest point: one wholly before ``since`` leads in
            if first < 0:
                first = 0
            _fold_slice(level, depth, first, group, oldest_index + first, out)
        return out

    def _group_size(self, level: _Ring, first: int, resolution: float) -> int:
        """The largest power of ``fold`` whose groups of this level's entries span at most ``resolution``."""
        count = level.size - first
        if count < 2 * self.fold:
            return 1
        spacing = (level.last(_T) - level.at(_T, first)) / (count - 1)
        group = 1
        while spacing > 0 and group * self.fold * spacing <= resolution and group * self.fold <= count:
            group *= self.fold
        return group

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


def _fold_slice(level: _Ring, depth: int, first: int, group: int, index: int, out: tuple[array, ...]) -> None:
    """Append a level's entries from ``first`` to ``out`` (t, lo, hi, mean), folded in groups of ``group``.

    ``index`` is the position of entry ``first`` among all the level ever
    received: groups start where it is a multiple of ``group``, so the oldest
    and the newest group may be partial.
    """
    width = 2 if depth == 0 else 5
    columns = [level.ordered_from(c, first) for c in range(width)]
    size = len(columns[0])
    head = min(size, (-index) % group)
    body_end = head + (size - head) // group * group
    for start, stop, step in ((0, head, head), (head, body_end, group), (body_end, size, size - body_end)):
        if stop <= start:
            continue
        part = [column[start:stop] if (start, stop) != (0, size) else column for column in columns]
        if step == 1:
            buckets = part if depth else [part[0], part[1], part[1], part[1]]
        else:
            buckets = (_fold_points_bulk if depth == 0 else _fold_buckets_bulk)(part, step, True)
        for target, column in zip(out, buckets):
            target.extend(column)
