"""A pause of Python's cyclic garbage collector around bulk work that makes and frees many containers.

A big Prometheus answer is tens of thousands of dicts and lists, and a redraw
over thousands of series makes as many small arrays and tuples; reference
counting frees them all, yet each batch of allocations sets off a
collection that scans every object the app holds. Paused, that scan happens
once afterwards, not dozens of times during the work.
"""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from typing import Iterator

_LOCK = threading.Lock()
_held = 0  # pauses held now, by any thread
_was_enabled = True  # whether collection was on before the first of them


@contextmanager
def collection_paused() -> Iterator[None]:
    """No cyclic collection until the last pause held by any thread ends; then it is on again if it was before."""
    global _held, _was_enabled
    with _LOCK:
        _held += 1
        if _held == 1:
            _was_enabled = gc.isenabled()
            gc.disable()
    try:
        yield
    finally:
        with _LOCK:
            _held -= 1
            if _held == 0 and _was_enabled:
                gc.enable()
