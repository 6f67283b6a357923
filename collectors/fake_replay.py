"""Samples made on the caller's thread, as a hub would make them, for tests that need a history fast."""

from __future__ import annotations

from typing import Sequence

from collectors.base import Collector, Sample
from collectors.fake_curves import FakeClock
from collectors.hub import Call, Hub, Sweeper


def replay(
    source: Hub | Sequence[Collector],
    clock: FakeClock,
    start: float,
    interval: float,
    count: int,
    label: str | None = None,
) -> list[Sample]:
    """``count`` Samples at ``start + k*interval``, made on this thread.

    Sets ``clock`` to each time and has a ``Sweeper`` on that clock decide
    every sweep, as a hub's does (probe once, cadence, backoff, label,
    extras kept between samples), but makes each call at once, here, so a
    test can feed an app a history without starting any thread. A Hub
    passes its collectors and label; the hub itself is left untouched.
    """
    if isinstance(source, Hub):
        collectors, label = source.collectors, source.label
    else:
        collectors = tuple(source)
    sweeper = Sweeper(collectors, clock=clock, label=label)
    clock.set(start)
    _call_now(sweeper, sweeper.probes())
    samples = []
    for k in range(count):
        clock.set(start + k * interval)
        _call_now(sweeper, sweeper.due(interval))
        samples.append(sweeper.collect(clock()))
    return samples


def _call_now(sweeper: Sweeper, calls: Sequence[Call]) -> None:
    """Make each call on this thread and hand its answer straight back; on the still clock it costs 0 ms."""
    for call in calls:
        sweeper.started(call)
        sweeper.absorb(call.perform(timer=sweeper.clock))
