"""The run under the workspace's cursor, read on one thread of its own while the peek panel is open.

The panel asks for a run each time the cursor moves. The reader opens only
the last run asked for, once the asking has paused for ``DEBOUNCE`` seconds,
so running the cursor down a long list opens none of the runs passed over.
One run is read at a time: this thread steps the shown run's source itself
(the sources start no threads or split-load children here), and the last
``KEPT`` runs stay open, paused, so going back to one shows it at once and
reads on from where it stopped.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Protocol, Sequence

from leet.model.run import RunSnapshot
from leet.model.store import Store
from leet.runfile.reader import RunFileError
from leet.sources.base import ThreadedSource
from leet.sources.shared import SharedRunSource, open_run
from leet.sources.tailer import LOADING_REDRAW

DEBOUNCE = 0.2  # seconds the cursor rests on a run before it is opened
KEPT = 4  # runs kept open (paused) for going back
POLL = 0.1  # seconds between reads of a run that had nothing new; ten times that once it finished
IDLE = 3600.0  # the longest wait with nothing to read: asking wakes the thread


class PeekSource(Protocol):
    """A run source stepped by the reader's thread: ``RunSource`` and ``SharedRunSource`` are ones."""

    @property
    def run_key(self) -> str: ...

    @property
    def system_key(self) -> str: ...

    def step(self) -> bool: ...

    def finished(self) -> bool: ...

    def snapshot(self, console_lines: int = 2000) -> RunSnapshot: ...

    def close(self) -> None: ...


Opener = Callable[[str, Sequence[Path], Store], PeekSource]


def open_peek_source(key: str, files: Sequence[Path], store: Store) -> PeekSource:
    """Run ``key``'s source over its ``files`` (every writer's), read in this process only, when stepped."""
    source = open_run(list(files), store, key=key)
    for reader in source.writers if isinstance(source, SharedRunSource) else [source]:
        reader.split_load_bytes = sys.maxsize  # a child process would read on while the cursor is elsewhere
    return source


@dataclass(frozen=True)
class Peek:
    """What the reader shows: the run asked for (``key``), its source once open, or why it could not be opened."""

    key: str | None = None
    source: PeekSource | None = None
    error: str = ""


class RunPeeker(ThreadedSource):
    """Opens the run asked for by ``show()`` and reads it on one thread, telling the listeners what changed."""

    thread_name = "leet-peek"

    def __init__(
        self,
        store: Store | None = None,
        *,
        opener: Opener = open_peek_source,
        debounce: float = DEBOUNCE,
        kept: int = KEPT,
        poll_interval: float = POLL,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__()
        self.store = store or Store()
        self._opener = opener
        self.debounce = debounce
        self.kept = kept
        self.poll_interval = poll_interval
        self._monotonic = monotonic
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._wanted: tuple[str, tuple[Path, ...]] | None = None
        self._asked_at = 0.0
        self._shown = Peek()
        self._open: OrderedDict[str, PeekSource] = OrderedDict()  # least recently shown first
        self._told_at = 0.0
        self._untold = False

    # -- asking ------------------------------------------------------------------
    def show(self, key: str | None, files: Sequence[Path] = ()) -> None:
        """Read run ``key`` (its ``files``, every writer's) once the asking pauses; None: read no run."""
        wanted = (key, tuple(files)) if key is not None else None
        with self._lock:
            if wanted == self._wanted:
                return
            self._wanted = wanted
            self._asked_at = self._monotonic()
        self._wake.set()

    def peek(self) -> Peek:
        with self._lock:
            return self._shown

    def open_keys(self) -> list[str]:
        """The runs kept open, least recently shown first."""
        with self._lock:
            return list(self._open)

    # -- one turn of the thread ------------------------------------------------------
    def tick(self) -> float:
        """Open what was asked for once the asking paused, else read the shown run; seconds until the next turn."""
        with self._lock:
            wanted, asked_at, shown = self._wanted, self._asked_at, self._shown
        if wanted is None:
            if shown.key is not None:
                self._set_shown(Peek())
            return IDLE
        key, files = wanted
        if key != shown.key:
            with self._lock:
                source = self._open.get(key)
                if source is not None:
                    self._open.move_to_end(key)
            if source is not None:  # kept open: shown at once
                self._set_shown(Peek(key, source))
                return 0.0
            resting = self._monotonic() - asked_at
            if resting < self.debounce:
                if shown != Peek(key):
                    self._set_shown(Peek(key))  # the panel says the run is being read
                return self.debounce - resting
            return self._open_run(key, files)
        if shown.source is None:
            return IDLE if shown.error else self._open_run(key, files)
        changed = shown.source.step()
        self._untold = self._untold or changed
        return 0.0 if changed else self.poll_interval * (10 if shown.source.finished() else 1)

    def _open_run(self, key: str, files: tuple[Path, ...]) -> float:
        try:
            source = self._opener(key, files, self.store)
        except (RunFileError, OSError, ValueError) as error:
            self._set_shown(Peek(key, error=f"{type(error).__name__}: {error}"))
            return IDLE
        with self._lock:
            self._open[key] = source
            evicted = [self._open.popitem(last=False)[1] for _ in range(max(0, len(self._open) - self.kept))]
        for old in evicted:
            self._forget(old)
        self._set_shown(Peek(key, source))
        return 0.0

    def _set_shown(self, peek: Peek) -> None:
        with self._lock:
            self._shown = peek
        self._untold = True

    def _forget(self, source: PeekSource) -> None:
        source.close()
        self.store.drop_run(source.run_key)
        self.store.drop_run(source.system_key)

    # -- the thread ------------------------------------------------------------------
    def _loop(self) -> None:
        while not self._stop.is_set():
            self._wake.clear()
            wait = self.tick()
            self.stepped()
            now = self._monotonic()
            # While a run loads, a redraw per batch would take its time for frames nobody can follow.
            if self._untold and (wait > 0 or now - self._told_at >= LOADING_REDRAW):
                self._untold, self._told_at = False, now
                self._notify()
            if wait > 0:
                self._wake.wait(wait)

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the thread, then close every run kept open and drop what they put in the store."""
        self._stop.set()
        self._wake.set()
        super().stop(timeout)
        with self._lock:
            kept, self._open = list(self._open.values()), OrderedDict()
            self._shown = Peek()
        for source in kept:
            self._forget(source)
