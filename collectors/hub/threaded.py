"""The Hub: a ``Sweeper`` driven by a scheduling thread, with every call on its collector's own worker thread.

One scheduling thread sweeps every ``interval``, which ``set_interval`` may
change from any thread while it runs. Every call into a collector
(probe, sample + extras, close) runs on that collector's own persistent
worker thread (``worker``), so a collector that hangs or raises costs the
others nothing: the hub waits for each one only up to its ``budget``, and
the sweeper marks it HUNG or FAILING with a reason.

A sweep on the schedule waits for its collectors only a share of the
interval (``SWEEP_WAIT_SHARE``): a collector slower than that, but still
within its budget, is not hung; its answer joins the next sample. So a tool
that hangs until its own timeout costs the others' samples no more than
that share of one interval. ``Hub.sweep()``, for one-off callers such as
``leet symon --once``, waits for every collector up to its budget.
"""

from __future__ import annotations

import logging
import math
import queue
import threading
import time
from typing import Callable, Sequence

from collectors.base import Collector, CollectorStatus, Health, Sample
from collectors.hub.sweeper import Call, Result, Sweeper
from collectors.hub.worker import Worker

_log = logging.getLogger(__name__)

MIN_INTERVAL = 0.01
MAX_INTERVAL = 3600.0
# The longest single wait the hub makes. Waits are re-armed until they are
# due, so a huge interval or budget can never reach the OverflowError that
# Event.wait and Queue.get raise past threading.TIMEOUT_MAX, which would end
# the scheduling thread.
MAX_WAIT = 60.0

# How long, as a share of the interval, a scheduled sweep (and the first
# probe) waits for slow collectors before it hands out what it has.
SWEEP_WAIT_SHARE = 0.5

_WAKE = object()  # put on the results queue to interrupt a waiting sweep


