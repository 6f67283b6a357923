"""Carrying alerts to their sinks on threads of their own, so the caller never waits.

``Delivery(sinks)`` gives each sink a bounded queue and a worker thread
(``leet-sink-N``). ``submit`` only appends: a slow, hung or dead sink costs
only itself, and a full queue drops that sink's oldest alert.

A sink may ask the worker to wait before a send (``ready_in()``: Apprise's
own rate limit, which it would otherwise sleep inside the send, eating its
timeout). Each send then runs in a short-lived thread (``leet-sink-N-send``)
that the worker waits on for the timeout, plus a short grace in which the
sink's own timeout (Apprise's socket timeouts, a command's kill) can say more.
A sink's own ``timeout`` attribute, when set, replaces the delivery's. A send
still running after that is ``hung`` and failed. While a hung send is still
running, the sink's next attempt first waits for it up to the timeout; if it
is still there, that attempt fails too without starting another thread, so
a sink never has more than one send outstanding. (A hung send that finishes
late is not counted: its alert was already retried or given up, so an
alert may then reach that sink twice.)

A failed attempt is tried again after ``backoff[0]``, ``backoff[1]`` … (the
last repeated) up to ``retries`` more times, then given up. A sink whose
last ``DEAD_AFTER`` alerts were all given up is ``dead``: each new alert is
tried once, without retries, until one gets through.

With ``max_age`` instead, an alert is tried until it gets through or is
``max_age`` seconds old (counted on the ``wall`` clock from the ``since``
given to ``offer``, which may be before this process began), however many
tries that takes and dead or not. ``offer`` never pushes an alert out: a
full queue refuses it, and the caller, which keeps every owed alert, offers
it again later.

States, as ``status()`` reports them:

- ``idle``: nothing has been sent or given up yet;
- ``ok``: the last alert got through;
- ``retrying``: an alert failed and is being tried again, or the last one
  was given up but the sink is not yet dead (its alerts still get every retry);
- ``hung``: a send is running past its timeout;
- ``dead``: the last ``DEAD_AFTER`` alerts were given up.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from leet.alerts.events import Alert
from leet.alerts.sinks import Sink, SinkError
from leet.common.text import escaped

log = logging.getLogger(__name__)

DEAD_AFTER = 3  # given-up alerts in a row
GRACE = 0.5  # seconds past the timeout for a sink to report its own timeout
IDLE, OK, RETRYING, HUNG, DEAD = "idle", "ok", "retrying", "hung", "dead"
CLOSED = "closed before it could be sent"

OnResult = Callable[[Alert, str, bool, str], None]


@dataclass(frozen=True)
class SinkStatus:
    """One sink as the screen and ``leet watch`` show it: ``slack://T...2 dead: Connection refused``."""

    name: str
    state: str  # idle, ok, retrying, hung, dead
    sent: int  # alerts that got through
    failed: int  # alerts given up after their retries
    dropped: int  # alerts pushed out of a full queue, or still queued at close
    queued: int  # alerts waiting, the one being sent included
    last_error: str
    last_ok_time: float | None  # the Delivery's clock (monotonic by default) when an alert last got through


@dataclass
class _Lane:
    """One sink's queue, counters and worker; every field is read and written under the Delivery's lock."""

    sink: Sink
    thread_name: str
    wake: threading.Condition
    timeout: float
    queue: deque[tuple[Alert, float]] = field(default_factory=deque)  # (alert, wall time it was first owed)
    busy: bool = False
    retrying: bool = False
    streak: int = 0  # alerts given up in a row
    sent: int = 0
    failed: int = 0
    dropped: int = 0
    last_error: str = ""
    last_ok_time: float | None = None
    outstanding: threading.Thread | None = None  # a send that outlived its timeout
    worker: threading.Thread | None = None

    def state(self) -> str:
        if self.outstanding is not None and self.outstanding.is_alive():
            return HUNG
        if self.streak >= DEAD_AFTER:
            return DEAD
        if self.retrying or self.streak:
            return RETRYING
        return OK if self.sent else IDLE


