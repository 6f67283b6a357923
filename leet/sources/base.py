"""The contract every source keeps, and the listener base they share.

A source writes a series store from its own worker thread and tells its
listeners that something changed; the UI then pulls what it shows. Sources
never touch widgets. Whatever breaks a source's worker is kept in ``error``
and told to the listeners like any other change, so a screen can say what
failed; the worker goes on trying, ever more slowly (``backoff``), and the
error clears once a step works again.

``start()`` is idempotent: the command line starts the root source before
Textual is even imported (the first sample is then ready with the first
frame), and the app's ``attach`` starts anything not yet started. Only the
app stops what it attached.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Callable, Mapping, Protocol, runtime_checkable

from leet.common.retry import BACKOFF_FIRST, BACKOFF_MAX, backoff

if TYPE_CHECKING:
    from pathlib import PurePath

    from leet.alerts.alert_tail import RunAlerts
    from leet.discovery.probe import RunEntry
    from leet.model.run import RunSnapshot
    from leet.model.store import Store

_log = logging.getLogger("leet.sources")


Listener = Callable[[], None]


@runtime_checkable
class Source(Protocol):
    """What the app needs of any source: a store, change notices, a lifecycle, an error channel."""

    store: Store

    @property
    def error(self) -> str:
        """What broke the source's worker (it stopped, or retries), or "" while it works."""
        ...

    def on_change(self, listener: Listener) -> None: ...

    def off_change(self, listener: Listener) -> None: ...

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def close(self) -> None: ...

    def ui_ready(self) -> None:
        """The first frame is drawn: work held back for it may go on."""
        ...


@runtime_checkable
class RunView(Source, Protocol):
    """A source of one run (a file, a shared run's writers, or a made-up run)."""

    @property
    def run_key(self) -> str: ...

    @property
    def system_key(self) -> str: ...

    def snapshot(self, console_lines: int = 2000) -> RunSnapshot: ...


class Snapshots(Protocol):
    """Anything that can copy out what it knows of a run, for one redraw."""

    def snapshot(self, console_lines: int = 2000) -> RunSnapshot: ...


@runtime_checkable
class WorkspaceView(Source, Protocol):
    """A folder of runs: the list, and the selected runs loading into one store."""

    @property
    def root(self) -> PurePath: ...

    def entries(self) -> list[RunEntry]: ...

    def selected(self) -> list[str]: ...

    def source(self, key: str) -> Snapshots | None: ...

    def select(self, key: str) -> Snapshots | None: ...

    def deselect(self, key: str) -> None: ...

    def alerts(self) -> Mapping[str, RunAlerts]:
        """By run key, the run.alert() records its files gained while the folder was watched."""
        ...


class Listeners:
    """Who hears that a source changed, and what broke it.

    Listeners run on the source's thread: they may only post a message or set
    a flag, never touch widgets.
    """

    activity = "reading"  # what the worker does, for the message when it fails

    def __init__(self) -> None:
        self._listeners: list[Listener] = []
        self._error = ""
        self._stopped = False

    def on_change(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def off_change(self, listener: Listener) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    @property
    def error(self) -> str:
        return self._error

    @property
    def stopped(self) -> bool:
        """The worker ended on its error (``fail``); a worker that retries has not."""
        return self._stopped

    def _notify(self) -> None:
        for listener in list(self._listeners):
            listener()

    def fail(self, error: BaseException) -> None:
        """The worker is stopping on ``error``: keep it, log it, tell the listeners."""
        self._error = f"{self.activity} stopped: {type(error).__name__}: {error}"
        self._stopped = True
        # Textual captures stderr while it runs: the log is for LEET_LOG / the
        # user's logging setup; the screen shows ``error``.
        _log.error("%s", self._error, exc_info=error)
        self._notify()

    def retrying(self, error: BaseException, delay: float) -> None:
        """The worker failed on ``error`` and tries again in ``delay`` seconds: keep it, log it, tell the listeners."""
        self._error = f"{self.activity} failed, retrying in {delay:g} s: {type(error).__name__}: {error}"
        _log.error("%s", self._error, exc_info=error)
        self._notify()

    def ui_ready(self) -> None:
        """Nothing is held back by default."""

    def close(self) -> None:
        self.stop()

    def stop(self) -> None:  # pragma: no cover - every source gives its own
        raise NotImplementedError


class ThreadedSource(Listeners):
    """A source that reads on one daemon thread of its own: ``_loop`` runs there until ``stop()``.

    ``start()`` is idempotent. An exception out of ``_loop`` is told through
    ``retrying`` and ``_loop`` runs again after ``backoff`` (``backoff_first``,
    doubling to ``backoff_max``), so a bug met once never ends the data in
    silence. ``_loop`` calls ``stepped()`` after each step that worked: that
    clears the error and the backoff.
    """

    thread_name = "leet-worker"
    backoff_first = BACKOFF_FIRST
    backoff_max = BACKOFF_MAX

    def __init__(self) -> None:
        super().__init__()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._failures = 0  # failures in a row out of ``_loop``

    def _loop(self) -> None:
        raise NotImplementedError

    @property
    def running(self) -> bool:
        """The worker thread is alive (False before start and after it stopped)."""
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name=self.thread_name, daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 1.0) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def stepped(self) -> None:
        """A step worked: a failure before it is over (the listeners hear that the error cleared)."""
        self._failures = 0
        if self._error:
            self._error = ""
            self._notify()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self._loop()
                return
            except Exception as error:  # noqa: BLE001 - a bug or an unforeseen input must not pass in silence
                self._failures += 1
                delay = backoff(self._failures, self.backoff_first, self.backoff_max)
                self.retrying(error, delay)
                self._stop.wait(delay)
