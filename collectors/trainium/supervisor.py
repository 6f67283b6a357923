"""One long-lived ``neuron-monitor`` child at a time: started, read on a daemon thread, restarted with backoff, never left behind.

``neuron-monitor`` started with ``-c CONFIG`` prints one JSON report per
line, every ``period``; the reader thread keeps only the latest, so a
reader of ``state`` never waits on the pipe. A child that dies is restarted
after 1, 2, 4 … 60 s; what it said on stderr last is kept for the error
shown meanwhile.

The child runs in its own session (a Ctrl-C in leet's terminal is leet's to
handle) and must never outlive leet: ``stop`` terminates it, an ``atexit``
hook catches a leet that forgot to stop it, and on Linux the kernel sends it
SIGTERM when leet dies outright (``PR_SET_PDEATHSIG``).
"""

from __future__ import annotations

import atexit
import collections
import ctypes
import functools
import json
import os
import signal
import subprocess
import sys
import threading
import time
import weakref
from dataclasses import dataclass
from typing import IO, Any, Callable, Mapping

MAX_RESTART_DELAY = 60.0  # in units of the backoff base (1 s by default)
TERM_GRACE = 0.5  # seconds between SIGTERM and SIGKILL
STDERR_TAIL = 20  # lines
MAX_LINE = 16 * 1024 * 1024  # a report is a few KiB; a longer line is noise

_PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class MonitorState:
    """What the reader thread knows, as of one instant."""

    report: Mapping[str, Any] | None  # the latest report of the running child
    received_at: float | None  # monotonic time of that report
    running: bool
    started_at: float | None  # when the running child was started
    starts: int  # children started so far
    received: int  # reports taken, from every child
    skipped: int  # lines that were not JSON reports
    last_exit: str  # why the last child ended ("" before any did)
    restart_at: float | None  # when the next child starts, while none runs


class NeuronMonitorProcess:
    """One ``neuron-monitor -c CONFIG`` child at a time, restarted with backoff, read on a daemon thread.

    ``backoff_base`` scales the restart delays (1, 2, 4 … 60 times it) and
    the time a child must have run for the delays to start again at one.
    """

    def __init__(
        self,
        command: list[str],
        backoff_base: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.command = list(command)
        self.backoff_base = max(0.0, float(backoff_base))
        self._clock = clock
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._child: subprocess.Popen[bytes] | None = None
        self._thread: threading.Thread | None = None
        self._report: Mapping[str, Any] | None = None
        self._received_at: float | None = None
        self._started_at: float | None = None
        self._starts = 0
        self._received = 0
        self._skipped = 0
        self._last_exit = ""
        self._restart_at: float | None = None
        self.restart_delays: list[float] = []  # every restart delay so far, for diagnostics

    def start(self) -> None:
        with self._lock:
            if self._thread is not None or self._stop.is_set():
                return
            self._thread = threading.Thread(target=self._supervise, name="leet-neuron-monitor", daemon=True)
            self._thread.start()
        with _running_lock:
            _running.add(self)

    def state(self) -> MonitorState:
        with self._lock:
            return MonitorState(
                report=self._report,
                received_at=self._received_at,
                running=self._child is not None,
                started_at=self._started_at,
                starts=self._starts,
                received=self._received,
                skipped=self._skipped,
                last_exit=self._last_exit,
                restart_at=self._restart_at,
            )

    @property
    def pid(self) -> int | None:
        child = self._child
        return child.pid if child is not None else None

    def stop(self, timeout: float = 2.0) -> None:
        """End the child (SIGTERM, then SIGKILL) and the reader thread. Never raises."""
        with _running_lock:
            _running.discard(self)
        with self._lock:
            self._stop.set()
            child = self._child
        if child is not None:
            _end_child(child, TERM_GRACE)
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    # -- the reader thread -----------------------------------------------------------

    def _supervise(self) -> None:
        failures = 0
        while not self._stop.is_set():
            began = self._clock()
            child = self._spawn()
            if child is not None:
                try:
                    self._reap(child, self._read(child))
                except Exception as exc:  # noqa: BLE001 - the thread must outlive any surprise, and say so
                    _end_child(child, TERM_GRACE)
                    with self._lock:
                        self._last_exit = f"reading neuron-monitor failed: {type(exc).__name__}: {exc}"
            if self._stop.is_set():
                return
            healthy = child is not None and self._clock() - began >= MAX_RESTART_DELAY * self.backoff_base
            failures = 1 if healthy else failures + 1
            delay = min(MAX_RESTART_DELAY, 2.0 ** min(failures - 1, 16)) * self.backoff_base
            self.restart_delays.append(delay)
            with self._lock:
                self._restart_at = self._clock() + delay
            self._stop.wait(delay)

    def _spawn(self) -> subprocess.Popen[bytes] | None:
        with self._lock:
            if self._stop.is_set():
                return None
            try:
                child = subprocess.Popen(
                    self.command,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    start_new_session=True,
                    preexec_fn=_death_signal_hook(),
                )
            except (OSError, ValueError, subprocess.SubprocessError) as exc:
                self._last_exit = f"neuron-monitor could not be started: {exc}"
                return None
            self._child = child
            self._report = self._received_at = self._restart_at = None
            self._started_at = self._clock()
            self._starts += 1
            return child

    def _read(self, child: subprocess.Popen[bytes]) -> str:
        """Take reports until stdout ends and see the child gone; the last lines of its stderr."""
        stderr_tail: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL)
        drain = threading.Thread(target=_drain, args=(child.stderr, stderr_tail), name="leet-neuron-monitor-stderr", daemon=True)
        drain.start()
        assert child.stdout is not None
        self._read_reports(child.stdout)
        try:
            child.wait(TERM_GRACE)  # stdout ends just before a normal exit
        except subprocess.TimeoutExpired:
            pass
        _end_child(child, TERM_GRACE)  # one that closed its stdout yet runs on is of no use
        drain.join(1.0)
        return " | ".join(line for line in stderr_tail if line)

    def _read_reports(self, stdout: IO[bytes]) -> None:
        partial = False  # inside a line longer than MAX_LINE
        while True:
            try:
                line = stdout.readline(MAX_LINE)
            except (OSError, ValueError):
                return
            if not line:
                return
            complete = line.endswith(b"\n")
            if partial or not complete and len(line) >= MAX_LINE:
                if not partial:
                    self._count_skipped()
                partial = not complete
                continue
            self._take(line)

    def _take(self, line: bytes) -> None:
        if not line.strip():
            return
        try:
            report = json.loads(line, parse_constant=_refuse_constant)
        except (ValueError, RecursionError):
            report = None
        if not isinstance(report, dict):
            self._count_skipped()
            return
        with self._lock:
            self._report, self._received_at = report, self._clock()
            self._received += 1

    def _count_skipped(self) -> None:
        with self._lock:
            self._skipped += 1

    def _reap(self, child: subprocess.Popen[bytes], tail: str) -> None:
        code = child.returncode
        for stream in (child.stdout, child.stderr):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        with self._lock:
            self._child = None
            self._report = self._received_at = None
            self._last_exit = _exit_reason(code, tail)


