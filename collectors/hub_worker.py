"""The hub's worker threads: one per collector, making every call into it in order.

A call's outcome (its value or what it raised, and how long it took) goes
to the hub's results queue as a ``_Result``; the hub decides what it means.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from collectors.base import Collector

if TYPE_CHECKING:
    from collectors.hub import _Slot

# The hub's own logger: a worker's messages are the hub's.
_log = logging.getLogger("collectors.hub")


@dataclass
class _Result:
    slot: "_Slot"
    kind: str
    ticket: int
    ok: bool
    payload: Any
    elapsed_ms: float


class _Worker:
    """A daemon thread that makes every call into one collector, in order."""

    def __init__(self, name: str, results: queue.SimpleQueue) -> None:
        self._name = name
        self._results = results
        self._jobs: queue.SimpleQueue | None = None
        self._closed = False

    def submit(self, slot: "_Slot", kind: str, ticket: int, call: Callable[[], Any]) -> bool:
        """Queue one call whose outcome goes to the results queue."""
        if self._closed:
            return False
        self._ensure_thread().put((slot, kind, ticket, call))
        return True

    def retire(self) -> None:
        """Let the thread end; a later submit starts a new one."""
        if self._jobs is not None:
            self._jobs.put(None)
            self._jobs = None

    def close(self, collector: Collector) -> threading.Event:
        """Queue ``collector.close()`` after whatever is running, then end."""
        done = threading.Event()
        if self._closed:
            done.set()
            return done
        jobs = self._ensure_thread()
        jobs.put(("close", collector, done))
        jobs.put(None)
        self._jobs = None
        self._closed = True
        return done

    def _ensure_thread(self) -> queue.SimpleQueue:
        if self._jobs is None:
            self._jobs = queue.SimpleQueue()
            thread = threading.Thread(
                target=self._loop, args=(self._jobs,), name=f"leet-{self._name}", daemon=True
            )
            thread.start()
        return self._jobs

    def _loop(self, jobs: queue.SimpleQueue) -> None:
        while True:
            job = jobs.get()
            if job is None:
                return
            if job[0] == "close":
                _close_quietly(job[1], job[2])
                continue
            slot, kind, ticket, call = job
            began = time.perf_counter()
            try:
                payload, ok = call(), True
            except BaseException as exc:  # noqa: BLE001 - isolate anything a collector does
                payload, ok = exc, False
            elapsed_ms = (time.perf_counter() - began) * 1000
            self._results.put(_Result(slot, kind, ticket, ok, payload, elapsed_ms))


def _close_quietly(collector: Collector, done: threading.Event) -> None:
    try:
        collector.close()
    except BaseException:  # noqa: BLE001 - close must never take the hub down
        _log.debug("close() of %s raised", collector.name, exc_info=True)
    finally:
        done.set()
