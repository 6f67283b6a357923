"""Turn series into rows of coloured runs: braille lines, a shaded band, or a bucketed heatmap.

Every renderer returns ``list[list[(text, owner)]]``, top row first, each row
covering exactly ``width`` cells; owner -1 is an empty cell (a space). For
lines the owner is the series index; for the heatmap it is the level; for a
band see ``render_band``. With ``ascii`` every renderer draws in ASCII: lines
and bands on an ``AsciiCanvas``, the heatmap with the ASCII shade ramp.
Pure Python, no Textual.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from itertools import islice
from typing import NamedTuple, Sequence, Union

from leet.common.ticks import LIMIT
from widgets.asciicanvas import AsciiCanvas
from widgets.asciicanvas import glyph as ascii_glyph
from widgets.braille import EMPTY, BrailleCanvas, Run, glyph, merge_runs
from widgets.glyphs import heat_glyph

HEAT_GLYPH = "█"  # the densest shade: the top level
HEAT_LEVELS = 8  # steps of a heatmap's shade and colour
ASCII_BAND_SHADE = ":"  # a band's shade in ASCII, where every other dot would read as lines

Canvas = Union[BrailleCanvas, AsciiCanvas]

# Far-off points are pulled in to this many dots before rasterising; the
# slope error that introduces is far below one dot.
_FAR = 1e9

# A span narrower than this is opened up: dividing by it would overflow.
_NARROWEST = 1e-290
# How far a zero-width range opens, relative to its value: far from zero half a
# unit is below a float's resolution (at 2**62 the step is 1024).
_RELATIVE = 1e-12
_SMALLEST_NORMAL = 2.2250738585072014e-308


class SeriesView(NamedTuple):
    """One series, oldest first. Raw points have lo == hi == mean."""

    t: Sequence[float]
    lo: Sequence[float]
    hi: Sequence[float]
    mean: Sequence[float]

    @classmethod
    def points(cls, t: Sequence[float], values: Sequence[float]) -> SeriesView:
        """A view of raw points (no buckets)."""
        return cls(t, values, values, values)


def _window(values: Sequence[float], start: int, stop: int) -> Sequence[float]:
    try:
        return values[start:stop]
    except TypeError:  # e.g. a deque
        return list(islice(values, start, stop))


def _visible(t: Sequence[float], t0: float, t1: float) -> tuple[int, int]:
    """Index range of points with t0 <= t <= t1 (t is sorted)."""
    return bisect_left(t, t0), bisect_right(t, t1)


def y_bounds(
    series: Sequence[SeriesView], t0: float, t1: float, positive: bool = False
) -> tuple[float, float] | None:
    """Finite min of lo and max of hi over points with t0 <= t <= t1, or None.

    ``positive`` keeps only values > 0, for a log axis.
    """
    low = math.inf
    high = -math.inf
    isfinite = math.isfinite
    for view in series:
        start, stop = _visible(view.t, t0, t1)
        if start >= stop:
            continue
        for value in _window(view.lo, start, stop):
            if value < low and isfinite(value) and (value > 0 or not positive):
                low = value
        for value in _window(view.hi, start, stop):
            if value > high and isfinite(value) and (value > 0 or not positive):
                high = value
    if low == math.inf and high == -math.inf:
        return None
    if low == math.inf:
        low = high
    if high == -math.inf:
        high = low
    return low, high


def tame(value: float) -> float:
    """A bound a chart can step through: subnormals are 0, magnitudes past ``LIMIT`` are ``LIMIT``.

    Within ±LIMIT a range's span (up to 2·LIMIT) and every scale derived from it stay finite.
    """
    if abs(value) < _SMALLEST_NORMAL:
        return 0.0
    return min(max(value, -LIMIT), LIMIT)


def _usable(lo: float, hi: float) -> tuple[float, float] | None:
    """A drawable range: finite, ordered, within ±LIMIT, and never too narrow to divide by."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return None
    lo, hi = tame(lo), tame(hi)
    if lo > hi:
        lo, hi = hi, lo
    if hi - lo < _NARROWEST:
        middle = lo / 2 + hi / 2
        half = max(0.5, abs(middle) * _RELATIVE)
        return middle - half, middle + half
    return lo, hi


