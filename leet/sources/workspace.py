"""A directory of W&B runs, watched: ``WorkspaceSource``.

The folder is rescanned on a thread of its own (``runfile.folders.scan_runs``);
each run directory is listed from a ``discovery.probe`` of its run file (head
and tail only, so a workspace of hundreds of runs lists quickly) and the
writers of a shared run merge into one row. Every run the user selects gets
a ``RunSource`` (or a ``SharedRunSource``) loading into one store.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Callable, Iterable

from leet.alerts.alert_tail import AlertTail, RunAlerts, merged
from leet.discovery.probe import RunEntry, probe, unreadable
from leet.model.keys import natural_key, system_key
from leet.model.run import CRASH_AFTER, RunState
from leet.model.store import Store
from leet.runfile.folders import RunDir, scan_runs, workspace_root
from leet.runfile.locate import RunNotFound
from leet.sources.base import ThreadedSource
from leet.sources.run import RunSource
from leet.sources.shared import SharedRunSource

RESCAN_SECONDS = 2.0


def group_writers(entries: Iterable[RunEntry]) -> list[RunEntry]:
    """One entry per run: the directories of a shared run's writers (same run file name) merge.

    As in ``discovery.layout``, only writers that say they are shared-mode writers
    merge. The merged entry is keyed by the first directory name (they carry
    start times, so it stays put while writers join) and takes the primary's
    identity and state. Other directories of one id are segments of it
    (resumed, or the id used again): each keeps its own row, numbered.
    """
    groups: dict[str, list[RunEntry]] = {}
    segments: dict[str, list[RunEntry]] = {}
    merged: list[RunEntry] = []
    for entry in entries:
        if entry.error:
            merged.append(entry)
        elif entry.shared:
            groups.setdefault(entry.file.name, []).append(entry)
        else:
            segments.setdefault(entry.file.name, []).append(entry)
    for members in groups.values():
        merged.append(members[0] if len(members) == 1 else _merge_writers(members))
    for members in segments.values():
        if len(members) == 1:
            merged.append(members[0])
            continue
        ordered = sorted(members, key=lambda e: (e.start_time or float("inf"), e.key))
        merged += [replace(entry, segment=(index + 1, len(ordered))) for index, entry in enumerate(ordered)]
    return merged


def _merge_writers(members: list[RunEntry]) -> RunEntry:
    by_start = sorted(members, key=lambda e: (e.start_time or float("inf"), e.key))
    primary = next((e for e in by_start if e.primary), by_start[0])
    ordered = [primary] + [e for e in by_start if e is not primary]
    labels = sorted({label for e in members for label in e.labels}, key=natural_key)
    return replace(
        primary,
        key=min(e.key for e in members),
        files=tuple(e.file for e in ordered),
        labels=tuple(labels),
        start_time=min((e.start_time for e in members if e.start_time), default=None),
        size=sum(e.size for e in members),
        mtime=max(e.mtime for e in members),
    )


class WorkspaceSource(ThreadedSource):
    """The runs of a folder, rescanned on a worker thread; selected runs load into one store."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        store: Store | None = None,
        *,
        rescan: float = RESCAN_SECONDS,
        wall: Callable[[], float] = time.time,
        crash_after: float = CRASH_AFTER,
    ) -> None:
        super().__init__()
        self.crash_after = crash_after
        self.path = Path(path)
        self.root = workspace_root(path).resolve()
        self.store = store or Store()
        self.rescan = rescan
        self._wall = wall
        self._lock = threading.Lock()
        self._probes: dict[str, RunEntry] = {}  # per run directory
        self._entries: dict[str, RunEntry] = {}  # per run: a shared run's writers merged
        self._sources: dict[str, RunSource | SharedRunSource] = {}
        # run.alert() records each file gained while watched (read on the scan thread, published under the lock)
        self._tails: dict[Path, AlertTail] = {}
        self._alerts: dict[Path, RunAlerts] = {}
        self._scanned = False  # files found by the first scan hold no news

    # -- runs ------------------------------------------------------------------
    def refresh(self) -> bool:
        """Rescan the folder; probe new runs and runs whose file changed. True if the list changed."""
        now = self._wall()
        changed = False
        seen = set()
        with self._lock:
            empty = not self._probes
        if empty:  # no runs yet: a wandb/ folder made since (the first run here) is where they will be
            self.root = workspace_root(self.path).resolve()
        for run_dir in scan_runs(self.root):  # the root itself unreadable: raised, and the worker says so
            seen.add(run_dir.name)
            with self._lock:
                known = self._probes.get(run_dir.name)
            entry = self._probe(run_dir, known, now)
            if self._read_alerts(entry or known, now, moved=entry is not None):
                changed = True
            if entry is None or entry == known:
                continue
            with self._lock:
                self._probes[run_dir.name] = entry
            changed = True
        with self._lock:
            vanished = set(self._probes) - seen
            for key in vanished:
                file = self._probes.pop(key).file
                self._tails.pop(file, None)
                self._alerts.pop(file, None)
            before = set(self._entries)
            if changed or vanished:
                self._entries = {entry.key: entry for entry in group_writers(self._probes.values())}
            gone = before - set(self._entries)
        for key in gone:
            self.deselect(key)  # its row is gone: nothing could deselect it later
        self._scanned = True
        return changed or bool(gone)

    def _read_alerts(self, entry: RunEntry | None, now: float, moved: bool) -> bool:
        """New alert records of ``entry``'s file, when its scan saw it change (or the last read stopped short)."""
        if entry is None or entry.error:
            return False
        tail = self._tails.get(entry.file)
        if tail is None:
            label = entry.labels[0] if entry.labels else ""
            tail = self._tails[entry.file] = AlertTail(entry.file, first_seen=not self._scanned, run_id=entry.run_id, name=entry.name, label=label)
            moved = True
        elif not (moved or tail.more):
            return False
        tail.detector.facts.name = entry.name or tail.detector.facts.name  # a run record written since
        tail.detector.facts.run_id = entry.run_id or tail.detector.facts.run_id
        if not tail.poll(now):
            return False
        with self._lock:
            self._alerts[entry.file] = tail.summary()
        return True

    def alerts(self) -> dict[str, RunAlerts]:
        """By run key, the alert records its files gained while the workspace watched (runs with any)."""
        with self._lock:
            found = {}
            for entry in self._entries.values():
                parts = [self._alerts[file] for file in (entry.files or (entry.file,)) if file in self._alerts]
                if parts:
                    found[entry.key] = merged(parts)
            return found

    def _probe(self, run_dir: RunDir, known: RunEntry | None, now: float) -> RunEntry | None:
        """A fresh look at ``run_dir``, or None when what is known still holds."""
        if run_dir.file is None:
            return unreadable(run_dir)
        if known is not None and not known.error and known.file == run_dir.file:
            try:
                stat = run_dir.file.stat()
            except OSError:
                stat = None
            unchanged = stat is not None and known.size == stat.st_size and known.mtime == stat.st_mtime
            if unchanged and not (known.state is RunState.RUNNING and now - known.mtime > self.crash_after):
                return None
        # A run that had an error is looked at again each scan (a chmod changes no size
        # or mtime); it only counts as changed when what it says changes.
        return probe(run_dir.name, run_dir.file, now, self.crash_after)

    def entries(self) -> list[RunEntry]:
        """Newest first (by start time, then directory name)."""
        with self._lock:
            entries = list(self._entries.values())
        return sorted(entries, key=lambda e: (e.start_time or e.mtime, e.key), reverse=True)

    # -- selection ---------------------------------------------------------------
    def selected(self) -> list[str]:
        with self._lock:
            return list(self._sources)

    def source(self, key: str) -> RunSource | SharedRunSource | None:
        with self._lock:
            return self._sources.get(key)

    def select(self, key: str) -> RunSource | SharedRunSource | None:
        """Start loading run ``key`` into the store (idempotent)."""
        with self._lock:
            found = self._sources.get(key)
            entry = self._entries.get(key)
        if found is not None or entry is None or entry.error:
            return found  # a run that cannot be read has its reason in its row, and nothing to load
        source: RunSource | SharedRunSource
        try:
            if len(entry.files) > 1:
                source = SharedRunSource(entry.files, self.store, key=key, crash_after=self.crash_after)
            else:
                source = RunSource(entry.file, self.store, key=key, crash_after=self.crash_after)
                source.earlier = self._earlier_segments(entry)  # a resumed segment is drawn after them
        except RunNotFound:  # deleted since the last scan: the next one drops it
            return None
        source.on_change(self._notify)
        with self._lock:
            self._sources[key] = source
        source.start()
        return source

    def _earlier_segments(self, entry: RunEntry) -> tuple[Path, ...]:
        """The files of ``entry``'s id written before it, oldest first (its rows numbered ``segment n/m``)."""
        if entry.segment is None:
            return ()
        with self._lock:
            others = [e for e in self._entries.values() if e.segment and e.file.name == entry.file.name and e.segment[0] < entry.segment[0]]
        return tuple(e.file for e in sorted(others, key=lambda e: e.segment or (0, 0)))

    def deselect(self, key: str) -> None:
        with self._lock:
            source = self._sources.pop(key, None)
        if source is not None:
            source.close()
            self.store.drop_run(key)
            self.store.drop_run(system_key(key))

    # -- the worker ----------------------------------------------------------------


    activity = "scanning"
    thread_name = "leet-workspace"

    def _loop(self) -> None:
        while not self._stop.is_set():
            if self.refresh():  # what it raises is said, and the scan retried, by ``_run``
                self._notify()
            self.stepped()
            self._stop.wait(self.rescan)

    def stop(self, timeout: float = 1.0) -> None:
        self._stop.set()
        for key in self.selected():
            source = self.source(key)
            if source is not None:
                source.stop()
        super().stop(timeout)