class Delivery:
    """``Delivery([sink, …]).submit(alert)``: never blocks, never raises; ``close()`` when done."""

    def __init__(
        self,
        sinks: Iterable[Sink],
        *,
        queue_size: int = 256,
        timeout: float = 10.0,
        retries: int = 3,
        backoff: Sequence[float] = (1.0, 5.0, 20.0),
        on_result: OnResult | None = None,
        clock: Callable[[], float] = time.monotonic,
        max_age: float | None = None,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self._lock = threading.Lock()
        self._settled = threading.Condition(self._lock)  # a lane went idle
        self._queue_size = max(1, queue_size)
        self._retries = max(0, retries)
        self._backoff = tuple(max(0.0, float(delay)) for delay in backoff) or (0.0,)
        self._on_result = on_result
        self._clock = clock
        self._max_age = max_age
        self._wall = wall
        self._closed = False
        self._lanes: list[_Lane] = []
        for number, sink in enumerate(sinks, 1):
            own = getattr(sink, "timeout", None)
            lane = _Lane(sink, f"leet-sink-{number}", threading.Condition(self._lock), float(own) if own else timeout)
            lane.worker = threading.Thread(target=self._work, args=(lane,), name=lane.thread_name, daemon=True)
            self._lanes.append(lane)
        for lane in self._lanes:
            assert lane.worker is not None
            lane.worker.start()

    # -- the caller's side ------------------------------------------------------------------------

    def submit(self, alert: Alert) -> None:
        """Queue ``alert`` for every sink; a full queue loses its oldest alert (counted as dropped)."""
        try:
            with self._lock:
                if self._closed:
                    return
                for lane in self._lanes:
                    if len(lane.queue) >= self._queue_size:
                        lane.queue.popleft()
                        lane.dropped += 1
                    lane.queue.append((alert, self._wall()))
                    lane.wake.notify()
        except Exception:  # the caller is a detector or a screen: it must never see delivery's trouble
            log.warning("an alert could not be queued")

    def offer(self, alert: Alert, since: float) -> bool:
        """Queue ``alert`` (first owed at wall time ``since``) for every sink unless a queue is full or the delivery closed: then False, nothing queued."""
        with self._lock:
            if self._closed or any(len(lane.queue) >= self._queue_size for lane in self._lanes):
                return False
            for lane in self._lanes:
                lane.queue.append((alert, since))
                lane.wake.notify()
            return True

    def status(self) -> list[SinkStatus]:
        with self._lock:
            return [
                SinkStatus(
                    name=lane.sink.name, state=lane.state(), sent=lane.sent, failed=lane.failed, dropped=lane.dropped,
                    queued=len(lane.queue) + lane.busy, last_error=lane.last_error, last_ok_time=lane.last_ok_time,
                )
                for lane in self._lanes
            ]

    def flush(self, timeout: float) -> bool:
        """Waits until every queue is empty and no alert is being sent; False if ``timeout`` came first."""
        deadline = time.monotonic() + max(0.0, timeout)
        with self._lock:
            while any(lane.queue or lane.busy for lane in self._lanes):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._settled.wait(left)
            return True

    def close(self, timeout: float = 5.0) -> bool:
        """Flushes for up to ``timeout``, then stops the workers; what is still queued is dropped, later alerts ignored. True if all went out."""
        deadline = time.monotonic() + max(0.0, timeout)
        flushed = self.flush(timeout)
        with self._lock:
            self._closed = True
            for lane in self._lanes:
                lane.dropped += len(lane.queue)
                lane.queue.clear()
                lane.wake.notify_all()
        for lane in self._lanes:
            if lane.worker is not None and lane.worker is not threading.current_thread():
                lane.worker.join(max(0.0, deadline - time.monotonic()))
        return flushed

    def __enter__(self) -> "Delivery":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- the worker's side ------------------------------------------------------------------------

    def _work(self, lane: _Lane) -> None:
        while True:
            with self._lock:
                while not lane.queue and not self._closed:
                    lane.wake.wait()
                if self._closed:
                    return
                alert, since = lane.queue.popleft()
                lane.busy = True
            ok, error = self._deliver(lane, alert) if self._max_age is None else self._deliver_until_old(lane, alert, since)
            with self._lock:
                lane.retrying = False
                if ok:
                    lane.sent += 1
                    lane.streak = 0
                    lane.last_ok_time = self._clock()
                else:
                    lane.failed += 1
                    lane.streak += 1
                    lane.last_error = error
            self._report(alert, lane.sink.name, ok, error)
            with self._lock:
                lane.busy = False
                self._settled.notify_all()

    def _deliver(self, lane: _Lane, alert: Alert) -> tuple[bool, str]:
        """The alert's final outcome for this sink: every try it gets, with the backoff between."""
        with self._lock:
            tries = 1 if lane.streak >= DEAD_AFTER else 1 + self._retries
        error = ""
        for attempt in range(tries):
            if attempt and not self._pause(lane, self._backoff[min(attempt - 1, len(self._backoff) - 1)]):
                return False, f"{error} ({CLOSED})" if error else CLOSED
            ok, error = self._attempt(lane, alert)
            if ok:
                return True, ""
            with self._lock:
                lane.last_error = error
                lane.retrying = attempt + 1 < tries
        return False, error

    def _deliver_until_old(self, lane: _Lane, alert: Alert, since: float) -> tuple[bool, str]:
        """Tries until the alert gets through or is ``max_age`` old, the backoff between tries (its last step repeated)."""
        assert self._max_age is not None
        for attempt in itertools.count():
            ok, error = self._attempt(lane, alert)
            if ok:
                return True, ""
            left = since + self._max_age - self._wall()
            if left <= 0:
                return False, f"given up after {attempt + 1} tries in {self._max_age:g} s: {error}"
            with self._lock:
                lane.last_error = error
                lane.retrying = True
            if not self._pause(lane, min(left, self._backoff[min(attempt, len(self._backoff) - 1)])):
                return False, f"{error} ({CLOSED})"
        raise AssertionError("unreachable")

    def _pause(self, lane: _Lane, seconds: float) -> bool:
        """Sleeps ``seconds`` unless the delivery closes first (then False)."""
        deadline = time.monotonic() + seconds
        with self._lock:
            while not self._closed:
                left = deadline - time.monotonic()
                if left <= 0:
                    return True
                lane.wake.wait(left)
            return False

    def _attempt(self, lane: _Lane, alert: Alert) -> tuple[bool, str]:
        """One send, in a thread of its own that is waited on for the timeout (see the module's note on hung sends)."""
        if not self._pause(lane, _ready_in(lane.sink)):
            return False, CLOSED
        earlier = lane.outstanding
        if earlier is not None:
            earlier.join(lane.timeout)
            if earlier.is_alive():
                return False, f"hung: an earlier send has not returned ({lane.timeout:g} s timeout)"
            with self._lock:
                lane.outstanding = None
        outcome: list[tuple[bool, str]] = []
        sender = threading.Thread(target=_send, args=(lane.sink, alert, lane.timeout, outcome), name=f"{lane.thread_name}-send", daemon=True)
        sender.start()
        sender.join(lane.timeout + GRACE)
        if sender.is_alive():
            with self._lock:
                lane.outstanding = sender
            return False, f"hung: no answer within {lane.timeout:g} s"
        return outcome[0] if outcome else (False, "the send ended without a result")

    def _report(self, alert: Alert, name: str, ok: bool, error: str) -> None:
        if self._on_result is None:
            return
        try:
            self._on_result(alert, name, ok, error)
        except Exception as exc:  # the caller's bookkeeping must not stop the worker
            log.warning("on_result for %s failed: %s: %s", name, type(exc).__name__, escaped(str(exc)))


def _ready_in(sink: Sink) -> float:
    """How long a sink asks to wait before its next send (``AppriseSink.ready_in``: Apprise's rate limit), at most a minute."""
    ready_in = getattr(sink, "ready_in", None)
    try:
        return min(60.0, max(0.0, float(ready_in()))) if callable(ready_in) else 0.0
    except Exception:  # a hint only
        return 0.0


def _send(sink: Sink, alert: Alert, timeout: float, outcome: list[tuple[bool, str]]) -> None:
    try:
        sink.send(alert, timeout)
    except SinkError as exc:
        outcome.append((False, str(exc) or "failed"))
    except Exception as exc:  # a sink's bug: reported like a failure, the worker goes on
        outcome.append((False, escaped(f"{type(exc).__name__}: {exc}")))
    else:
        outcome.append((True, ""))
