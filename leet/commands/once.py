"""``leet symon --once``: one sweep of every collector, printed, for scripts and checks."""

from __future__ import annotations

import json
import math
import sys
from typing import Any, TextIO

from collectors.base import Health, Sample
from leet.model.catalog import group
from leet.ui.views.health import extra_notes
from widgets.text import clean
from widgets.units import format_value


def _json_value(value: float) -> Any:
    # JSON has no NaN/Infinity; scripts get null rather than invalid JSON.
    return value if math.isfinite(value) else None


def as_json(sample: Sample) -> str:
    payload = {key: _json_value(value) for key, value in sorted(sample.values.items())}
    return json.dumps(payload, indent=None, separators=(", ", ": "))


def as_table(sample: Sample) -> str:
    lines = []
    for spec in group(sample.values, order="symon"):
        lines.append(spec.full_title)
        for info in spec.series:
            value = sample.values[info.raw_key] * info.scale
            name = "" if info.legend == "Default" else clean(info.legend)
            lines.append(f"  {name:<24} {format_value(value, spec.unit):>10}   {clean(info.raw_key)}")
    for status in sample.status:
        if status.health is not Health.OK:
            lines.append(f"! {status.name}: {status.health.value}: {clean(status.reason)}")
    lines.extend(f"! {clean(note)}" for note in extra_notes(sample.extras))
    return "\n".join(lines)


def print_once(hub: Any, *, json_output: bool = False, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    try:
        sample = hub.sweep()
    finally:
        hub.stop()
    out.write((as_json(sample) if json_output else as_table(sample)) + "\n")
    return 0