class Hub:
    """Sweeps collectors on a worker thread and hands each merged Sample to subscribers."""

    def __init__(
        self,
        collectors: Sequence[Collector],
        interval: float = 2.0,
        clock: Callable[[], float] = time.time,
        warmup: float = 0.25,
        label: str | None = None,
    ) -> None:
        self._interval = _checked_interval(interval)
        self._clock = clock
        self._warmup = max(0.0, float(warmup))
        self._sweeper = Sweeper(collectors, clock=time.monotonic, label=label)
        self._results: queue.SimpleQueue = queue.SimpleQueue()
        self._workers = {slot: Worker(slot.name, self._results) for slot in self._sweeper.slots}
        self._subscribers: tuple[Callable[[Sample], None], ...] = ()
        self._failed_subscribers: set[int] = set()
        self._lock = threading.Lock()  # one sweep or probe at a time
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._rescheduled = False
        self._thread: threading.Thread | None = None
        self._probed = False
        self._stopped = False
        self._status = self._sweeper.status()

    # -- public API ------------------------------------------------------

    @property
    def interval(self) -> float:
        return self._interval

    def set_interval(self, seconds: float) -> None:
        """Change the sweep interval from any thread; it takes effect at once, not after the current wait.

        Budgets and cadences stay each collector's own: a collector slower
        than the new interval is not hung before its budget runs out (its
        answer joins a later sample), and a collector with a longer cadence
        is sampled no more often than that. Refused (``ValueError``) outside ``MIN_INTERVAL`` to
        ``MAX_INTERVAL``.
        """
        self._interval = _checked_interval(seconds)
        self._rescheduled = True
        self._wake.set()

    @property
    def label(self) -> str | None:
        return self._sweeper.label

    @property
    def collectors(self) -> tuple[Collector, ...]:
        return self._sweeper.collectors

    def subscribe(self, callback: Callable[[Sample], None]) -> None:
        """Call ``callback(sample)`` after every sweep, on the thread that swept."""
        self._subscribers = (*self._subscribers, callback)

    def status(self) -> tuple[CollectorStatus, ...]:
        return self._status

    def start(self) -> None:
        """Probe and sweep on a daemon thread; the first sweep comes after ``warmup``."""
        if self._stopped:
            raise RuntimeError("this hub was stopped; make a new one")
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, name="leet-hub", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 1.0) -> None:
        """Stop sweeping and close every collector, waiting at most ``timeout`` in all.

        A collector stuck in a call is closed after that call returns, on its
        own thread; stop does not wait for it past the timeout.
        """
        deadline = time.monotonic() + max(0.0, timeout)
        if self._stopped:
            return
        self._stopped = True
        self._stop.set()
        self._wake.set()
        self._results.put(_WAKE)
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(max(0.0, deadline - time.monotonic()))
        # A sweep in flight returns at once on _WAKE; if something still holds
        # the lock past the deadline, close anyway: the workers refuse new calls.
        locked = self._lock.acquire(timeout=max(0.0, deadline - time.monotonic()))
        try:
            closing = [(slot, worker.close(slot.collector)) for slot, worker in self._workers.items()]
            # Waiting for a close queued behind a call known to be stuck is
            # pointless: it runs whenever that call returns.
            waited = [done for slot, done in closing if not (locked and slot.health is Health.HUNG)]
        finally:
            if locked:
                self._lock.release()
        for done in waited:
            if not done.wait(max(0.0, deadline - time.monotonic())):
                break

    def sweep(self) -> Sample:
        """One sweep on the calling thread; delivers to subscribers and returns it.

        Probes first if nobody has yet, then waits ``warmup`` so collectors
        that measure between two readings have a span to measure.
        """
        if self._stopped:
            raise RuntimeError("this hub was stopped; make a new one")
        with self._lock:
            if not self._probed:
                self._probe_locked()
                self._stop.wait(min(self._warmup, self._interval, MAX_WAIT))
            sample = self._sweep_locked(math.inf)
        self._publish(sample)
        return sample

    # -- the schedule ----------------------------------------------------

    def _run(self) -> None:
        with self._lock:
            if not self._probed:
                self._probe_locked(self._interval * SWEEP_WAIT_SHARE)
        next_due = time.monotonic() + min(self._warmup, self._interval)
        anchor: float | None = None  # the slot of the last sweep
        while not self._stop.is_set():
            if self._rescheduled:
                self._rescheduled = False
                if anchor is not None:
                    next_due = self._next_slot(anchor)
            wait = next_due - time.monotonic()
            if wait > 0:
                self._wake.wait(min(wait, MAX_WAIT))
                self._wake.clear()
                continue
            anchor = next_due
            self._sweep_guarded()
            next_due = self._next_slot(anchor)

    def _next_slot(self, anchor: float) -> float:
        """The first slot ``anchor + k*interval`` still ahead: missed slots are skipped."""
        elapsed = time.monotonic() - anchor
        return anchor + (math.floor(elapsed / self._interval) + 1) * self._interval

    def _sweep_guarded(self) -> None:
        try:
            with self._lock:
                sample = self._sweep_locked(self._interval * SWEEP_WAIT_SHARE)
        except Exception:  # noqa: BLE001 - the hub thread must survive anything
            _log.exception("sweep failed")
            return
        if not self._stop.is_set():
            self._publish(sample)

    def _publish(self, sample: Sample) -> None:
        for callback in self._subscribers:
            try:
                callback(sample)
            except Exception:  # noqa: BLE001 - a subscriber must not kill the hub
                if id(callback) in self._failed_subscribers:
                    _log.debug("subscriber %r raised again", callback, exc_info=True)
                else:
                    self._failed_subscribers.add(id(callback))
                    _log.exception("subscriber %r raised; it stays subscribed", callback)

    # -- probing and sweeping (under self._lock) --------------------------

    def _probe_locked(self, wait_limit: float = math.inf) -> None:
        """Probe every collector; a probe slower than ``wait_limit`` is taken in by a later sweep."""
        self._probed = True
        self._submit(self._sweeper.probes())
        self._await(time.monotonic() + wait_limit)
        self._status = self._sweeper.status()

    def _sweep_locked(self, wait_limit: float) -> Sample:
        self._absorb_waiting()
        timestamp = self._clock()
        began = time.monotonic()
        self._submit(self._sweeper.due(self._interval))
        self._await(began + wait_limit)
        sample = self._sweeper.collect(timestamp)
        self._status = sample.status
        return sample

    def _submit(self, calls: list[Call]) -> None:
        for call in calls:
            if self._workers[call.slot].submit(call):
                self._sweeper.started(call)

    def _await(self, until: float) -> None:
        """Absorb results until no answer is awaited, ``until`` passes, or stop.

        A call that runs past its budget meanwhile is given up on (HUNG);
        one still within it stays awaited, for a later sweep to take in.
        """
        while True:
            self._sweeper.give_up_overdue()
            deadline = self._sweeper.next_deadline()
            now = time.monotonic()
            if deadline is None or now >= until:
                return
            try:
                item = self._results.get(timeout=min(max(0.0, min(deadline, until) - now), MAX_WAIT))
            except queue.Empty:
                continue
            if item is _WAKE:
                if self._stop.is_set():
                    return
                continue
            self._absorb(item)

    def _absorb_waiting(self) -> None:
        """Take in results that came after their sweep stopped waiting, and give up on calls past their budget."""
        while True:
            try:
                item = self._results.get_nowait()
            except queue.Empty:
                break
            if item is not _WAKE:
                self._absorb(item)
        self._sweeper.give_up_overdue()

    def _absorb(self, result: Result) -> None:
        self._sweeper.absorb(result)
        slot = result.call.slot
        if slot.absent:
            self._workers[slot].retire()  # never called again, so it needs no thread


def _checked_interval(seconds: float) -> float:
    """A library caller's interval, refused rather than trusted: the hub's thread must outlive any value."""
    try:
        value = float(seconds)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"interval must be a number of seconds, got {seconds!r}") from None
    if not math.isfinite(value) or not MIN_INTERVAL <= value <= MAX_INTERVAL:
        raise ValueError(f"interval must be a finite number from {MIN_INTERVAL} s to {MAX_INTERVAL:g} s, got {seconds!r}")
    return value
