"""The hub: runs every collector on a schedule and merges one Sample per sweep.

One scheduling thread sweeps every ``interval``, which ``set_interval`` may
change from any thread while it runs. Every call into a collector
(probe, sample + extras, close) runs on that collector's own persistent
worker thread (``hub_worker``), so a collector that hangs or raises costs
the others nothing: the hub waits for each one only up to its ``budget``,
marks it HUNG or FAILING with a reason, and goes on.

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
import numbers
import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from collectors.base import Collector, CollectorStatus, Health, Probe, Sample
from collectors.hub_worker import _Result, _Worker

_log = logging.getLogger(__name__)

MIN_INTERVAL = 0.01
MAX_INTERVAL = 3600.0
MAX_BACKOFF = 60.0
# The longest single wait the hub makes. Waits are re-armed until they are
# due, so a huge interval or budget can never reach the OverflowError that
# Event.wait and Queue.get raise past threading.TIMEOUT_MAX, which would end
# the scheduling thread.
MAX_WAIT = 60.0

# A sweep skips a collector whose cadence is not yet due; this slack (a share
# of the shorter of interval and cadence) keeps scheduling jitter from
# skipping a whole extra sweep.
CADENCE_SLACK = 0.1

# How long, as a share of the interval, a scheduled sweep (and the first
# probe) waits for slow collectors before it hands out what it has.
SWEEP_WAIT_SHARE = 0.5

_PROBE = "probe"
_SAMPLE = "sample"
_WAKE = object()  # put on the results queue to interrupt a waiting sweep


def with_label(values: Mapping[str, float], label: str | None) -> dict[str, float]:
    """Every key with W&B's node-label suffix ``/l:<label>`` (unchanged without one)."""
    if not label:
        return dict(values)
    suffix = f"/l:{label}"
    return {f"{key}{suffix}": value for key, value in values.items()}


