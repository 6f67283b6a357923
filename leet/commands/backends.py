"""``leet symon --backends``: every backend, whether this machine has it, and why not.

The hub probes every collector and sweeps once, so what is shown is what the
live monitor would meet: present (sampled fine), absent (the probe said no:
no driver, tool or device; the usual state of most backends on a machine,
so only its reason is given), failing (the sample raised) or hung (no answer
within the collector's budget, which also bounds how long this waits).
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass
from typing import Any, Iterable, TextIO

from collectors.base import CollectorStatus, Health
from leet.common.text import clean
from leet.ui.views.health import call_cost, health_word


@dataclass(frozen=True)
class Backend:
    """One line of the report. ``last_ms`` is None while the collector's last call has not returned."""

    name: str
    state: str
    reason: str
    last_ms: float | None


def backends(statuses: Iterable[CollectorStatus]) -> list[Backend]:
    """The hub's statuses as report lines, in the hub's order."""
    rows = []
    for status in statuses:
        hung = status.health is Health.HUNG
        cost = None if hung or not math.isfinite(status.last_ms) else round(status.last_ms, 3)
        rows.append(Backend(status.name, health_word(status), status.reason, cost))
    return rows


def as_text(rows: Iterable[Backend]) -> str:
    """Aligned columns: backend, state, cost of its last call, reason (text from tools and drivers made inert)."""
    table = [("BACKEND", "STATE", "LAST", "REASON")]
    table += [(clean(row.name), row.state, call_cost(row.last_ms, "-"), clean(row.reason)) for row in rows]
    widths = [max(len(line[column]) for line in table) for column in range(3)]
    lines = []
    for name, state, cost, reason in table:
        line = f"{name:<{widths[0]}}  {state:<{widths[1]}}  {cost:>{widths[2]}}  {reason}"
        lines.append(line.rstrip())
    return "\n".join(lines)


def as_json(rows: Iterable[Backend]) -> str:
    """``[{"name", "state", "reason", "last_ms"}, …]``; ASCII-only, so nothing in a reason reaches a terminal raw."""
    payload: list[dict[str, Any]] = [
        {"name": row.name, "state": row.state, "reason": row.reason, "last_ms": row.last_ms} for row in rows
    ]
    return json.dumps(payload, indent=None, separators=(", ", ": "))


def print_backends(hub: Any, *, json_output: bool = False, out: TextIO | None = None) -> int:
    """Probe, sweep once, stop ``hub`` and print what each backend did."""
    out = out or sys.stdout
    try:
        sample = hub.sweep()
    finally:
        hub.stop()
    rows = backends(sample.status)
    out.write((as_json(rows) if json_output else as_text(rows)) + "\n")
    return 0