def _blank(width: int, height: int) -> list[list[Run]]:
    if width <= 0:
        return [[] for _ in range(max(0, height))]
    return [[(" " * width, EMPTY)] for _ in range(max(0, height))]


# ---------------------------------------------------------------- lines


def render_lines(
    series: Sequence[SeriesView],
    width: int,
    height: int,
    x_range: tuple[float, float],
    y_range: tuple[float, float],
    log_y: bool = False,
    ascii: bool = False,
) -> list[list[Run]]:
    """Braille (or ``ascii``) line chart; the owner of a cell is the index of the series on top.

    Points sharing a dot column draw one vertical span from their lowest lo
    to their highest hi, so dense data keeps its envelope and spikes. Points
    in neighbouring columns are joined by their means. A non-finite mean is a
    gap. Values beyond ``y_range`` sit on its edge. With ``log_y`` values are
    mapped by log10; a non-positive mean is a gap, a non-positive lo reaches
    the bottom edge, and a non-positive lower bound of ``y_range`` is replaced
    by the smallest positive value on screen.
    """
    if width <= 0 or height <= 0:
        return _blank(width, height)
    x_usable = _usable(*x_range)
    if x_usable is None:
        return _blank(width, height)
    y_usable = _log_range(series, x_usable, y_range) if log_y else _usable(*y_range)
    if y_usable is None:
        return _blank(width, height)
    canvas: Canvas = AsciiCanvas(width, height) if ascii else BrailleCanvas(width, height)
    for owner, view in enumerate(series):
        _draw_series(canvas, view, owner, x_usable, y_usable, log_y)
    return canvas.rows()


def _log_range(
    series: Sequence[SeriesView], x_range: tuple[float, float], y_range: tuple[float, float]
) -> tuple[float, float] | None:
    lo, hi = y_range
    if not lo > 0:
        bounds = y_bounds(series, x_range[0], x_range[1], positive=True)
        if bounds is None:
            return None
        lo = bounds[0]
        hi = max(hi, bounds[1])
    if not hi > 0:
        return None
    return _usable(math.log10(lo), math.log10(hi))


def _log_values(
    view: SeriesView, start: int, stop: int, floor: float
) -> tuple[Sequence[float], Sequence[float], Sequence[float]]:
    log10, nan, isnan = math.log10, math.nan, math.isnan
    mean = [log10(v) if v > 0 else nan for v in _window(view.mean, start, stop)]
    # A bucket reaching down to zero or below is drawn to the bottom edge.
    lo = [log10(v) if v > 0 else (nan if isnan(v) else floor) for v in _window(view.lo, start, stop)]
    hi = [log10(v) if v > 0 else nan for v in _window(view.hi, start, stop)]
    return lo, hi, mean


def _outside_column(fx: float, columns: int, in_range: bool) -> int:
    if in_range and fx >= columns:  # t == t1 lands just past the last column
        return columns - 1
    return math.floor(min(max(fx, -_FAR), _FAR))


def _row(value: float, high: float, scale: float, bottom: int) -> int:
    """Value → dot row, top = ``high``, clamped to the canvas."""
    fy = (high - value) * scale
    if fy <= 0.0:
        return 0
    if fy >= bottom:
        return bottom
    return int(fy + 0.5)


