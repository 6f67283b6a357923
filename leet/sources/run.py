"""A run file, loaded progressively on a worker thread and then tailed.

History points go to the series store under the run's id (x = step);
system metrics under ``<run id>#system`` (x = time), so a metric the user
logged as ``cpu`` never mixes with the host's ``cpu``. Everything else
(identity, config, summary, console, counters, state) is folded into a
``RunModel`` that screens read as a copy.
"""

from __future__ import annotations

import os
import re
import threading
import time
from typing import Any, Callable, Mapping

from leet.discovery.resume import segments_end, shift
from leet.model.catalog import KeyCap
from leet.model.keys import KeyLabel, axis_key, split_label, system_key
from leet.model.run import CRASH_AFTER, RunModel, RunSnapshot, RunState, Segment
from leet.model.store import Store
from leet.runfile.decode import EventReader
from leet.runfile.events import HistoryRow, RunAlert, StatsRow
from leet.runfile.history_columns import HistoryColumns
from leet.runfile.locate import find_run_file
from leet.runfile.reader import FileChanged, RunFileError
from leet.sources.parallel import (
    SPLIT_LOAD_BYTES,
    ChildLoad,
    Frame,
    split_point,
)
from leet.sources.tailer import Tailer

FIRST_BATCH = 2000  # small, so the first charts appear while the rest loads
BATCH = 10000  # records per step after the first: bigger ones cost memory (a peak of ~16 MiB more at 20000), not time
FRAMES_PER_STEP = 10  # batches taken from a child per step: about BATCH records
SPLIT_GRACE = 5.0  # seconds the loader waits for a child's next batch before it reads on itself
# Seconds after the first batch before a child is started: on a busy machine the child
# would take the CPU the app needs for its first charts (measured: 1.5 s to the first
# chart instead of 2.3 with a 0.3 s delay); on an idle one the loader reads meanwhile.
SPLIT_DELAY = 1.0

_RUN_FILE = re.compile(r"run-(?P<id>[^.]+)\.wandb$")


