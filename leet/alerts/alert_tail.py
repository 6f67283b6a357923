"""The ``run.alert()`` records a run file gains while a workspace watches it: ``AlertTail``.

Cheap by design, for folders of hundreds of runs: the workspace polls a
tail only when its scan saw the file change, every record kind but
``alert`` is skipped unparsed, and no file stays open between polls (a
fresh reader starts where the last one stopped). What a file held when it
was first seen is nobody's news: the tail starts at the file's last block
boundary and only learns where records begin. A run that appears while the
workspace is open is read from its first record.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from pathlib import Path

from leet.alerts.detect import RunDetector
from leet.alerts.events import Alert
from leet.alerts.tail import RunTail, all_but, settling_start

RECENT = 100  # alerts a tail keeps (the newest); older ones are counted


@dataclass(frozen=True)
class RunAlerts:
    """A run's alert records read while the workspace watched: how many, and the newest, oldest first."""

    total: int = 0
    recent: tuple[Alert, ...] = ()


class AlertTail:
    """One run file's new alert records; ``poll(now)`` after the file changed."""

    def __init__(self, file: Path, *, first_seen: bool, run_id: str = "", name: str = "", label: str = "") -> None:
        self.file = file
        detector = RunDetector(str(file.parent), None, crash_after=0.0, run_id=run_id, name=name)
        detector.facts.label = label
        start = 0
        if first_seen:
            try:
                start = settling_start(file.stat().st_size)
            except OSError:
                pass  # the first poll says nothing either way
        self._tail = RunTail(file, detector, skip=all_but("alert"), start=start, settle=first_seen)
        self.total = 0
        self.recent: deque[Alert] = deque(maxlen=RECENT)

    @property
    def detector(self) -> RunDetector:
        return self._tail.detector

    @property
    def more(self) -> bool:
        """The last poll stopped short of the end: poll again even if the file did not change."""
        return self._tail.more

    def poll(self, now: float) -> bool:
        """Read what the file gained; True when it holds new alert records."""
        read = self._tail.poll(now)
        if read is None or read.settled or not read.alerts:
            return False
        self.total += len(read.alerts)
        self.recent.extend(read.alerts)
        return True

    def summary(self) -> RunAlerts:
        return RunAlerts(self.total, tuple(self.recent))


def merged(parts: list[RunAlerts]) -> RunAlerts:
    """A shared run's writers' alerts as one run's, in time order."""
    if len(parts) == 1:
        return parts[0]
    recent = sorted((alert for part in parts for alert in part.recent), key=lambda alert: alert.time)
    return RunAlerts(sum(part.total for part in parts), tuple(recent[-RECENT:]))