def _draw_series(
    canvas: Canvas,
    view: SeriesView,
    owner: int,
    x_range: tuple[float, float],
    y_range: tuple[float, float],
    log_y: bool,
) -> None:
    t0, t1 = x_range
    start, stop = _visible(view.t, t0, t1)
    # One neighbour on each side so a line can enter or leave through an edge.
    start = max(start - 1, 0)
    stop = min(stop + 1, len(view.t))
    if start >= stop:
        return
    times = _window(view.t, start, stop)
    if log_y:
        lows, highs, means = _log_values(view, start, stop, y_range[0] - 1.0)
    else:
        lows, highs, means = (_window(v, start, stop) for v in (view.lo, view.hi, view.mean))

    columns = canvas.dot_width
    x_scale = columns / (t1 - t0)
    x_step = (t1 - t0) / columns
    bottom = canvas.dot_height - 1
    y_high = y_range[1]
    y_scale = bottom / (y_high - y_range[0])
    vline, line = canvas.vline, canvas.line

    # The column being gathered: index, time span, value envelope, last mean,
    # and the rows a step from the previous column adds to it.
    column, col_start, col_end = 0, 0.0, -math.inf
    low = high = last = 0.0
    reach_top = reach_bottom = 0
    have_column = False
    joined = False  # the last valid point joins the next one
    for t, lo, hi, mean in zip(times, lows, highs, means):
        if mean - mean != 0.0:  # NaN or ±inf: a gap
            joined = False
            continue
        if col_start <= t < col_end:
            # Hot path for dense data: NaN bounds fail both tests and drop out.
            if lo < low:
                low = lo
            if hi > high:
                high = hi
            last = mean
            joined = True
            continue
        fx = (t - t0) * x_scale
        if fx != fx:  # a NaN time cannot be placed
            joined = False
            continue
        col = int(fx) if 0.0 <= fx < columns else _outside_column(fx, columns, t <= t1)
        if have_column and col == column:
            col_start = min(col_start, t)  # unsorted, or rounding at an edge
        else:
            first = _row(mean, y_high, y_scale, bottom)
            next_top = next_bottom = first
            if have_column:
                top = _row(high, y_high, y_scale, bottom)
                end = _row(low, y_high, y_scale, bottom)
                if reach_top < top:
                    top = reach_top
                if reach_bottom > end:
                    end = reach_bottom
                if joined:
                    step_from = _row(last, y_high, y_scale, bottom)
                    if col - column == 1 or column - col == 1:
                        # Neighbouring columns: split the step between them
                        # the way a Bresenham line would.
                        rise = first - step_from
                        split = step_from + int(rise / 2)
                        if split < top:
                            top = split
                        elif split > end:
                            end = split
                        after = split + (rise > 0) - (rise < 0)
                        next_top, next_bottom = (first, after) if first < after else (after, first)
                    else:
                        line(column, step_from, col, first, owner)
                vline(column, top, end, owner)
            column, have_column = col, True
            col_start = t0 + col * x_step
            col_end = col_start + x_step
            low = high = mean
            reach_top, reach_bottom = next_top, next_bottom
        if lo < low:
            low = lo
        if hi > high:
            high = hi
        last = mean
        joined = True
    if have_column:
        top = min(_row(high, y_high, y_scale, bottom), reach_top)
        end = max(_row(low, y_high, y_scale, bottom), reach_bottom)
        vline(column, top, end, owner)


# ----------------------------------------------------------------- band

BAND = 0  # owner of band cells in ``render_band``
BAND_MIDDLE = 1  # owner of the band's middle line; the lines drawn over it follow


