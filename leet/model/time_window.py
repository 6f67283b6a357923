"""Which stretch of time a live chart shows.

The window starts narrow so the first samples fill the chart, doubles as data
arrives (straight to the full span once less than a quarter of it is left),
and once it reaches its full span it moves forward in quarter-span
jumps instead of sliding every tick. Between jumps only the newest columns of
a chart change, which is what keeps repaints (and SSH traffic) small.
"""

from __future__ import annotations

import math

MIN_SPAN = 60.0


def tail_window(first: float, now: float, span: float, min_span: float = MIN_SPAN) -> tuple[float, float]:
    """``(start, end)`` of the visible time range for data from ``first`` to ``now``."""
    span = max(span, 1e-9)
    elapsed = max(0.0, now - first)
    if elapsed <= span:
        width = min(span, min_span)
        while width < elapsed:
            width = min(span, width * 2)
        if span - width < span / 4:
            width = span  # the last widening, as big as a jump forward: one relayout fewer
        return first, first + width
    step = span / 4
    jumps = math.ceil((elapsed - span) / step)
    end = first + span + jumps * step
    return end - span, end