def merge_extras(parts: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Merge collectors' extras; the first collector to use a key keeps it."""
    merged: dict[str, Any] = {}
    for part in parts:
        for key, value in part.items():
            merged.setdefault(key, value)
    return merged


def clean_values(raw: Any) -> dict[str, float]:
    """A collector's ``sample()`` as ``{str: finite float}``.

    Raises TypeError for something that is not a mapping; drops single
    entries that are not finite numbers, so one bad key loses nothing else.
    """
    if not isinstance(raw, Mapping):
        raise TypeError(f"sample() returned {type(raw).__name__}, expected a mapping")
    values: dict[str, float] = {}
    for key, value in raw.items():
        kind = type(value)
        if kind is not float and kind is not int:
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                _log.debug("dropping %r: %r is not a number", key, value)
                continue
        value = float(value)
        if math.isfinite(value):
            values[str(key)] = value
    return values


def backoff_delay(failures: int) -> float:
    """Seconds before retrying after ``failures`` failures in a row: 1, 2, 4 … 60."""
    return min(MAX_BACKOFF, 2.0 ** min(max(failures - 1, 0), 16))


def describe_error(exc: BaseException) -> str:
    message = str(exc).strip()
    name = type(exc).__name__
    return f"{name}: {message}" if message else name


def _seconds(value: float) -> str:
    return f"{value:.1f}" if value >= 1 else f"{value:.2g}"


@dataclass(eq=False)
class _Slot:
    """The hub's book-keeping for one collector (touched only under the sweep lock)."""

    collector: Collector
    worker: _Worker
    health: Health = Health.OK
    reason: str = "starting"
    last_ms: float = 0.0
    probed: bool = False
    available: bool = False
    in_flight: int | None = None  # ticket of the call the worker is running
    awaiting: int | None = None  # ticket whose answer is still wanted (within its budget)
    deadline: float = 0.0  # when the awaited call runs past its budget
    failures: int = 0
    retry_at: float = 0.0
    last_sampled: float | None = None
    fresh: dict[str, float] | None = None
    extras: Mapping[str, Any] = field(default_factory=dict)

    def status(self) -> CollectorStatus:
        return CollectorStatus(self.collector.name, self.health, self.reason, self.last_ms)


def _sample_call(collector: Collector) -> Callable[[], tuple[dict[str, float], Mapping[str, Any]]]:
    def call() -> tuple[dict[str, float], Mapping[str, Any]]:
        values = clean_values(collector.sample())
        extras = collector.extras()
        if not isinstance(extras, Mapping):
            raise TypeError(f"extras() returned {type(extras).__name__}, expected a mapping")
        return values, extras

    return call


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
        self._label = label or None
        self._results: queue.SimpleQueue = queue.SimpleQueue()
        self._slots = tuple(
            _Slot(c, _Worker(getattr(c, "name", type(c).__name__), self._results))
            for c in collectors
        )
        self._subscribers: tuple[Callable[[Sample], None], ...] = ()
        self._failed_subscribers: set[int] = set()
        self._lock = threading.Lock()  # one sweep or probe at a time
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._rescheduled = False
        self._thread: threading.Thread | None = None
        self._tickets = 0
        self._probed = False
        self._stopped = False
        self._status = tuple(slot.status() for slot in self._slots)

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
        return self._label

    @property
    def collectors(self) -> tuple[Collector, ...]:
        return tuple(slot.collector for slot in self._slots)

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
            closing = [slot.worker.close(slot.collector) for slot in self._slots]
            # Waiting for a close queued behind a call known to be stuck is
            # pointless: it runs whenever that call returns.
            if locked:
                closing = [
                    done for done, slot in zip(closing, self._slots) if slot.health is not Health.HUNG
                ]
        finally:
            if locked:
                self._lock.release()
        for done in closing:
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
        for slot in self._slots:
            if not slot.probed and slot.in_flight is None:
                self._dispatch(slot, _PROBE)
        self._await(time.monotonic() + wait_limit)
        self._status = tuple(slot.status() for slot in self._slots)

    def _sweep_locked(self, wait_limit: float) -> Sample:
        self._absorb_waiting()
        timestamp = self._clock()
        now = time.monotonic()
        for slot in self._slots:
            if self._due(slot, now) and self._dispatch(slot, _SAMPLE):
                slot.last_sampled = now
        self._await(now + wait_limit)
        values: dict[str, float] = {}
        for slot in self._slots:
            if slot.fresh:
                values.update(slot.fresh)
                slot.fresh = None
        extras = merge_extras([slot.extras for slot in self._slots if slot.extras])
        self._status = tuple(slot.status() for slot in self._slots)
        return Sample(
            timestamp=timestamp,
            values=with_label(values, self._label),
            extras=extras,
            status=self._status,
        )

    def _due(self, slot: _Slot, now: float) -> bool:
        if not slot.available or slot.in_flight is not None:
            return False
        if slot.failures and now < slot.retry_at:
            return False
        cadence = slot.collector.cadence
        if slot.last_sampled is None or cadence <= 0:
            return True
        slack = CADENCE_SLACK * min(cadence, self._interval)
        return now - slot.last_sampled >= cadence - slack

    def _dispatch(self, slot: _Slot, kind: str) -> bool:
        self._tickets += 1
        collector = slot.collector
        call = collector.probe if kind == _PROBE else _sample_call(collector)
        if not slot.worker.submit(slot, kind, self._tickets, call):
            return False
        slot.in_flight = slot.awaiting = self._tickets
        slot.deadline = time.monotonic() + _budget(collector)
        return True

    def _await(self, until: float) -> None:
        """Absorb results until no answer is awaited, ``until`` passes, or stop.

        A call that runs past its budget meanwhile is given up on (HUNG);
        one still within it stays awaited, for a later sweep to take in.
        """
        while True:
            now = time.monotonic()
            awaited = [slot for slot in self._slots if slot.awaiting is not None]
            for slot in awaited:
                if slot.deadline <= now:
                    self._give_up(slot)
            deadlines = [slot.deadline for slot in awaited if slot.awaiting is not None]
            if not deadlines or now >= until:
                return
            try:
                item = self._results.get(timeout=min(min(deadlines) - now, until - now, MAX_WAIT))
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
        now = time.monotonic()
        for slot in self._slots:
            if slot.awaiting is not None and slot.deadline <= now:
                self._give_up(slot)

    def _give_up(self, slot: _Slot) -> None:
        slot.awaiting = None
        budget = _seconds(slot.collector.budget)
        slot.health = Health.HUNG
        slot.reason = (
            f"no answer in {budget} s" if slot.probed else f"probe gave no answer in {budget} s"
        )

    def _absorb(self, result: _Result) -> None:
        slot = result.slot
        if result.ticket == slot.in_flight:
            slot.in_flight = None
        slot.last_ms = result.elapsed_ms
        if result.kind == _PROBE:
            slot.awaiting = None
            self._apply_probe(slot, result)
            return
        if result.ticket != slot.awaiting:
            return  # past its budget, so stale by now; the next sweep asks again
        slot.awaiting = None
        if result.ok:
            slot.fresh, slot.extras = result.payload
            slot.health, slot.reason, slot.failures = Health.OK, "", 0
        else:
            self._apply_failure(slot, result.payload)

    def _apply_probe(self, slot: _Slot, result: _Result) -> None:
        slot.probed = True
        probe = result.payload
        if not result.ok:
            reason = f"probe failed: {describe_error(probe)}"
        elif not isinstance(probe, Probe):
            reason = f"probe failed: probe() returned {type(probe).__name__}, expected Probe"
        elif not probe.available:
            reason = probe.reason or "not available"
        else:
            slot.available = True
            slot.health, slot.reason = Health.OK, ""
            return
        slot.health, slot.reason = Health.ABSENT, reason
        slot.worker.retire()

    def _apply_failure(self, slot: _Slot, exc: BaseException) -> None:
        slot.failures += 1
        slot.retry_at = time.monotonic() + backoff_delay(slot.failures)
        slot.health, slot.reason = Health.FAILING, describe_error(exc)
        if slot.failures == 1:
            _log.debug("collector %s raised", slot.collector.name, exc_info=exc)


def _budget(collector: Collector) -> float:
    """A collector's budget in seconds; NaN counts as none, and the most it can be is ``MAX_INTERVAL``."""
    budget = collector.budget
    return min(budget, MAX_INTERVAL) if budget > 0 else 0.0


def _checked_interval(seconds: float) -> float:
    """A library caller's interval, refused rather than trusted: the hub's thread must outlive any value."""
    try:
        value = float(seconds)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"interval must be a number of seconds, got {seconds!r}") from None
    if not math.isfinite(value) or not MIN_INTERVAL <= value <= MAX_INTERVAL:
        raise ValueError(f"interval must be a finite number from {MIN_INTERVAL} s to {MAX_INTERVAL:g} s, got {seconds!r}")
    return value
