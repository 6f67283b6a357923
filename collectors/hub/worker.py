"""The Hub's worker threads: one per collector, making every call into it in order.

A call's outcome (its value or what it raised, and how long it took) goes to
the Hub's results queue as a ``Result``; the sweeper decides what it means.
"""

from __future__ import annotations

import logging
import queue
import threading

from collectors.base import Collector
from collectors.hub.sweeper import Call

_log = logging.getLogger(__name__)


class Worker:
    """A daemon thread that makes every call into one collector, in order."""

    def __init__(self, name: str, results: queue.SimpleQueue) -> None:
        self._name = name
        self._results = results
        self._jobs: queue.SimpleQueue | None = None
        self._closed = False

    def submit(self, call: Call) -> bool:
        """Queue ``call``; its Result goes to the results queue. False once closed."""
        if self._closed:
            return False
        self._ensure_thread().put(call)
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
        jobs.put((collector, done))
        jobs.put(None)
        self._jobs = None
        self._closed = True
        return done

    def _ensure_thread(self) -> queue.SimpleQueue:
        if self._jobs is None:
            self._jobs = queue.SimpleQueue()
            thread = threading.Thread(target=self._loop, args=(self._jobs,), name=f"leet-{self._name}", daemon=True)
            thread.start()
        return self._jobs

    def _loop(self, jobs: queue.SimpleQueue) -> None:
        while True:
            job = jobs.get()
            if job is None:
                return
            if isinstance(job, Call):
                # Anything a collector raises, even SystemExit, is its answer: it must not end this thread.
                self._results.put(job.perform(isolating=BaseException))
            else:
                _close_quietly(*job)


def _close_quietly(collector: Collector, done: threading.Event) -> None:
    try:
        collector.close()
    except BaseException:  # noqa: BLE001 - close must never take the hub down
        _log.debug("close() of %s raised", collector.name, exc_info=True)
    finally:
        done.set()
