"""The x window a zoomed chart shows: zooming around a point, panning, and how the title says so.

Pure arithmetic, no Textual: a window is ``(lo, hi)`` in the chart's x units
(steps or Unix seconds), always inside the chart's full range.
"""

from __future__ import annotations

Window = tuple[float, float]

# Each wheel notch or `z` halves the span; `Z` doubles it.
ZOOM_IN = 0.5
ZOOM_OUT = 2.0

# A pan moves the window by this share of its width.
PAN_SHARE = 0.25


def clamp_window(window: Window, full: Window) -> Window:
    """``window`` moved (never stretched) to lie inside ``full``; cut to ``full`` when wider."""
    lo, hi = window
    full_lo, full_hi = full
    span = hi - lo
    if span >= full_hi - full_lo:
        return full
    if lo < full_lo:
        return full_lo, full_lo + span
    if hi > full_hi:
        return full_hi - span, full_hi
    return lo, hi


def zoom_window(window: Window, full: Window, anchor: float, factor: float) -> Window | None:
    """``window`` scaled by ``factor`` around ``anchor``, which keeps its place on screen.

    None when the result covers the full range: the chart is no longer zoomed.
    """
    lo, hi = window
    anchor = min(max(anchor, lo), hi)
    new = (anchor - (anchor - lo) * factor, anchor + (hi - anchor) * factor)
    if new[1] - new[0] <= 0:
        return window
    clamped = clamp_window(new, full)
    return None if clamped == full else clamped


def pan_window(window: Window, full: Window, direction: int, share: float = PAN_SHARE) -> Window:
    """``window`` moved ``direction`` (-1 left, +1 right) by ``share`` of its width, kept inside ``full``."""
    lo, hi = window
    shift = direction * share * (hi - lo)
    return clamp_window((lo + shift, hi + shift), full)


def anchor_at(window: Window, fraction: float) -> float:
    """The x at ``fraction`` (0 left edge, 1 right edge) across ``window``."""
    lo, hi = window
    return lo + (hi - lo) * min(max(fraction, 0.0), 1.0)


def zoom_label(window: Window, x_kind: str) -> str:
    """What the title line adds for a zoomed chart: its x range (steps as whole numbers)."""
    lo, hi = window
    if x_kind == "time":
        return f"⌕ {hi - lo:.0f}s"
    return f"⌕ {lo:.0f}–{hi:.0f}"
