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
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from leet.runfile.events import HistoryRow, StatsRow
from leet.runfile.reader import RunFileError
from leet.runfile.records import EventReader
from leet.runstate import ConsoleLine, RunModel, RunState
from leet.store import Store

SYSTEM_SUFFIX = "#system"
FIRST_BATCH = 2000  # small, so the first charts appear while the rest loads
BATCH = 20000
CRASH_AFTER = 600.0  # seconds without growth or exit record before a run is presumed crashed

_RUN_FILE = re.compile(r"run-(?P<id>[^.]+)\.wandb$")


class RunNotFound(FileNotFoundError):
    """The path names no run file."""


def find_run_file(path: str | os.PathLike[str]) -> Path:
    """The ``run-<id>.wandb`` file at ``path``, or inside the run directory ``path``."""
    path = Path(path)
    if path.is_file():
        return path
    if path.is_dir():
        found = sorted(path.glob("run-*.wandb"))
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            names = ", ".join(p.name for p in found)
            raise RunNotFound(f"{path} holds several run files ({names}); name one of them")
        raise RunNotFound(f"{path} holds no run-*.wandb file")
    raise RunNotFound(f"{path} does not exist")


@dataclass(frozen=True)
class RunSnapshot:
    """A copy of what the run model knows, for one redraw."""

    run_key: str  # where the run's series are in the store
    state: RunState
    info: Any
    config: dict[str, Any]
    summary: dict[str, Any]
    environments: tuple[Any, ...]
    console: tuple[ConsoleLine, ...]
    last_step: int | None
    history_keys: tuple[str, ...]
    records: int
    bytes_read: int
    file_size: int
    lost_bytes: int
    lost_records: int
    exit_code: int | None
    error: str = ""
    run_id: str = ""  # the run's own id, for people


class RunSource:
    """Reads one run file into a store and a run model; ``step()`` is the synchronous core."""

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
    ) -> None:
        self.path = find_run_file(path)
        self._key = key  # a fixed store namespace (the workspace keys runs by directory)
        self.store = store
        self.poll_interval = poll_interval
        self.crash_after = crash_after
        self._monotonic = monotonic
        self._reader = EventReader(self.path, lazy_summary=True)
        self._lock = threading.Lock()
        self.model = RunModel()
        self._error = ""
        self._file_size = 0
        self._listeners: list[Callable[[], None]] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._polls = 0
        match = _RUN_FILE.search(self.path.name)
        self._file_run_id = match.group("id") if match else self.path.stem
        self._seed_growth(wall())

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
        return self.run_key + SYSTEM_SUFFIX

    def on_change(self, listener: Callable[[], None]) -> None:
        self._listeners.append(listener)

    # -- reading ---------------------------------------------------------------
    def step(self) -> bool:
        """Read what is new (one batch) and fold it in; True if anything changed."""
        limit = FIRST_BATCH if self._polls == 0 else BATCH
        self._polls += 1
        try:
            size = self._reader.size()
            batch = self._reader.poll(limit)
        except (RunFileError, OSError) as error:
            with self._lock:
                changed = self._error != str(error)
                self._error = str(error)
            return changed
        changed = False
        with self._lock:
            if size > self._file_size:
                self._file_size = size
                self.model.last_growth = self._monotonic()
                changed = True
            if batch.items:
                self._apply(batch.items)
                changed = True
            if batch.at_eof and not self.model.loaded:
                self.model.loaded = True
                changed = True
            self.model.bytes_read = self._reader.offset
            self.model.lost_bytes = self._reader.lost_bytes
        return changed

    def _apply(self, decoded: list[Any]) -> None:
        history: dict[str, tuple[list[float], list[float]]] = {}
        system: dict[str, tuple[list[float], list[float]]] = {}
        model = self.model
        for item in decoded:
            event = item.event
            if isinstance(event, HistoryRow):
                step = float(event.step)
                for key, value in event.values.items():
                    column = history.get(key)
                    if column is None:
                        column = history[key] = ([], [])
                    column[0].append(step)
                    column[1].append(value)
            elif isinstance(event, StatsRow):
                for key, value in event.values.items():
                    column = system.get(key)
                    if column is None:
                        column = system[key] = ([], [])
                    column[0].append(event.timestamp)
                    column[1].append(value)
            model.apply(event)
        model.lost_records = self._reader.lost_records
        if history:
            self.store.extend_many(self.run_key, history)
        if system:
            self.store.extend_many(self.system_key, system)

    # -- the worker --------------------------------------------------------------
    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="leet-run", daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 1.0) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def _run(self) -> None:
        while not self._stop.is_set():
            changed = self.step()
            if changed:
                self._notify()
            finished = self.model.exit is not None and self.model.loaded
            if not changed:
                # Tail politely: a stat() per poll; slower once the run has ended.
                self._stop.wait(self.poll_interval * (10 if finished else 1))

    def _notify(self) -> None:
        for listener in self._listeners:
            listener()

    # -- reading the model ---------------------------------------------------
    def snapshot(self, console_lines: int = 2000) -> RunSnapshot:
        with self._lock:
            model = self.model
            return RunSnapshot(
                run_key=self.run_key,
                state=model.state(self._monotonic(), self.crash_after),
                info=model.info,
                config=dict(model.config),
                summary=dict(model.summary),
                environments=tuple(model.environments),
                console=tuple(model.console.snapshot(console_lines)),
                last_step=model.last_step,
                history_keys=tuple(sorted(model.history_keys)),
                records=model.records,
                bytes_read=model.bytes_read,
                file_size=self._file_size,
                lost_bytes=model.lost_bytes,
                lost_records=model.lost_records,
                exit_code=model.exit.exit_code if model.exit is not None else None,
                error=self._error,
                run_id=model.info.run_id if model.info is not None and model.info.run_id else self._file_run_id,
            )

    def close(self) -> None:
        self.stop()
        self._reader.close()
