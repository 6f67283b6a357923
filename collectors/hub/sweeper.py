"""The sweep decisions, on an injected clock: who is due, what an answer means, what one sweep hands out.

A ``Sweeper`` keeps one ``Slot`` per collector and makes no call itself: it
names the calls it wants made (``probes``, ``due``), is told when one is
under way (``started``), and takes each outcome back as a ``Result``
(``absorb``), whenever it comes. Whoever drives it decides where calls run
and how long to wait: the Hub on a worker thread per collector, ``replay`` at
once on its own thread on a fake clock. Cadence, budgets, backoff and every
OK, ABSENT, FAILING and HUNG verdict are decided here alone.
"""

from __future__ import annotations

import logging
import math
import numbers
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from collectors.base import Collector, CollectorStatus, Health, Probe, Sample

_log = logging.getLogger(__name__)

MAX_BACKOFF = 60.0
# The longest a call may be waited for, whatever its collector asks: it keeps
# every deadline a finite time.
MAX_BUDGET = 3600.0

# A sweep skips a collector whose cadence is not yet due; this slack (a share
# of the shorter of interval and cadence) keeps scheduling jitter from
# skipping a whole extra sweep.
CADENCE_SLACK = 0.1

PROBE = "probe"
SAMPLE = "sample"


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


def budget_of(collector: Collector) -> float:
    """A collector's budget in seconds; NaN counts as none, and the most it can be is ``MAX_BUDGET``."""
    budget = collector.budget
    return min(budget, MAX_BUDGET) if budget > 0 else 0.0


def _seconds(value: float) -> str:
    return f"{value:.1f}" if value >= 1 else f"{value:.2g}"


