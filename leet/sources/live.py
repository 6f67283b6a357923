"""Sources turn the world into store writes on worker threads.

``LiveSource`` subscribes to a collector hub: each sweep lands in the store,
its non-metric extras (host facts, process rows) and collector health are
kept as the latest, and the app is told that something changed. The app then
pulls what it shows; nothing here touches a widget.
"""

from __future__ import annotations

import threading
from typing import Any, Mapping

from collectors.base import CollectorStatus, Sample
from leet.model.keys import KeyLabel, split_label
from leet.model.store import MAX_SERIES, Store
from leet.sources.base import Listeners

LIVE_RUN = "live"


class LiveSource(Listeners):
    """Feeds hub samples into a store; ``ingest`` is also the synchronous entry for tests."""

    def __init__(self, store: Store, hub: Any | None = None, run: str = LIVE_RUN) -> None:
        super().__init__()
        self.store = store
        self.hub = hub
        self.run = run
        self._lock = threading.Lock()
        self._extras: dict[str, Any] = {}
        self._status: tuple[CollectorStatus, ...] = ()
        self._last_timestamp: float | None = None
        self._first_timestamp: float | None = None
        self._interval: float | None = None
        self._names: dict[str, KeyLabel] = {}
        if hub is not None:
            hub.subscribe(self.ingest)

    def ingest(self, sample: Sample) -> None:
        self.store.append_many(self.run, sample.timestamp, self._named(sample.values))
        with self._lock:
            self._extras.update(sample.extras)
            self._status = sample.status
            self._last_timestamp = sample.timestamp
            if self._first_timestamp is None:
                self._first_timestamp = sample.timestamp
        self._notify()

    def _named(self, values: Mapping[str, float]) -> dict[KeyLabel, float]:
        """A sweep by (key, label): collectors write W&B keys, node label and all (``--label``, DCGM's node).

        Each key is split once: a host writes the same keys every sweep.
        """
        names = self._names
        if len(names) > MAX_SERIES:  # keys that keep changing: start over rather than grow
            names.clear()
        named: dict[KeyLabel, float] = {}
        for key, value in values.items():
            name = names.get(key)
            if name is None:
                name = names[key] = split_label(key)
            named[name] = value
        return named

    @property
    def extras(self) -> Mapping[str, Any]:
        with self._lock:
            return dict(self._extras)

    @property
    def status(self) -> tuple[CollectorStatus, ...]:
        with self._lock:
            return self._status

    @property
    def time_span(self) -> tuple[float, float] | None:
        """(first, last) sample timestamps, or None before the first sample."""
        with self._lock:
            if self._first_timestamp is None or self._last_timestamp is None:
                return None
            return self._first_timestamp, self._last_timestamp

    @property
    def interval(self) -> float | None:
        """Seconds between the hub's sweeps (what ``set_interval`` last set, without a hub)."""
        return self.hub.interval if self.hub is not None else self._interval

    def set_interval(self, seconds: float) -> float:
        """Sample every ``seconds`` from the next wait on; returns the interval now in force.

        The hub checks the value (``ValueError`` outside its range) and keeps
        each collector's cadence and budget.
        """
        if self.hub is None:
            self._interval = float(seconds)
            return self._interval
        self.hub.set_interval(seconds)
        return float(self.hub.interval)

    def start(self) -> None:
        if self.hub is not None:
            self.hub.start()

    def stop(self) -> None:
        if self.hub is not None:
            self.hub.stop()
