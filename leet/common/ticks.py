"""Axis tick maths: round steps, value ticks, whole-number ticks, clock ticks.

Pure Python, no Textual.
"""

from __future__ import annotations

import math
from datetime import tzinfo
from typing import Iterator

from leet.common.clock import clock_text, utc_offset

_MANTISSAS = (1.0, 2.0, 2.5, 5.0)

# Clock steps in seconds; each lands on round local instants.
_TIME_STEPS = (
    1, 2, 5, 10, 15, 30,
    60, 120, 300, 600, 900, 1800,
    3600, 7200, 10800, 21600, 43200,
    86400, 2 * 86400, 7 * 86400, 14 * 86400, 28 * 86400,
)
_DAY = 86400

# Axes reach at most ±LIMIT (and log axes no closer to zero than 1/LIMIT):
# a span between the largest floats overflows, one between subnormals rounds to 0.
LIMIT = 1e300
_TINIEST = 1e-290  # a span or value below this cannot be cut into steps


def _clean(value: float) -> float:
    """Drop float noise (0.30000000000000004 → 0.3) and negative zero."""
    return float(f"{value:.15g}") + 0.0


def _check_finite(**values: float) -> None:
    for name, value in values.items():
        if not math.isfinite(value):
            raise ValueError(f"{name} must be a finite number, got {value!r}")


def _check_target(target: int) -> None:
    if target < 1:
        raise ValueError(f"target must be at least 1, got {target!r}")


def _ladder(raw: float) -> Iterator[float]:
    """Nice steps from the largest one not above ``raw`` upwards."""
    exponent = math.floor(math.log10(raw))
    while True:
        base = 10.0**exponent
        for mantissa in _MANTISSAS:
            yield _clean(mantissa * base)
        exponent += 1


def nice_step(span: float, target: int) -> float:
    """The smallest step of 1, 2, 2.5 or 5 × 10^k that cuts ``span`` into at most ``target`` parts."""
    if not (math.isfinite(span) and span > 0):
        raise ValueError(f"span must be a positive finite number, got {span!r}")
    _check_target(target)
    raw = span / target
    for step in _ladder(raw):
        if step >= raw * (1 - 1e-12):
            return step
    raise AssertionError("unreachable")


def _flat(lo: float, hi: float) -> tuple[float, float]:
    """Open up a range with no width so it reaches zero (or 0..1 at zero)."""
    value = hi if abs(hi) >= abs(lo) else lo
    if abs(value) < _TINIEST:
        return 0.0, 1.0
    if value > 0:
        return 0.0, value
    if value < 0:
        return value, 0.0
    return 0.0, 1.0


def _ordered(lo: float, hi: float) -> tuple[float, float]:
    _check_finite(lo=lo, hi=hi)
    if lo > hi:
        lo, hi = hi, lo
    lo, hi = max(lo, -LIMIT), min(hi, LIMIT)
    if hi - lo <= max(1e-12 * max(abs(lo), abs(hi)), _TINIEST):
        lo, hi = _flat(lo, hi)
    return lo, hi


def nice_range(lo: float, hi: float, target: int = 4) -> tuple[float, float, float]:
    """(lo', hi', step): round bounds with lo' <= lo, hi' >= hi, at most ``target`` steps apart.

    Equal bounds open up to reach zero; reversed bounds are swapped.
    """
    _check_target(target)
    lo, hi = _ordered(lo, hi)
    raw = (hi - lo) / target
    for step in _ladder(raw):
        if step < raw * (1 - 1e-12):
            continue
        low = math.floor(lo / step + 1e-9) * step
        high = math.ceil(hi / step - 1e-9) * step
        if round((high - low) / step) <= target:
            return _clean(low), _clean(high), step
    raise AssertionError("unreachable")


def nice_ticks(lo: float, hi: float, target: int = 4) -> list[float]:
    """Ticks every nice step across ``nice_range(lo, hi, target)``, ends included."""
    low, high, step = nice_range(lo, hi, target)
    count = round((high - low) / step)
    return [_clean(low + i * step) for i in range(count + 1)]


