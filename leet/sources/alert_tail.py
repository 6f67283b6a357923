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
from leet.runfile import wandb_records_pb2 as pb
from leet.runfile.reader import BLOCK_SIZE, RunFileError
from leet.runfile.records import EventReader

# Every record kind but alerts: skipped unparsed where its first bytes tell its kind.
NOT_ALERTS = tuple(field.name for field in pb.Record.DESCRIPTOR.oneofs_by_name["record_type"].fields if field.name != "alert")
MAX_RECORDS = 20_000  # a poll reads at most this many records: a huge new run never holds up the scan for long
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
        self.detector = RunDetector(str(file.parent), None, crash_after=0.0, run_id=run_id, name=name)
        self.detector.facts.label = label
        self.offset = 0
        self.total = 0
        self.recent: deque[Alert] = deque(maxlen=RECENT)
        self.more = False  # the last poll stopped short of the end: poll again even if the file did not change
        self._settle = first_seen  # the next read learns where records start, and raises nothing
        self._identity: tuple[int, int] | None = None

    def poll(self, now: float) -> bool:
        """Read what the file gained; True when it holds new alert records."""
        try:
            stat = self.file.stat()
        except OSError:
            return False
        identity = (stat.st_dev, stat.st_ino)
        if (self._identity is not None and identity != self._identity) or stat.st_size < self.offset:
            self._settle = True  # replaced or cut short: what it holds now is not news either
        self._identity = identity
        start = stat.st_size // BLOCK_SIZE * BLOCK_SIZE if self._settle else self.offset
        try:
            reader = EventReader(self.file, start=start, skip=NOT_ALERTS, history_values=False)
        except (OSError, RunFileError, ValueError):
            return False
        try:
            batch = reader.poll(MAX_RECORDS)
            self.offset = reader.offset
        except (OSError, RunFileError):
            return False
        finally:
            reader.close()
        self.more = not batch.at_eof
        alerts = self.detector.feed(batch.items, now)
        if self._settle:
            self._settle = False
            return False
        self.total += len(alerts)
        self.recent.extend(alerts)
        return bool(alerts)

    def summary(self) -> RunAlerts:
        return RunAlerts(self.total, tuple(self.recent))


def merged(parts: list[RunAlerts]) -> RunAlerts:
    """A shared run's writers' alerts as one run's, in time order."""
    if len(parts) == 1:
        return parts[0]
    recent = sorted((alert for part in parts for alert in part.recent), key=lambda alert: alert.time)
    return RunAlerts(sum(part.total for part in parts), tuple(recent[-RECENT:]))

