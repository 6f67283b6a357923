"""``leet symon --once``: one sweep of every collector, printed, for scripts and checks."""

from __future__ import annotations

import json
import math
import sys
from dataclasses import replace
from typing import Any, TextIO

from collectors.base import Health, Sample
from leet.common.text import clean, escaped
from leet.common.units import format_value
from leet.model.catalog import group
from leet.model.keys import split_label
from leet.model.store import SeriesKey
from leet.ui.views.health import extra_notes

_SWEEP = "once"  # the namespace of the one sweep's series


# One sweep measures rates over a fraction of a second (the hub's warm-up): they would read 0.0
# on most hosts, so --once leaves them out (the monitor and `leet serve` keep them).
def is_rate(key: str) -> bool:
    """A byte rate (``network.recvBps``, ``disk.sda.writeBps``): a figure a single sweep cannot give."""
    return key.endswith("Bps")


def measured_now(sample: Sample) -> Sample:
    """The sweep less its rates."""
    return replace(sample, values={key: value for key, value in sample.values.items() if not is_rate(split_label(key)[0])})


def _json_value(value: float) -> Any:
    # JSON has no NaN/Infinity; scripts get null rather than invalid JSON.
    return value if math.isfinite(value) else None


def as_json(sample: Sample) -> str:
    payload = {key: _json_value(value) for key, value in sorted(sample.values.items())}
    return json.dumps(payload, indent=None, separators=(", ", ": "))


def notes(sample: Sample, *, absent: bool = True) -> list[str]:
    """What went wrong in the sweep: failing and hung collectors, the collectors' own notes (a missing
    disk path), and with ``absent`` one line naming the backends this machine does not have."""
    found = [
        f"{status.name}: {status.health.value}: {status.reason}"
        for status in sample.status
        if status.health not in (Health.OK, Health.ABSENT)
    ]
    found += extra_notes(sample.extras)
    missing = [status.name for status in sample.status if status.health is Health.ABSENT]
    if absent and missing:
        # Most backends are absent on any one machine: one line, and the reasons on request.
        found.append(f"not on this machine: {', '.join(missing)} (leet symon --backends says why)")
    return found


def as_table(sample: Sample) -> str:
    lines = []
    # The sweep's W&B keys (a node label and all), by the series each one is.
    raw_keys = {SeriesKey(_SWEEP, *split_label(raw)): raw for raw in sample.values}
    for spec in group(raw_keys, order="symon"):
        lines.append(spec.full_title)
        for info, key in zip(spec.series, spec.keys):
            raw = raw_keys[key]
            value = sample.values[raw] * info.scale
            name = "" if info.legend == "Default" else clean(info.legend)
            lines.append(f"  {name:<24} {format_value(value, spec.unit):>10}   {clean(raw)}")
    lines.extend(f"! {clean(note)}" for note in notes(sample))
    return "\n".join(lines)


def print_once(hub: Any, *, json_output: bool = False, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = out or sys.stdout
    try:
        sample = measured_now(hub.sweep())
    finally:
        hub.stop()
    if json_output:
        # stdout stays pure JSON for scripts; what went wrong is said beside it
        # (hardware that is simply not here is no problem to a script).
        for note in notes(sample, absent=False):
            print(f"leet: {escaped(note)}", file=err or sys.stderr)
    out.write((as_json(sample) if json_output else as_table(sample)) + "\n")
    return 0
