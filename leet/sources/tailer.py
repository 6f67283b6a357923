"""The worker thread file sources run:
read a batch, tell listeners, wait politely.

A subclass gives ``step()`` (read what is new; True if anything changed),
``loaded()`` (the first full read is done) and ``finished()`` (nothing more
will come), and sets ``poll_interval``.
"""

from __future__ import annotations

import threading
import time

from leet.sources.base import ThreadedSource

LOADING_REDRAW = 0.25  # seconds between change notices while the file is first read
UI_WAIT = 3.0  # the longest a loader holds back for the first frame


class Tailer(ThreadedSource):
    poll_interval: float = 0.1
    thread_name = "leet-tail"

    def __init__(self) -> None:
        super().__init__()
        self._ui_ready = threading.Event()
        self._ui_ready.set()
        self._steps = 0

    # -- what a subclass gives -------------------------------------------------
    def step(self) -> bool:
        raise NotImplementedError

    def loaded(self) -> bool:
        raise NotImplementedError

    def finished(self) -> bool:
        raise NotImplementedError

    # -- the first frame -----------------------------------------------------------
    def hold_after_first_batch(self) -> None:
        """Read one small batch, then wait for ``ui_ready()`` (at most ``UI_WAIT`` seconds).

        Loading a big file is CPU work that competes with the UI's own start
        (Python runs one thread at a time): holding back until the first frame
        is drawn puts the first charts on screen sooner.
        """
        self._ui_ready.clear()

    def ui_ready(self) -> None:
        self._ui_ready.set()

    # -- the thread ------------------------------------------------------------------
    def _loop(self) -> None:
        unshown = False  # a change the listeners have not heard of yet
        told_at: float | None = None
        while not self._stop.is_set():
            changed = self.step()
            self.stepped()
            self._steps += 1
            if self._steps == 1 and not self._ui_ready.is_set():
                self._notify()
                self._ui_ready.wait(UI_WAIT)
            unshown = unshown or changed
            now = time.monotonic()
            # While the first read goes on, a redraw per batch would take the
            # loader's time for frames nobody can follow: one per LOADING_REDRAW.
            if unshown and (self.loaded() or told_at is None or now - told_at >= LOADING_REDRAW):
                self._notify()
                unshown, told_at = False, now
            if not changed:
                # Tail politely: a stat() per poll; slower once the run has ended.
                self._stop.wait(self.poll_interval * (10 if self.finished() else 1))
