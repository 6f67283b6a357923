"""How long a loop that failed waits before it tries again: 1, 2, 4 … 30 s by default.

One rule for every worker loop that must go on after an error (the tailers,
the workspace scan, the cluster poller, ``leet watch``'s follower), so that a
fault that lasts is retried ever less often and never stops monitoring.
"""

from __future__ import annotations

BACKOFF_FIRST = 1.0  # seconds before the first retry of a loop that failed
BACKOFF_MAX = 30.0


def backoff(failures: int, first: float = BACKOFF_FIRST, most: float = BACKOFF_MAX) -> float:
    """Seconds to wait after the ``failures``-th failure in a row: first, twice that, … at most ``most``."""
    return min(most, first * 2 ** max(0, min(failures - 1, 64)))