@dataclass(eq=False)
class Slot:
    """What the sweeper knows of one collector; only the sweeper's driver, one sweep at a time, touches it."""

    collector: Collector
    health: Health = Health.OK
    reason: str = "starting"
    last_ms: float = 0.0
    probed: bool = False
    available: bool = False
    in_flight: int | None = None  # ticket of the call under way
    awaiting: int | None = None  # ticket whose answer is still wanted (within its budget)
    deadline: float = 0.0  # when the awaited call runs past its budget
    failures: int = 0
    retry_at: float = 0.0
    last_sampled: float | None = None
    fresh: dict[str, float] | None = None
    extras: Mapping[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return getattr(self.collector, "name", type(self.collector).__name__)

    @property
    def absent(self) -> bool:
        """Its probe said no: it is never called again."""
        return self.probed and not self.available

    def status(self) -> CollectorStatus:
        return CollectorStatus(self.collector.name, self.health, self.reason, self.last_ms)


@dataclass(frozen=True, eq=False)
class Result:
    """How one call went: its value (``ok``) or what it raised, and what it cost."""

    call: Call
    ok: bool
    payload: Any
    elapsed_ms: float


@dataclass(frozen=True, eq=False)
class Call:
    """One call the sweeper wants made into a collector; ``ticket`` tells its answer from a late one."""

    slot: Slot
    kind: str  # PROBE or SAMPLE
    ticket: int
    run: Callable[[], Any]

    def perform(self, timer: Callable[[], float] = time.perf_counter, isolating: type[BaseException] = Exception) -> Result:
        """Make the call; what it raised (of ``isolating``) is its answer too. ``timer`` measures it in seconds."""
        began = timer()
        try:
            payload, ok = self.run(), True
        except isolating as exc:
            payload, ok = exc, False
        return Result(self, ok, payload, (timer() - began) * 1000)


def _sample_call(collector: Collector) -> Callable[[], tuple[dict[str, float], Mapping[str, Any]]]:
    def call() -> tuple[dict[str, float], Mapping[str, Any]]:
        values = clean_values(collector.sample())
        extras = collector.extras()
        if not isinstance(extras, Mapping):
            raise TypeError(f"extras() returned {type(extras).__name__}, expected a mapping")
        return values, extras

    return call


class Sweeper:
    """Decides every sweep of ``collectors`` on ``clock`` (seconds that never go back) and merges it into a Sample."""

    def __init__(self, collectors: Sequence[Collector], clock: Callable[[], float] = time.monotonic, label: str | None = None) -> None:
        self.slots = tuple(Slot(collector) for collector in collectors)
        self.clock = clock
        self.label = label or None
        self._tickets = 0

    @property
    def collectors(self) -> tuple[Collector, ...]:
        return tuple(slot.collector for slot in self.slots)

    def status(self) -> tuple[CollectorStatus, ...]:
        return tuple(slot.status() for slot in self.slots)

    # -- what to call ----------------------------------------------------

    def probes(self) -> list[Call]:
        """A probe of every collector not yet probed and not busy."""
        return [self._call(slot, PROBE) for slot in self.slots if not slot.probed and slot.in_flight is None]

    def due(self, interval: float) -> list[Call]:
        """A sample of every collector due now, sweeping every ``interval`` seconds."""
        now = self.clock()
        return [self._call(slot, SAMPLE) for slot in self.slots if self._is_due(slot, now, interval)]

    def started(self, call: Call) -> None:
        """``call`` is under way: its budget runs from now, and its collector is busy until it answers."""
        slot, now = call.slot, self.clock()
        slot.in_flight = slot.awaiting = call.ticket
        slot.deadline = now + budget_of(slot.collector)
        if call.kind == SAMPLE:
            slot.last_sampled = now

    def _call(self, slot: Slot, kind: str) -> Call:
        self._tickets += 1
        collector = slot.collector
        return Call(slot, kind, self._tickets, collector.probe if kind == PROBE else _sample_call(collector))

    def _is_due(self, slot: Slot, now: float, interval: float) -> bool:
        if not slot.available or slot.in_flight is not None:
            return False
        if slot.failures and now < slot.retry_at:
            return False
        cadence = slot.collector.cadence
        if slot.last_sampled is None or cadence <= 0:
            return True
        slack = CADENCE_SLACK * min(cadence, interval)
        return now - slot.last_sampled >= cadence - slack

    # -- waiting ---------------------------------------------------------

    def give_up_overdue(self) -> None:
        """Mark HUNG every collector whose awaited call has run past its budget; its answer is no longer wanted."""
        now = self.clock()
        for slot in self.slots:
            if slot.awaiting is not None and slot.deadline <= now:
                self._give_up(slot)

    def next_deadline(self) -> float | None:
        """When the first awaited call runs past its budget; None when no answer is awaited."""
        return min((slot.deadline for slot in self.slots if slot.awaiting is not None), default=None)

    def _give_up(self, slot: Slot) -> None:
        slot.awaiting = None
        budget = _seconds(slot.collector.budget)
        slot.health = Health.HUNG
        slot.reason = f"no answer in {budget} s" if slot.probed else f"probe gave no answer in {budget} s"

    # -- answers ---------------------------------------------------------

    def absorb(self, result: Result) -> None:
        """Take in how a call went; a sample's answer that came past its budget is dropped."""
        call = result.call
        slot = call.slot
        if call.ticket == slot.in_flight:
            slot.in_flight = None
        slot.last_ms = result.elapsed_ms
        if call.kind == PROBE:
            slot.awaiting = None
            self._apply_probe(slot, result)
            return
        if call.ticket != slot.awaiting:
            return  # past its budget, so stale by now; the next sweep asks again
        slot.awaiting = None
        if result.ok:
            slot.fresh, slot.extras = result.payload
            slot.health, slot.reason, slot.failures = Health.OK, "", 0
        else:
            self._apply_failure(slot, result.payload)

    def _apply_probe(self, slot: Slot, result: Result) -> None:
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

    def _apply_failure(self, slot: Slot, exc: BaseException) -> None:
        slot.failures += 1
        slot.retry_at = self.clock() + backoff_delay(slot.failures)
        slot.health, slot.reason = Health.FAILING, describe_error(exc)
        if slot.failures == 1:
            _log.debug("collector %s raised", slot.collector.name, exc_info=exc)

    # -- the sweep's sample ----------------------------------------------

    def collect(self, timestamp: float) -> Sample:
        """The fresh values taken in since the last collect, labelled, with every collector's last extras and status."""
        values: dict[str, float] = {}
        for slot in self.slots:
            if slot.fresh:
                values.update(slot.fresh)
                slot.fresh = None
        return Sample(
            timestamp=timestamp,
            values=with_label(values, self.label),
            extras=merge_extras([slot.extras for slot in self.slots if slot.extras]),
            status=self.status(),
        )
