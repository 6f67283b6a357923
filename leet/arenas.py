"""Fewer glibc malloc arenas for a long-running, many-threaded leet.

glibc gives threads that allocate at the same time arenas of their own, up
to eight per core. leet's worker threads (one per collector, the tailers,
the pollers) each end up with one, and memory freed in one arena is not
reused for another's allocations, so resident memory creeps for a long
while under a steady load. Two arenas (the main one and one the workers
share) keep it flat: `benchmarks/symon.py --memory-soak 10` at 0.1 s went
from +0.1–0.4 MiB over the last five minutes to +0.0. The GIL already lets
one thread run Python at a time, so the workers barely contend for the
arena they share.

A ``MALLOC_ARENA_MAX`` the user set wins; elsewhere than glibc this does nothing.
"""

from __future__ import annotations

import os
import sys

ARENAS = 2
_M_ARENA_MAX = -8  # mallopt's parameter number, from glibc's malloc.h


def share_malloc_arenas(count: int = ARENAS) -> bool:
    """Cap glibc's malloc arenas at ``count``; call before threads start. True if the cap was set."""
    if not sys.platform.startswith("linux") or "MALLOC_ARENA_MAX" in os.environ:
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
        mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
        mallopt.restype = ctypes.c_int
        gnu_libc = libc.gnu_get_libc_version  # musl has mallopt but not this; its allocator has no arenas
    except (OSError, AttributeError):
        return False
    del gnu_libc
    return mallopt(_M_ARENA_MAX, count) == 1