def render_band(
    band: SeriesView,
    lines: Sequence[SeriesView],
    width: int,
    height: int,
    x_range: tuple[float, float],
    y_range: tuple[float, float],
    ascii: bool = False,
) -> list[list[Run]]:
    """A shaded band from each point's lo to its hi, its mean as a line, and ``lines`` over it.

    Owners: ``BAND`` for the shade, ``BAND_MIDDLE`` for the mean line and
    ``BAND_MIDDLE + 1 + i`` for ``lines[i]``. The shade is every other dot, so
    it reads as a tint behind the lines; a cell that a line crosses shows only
    the line's dots. Between points in dot columns apart the band's edges run
    straight; a point whose lo, hi or mean is not finite is a gap.
    """
    if width <= 0 or height <= 0:
        return _blank(width, height)
    x_usable = _usable(*x_range)
    y_usable = _usable(*y_range)
    if x_usable is None or y_usable is None:
        return _blank(width, height)
    make: type[BrailleCanvas] | type[AsciiCanvas] = AsciiCanvas if ascii else BrailleCanvas
    shade = make(width, height)
    for x, span in enumerate(_band_spans(band, shade.dot_width, shade.dot_height - 1, x_usable, y_usable)):
        if span is not None:
            for y in range(span[0] + (span[0] + x) % 2, span[1] + 1, 2):
                shade.set(x, y, BAND)
    ink = make(width, height)
    _draw_series(ink, SeriesView.points(band.t, band.mean), BAND_MIDDLE, x_usable, y_usable, False)
    for index, view in enumerate(lines):
        _draw_series(ink, view, BAND_MIDDLE + 1 + index, x_usable, y_usable, False)
    ink_glyph = ascii_glyph if ascii else glyph
    shade_glyph = (lambda _bits: ASCII_BAND_SHADE) if ascii else glyph
    rows: list[list[Run]] = []
    for row in range(height):
        text: list[str] = []
        owners: list[int] = []
        for column in range(width):
            bits, owner = ink.cell(column, row)
            if bits:
                text.append(ink_glyph(bits))
            else:
                bits, owner = shade.cell(column, row)
                text.append(shade_glyph(bits) if bits else " ")
            owners.append(owner)
        rows.append(merge_runs("".join(text), owners))
    return rows


def _band_spans(
    band: SeriesView, columns: int, bottom: int, x_range: tuple[float, float], y_range: tuple[float, float]
) -> list[tuple[int, int] | None]:
    """Per dot column, the dot rows (top, bottom) the band covers, or None."""
    t0, t1 = x_range
    y_low, y_high = y_range
    spans: list[tuple[int, int] | None] = [None] * columns
    start, stop = _visible(band.t, t0, t1)
    start, stop = max(start - 1, 0), min(stop + 1, len(band.t))
    x_scale = columns / (t1 - t0)
    y_scale = bottom / (y_high - y_low)
    isfinite = math.isfinite

    def cover(column: int, top: float, end: float) -> None:
        if 0 <= column < columns:
            top_row = min(max(round(top), 0), bottom)
            end_row = min(max(round(end), 0), bottom)
            found = spans[column]
            if found is not None:
                top_row, end_row = min(found[0], top_row), max(found[1], end_row)
            spans[column] = (top_row, end_row)

    previous: tuple[int, float, float] | None = None  # column, top and bottom dot row of the last point
    window = zip(*(_window(values, start, stop) for values in (band.t, band.lo, band.hi, band.mean)))
    for t, lo, hi, mean in window:
        if not (isfinite(t) and isfinite(lo) and isfinite(hi) and isfinite(mean)):
            previous = None
            continue
        fx = min(max((t - t0) * x_scale, -_FAR), _FAR)
        column = columns - 1 if t == t1 else math.floor(fx)
        top, end = (y_high - hi) * y_scale, (y_high - lo) * y_scale
        if previous is not None and column - previous[0] > 1:
            first, top0, end0 = previous
            steps = column - first
            for between in range(max(first + 1, 0), min(column, columns)):
                share = (between - first) / steps
                cover(between, top0 + (top - top0) * share, end0 + (end - end0) * share)
        cover(column, top, end)
        previous = (column, top, end)
    return spans


# -------------------------------------------------------------- heatmap


