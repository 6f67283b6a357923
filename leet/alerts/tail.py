"""One run file read for alerts, from where the last read stopped: ``RunTail``.

``leet watch`` follows hundreds of files and a workspace watches as many, so
a tail holds no file open between reads: each ``poll`` stats the file and,
only when it grew or moved, reads on from the stored offset with a fresh
``EventReader`` that skips unparsed every record kind it is not given. What
a read finds is news unless the tail was told to ``settle`` (the file was
already there when watching began) or the file was replaced or cut short
under it: then the read only learns where records begin, and its alerts
come back marked as settled, for the caller to file away.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from leet.alerts.detect import RunDetector
from leet.alerts.events import Alert
from leet.runfile import wandb_records_pb2 as pb
from leet.runfile.decode import EventReader
from leet.runfile.reader import BLOCK_SIZE, RunFileError

MAX_RECORDS = 20_000  # a poll reads at most this many records: one huge file never holds up the others for long
SETTLE_BYTES = 2 * BLOCK_SIZE  # what a settling read takes of a file: its state and exit are at its end
RECORD_KINDS = tuple(kind.name for kind in pb.Record.DESCRIPTOR.oneofs_by_name["record_type"].fields)


def all_but(*needed: str) -> tuple[str, ...]:
    """Every record kind but ``needed``: what a tail skips unparsed."""
    return tuple(kind for kind in RECORD_KINDS if kind not in needed)


@dataclass
class Read:
    """What one ``RunTail.poll`` found: its alerts, and whether they are news or were already there."""

    alerts: list[Alert] = field(default_factory=list)
    settled: bool = False


class RunTail:
    """``RunTail(file, detector, skip=(...))``; ``poll(now)`` → ``Read`` or None when nothing moved."""

    def __init__(
        self, file: Path, detector: RunDetector, *, skip: Iterable[str], history_values: bool = False, start: int = 0, settle: bool = False,
    ) -> None:
        self.file = file
        self.detector = detector
        self.skip = tuple(skip)
        self.history_values = history_values
        self.offset = start
        self.settle = settle  # the next read is not news
        self.more = False  # the last read stopped short of the end: read again even if the file did not change
        self.identity: tuple[int, int] | None = None  # (device, inode) of the file last read
        self.size = -1
        self.mtime = 0.0
        self.problem = ""  # why the last poll could not read, in one line; "" when it could

    def poll(self, now: float) -> Read | None:
        try:
            stat = self.file.stat()
        except OSError as error:
            self.problem = _problem(self.file, error)
            return None
        identity = (stat.st_dev, stat.st_ino)
        if (self.identity is not None and identity != self.identity) or stat.st_size < self.offset:
            self.settle, self.offset = True, settling_start(stat.st_size)  # replaced or cut short under us: not news
        elif self.identity is not None and not self.more and (stat.st_size, stat.st_mtime) == (self.size, self.mtime):
            return None
        self.identity, self.size, self.mtime = identity, stat.st_size, stat.st_mtime
        settling = self.settle
        try:
            reader = EventReader(self.file, start=self.offset, skip=self.skip, history_values=self.history_values, lazy_summary=True)
            try:
                batch = reader.poll(MAX_RECORDS)
                self.offset = reader.offset
            finally:
                reader.close()
        except (OSError, RunFileError, ValueError) as error:
            self.problem = _problem(self.file, error)
            return None
        self.problem = ""
        self.more = not batch.at_eof
        self.settle = settling and self.more  # a settling read that stopped short goes on settling
        return Read(self.detector.feed(batch.items, now), settled=settling)


def settling_start(size: int) -> int:
    """Where a settling read of a file ``size`` bytes long starts: the block boundary before its last 64 KiB."""
    return max(0, size - SETTLE_BYTES) // BLOCK_SIZE * BLOCK_SIZE


def _problem(file: Path, error: Exception) -> str:
    """One line: the file and what went wrong, the path said once (some errors name it themselves)."""
    text = getattr(error, "strerror", None) or str(error)
    return text if str(file) in text else f"{file}: {text}"
