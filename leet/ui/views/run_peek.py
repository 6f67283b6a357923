"""What the workspace's peek panel says about the run under the cursor: overview, system charts, console tail.

Pure functions over a ``RunSnapshot`` and the run's chart specs; the overview
and the console lines are the run view's own (``views.run``).
"""

from __future__ import annotations

from typing import Sequence

from leet.common.text import clean
from leet.model.catalog import ChartSpec
from leet.model.run import RunSnapshot
from leet.ui.views.run import Line, console_lines, overview_lines

CONSOLE_TAIL = 200  # console lines the panel keeps: its pane shows the newest that fit
SYSTEM_CHARTS = 3
# The families a person glances at first for a run: its accelerators, the host's CPU and memory, then its own process's.
FIRST_FAMILIES = ("GPU", "Accelerators", "CPU", "Memory", "Process")


def peek_overview(snapshot: RunSnapshot, now: float) -> list[Line]:
    """The run view's overview of the run; what went wrong reading it first."""
    problem = [(f"⚠ {clean(snapshot.error)}", "error")] if snapshot.error else []
    return problem + overview_lines(snapshot, now)


def console_tail(snapshot: RunSnapshot, count: int = CONSOLE_TAIL) -> list[Line]:
    """The newest ``count`` console lines, styled as the run view's console styles them."""
    return console_lines(snapshot)[-count:] if count > 0 else []


def peek_charts(specs: Sequence[ChartSpec], count: int = SYSTEM_CHARTS) -> list[ChartSpec]:
    """``count`` of a run's system charts (``specs`` in display order): GPU, CPU and memory ones first."""
    # One chart of each such family before a second of any: three GPU charts would hide the CPU's.
    leading = []
    for family in FIRST_FAMILIES:
        first = next((spec for spec in specs if spec.family == family), None)
        if first is not None:
            leading.append(first)
    same_families = [spec for spec in specs if spec.family in FIRST_FAMILIES and spec not in leading]
    others = [spec for spec in specs if spec.family not in FIRST_FAMILIES]
    return (leading + same_families + others)[:count]


def waiting_lines() -> list[Line]:
    """The overview while the run under the cursor is being opened."""
    return [("reading …", "muted")]


def unreadable_lines(why: str) -> list[Line]:
    """The overview of a run that cannot be read: why."""
    return [("Cannot be read:", "error"), (clean(why), "error")]


def no_run_lines() -> list[Line]:
    return [("No run under the cursor", "muted")]
