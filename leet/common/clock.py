"""Wall-clock text for any number a run file may hold, without raising.

Times in a run file are untrusted: NaN, infinities, ints too large for a
float, years past 9999 or before 1, and instants the platform's time
functions refuse (``EOVERFLOW`` near 2**62) all end up here. Each becomes
``UNKNOWN_TIME`` rather than an exception in the middle of a draw.
Pure Python, no Textual.
"""

from __future__ import annotations

import math
from datetime import datetime, tzinfo

UNKNOWN_TIME = "?"

DATE_TIME = "%Y-%m-%d %H:%M:%S"

# What datetime, time.localtime and strftime raise for an instant they cannot hold.
_REFUSED = (OverflowError, OSError, ValueError, TypeError)


def moment(seconds: float, tz: tzinfo | None = None) -> datetime | None:
    """``seconds`` since the epoch as an aware-or-local datetime; None when no calendar holds it."""
    try:
        if not math.isfinite(seconds):
            return None
        return datetime.fromtimestamp(seconds, tz)
    except _REFUSED:
        return None


def clock_text(seconds: float, fmt: str = DATE_TIME, tz: tzinfo | None = None) -> str:
    """``seconds`` as ``fmt`` in ``tz`` (local time by default), or ``UNKNOWN_TIME``."""
    found = moment(seconds, tz)
    if found is None:
        return UNKNOWN_TIME
    try:
        return found.strftime(fmt)
    except _REFUSED:
        return UNKNOWN_TIME


def utc_offset(seconds: float, tz: tzinfo | None = None) -> float:
    """Seconds ``tz`` (local time by default) is ahead of UTC at ``seconds``; 0 where that is unknowable."""
    found = moment(seconds, tz)
    if found is None:
        return 0.0
    try:
        offset = found.utcoffset() if tz else found.astimezone().utcoffset()
    except _REFUSED:
        return 0.0
    return offset.total_seconds() if offset else 0.0


__all__ = ["DATE_TIME", "UNKNOWN_TIME", "clock_text", "moment", "utc_offset"]