def _exit_reason(code: int | None, tail: str) -> str:
    if code is not None and code < 0:
        try:
            how = f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            how = f"was killed by signal {-code}"
    else:
        how = f"exited with code {code}"
    return f"neuron-monitor {how}: {tail}" if tail else f"neuron-monitor {how}"


def _drain(stream: IO[bytes] | None, tail: collections.deque[str]) -> None:
    """Keep the last lines of the child's stderr, so a chatty child never blocks on a full pipe."""
    if stream is None:
        return
    try:
        for raw in iter(lambda: stream.readline(64 * 1024), b""):
            tail.append(raw.decode("utf-8", "replace").strip()[:500])
    except (OSError, ValueError):
        return


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _end_child(child: subprocess.Popen[bytes], grace: float) -> None:
    """SIGTERM the child's process group, SIGKILL it after ``grace``, and reap it. Never raises."""
    try:
        if child.poll() is not None:
            return
        _signal_group(child, signal.SIGTERM)
        try:
            child.wait(grace)
            return
        except subprocess.TimeoutExpired:
            pass
        _signal_group(child, signal.SIGKILL)
        child.wait(grace)
    except (OSError, subprocess.SubprocessError):
        pass


def _signal_group(child: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    # Only while unreaped: a reaped child's pid may already be someone else's.
    if child.returncode is not None:
        return
    try:
        os.killpg(child.pid, sig)
    except (ProcessLookupError, PermissionError):
        try:
            child.send_signal(sig)
        except OSError:
            pass


@functools.lru_cache(maxsize=1)
def _prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    return prctl


def _death_signal_hook() -> Callable[[], None] | None:
    """A ``preexec_fn`` asking the kernel to SIGTERM the child when its parent dies.

    The signal comes when the forking *thread* ends; the reader thread that
    forks outlives its child by construction. Resolved in the parent, so the
    forked child only makes one foreign call before exec.
    """
    prctl = _prctl()
    if prctl is None:
        return None
    parent, sigterm = os.getpid(), int(signal.SIGTERM)

    def hook() -> None:
        prctl(_PR_SET_PDEATHSIG, sigterm, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before prctl took effect
            os._exit(1)

    return hook


# Monitors still running when the interpreter exits without close(). Stopping
# the monitor, not just killing its child, keeps its reader thread from
# starting another child in the moments before exit.
_running: weakref.WeakSet[NeuronMonitorProcess] = weakref.WeakSet()
_running_lock = threading.Lock()


def _end_running_monitors() -> None:
    with _running_lock:
        monitors = list(_running)
    for monitor in monitors:
        monitor.stop(timeout=0.5)


atexit.register(_end_running_monitors)