def integer_ticks(lo: float, hi: float, target: int) -> list[int]:
    """Whole-number ticks for a step axis or a count; the first is <= lo, the last a round number >= hi.

    Steps are 1, 2 or 5 × 10^k, never below 1: a chart of 0 to 2 processes
    is ticked 0, 1, 2, never 0.5 or 1.5.
    """
    _check_target(target)
    _check_finite(lo=lo, hi=hi)
    if lo > hi:
        lo, hi = hi, lo
    low, high = math.floor(lo), math.ceil(hi)
    if high == low:
        high = low + 1
    raw = (high - low) / target
    for candidate in _ladder(max(raw, 1.0)):
        step = int(candidate)
        if step != candidate or step < raw:
            continue
        first = (low // step) * step
        last = -(-high // step) * step
        if (last - first) // step <= target:
            return list(range(first, last + 1, step))
    raise AssertionError("unreachable")


def log_ticks(lo: float, hi: float, target: int = 4, prefix_step: float = 1000.0) -> list[float]:
    """Powers of ten covering [lo, hi] (both > 0); 1-2-5 within a single decade.

    With ``prefix_step`` 1024 (bytes: KiB, MiB …) each tick is moved to a
    1-2-5 number of the prefix it is shown in (100 MiB, not 95.4 MiB).
    """
    ticks = _decade_ticks(lo, hi, target)
    if prefix_step == 1024.0:
        return _round_in_binary_prefixes(ticks)
    return ticks


_NICE = (1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0)


def _binary_nice(value: float, way: str) -> float:
    """``value`` moved to a 1-2-5 number of its binary prefix: ``down``, ``up`` or the ``nearest``."""
    power = 0
    while value >= 1024.0 ** (power + 1) and power < 8:
        power += 1
    scale = 1024.0**power
    shown = value / scale
    below = max((n for n in _NICE if n <= shown), default=_NICE[0])
    above = min((n for n in _NICE if n >= shown), default=_NICE[-1])
    if way == "down":
        chosen = below
    elif way == "up":
        chosen = above
    else:
        chosen = min((below, above), key=lambda n: abs(math.log(n / shown)))
    return 1024.0 * scale if chosen >= 1000.0 else chosen * scale


def _round_in_binary_prefixes(ticks: list[float]) -> list[float]:
    """The first tick rounded down and the last up, so the axis still covers the data."""
    if len(ticks) < 2:
        return ticks
    middle = [_binary_nice(tick, "nearest") for tick in ticks[1:-1]]
    return sorted({_binary_nice(ticks[0], "down"), *middle, _binary_nice(ticks[-1], "up")})


def _decade_ticks(lo: float, hi: float, target: int) -> list[float]:
    _check_target(target)
    _check_finite(lo=lo, hi=hi)
    if not (lo > 0 and hi > 0):
        raise ValueError(f"log ticks need positive bounds, got {lo!r}..{hi!r}")
    if lo > hi:
        lo, hi = hi, lo
    lo, hi = min(max(lo, 1 / LIMIT), LIMIT), min(max(hi, 1 / LIMIT), LIMIT)
    first = math.floor(math.log10(lo) + 1e-9)
    last = max(first + 1, math.ceil(math.log10(hi) - 1e-9))
    if last - first == 1 and target >= 3:
        base = 10.0**first
        return [_clean(m * base) for m in (1, 2, 5, 10)]
    every = -(-(last - first) // target)
    last = first + every * -(-(last - first) // every)
    return [_clean(10.0**e) for e in range(first, last + 1, every)]


# Clock labels, by the span a time axis shows. Every chart on a screen shows
# the same span, so every time axis on a screen writes its labels alike
# (seconds on all or on none), however wide each chart is.
SECONDS_BELOW = 150.0  # a shorter span labels its ticks "14:05:30"
DATES_FROM = 2.0 * _DAY  # a longer one "Mar 05"; between the two, "14:05"
_LABEL_LENGTHS = {"%b %d": 6, "%H:%M": 5, "%H:%M:%S": 8}
_SMALLEST_STEP = {"%b %d": _DAY, "%H:%M": 60, "%H:%M:%S": 1}


def time_format(span: float) -> str:
    """The strftime format of every clock label on an axis showing ``span`` seconds."""
    if span < SECONDS_BELOW:
        return "%H:%M:%S"
    if span < DATES_FROM:
        return "%H:%M"
    return "%b %d"


def _utc_offset(instant: float, tz: tzinfo | None) -> float:
    return utc_offset(instant, tz)


def _format_time(instant: float, fmt: str, tz: tzinfo | None) -> str:
    return clock_text(instant, fmt, tz)


def time_ticks(
    t0: float, t1: float, width: int, label_width: int = 6, tz: tzinfo | None = None, fmt: str | None = None
) -> list[tuple[int, str]]:
    """(column, label) for round wall-clock instants in [t0, t1] across ``width`` cells.

    Labels are written in ``fmt``, by default :func:`time_format` of the
    span: "14:05:30" below two and a half minutes, "14:05" below two days,
    "Mar 05" beyond, so charts of one span label alike whatever their width.
    The step is the smallest of 1 s … 28 d that the format can tell apart
    (a minute or more for "14:05", a day or more for "Mar 05") and that
    leaves at least two blank cells between labels of ``max(label_width,
    label length)``. The column is the cell holding the instant. ``tz``
    defaults to local time. An instant no calendar holds is labelled "?";
    a range floating point cannot step through (far from the epoch) gets
    no ticks.
    """
    span = t1 - t0
    if width <= 0 or not (math.isfinite(t0) and math.isfinite(t1) and math.isfinite(span)) or span <= 0:
        return []
    fmt = fmt or time_format(span)
    step = _time_step(span, width, max(label_width, _LABEL_LENGTHS.get(fmt, label_width)), _SMALLEST_STEP.get(fmt, 1))
    offset = _utc_offset(t0, tz)
    # float(step): near the largest floats the product overflows to inf (no ticks) rather than raising.
    instant = math.ceil((t0 + offset) / step) * float(step) - offset
    ticks: list[tuple[int, str]] = []
    while instant <= t1 and len(ticks) <= width:
        column = min(max(int((instant - t0) / span * width), 0), width - 1)
        ticks.append((column, _format_time(instant, fmt, tz)))
        following = instant + step
        if following <= instant:  # the step is below a float's resolution here
            break
        instant = following
    return ticks


def _time_step(span: float, width: int, label_width: int, smallest: int = 1) -> int:
    """The clock step for ``span`` seconds over ``width`` cells, labels ``label_width`` wide (see :func:`time_ticks`)."""
    room = label_width + 2
    for candidate in _TIME_STEPS:
        if candidate >= smallest and candidate * width / span >= room:
            return candidate
    return _DAY * math.ceil(span * room / width / _DAY)


STEP_TICKS = 5  # ticks a step axis aims for
STEP_GRAIN = 40  # a step axis ends on the next multiple of a round grain of about 1/40 of its span


def step_range(first: float | None, last: float | None) -> tuple[float, float]:
    """The x range of a step axis: from the first step to just past the last one.

    The end is the last step rounded up to a whole, round grain (1, 2, 2.5 or
    5 × 10^k) of at least a fortieth of the span (31,257 → 32,000, 299 → 300,
    5 → 5), so the axis ends at most about 5 % past the data rather than on
    the next round tick (which may lie a third beyond it), and stays still
    while a growing run fills the grain instead of rescaling on every step.
    One rule for the run view, the workspace and ``--plot``; the ticks
    inside it come from :func:`step_ticks`.
    """
    if first is None or last is None:
        return 0.0, 1.0
    _check_finite(first=first, last=last)
    if last <= first:
        return first, first + 1
    raw = (last - first) / STEP_GRAIN
    grain = next(step for step in _ladder(max(raw, 1.0)) if step >= raw and step == int(step))
    end = math.ceil(last / grain - 1e-9) * grain  # a multiple of the grain, wherever the axis starts
    return first, _clean(end)


def step_ticks(first: float, last: float, target: int = STEP_TICKS) -> list[int]:
    """Round whole-number ticks inside a step axis ``[first, last]``, ends included where round."""
    return [tick for tick in integer_ticks(first, last, target) if first <= tick <= last]