class RunSource(Tailer):
    """Reads one run file into a store and a run model; ``step()`` is the synchronous core.

    A file of ``split_load_bytes`` or more is read in two processes: a child
    (``leet.sources.parallel``) decodes the later part of what the file holds when
    first read, while this source reads the earlier part; then this source
    takes the child's batches in order and reads on from where the child stopped.
    """

    split_load_bytes = SPLIT_LOAD_BYTES
    thread_name = "leet-run"

    def __init__(
        self,
        path: str | os.PathLike[str],
        store: Store,
        *,
        poll_interval: float = 0.1,
        crash_after: float = CRASH_AFTER,
        monotonic: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        key: str | None = None,
        default_label: str | None = None,
        history_label: str | None = None,
    ) -> None:
        super().__init__()
        self.path = find_run_file(path)
        self._key = key  # a fixed store namespace (the workspace keys runs by directory)
        # System keys without a node label get this one, so writers never overwrite each other.
        self.default_label = default_label
        # A shared run's other writers: their history goes to the store under their label.
        self.history_label = history_label
        self.segments: tuple = ()  # the layout's segments of this run's id, when it has several
        self.earlier: tuple = ()  # the files of this id's segments before this one, oldest first (else taken from ``segments``)
        self.label: str | None = None  # the writer's node label, from its first labelled system key
        self.store = store
        self.poll_interval = poll_interval
        self.crash_after = crash_after
        self._monotonic = monotonic
        self._lock = threading.Lock()
        self._notice = ""  # what happened to the file itself (deleted, replaced, rewritten)
        self._gone = False  # deleted: nothing more to read unless a file appears at the path again
        self._begin(wall())

    def _begin(self, now_wall: float) -> None:
        """Reading state for the file from its first byte (at the start, and after it changed under us)."""
        # Only the latest summary is shown: a poll's summary records arrive as one event.
        self._reader = EventReader(self.path, fold_summary=True)
        self.model = RunModel(alert_source=str(self.path.parent.absolute()))
        self._read_error = ""
        self._file_size = 0
        self._size_known = False
        self._polls = 0
        self._child: ChildLoad | None = None
        self._child_checked = False  # the child's first record is the one this reader stopped at
        self._resume_at = 0  # where to read on if the child is dropped: after the last batch taken from it
        self._resume_num: int | None = None
        self._waiting_since = 0.0
        self._child_lost = (0, 0)  # damage (records, bytes) found in the child's part
        self._split_pending = True  # a child may still be started, once the first charts are out
        self._size_at_start = 0
        self._first_step_at = 0.0
        self._step_offset: int | None = None  # known once the first history arrives
        match = _RUN_FILE.search(self.path.name)
        self._file_run_id = match.group("id") if match else self.path.stem
        self._seed_growth(now_wall)

    def _seed_growth(self, now_wall: float) -> None:
        # A file last written long ago is stale from the start: its age counts
        # toward "presumed crashed" rather than the time we have watched it.
        try:
            age = max(0.0, now_wall - self.path.stat().st_mtime)
        except OSError:
            age = 0.0
        self.model.last_growth = self._monotonic() - age

    # -- identity -------------------------------------------------------------
    @property
    def run_key(self) -> str:
        if self._key:
            return self._key
        info = self.model.info
        return info.run_id if info is not None and info.run_id else self._file_run_id

    @property
    def system_key(self) -> str:
        return system_key(self.run_key)

    # -- reading ---------------------------------------------------------------
    def step(self) -> bool:
        """Read what is new (one batch) and fold it in; True if anything changed."""
        if self._gone:
            return self._came_back()
        if self._child is not None and self._reader.stopped_at is not None:
            return self._take_from_child()
        first = self._polls == 0
        limit = FIRST_BATCH if first else BATCH
        self._polls += 1
        try:
            size = self._reader.size()
            if first:
                self._size_at_start, self._first_step_at = size, time.monotonic()
            elif self._split_pending and time.monotonic() - self._first_step_at >= SPLIT_DELAY:
                self._start_split(self._size_at_start)
            batch = self._reader.poll(limit)
        except FileChanged as change:
            return self._file_changed(change)
        except (RunFileError, OSError) as error:
            with self._lock:
                changed = self._read_error != str(error)
                self._read_error = str(error)
            return changed
        if self._child is not None and batch.at_eof and self._reader.stopped_at is None:
            self._drop_child(resume=False)  # the data ended before the child's part: nothing there for it
        changed = False
        with self._lock:
            if self._read_error:  # the file reads again (it was away, or unreadable, for a while)
                self._read_error, changed = "", True
            if size > self._file_size:
                now = self._monotonic()
                # A file first seen already stale keeps its age; any other counts from now.
                if self._size_known or now - self.model.last_growth <= self.crash_after:
                    self.model.last_growth = now
                self._file_size = size
                changed = True
            self._size_known = True
            if batch.items:
                self._apply(batch.items)
                self.model.records += batch.folded
                changed = True
            if batch.at_eof and not self.model.loaded and self._child is None:
                self.model.loaded = True
                changed = True
            self._update_counters()
        return changed

    # -- the file changed under us --------------------------------------------------
    def _file_changed(self, change: FileChanged) -> bool:
        """Say what happened; read the new content from its start, or stop if the file is gone."""
        name = self.path.name
        if change.how == "deleted":
            self._gone = True
            with self._lock:
                self._notice = f"{name} was deleted: showing what was read before"
            return True
        self._restart(f"{name} was {change.how}: read again from the start")
        return True

    def _came_back(self) -> bool:
        """A deleted file that appears again is read from its start."""
        if not os.path.exists(self.path):
            return False
        self._restart(f"{self.path.name} was deleted and written again: read from the start")
        return True

    def _restart(self, notice: str) -> None:
        if self._child is not None:
            self._child.stop()
            self._child = None
        self._reader.close()
        with self._lock:
            for run in self.store.runs():
                if run == self.run_key or run.startswith(axis_key(self.run_key, "")):
                    self.store.drop_label(run, self.history_label)
            self.store.drop_label(self.system_key, self.label)
            self.label = None
            self._notice = notice
            self._gone = False
            self._begin(time.time())

    def _update_counters(self) -> None:
        model = self.model
        model.bytes_read = self._resume_at if self._child is not None and self._child_checked else self._reader.offset
        model.lost_bytes = self._reader.lost_bytes + self._child_lost[1]
        model.lost_records = self._reader.lost_records + self._child_lost[0]
        model.lost_uncounted = self._reader.uncounted_losses

    def _apply(self, decoded: list[Any]) -> None:
        history = HistoryColumns()
        system: dict[KeyLabel, tuple[list[float], list[float]]] = {}
        model = self.model
        apply = model.apply
        add_row = history.add
        for item in decoded:
            event = item.event
            if type(event) is HistoryRow:
                add_row(float(event.step), event.values)
            elif isinstance(event, StatsRow):
                for name, value in _kept(model.system_cap, self._named(event.values)).items():
                    column = system.get(name)
                    if column is None:
                        column = system[name] = ([], [])
                    column[0].append(event.timestamp)
                    column[1].append(value)
            elif type(event) is RunAlert:
                apply(event, None, item.offset)  # where it starts names it for good
                continue
            apply(event)
        columns = history.finish()
        if columns:
            self._store_history(columns)
        if system:
            self.store.extend_many(self.system_key, system)

    def _named(self, values: Mapping[str, float]) -> dict[KeyLabel, float]:
        """A system sample by (key, label), each W&B key split from its ``/l:`` node label once, here.

        Unlabelled keys get the default label; the writer's label is learnt
        from its first labelled key (else it is the default).
        """
        default = self.default_label
        named: dict[KeyLabel, float] = {}
        for raw, value in values.items():
            key, label = split_label(raw)
            if label is None:
                label = default
            elif self.label is None:
                self.label = label
            named[key, label] = value
        if self.label is None and default is not None and values:
            self.label = default
        return named

    # -- the child's part ----------------------------------------------------------
    def _start_split(self, size: int) -> None:
        """Leave the later part of the first ``size`` bytes to a child, if it is big enough to pay."""
        self._split_pending = False
        offset = self._reader.offset
        if size - offset < self.split_load_bytes or self.model.loaded:
            return
        split = split_point(size, offset)
        self._child = ChildLoad.start(self.path, split, size)
        if self._child is not None:
            self._reader.stop_before(split)

    def _take_from_child(self) -> bool:
        """Fold in the child's next batches (as many as one step of reading would hold);
        read on alone once the child is done, broken or stalled."""
        child = self._child
        assert child is not None
        if not self._waiting_since:
            self._waiting_since = time.monotonic()
            self._resume_at = self._reader.stopped_at or 0
        frames: list[Frame] = []
        broken = ""
        while len(frames) < FRAMES_PER_STEP:
            try:
                frame = child.next_frame(0.0 if frames else self.poll_interval)
            except ValueError as error:
                broken = f"unreadable batch: {error}"
                break
            if frame is None:
                break
            self._waiting_since = time.monotonic()
            if not self._child_checked:
                if frame.first is None:
                    continue  # nothing read yet: only the tail of the record before its part
                if frame.first != self._reader.stopped_at:  # the two framings disagree (damage near the split)
                    broken = f"the child started at {frame.first}, not {self._reader.stopped_at}"
                    break
                self._child_checked = True
            frames.append(frame)
        if frames:
            with self._lock:
                self._fold_frames(frames)
                self._resume_at, self._resume_num = frames[-1].resume_at, frames[-1].last_num
                self._update_counters()
        if broken:
            child.error = broken
            return self._drop_child()
        if frames:
            return True
        if child.exhausted or time.monotonic() - self._waiting_since > SPLIT_GRACE:
            return self._drop_child()
        return False

    def _fold_frames(self, frames: list[Frame]) -> None:
        """Batches of the child's part, as ``_apply`` would have folded their records; called under the lock."""
        columns: dict[str, tuple[Any, Any]] = {}  # all the batches' rows, so the store takes them at once
        model = self.model
        for frame in frames:
            for key, (steps, values) in frame.columns.items():
                column = columns.get(key)
                if column is None:
                    columns[key] = (steps, values)
                else:
                    column[0].extend(steps)
                    column[1].extend(values)
            if frame.events:
                self._apply(frame.events)
            # What ``RunModel.apply`` does with each history row, for the batch's rows at once.
            model.records += frame.rows + frame.folded
            model.history_rows += frame.rows
            if frame.last_step is not None:
                model.last_step = frame.last_step if model.last_step is None else max(model.last_step, frame.last_step)
            model.add_history_keys(frame.keys)
            model.media_keys.update(frame.media)
            self._child_lost = (self._child_lost[0] + frame.lost_records, self._child_lost[1] + frame.lost_bytes)
        if columns:
            self._store_history(columns)

    def _store_history(self, columns: Mapping[str, tuple[Any, Any]]) -> None:
        """History by step under the run's key; metrics with a ``define_metric`` axis also by that axis."""
        columns = self.model.metric_cap.filter(columns)  # the model has counted the keys
        if self._step_offset is None:
            self._step_offset = self._resumed_offset(columns)
        offset = self._step_offset
        by_step = {key: ([step + offset for step in steps], values) for key, (steps, values) in columns.items()} if offset else columns
        self._extend(self.run_key, by_step)
        for axis, points in self.model.axes.route(columns).items():
            self._extend(axis_key(self.run_key, axis), points)

    def _resumed_offset(self, columns: Mapping[str, tuple[Any, Any]]) -> int:
        """How far this segment's steps move to follow the earlier segments' (``discovery.resume``)."""
        info = self.model.info
        if info is None or not info.resumed:
            return 0
        earlier = self.earlier
        if not earlier:
            files = [head.file for head in self.segments]
            earlier = tuple(files[: files.index(self.path)]) if self.path in files else ()
        first = min((steps[0] for steps, _ in columns.values() if len(steps)), default=0)
        return shift(segments_end(earlier), int(first), True) if earlier else 0

    def _extend(self, run: str, columns: Mapping[str, tuple[Any, Any]]) -> None:
        # History keys are taken whole: a metric logged as ``loss/l:x`` is one series, not ``loss`` of node ``x``.
        label = self.history_label
        self.store.extend_many(run, {(key, label): column for key, column in columns.items()})

    def _drop_child(self, resume: bool = True) -> bool:
        """Stop using the child; with ``resume``, read on from the end of the last batch taken from it."""
        child = self._child
        assert child is not None
        child.stop()
        self._child = None
        if resume:
            self._reader.resume(self._resume_at, self._resume_num)
        else:
            self._reader.stop_before(None)
        with self._lock:
            self._update_counters()
        return True

    # -- the worker --------------------------------------------------------------
    def loaded(self) -> bool:
        return self.model.loaded

    def finished(self) -> bool:
        return self._gone or (self.model.exit is not None and self.model.loaded)

    def stop(self, timeout: float = 1.0) -> None:
        child = self._child
        if child is not None:
            child.stop()  # the worker, if any, finds no child and reads on alone
        super().stop(timeout)

    # -- reading the model ---------------------------------------------------
    def snapshot(self, console_lines: int = 2000) -> RunSnapshot:
        with self._lock:
            model = self.model
            # Not "finished" before the whole file is in: the exit record may be read
            # while a child still works on the part before it.
            verdict = model.verdict(self._monotonic(), self.crash_after, self._file_size if self._size_known else None)
            return RunSnapshot.of(
                model,
                run_key=self.run_key,
                state=verdict.state if model.loaded else RunState.LOADING,
                reason=verdict.reason,
                segments=tuple(Segment(head.file, head.info.start_time if head.info else None, head.file == self.path) for head in self.segments),
                step_offset=self._step_offset or 0,
                file_size=self._file_size,
                run_id=model.info.run_id if model.info is not None and model.info.run_id else self._file_run_id,
                console_lines=console_lines,
                error="; ".join(part for part in (self.error, self._notice, self._read_error) if part),
                stopped=self.stopped,
            )

    def close(self) -> None:
        self.stop()
        self._reader.close()


def _kept(cap: KeyCap[KeyLabel], values: Mapping[KeyLabel, float]) -> Mapping[KeyLabel, float]:
    """``values`` of the keys ``cap`` shows: past it, a run's keys are counted, never stored."""
    cap.add(values)
    return cap.filter(values)

