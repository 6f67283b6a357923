"""The collector contract: what every hardware backend promises the hub.

A collector turns one piece of hardware (or one tool) into W&B system-metric
keys. It knows nothing about threads, schedules or screens: the hub decides
when to call it and how long to wait, and the application decides what to
draw. Keys are exactly W&B's, so a live host and a recorded run render
through the same catalog.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Mapping


@dataclass(frozen=True)
class Probe:
    """Whether a collector's hardware or tool is present, and why not."""

    available: bool
    reason: str = ""

    @classmethod
    def ok(cls) -> "Probe":
        return cls(True, "")

    @classmethod
    def absent(cls, reason: str) -> "Probe":
        return cls(False, reason)


class Collector:
    """Base class for one backend.

    Subclasses set ``name`` and implement ``sample``. ``probe`` is called once
    before the first sample; a collector that is not available is never
    sampled and its reason is shown to the user.

    ``cadence`` is the minimum number of seconds between two samples of this
    collector (0 means every sweep). ``budget`` is how long the hub waits for
    one ``sample`` call before it marks the collector hung and goes on.
    """

    name: str = "collector"
    cadence: float = 0.0
    budget: float = 2.0

    def probe(self) -> Probe:
        return Probe.ok()

    def sample(self) -> Mapping[str, float]:
        """One instant: ``{wandb_key: value}``. May raise; the hub isolates it."""
        raise NotImplementedError

    def extras(self) -> Mapping[str, Any]:
        """Non-metric data from the last sample (host facts, process rows).

        Called right after ``sample`` on the same thread. Values must be
        plain, immutable-ish data (tuples, frozen dataclasses, str, numbers):
        they cross to the UI thread as they are.
        """
        return {}

    def close(self) -> None:
        """Release handles and child processes. Must not raise."""


class Health(enum.Enum):
    OK = "ok"
    ABSENT = "absent"  # probe said no: missing tool, library or hardware
    FAILING = "failing"  # the last sample raised; retried with backoff
    HUNG = "hung"  # the last sample outran its budget and has not returned


@dataclass(frozen=True)
class CollectorStatus:
    name: str
    health: Health
    reason: str = ""
    last_ms: float = 0.0  # wall time of the last completed sample call


@dataclass(frozen=True)
class Sample:
    """One sweep of every collector, merged.

    ``timestamp`` is wall-clock seconds (for display); ``values`` maps W&B keys
    to floats; ``extras`` merges every collector's ``extras()``; ``status``
    tells, per collector, whether it is healthy and why not.
    """

    timestamp: float
    values: Mapping[str, float]
    extras: Mapping[str, Any] = field(default_factory=dict)
    status: tuple[CollectorStatus, ...] = ()
