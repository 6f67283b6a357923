"""The hub: runs every collector on a schedule and merges one Sample per sweep.

``sweeper`` decides every sweep (who is due, what an answer means, the
merged Sample) on whatever clock it is given; ``threaded`` is the ``Hub``
that drives it on a scheduling thread, with a ``worker`` thread per
collector.
"""

from collectors.hub.sweeper import (
    MAX_BACKOFF,
    Call,
    Sweeper,
    backoff_delay,
    clean_values,
    describe_error,
    merge_extras,
    with_label,
)
from collectors.hub.threaded import MAX_INTERVAL, MIN_INTERVAL, SWEEP_WAIT_SHARE, Hub

__all__ = [
    "MAX_BACKOFF",
    "MAX_INTERVAL",
    "MIN_INTERVAL",
    "SWEEP_WAIT_SHARE",
    "Call",
    "Hub",
    "Sweeper",
    "backoff_delay",
    "clean_values",
    "describe_error",
    "merge_extras",
    "with_label",
]