def heatmap_layout(count: int, height: int) -> list[range]:
    """Which series each heatmap row shows, top row first.

    With no more series than rows, series i fills rows
    ⌊i·height/count⌋ up to ⌊(i+1)·height/count⌋, so bands differ by at most
    one row. With more series than rows, each row merges
    ⌈count/height⌉ neighbours (their maximum) and spare rows at the
    bottom stay empty.
    """
    if count <= 0 or height <= 0:
        return [range(0) for _ in range(max(0, height))]
    if count <= height:
        layout = []
        for index in range(count):
            rows = (index + 1) * height // count - index * height // count
            layout.extend([range(index, index + 1)] * rows)
        return layout
    per_row = -(-count // height)
    return [range(min(r * per_row, count), min((r + 1) * per_row, count)) for r in range(height)]


def render_heatmap(
    series: Sequence[SeriesView],
    width: int,
    height: int,
    x_range: tuple[float, float],
    y_range: tuple[float, float],
    levels: int = HEAT_LEVELS,
    ascii: bool = False,
) -> list[list[Run]]:
    """One band of shaded cells per series (see ``heatmap_layout``); owner = level.

    A cell is the mean of the series' means in its slice of time, quantised
    into ``levels`` steps over ``y_range`` (values beyond it take the end
    levels). A cell with no point holds the previous value while the series
    goes on past it; a cell whose points are all non-finite is a gap. Its
    character is the level's shade (``glyphs.heat_glyph``: ``░▒▓█``, or
    ``.:-=+*#%@`` with ``ascii``), so density reads without colour too.
    """
    if levels < 1:
        raise ValueError(f"levels must be at least 1, got {levels}")
    if width <= 0 or height <= 0:
        return _blank(width, height)
    x_usable = _usable(*x_range)
    y_usable = _usable(*y_range)
    if x_usable is None or y_usable is None:
        return _blank(width, height)
    cells = [_cell_means(view, width, x_usable) for view in series]
    y_low, y_high = y_usable
    scale = levels / (y_high - y_low)
    top_level = levels - 1
    shades = [heat_glyph(level, levels, ascii) for level in range(levels)]
    rows: list[list[Run]] = []
    cached: dict[range, list[Run]] = {}
    for members in heatmap_layout(len(series), height):
        if members not in cached:
            owners = []
            for column in range(width):
                values = [value for i in members if (value := cells[i][column]) is not None]
                if not values:
                    owners.append(EMPTY)
                    continue
                level = (max(values) - y_low) * scale
                # A mean that overflowed (inf, or NaN from inf - inf) takes an end level, never int(inf).
                owners.append(top_level if level > top_level else int(level) if level >= 0 else 0)
            text = "".join(" " if owner == EMPTY else shades[owner] for owner in owners)
            cached[members] = merge_runs(text, owners)
        rows.append(list(cached[members]))
    return rows


def _cell_means(view: SeriesView, width: int, x_range: tuple[float, float]) -> list[float | None]:
    t0, t1 = x_range
    start, stop = _visible(view.t, t0, t1)
    sums = [0.0] * width
    counts = [0] * width
    seen = [False] * width
    scale = width / (t1 - t0)
    last = width - 1
    column, col_start, col_end = 0, 0.0, -math.inf
    total, count = 0.0, 0
    for t, mean in zip(_window(view.t, start, stop), _window(view.mean, start, stop)):
        if not col_start <= t < col_end:
            if not t0 <= t <= t1:  # NaN or out-of-order times
                continue
            sums[column] += total
            counts[column] += count
            total, count = 0.0, 0
            column = min(int((t - t0) * scale), last)
            col_start = t0 + column / scale
            col_end = t0 + (column + 1) / scale
            seen[column] = True
        if mean - mean == 0.0:  # finite
            total += mean
            count += 1
    sums[column] += total
    counts[column] += count

    held: float | None = None
    if start > 0:
        before = view.mean[start - 1]
        held = before if math.isfinite(before) else None
    if stop < len(view.t):
        reach = last  # the series goes on past the right edge
    else:
        reach = max((c for c in range(width) if seen[c]), default=-1)
    out: list[float | None] = [None] * width
    for column in range(reach + 1):
        if counts[column]:
            held = sums[column] / counts[column]
        elif seen[column]:
            held = None
        out[column] = held
    return out
