"""Whether a run is running, finished, failed or presumed crashed: one rule for every view.

The run screen, the workspace list and ``leet inspect`` all judge a run
here, from what its file says (an exit record, or none) and how long ago the
file was last written. A run with no exit record whose file has been silent
for longer than the crash threshold is presumed crashed; it comes back to
life if the file grows again. The threshold is a setting (``crash_after``,
``--crash-after``); W&B's own viewer uses ten minutes, and so do we.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass

CRASH_AFTER = 600.0  # seconds without a write or an exit record before a run is presumed crashed


class RunState(enum.Enum):
    LOADING = "loading"
    RUNNING = "running"
    FINISHED = "finished"
    FAILED = "failed"
    CRASHED = "presumed crashed"
    UNKNOWN = "unknown"

    @property
    def code(self) -> str:
        """The state as scripts compare it: ``running|finished|failed|crashed|unknown`` (or ``loading``)."""
        return self.name.lower()


@dataclass(frozen=True)
class Verdict:
    """A run's state with its grounds."""

    state: RunState
    exit_code: int | None = None
    last_write_age_s: float | None = None  # seconds since the file was last written, when known
    reason: str = ""  # in words, for people

    @property
    def text(self) -> str:
        """``finished``, ``failed (exit 2)``, ``presumed crashed`` …: the state as a person reads it."""
        if self.state is RunState.FAILED and self.exit_code is not None:
            return f"failed (exit {self.exit_code})"
        return self.state.value


def judge(
    *,
    exit_code: int | None,
    last_write_age: float | None,
    crash_after: float = CRASH_AFTER,
    size: int | None = None,
    loaded: bool = True,
    has_run_record: bool = True,
) -> Verdict:
    """The state of a run whose file ends with an exit record of ``exit_code`` (None: no exit record).

    ``last_write_age`` is how long ago the file last grew; ``size`` its size
    (0: nothing written yet); ``loaded``: the whole file has been read.
    """
    age = None if last_write_age is None or not math.isfinite(last_write_age) else max(0.0, last_write_age)
    if exit_code is not None:
        state = RunState.FINISHED if exit_code == 0 else RunState.FAILED
        return Verdict(state, exit_code, age, f"the file ends with an exit record (exit code {exit_code})")
    if not loaded:
        return Verdict(RunState.LOADING, None, age, "still reading the file")
    silent = f"last write {duration(age)} ago" if age is not None else "last write unknown"
    if size == 0:
        return Verdict(RunState.UNKNOWN, None, age, f"the file is empty: the writer has flushed nothing yet ({silent})")
    if not has_run_record:
        return Verdict(RunState.UNKNOWN, None, age, f"the file holds no run record yet ({silent})")
    if age is not None and age > crash_after:
        return Verdict(RunState.CRASHED, None, age, f"no exit record, and no write for {duration(age)} (crash threshold {duration(crash_after)})")
    return Verdict(RunState.RUNNING, None, age, f"no exit record yet; {silent}")


LONGEST_WHOLE = 100_000 * 86400.0  # seconds past which a duration is only shown in short form


def in_days(seconds: float) -> str:
    """A duration past ``LONGEST_WHOLE`` as days in short form: thousands of years need no more digits."""
    return f"{seconds / 86400:.3g}d"


def duration(seconds: float | None) -> str:
    """``4.5s``, ``12s``, ``3m05s``, ``2h07m``."""
    try:
        seconds = max(0.0, float(seconds)) if seconds is not None else math.nan
    except OverflowError:  # an int no float holds: no run lasts that long
        return "?"
    if not math.isfinite(seconds):
        return "?"
    if seconds >= LONGEST_WHOLE:
        return in_days(seconds)
    if seconds < 60:
        return f"{seconds:.0f}s" if seconds >= 10 or seconds == int(seconds) else f"{seconds:.1f}s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def parse_duration(text: str) -> float:
    """``30``, ``30s``, ``10m``, ``1h``, ``500ms`` → seconds; ValueError otherwise."""
    import re

    match = re.match(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(ms|s|m|h)?\s*$", str(text))
    if not match:
        raise ValueError(f"not a duration: {text!r} (try 30s, 10m or 1h)")
    return float(match.group(1)) * {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}[match.group(2)]
