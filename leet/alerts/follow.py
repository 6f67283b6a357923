"""Run files and folders of runs, followed for alerts: ``Follower``.

``Follower(paths, ...)``, then ``poll(now)`` a few times a second: each call
returns the alerts that appeared since the last. Cheap when nothing moves:
a file is looked at (one ``stat``) every tick while it is being written,
every second once quiet for a minute and every five seconds once its run
ended; a folder of runs is listed again only when its own mtime changes
(a run directory was made), and a new directory without its run file yet
is looked into until the file appears.

What a file already held when it was first seen is nobody's news: its last
blocks are read to learn the run's state and where to go on from, and the
alerts found there are settled in the ledger, not returned. Runs that appear
while watching are read from their first record, and so are runs found in a
folder the ledger says was listed before (they appeared while nobody
watched, or before their place was written). A file the ledger knows is
read on from where it was left, and an alert the ledger holds for every sink
is not raised again. Whether a run has ended is the file's to say (its head
and tail, as every view judges it), not only what this process read: a run
that ended before a restart is never presumed crashed, and no crash is
presumed while the file still holds unread records.

A shared run's writers are grouped by their run file's name; a writer with
no exit record whose file has not grown for ``node_lost_after`` while
another writer of the run still writes is a lost node.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from leet.alerts.detect import RunDetector
from leet.alerts.events import NODE_LOST, Alert, default_level
from leet.alerts.ledger import Ledger
from leet.alerts.tail import RunTail, all_but, settling_start
from leet.alerts.thresholds import ThresholdWatch
from leet.discovery.layout import resolve
from leet.discovery.probe import probe
from leet.runfile.reader import RunFileError

HOT_S, QUIET_S, ENDED_S = 0.0, 1.0, 5.0  # seconds between looks: being written, quiet a minute, ended
QUIET_AFTER = 60.0


@dataclass
class Followed:
    """One run file: its tail (offset, detector) and what the follower keeps beside it."""

    tail: RunTail
    shared: bool = False
    label: str = ""
    changed_at: float = 0.0  # wall clock of the last growth seen
    next_look: float = 0.0
    lost_at: float | None = None  # the mtime at which it was called lost

    @property
    def path(self) -> Path:
        return self.tail.file

    @property
    def detector(self) -> RunDetector:
        return self.tail.detector

    @property
    def mtime(self) -> float:
        return self.tail.mtime

    @property
    def group(self) -> str:
        return self.path.name  # a shared run's writers share their run file's name


@dataclass
class Watched:
    """A folder of runs: its directories, and those still without a run file."""

    root: Path
    mtime: float = -1.0
    known: set[str] = field(default_factory=set)
    pending: set[Path] = field(default_factory=set)


class Follower:
    """Alerts from run files and folders of runs; ``poll(now)`` returns the new ones."""

    def __init__(
        self,
        paths: Iterable[str | os.PathLike[str]],
        *,
        ledger: Ledger,
        thresholds: ThresholdWatch | None = None,
        crash_after: float = 600.0,
        node_lost_after: float = 120.0,
        clock=time.time,
    ) -> None:
        self.ledger = ledger
        self.thresholds = thresholds
        self.crash_after = crash_after
        self.node_lost_after = node_lost_after
        self._clock = clock
        self.files: dict[Path, Followed] = {}
        self.folders: list[Watched] = []
        self.problems: list[str] = []  # what could not be followed, one line each
        now = clock()
        for path in paths:
            self._add_path(Path(path), now)

    # -- what is followed ----------------------------------------------------------------
    def _add_path(self, path: Path, now: float) -> None:
        try:
            layout = resolve(path)
        except (OSError, RunFileError) as error:
            self.problems.append(f"{path}: {error}")
            return
        if layout.kind == "workspace" and layout.root is not None:
            folder = Watched(layout.root)
            self.folders.append(folder)
            key = str(layout.root.absolute())
            self._rescan(folder, now, first=not self.ledger.listed(key))
            self.ledger.list_folder(key)  # written with the places of the runs just settled
        else:
            for file in layout.files:
                self._follow(file, now, first=True)

    def _rescan(self, folder: Watched, now: float, first: bool = False) -> None:
        try:
            mtime = folder.root.stat().st_mtime
        except OSError:
            return
        if mtime != folder.mtime:  # a directory was made (or removed): list the folder again
            folder.mtime = mtime
            for entry in _directories(folder.root):
                if entry.name not in folder.known:
                    folder.known.add(entry.name)
                    folder.pending.add(Path(entry.path))
        for directory in list(folder.pending):  # new directories, until their run file appears
            file = _run_file(directory)
            if file is not None:
                folder.pending.discard(directory)
                self._follow(file, now, first=first)

    def _follow(self, file: Path, now: float, first: bool) -> None:
        file = file.absolute()
        if file in self.files:
            return
        entry = probe(file.parent.name, file, now, self.crash_after)
        detector = RunDetector(
            str(file.parent), self.thresholds, crash_after=self.crash_after, run_id=entry.run_id, name=entry.name,
            ended_with=entry.exit_code,  # the file's own state: a run that ended before this reading starts is not crashed
        )
        label = entry.labels[0] if entry.labels else ""
        detector.facts.label = label
        try:
            stat = file.stat()
        except OSError as error:
            self.problems.append(f"{file}: {error.strerror or error}")
            return
        place = self.ledger.place(str(file))
        if place is not None and place[:2] == (stat.st_dev, stat.st_ino) and place[2] <= stat.st_size:
            start, settle = place[2], False  # read on from where it was left
        elif place is None and first:
            start, settle = settling_start(stat.st_size), True  # already there: learn its state only
        else:
            start, settle = 0, False  # new, or replaced while nobody watched: the ledger knows what was told
        rules = self.thresholds is not None and bool(self.thresholds.rules)
        needed = ("run", "exit", "alert", "history", "stats") if rules else ("run", "exit", "alert")  # the rest is skipped unparsed
        tail = RunTail(file, detector, skip=all_but(*needed), history_values=rules, start=start, settle=settle)
        followed = self.files[file] = Followed(tail, shared=entry.shared, label=label, changed_at=stat.st_mtime)
        if settle:
            self._read(followed, now)  # its alerts go to the ledger as settled
            for alert in self._silence(followed, now):
                self.ledger.settle(alert.ident, alert.time)

    # -- polling ------------------------------------------------------------------------
    def poll(self, now: float | None = None) -> list[Alert]:
        now = self._clock() if now is None else now
        alerts: list[Alert] = []
        for folder in self.folders:
            self._rescan(folder, now)
        mono = time.monotonic()
        for followed in list(self.files.values()):
            if mono < followed.next_look:
                continue
            alerts += self._read(followed, now)
            alerts += self._silence(followed, now)
            followed.next_look = mono + self._cadence(followed, now)
        alerts += self._lost_nodes(now)
        return [alert for alert in alerts if not self.ledger.reached(alert.ident) >= {"*"}]

    def _silence(self, followed: Followed, now: float) -> list[Alert]:
        """A crash presumed from silence; not while records the file holds are still unread (its exit may be among them)."""
        if followed.tail.more:
            return []
        return followed.detector.check(now, followed.mtime)

    def _cadence(self, followed: Followed, now: float) -> float:
        if followed.tail.more:
            return HOT_S  # read on at once: the file holds more than one read takes
        if followed.detector.facts.ended:
            return ENDED_S
        return QUIET_S if now - followed.changed_at > QUIET_AFTER else HOT_S

    def _read(self, followed: Followed, now: float) -> list[Alert]:
        size = followed.tail.size
        read = followed.tail.poll(now)
        if read is None:
            return []
        if followed.tail.size != size:
            followed.changed_at = now
        identity = followed.tail.identity
        if identity is not None:
            self.ledger.leave(str(followed.path), identity[0], identity[1], followed.tail.offset)
        if followed.detector.facts.label:
            followed.label = followed.detector.facts.label
        if read.settled:
            for alert in read.alerts:
                self.ledger.settle(alert.ident, alert.time)
            return []
        return read.alerts

    @property
    def unreadable(self) -> list[str]:
        """Why each file that could not be read last time could not, one line each."""
        return [followed.tail.problem for followed in self.files.values() if followed.tail.problem]

    # -- shared runs ----------------------------------------------------------------------
    def _lost_nodes(self, now: float) -> list[Alert]:
        groups: dict[str, list[Followed]] = {}
        for followed in self.files.values():
            if followed.shared or followed.label:
                groups.setdefault(followed.group, []).append(followed)
        alerts = []
        for writers in groups.values():
            if len(writers) < 2:
                continue
            newest = max(w.mtime for w in writers)
            if now - newest > self.node_lost_after:
                continue  # every writer is quiet: the run ended or crashed, no node in particular
            for writer in writers:
                if writer.detector.facts.ended:
                    continue
                if writer.lost_at is not None and writer.mtime > writer.lost_at:
                    writer.lost_at = None  # it writes again; a later silence counts anew
                if writer.lost_at is None and newest - writer.mtime > self.node_lost_after:
                    writer.lost_at = writer.mtime
                    alerts.append(self._lost(writer, writers, newest))
        return alerts

    def _lost(self, writer: Followed, writers: list[Followed], newest: float) -> Alert:
        detector = writer.detector
        name = next((w.detector.title for w in writers if not w.shared or w.detector.facts.name), detector.title)
        node = writer.label or writer.path.parent.name
        others = sum(1 for w in writers if w is not writer and newest - w.mtime <= self.node_lost_after)
        text = f"node {node} of {name} has written nothing for {newest - writer.mtime:.0f}s while {others} other node{'s' if others != 1 else ''} went on"
        return Alert(
            kind=NODE_LOST, title=f"{name}: node {node} lost", text=text, level=default_level(NODE_LOST), time=newest,
            source=str(writer.path.parent), run_id=detector.facts.run_id, run_name=detector.facts.name, label=node,
            ident=f"{NODE_LOST}:{writer.path.parent}:{writer.mtime:.3f}",
        )

    def close(self) -> None:
        """Nothing to release: no file stays open between reads."""


def _directories(root: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(root) as listing:
            return [entry for entry in listing if entry.name != "latest-run" and entry.is_dir()]
    except OSError:
        return []


def _run_file(directory: Path) -> Path | None:
    try:
        with os.scandir(directory) as listing:
            names = sorted(entry.name for entry in listing if entry.name.startswith("run-") and entry.name.endswith(".wandb"))
    except OSError:
        return None
    return directory / names[0] if names else None
