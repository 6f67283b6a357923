"""Samples made on the caller's thread, as a hub would make them, for tests that need a history fast."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from collectors.base import Collector, CollectorStatus, Health, Probe, Sample
from collectors.fake_curves import FakeClock
from collectors.hub import Hub, clean_values, describe_error, merge_extras, with_label


def replay(
    source: Hub | Sequence[Collector],
    clock: FakeClock,
    start: float,
    interval: float,
    count: int,
    label: str | None = None,
) -> list[Sample]:
    """``count`` Samples at ``start + k*interval``, made on this thread.

    Sets ``clock`` to each time and calls the collectors directly, as a hub
    would (probe once, cadence, label, extras kept between samples), so a
    test can feed an app a history without starting any thread. A Hub
    passes its collectors and label.
    """
    if isinstance(source, Hub):
        collectors, label = source.collectors, source.label
    else:
        collectors = tuple(source)
    clock.set(start)
    probes = [_probe(collector) for collector in collectors]
    last_sampled: dict[int, float] = {}
    kept_extras: dict[int, Mapping[str, Any]] = {}
    samples = []
    for k in range(count):
        now = start + k * interval
        clock.set(now)
        values: dict[str, float] = {}
        statuses = []
        for n, (collector, probe) in enumerate(zip(collectors, probes)):
            if not probe.available:
                statuses.append(CollectorStatus(collector.name, Health.ABSENT, probe.reason))
                continue
            previous = last_sampled.get(n)
            if previous is not None and now - previous < collector.cadence:
                statuses.append(CollectorStatus(collector.name, Health.OK))
                continue
            last_sampled[n] = now
            try:
                values.update(clean_values(collector.sample()))
                kept_extras[n] = collector.extras()
            except Exception as exc:  # noqa: BLE001 - mirror the hub: one collector's fault
                statuses.append(CollectorStatus(collector.name, Health.FAILING, describe_error(exc)))
                continue
            statuses.append(CollectorStatus(collector.name, Health.OK))
        samples.append(
            Sample(
                timestamp=clock(),
                values=with_label(values, label),
                extras=merge_extras([kept_extras[n] for n in sorted(kept_extras)]),
                status=tuple(statuses),
            )
        )
    return samples


def _probe(collector: Collector) -> Probe:
    try:
        probe = collector.probe()
    except Exception as exc:  # noqa: BLE001
        return Probe.absent(f"probe failed: {describe_error(exc)}")
    if not isinstance(probe, Probe):
        return Probe.absent(f"probe failed: probe() returned {type(probe).__name__}, expected Probe")
    return probe
