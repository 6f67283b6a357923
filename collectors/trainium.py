"""AWS Trainium and Inferentia through ``neuron-monitor``: W&B's ``trn.*`` keys.

``neuron-monitor`` is a long-running tool: started once with ``-c CONFIG`` it
prints one JSON report per line, every ``period``. This collector starts one
child per collector (W&B's config, written to a temp file), reads its lines on
its own daemon thread and keeps only the latest report; ``sample`` maps that
report and never waits on the pipe. A child that dies is restarted after 1, 2,
4 … 60 s; what it said on stderr last is kept for the error shown meanwhile.

The child runs in its own session (a Ctrl-C in leet's terminal is leet's to
handle) and must never outlive leet: ``close`` terminates it, an ``atexit``
hook catches a leet that forgot to close, and on Linux the kernel sends it
SIGTERM when leet dies outright (``PR_SET_PDEATHSIG``).

Which runtime is reported follows W&B: the first ``neuron_runtime_data``
entry whose ``pid`` is the watched process, or, when ``LOCAL_RANK`` is set
(torchrun), the first entry whatever its pid, and then only NeuronCore
``LOCAL_RANK`` (zeros when that core is absent). Without a watched process
leet watches the machine and takes the first entry.
"""

from __future__ import annotations

import atexit
import collections
import ctypes
import functools
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from dataclasses import dataclass
from typing import IO, Any, Callable, Mapping

from collectors.base import Collector, Probe
from collectors.gpu import AcceleratorInfo

NEURON_MONITOR = "neuron-monitor"
# Where the Neuron SDK installs it; W&B looks here when it is not on PATH.
DEFAULT_NEURON_MONITOR = "/opt/aws/neuron/bin/neuron-monitor"
DEV_ROOT = "/dev"

MAX_RESTART_DELAY = 60.0  # in units of the backoff base (1 s by default)
TERM_GRACE = 0.5  # seconds between SIGTERM and SIGKILL
STDERR_TAIL = 20  # lines
MAX_LINE = 16 * 1024 * 1024  # a report is a few KiB; a longer line is noise
MAX_CORES = 4096  # beyond any instance; guards the core list against a broken report

HOST_MEMORY_FIELDS = ("application_memory", "constants", "dma_buffers", "tensors")
CORE_MEMORY_FIELDS = ("constants", "model_code", "model_shared_scratchpad", "runtime_memory", "tensors")

_PR_SET_PDEATHSIG = 1
_ATOI = re.compile(r"[+-]?[0-9]+")


# -- configuration and discovery ------------------------------------------------


def neuron_monitor_config(period: float = 1.0) -> dict[str, Any]:
    """The config W&B gives ``neuron-monitor -c``, reporting every ``period`` seconds.

    The period is whole seconds. Where W&B would write ``"0s"`` (an interval
    under one second), one second is the least here.
    """
    return {
        "period": f"{whole_seconds(period)}s",
        "neuron_runtimes": [
            {
                "tag_filter": ".*",
                "metrics": [
                    {"type": "neuroncore_counters"},
                    {"type": "memory_used"},
                    {"type": "neuron_runtime_vcpu_usage"},
                ],
            }
        ],
        "system_metrics": [
            {"type": "vcpu_usage"},
            {"type": "memory_info"},
            {"type": "neuron_hw_counters"},
        ],
    }


def whole_seconds(period: float) -> int:
    """A period as neuron-monitor takes it: whole seconds, at least one."""
    try:
        return max(1, int(period))
    except (ValueError, OverflowError, TypeError):
        return 1


def find_neuron_monitor() -> str | None:
    """``neuron-monitor`` on PATH, else where the Neuron SDK installs it."""
    found = shutil.which(NEURON_MONITOR)
    if found:
        return found
    if os.access(DEFAULT_NEURON_MONITOR, os.X_OK):
        return DEFAULT_NEURON_MONITOR
    return None


def neuron_devices(dev_root: str = DEV_ROOT) -> list[str]:
    """The Neuron device nodes (``neuron0``, ``neuron1`` …) under ``dev_root``."""
    try:
        names = os.listdir(dev_root)
    except OSError:
        return []
    return sorted((name for name in names if re.fullmatch(r"neuron[0-9]+", name)), key=lambda n: int(n[6:]))


def local_rank_from(env: Mapping[str, str]) -> int | None:
    """``LOCAL_RANK`` as W&B reads it: unset or empty is None; not a number counts as 0."""
    value = env.get("LOCAL_RANK", "")
    if value == "":
        return None
    return int(value) if _ATOI.fullmatch(value) else 0


# -- one report, W&B's way ------------------------------------------------------------


def select_runtime(report: Mapping[str, Any], pid: int | None, local_rank: int | None) -> Mapping[str, Any] | None:
    """The runtime entry W&B reports: the first whose pid matches, any with ``LOCAL_RANK``.

    An entry without a numeric ``pid`` never matches, even under ``LOCAL_RANK``.
    """
    runtimes = report.get("neuron_runtime_data")
    if not isinstance(runtimes, list):
        return None
    for entry in runtimes:
        entry_pid = _number(entry.get("pid")) if isinstance(entry, Mapping) else None
        if entry_pid is None:
            continue
        if local_rank is not None or pid is None or int(entry_pid) == pid:
            return entry
    return None


def runtime_values(entry: Mapping[str, Any], local_rank: int | None) -> dict[str, float] | None:
    """W&B's ``trn.*`` keys for one runtime entry; None when a section W&B needs is missing."""
    report = _mapping(entry.get("report"))
    in_use = _section(_mapping(report.get("neuroncore_counters")).get("neuroncores_in_use"))
    used_bytes = _section(_mapping(report.get("memory_used")).get("neuron_runtime_used_bytes"))
    if in_use is None or used_bytes is None:
        return None
    breakdown = _section(used_bytes.get("usage_breakdown"))
    if breakdown is None:
        return None
    utilization = _core_utilization(in_use)
    core_memory = _core_memory(_mapping(breakdown.get("neuroncore_memory_usage")))
    if local_rank is not None:
        utilization = {local_rank: utilization.get(local_rank, 0.0)}
        core_memory = {local_rank: core_memory.get(local_rank, dict.fromkeys(CORE_MEMORY_FIELDS, 0))}
    values: dict[str, float] = {}
    for core, busy in utilization.items():
        values[f"trn.{core}.neuroncore_utilization"] = busy
    values["trn.host_total_memory_usage"] = float(_truncated(used_bytes.get("host")))
    values["trn.neuron_device_total_memory_usage"] = float(_truncated(used_bytes.get("neuron_device")))
    for field, amount in _integer_fields(_mapping(breakdown.get("host")), HOST_MEMORY_FIELDS).items():
        values[f"trn.host_memory_usage.{field}"] = float(amount)
    for core, fields in core_memory.items():
        for field, amount in fields.items():
            values[f"trn.{core}.neuroncore_memory_usage.{field}"] = float(amount)
    return values


def _core_utilization(in_use: Mapping[str, Any]) -> dict[int, float]:
    utilization = {}
    for core, counters in in_use.items():
        busy = _number(_mapping(counters).get("neuroncore_utilization"))
        if busy is not None:
            utilization[_core_id(core)] = busy
    return utilization


def _core_memory(usage: Mapping[str, Any]) -> dict[int, dict[str, int]]:
    """Per-core memory; W&B drops a core whose fields are not all whole numbers."""
    cores = {}
    for core, fields in usage.items():
        if fields is None:
            cores[_core_id(core)] = dict.fromkeys(CORE_MEMORY_FIELDS, 0)
        elif isinstance(fields, Mapping) and all(fields.get(f) is None or _whole(fields.get(f)) is not None for f in CORE_MEMORY_FIELDS):
            cores[_core_id(core)] = _integer_fields(fields, CORE_MEMORY_FIELDS)
    return cores


def _integer_fields(source: Mapping[str, Any], names: tuple[str, ...]) -> dict[str, int]:
    """Every field, 0 where absent or not a whole number (W&B decodes them into ints)."""
    return {name: _whole(source.get(name)) or 0 for name in names}


def _core_id(key: Any) -> int:
    """A core's index the way W&B parses it: a key that is not a number becomes core 0."""
    return int(key) if isinstance(key, str) and _ATOI.fullmatch(key) else 0


def _truncated(value: Any) -> int:
    number = _number(value)
    return int(number) if number is not None and abs(number) < 2**63 else 0


def _number(value: Any) -> float | None:
    """A JSON number as a finite float; None for anything else (booleans included)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _whole(value: Any) -> int | None:
    """A JSON integer; None for anything else, ``1.0`` too (W&B decodes these into ints)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _section(value: Any) -> Mapping[str, Any] | None:
    return value if isinstance(value, Mapping) else None


def neuron_cores(report: Mapping[str, Any], emitted: Mapping[str, float], local_rank: int | None) -> tuple[AcceleratorInfo, ...]:
    """One line per NeuronCore the machine has, naming the keys this sample carries for it."""
    hardware = _mapping(report.get("neuron_hardware_info"))
    devices, per_device = _whole(hardware.get("neuron_device_count")), _whole(hardware.get("neuroncore_per_device_count"))
    cores: set[int] = set()
    if devices is not None and per_device is not None and 0 < devices * per_device <= MAX_CORES:
        cores.update(range(devices * per_device))
    cores.update(int(key.split(".")[1]) for key in emitted if re.fullmatch(r"trn\.-?[0-9]+\.neuroncore_utilization", key))
    instance = _mapping(report.get("instance_info")).get("instance_type")
    name = f"{instance} NeuronCore" if isinstance(instance, str) and instance else "NeuronCore"
    lines = []
    for core in sorted(cores)[:MAX_CORES]:
        key = f"trn.{core}.neuroncore_utilization"
        if key in emitted:
            lines.append(AcceleratorInfo(vendor="AWS", index=core, name=name, utilization_key=key))
        else:
            lines.append(AcceleratorInfo(vendor="AWS", index=core, name=name, reason=_unreported(local_rank)))
    return tuple(lines)


def _unreported(local_rank: int | None) -> str:
    if local_rank is not None:
        return f"LOCAL_RANK={local_rank}: only NeuronCore {local_rank} is reported"
    return "not in use by the watched Neuron runtime"


# -- the child and its reader ----------------------------------------------------------


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


# -- the collector -------------------------------------------------------------------------


class TrainiumCollector(Collector):
    """W&B's ``trn.*`` keys from one long-lived ``neuron-monitor`` child, plus one line per NeuronCore.

    ``pid`` is the watched process (None: the first Neuron runtime, whoever
    runs it). ``env`` is where ``LOCAL_RANK`` is read (``os.environ`` by
    default). ``period`` is neuron-monitor's reporting period in seconds.
    ``config_path`` names an existing neuron-monitor config to use as it is;
    without it W&B's config is written to a temp file. ``stale_after`` is how
    long without a new report before a note says the values are old.
    """

    name = "trainium"

    def __init__(
        self,
        pid: int | None = None,
        env: Mapping[str, str] | None = None,
        period: float = 1.0,
        config_path: str | None = None,
        dev_root: str = DEV_ROOT,
        backoff_base: float = 1.0,
        stale_after: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.pid = pid if pid else None
        self.local_rank = local_rank_from(os.environ if env is None else env)
        self.period = period
        self.config_path = config_path
        self.dev_root = dev_root
        self.backoff_base = backoff_base
        self.stale_after = stale_after if stale_after is not None else max(5.0, 3.0 * whole_seconds(period))
        self._clock = clock
        self._written_config: str | None = None
        self._monitor: NeuronMonitorProcess | None = None
        self._extras: dict[str, Any] = {"accelerators.trainium": (), "notes.trainium": ()}

    # -- the contract --------------------------------------------------------------

    def probe(self) -> Probe:
        if self._monitor is not None:
            return Probe.ok()
        executable = find_neuron_monitor()
        if executable is None:
            return Probe.absent(f"neuron-monitor is not installed (not on PATH, not at {DEFAULT_NEURON_MONITOR})")
        if not neuron_devices(self.dev_root):
            return Probe.absent(f"no Neuron device ({self.dev_root.rstrip('/')}/neuron*) on this machine")
        config = self.config_path
        if config is None:
            try:
                config = self._written_config = _write_config(neuron_monitor_config(self.period))
            except OSError as exc:
                return Probe.absent(f"could not write the neuron-monitor config: {exc}")
        self._monitor = NeuronMonitorProcess([executable, "-c", config], backoff_base=self.backoff_base, clock=self._clock)
        self._monitor.start()
        return Probe.ok()

    def sample(self) -> Mapping[str, float]:
        if self._monitor is None:
            raise RuntimeError("neuron-monitor is not running")
        state = self._monitor.state()
        if state.report is None:
            raise RuntimeError(self._not_ready(state))
        report = state.report
        entry = select_runtime(report, self.pid, self.local_rank)
        values = runtime_values(entry, self.local_rank) if entry is not None else None
        notes = self._notes(state, report, entry, values)
        self._extras = {
            "accelerators.trainium": neuron_cores(report, values or {}, self.local_rank),
            "notes.trainium": notes,
        }
        return values or {}

    def extras(self) -> Mapping[str, Any]:
        return self._extras

    def state(self) -> MonitorState | None:
        """What the reader thread knows now; None before probe and after close."""
        monitor = self._monitor
        return monitor.state() if monitor is not None else None

    def close(self) -> None:
        monitor, self._monitor = self._monitor, None
        try:
            if monitor is not None:
                monitor.stop()
        except Exception:  # noqa: BLE001 - close must not raise
            pass
        written, self._written_config = self._written_config, None
        if written is not None:
            try:
                os.unlink(written)
            except OSError:
                pass

    # -- messages ----------------------------------------------------------------------

    def _not_ready(self, state: MonitorState) -> str:
        now = self._clock()
        if state.running or not state.last_exit:
            waited = now - state.started_at if state.started_at is not None else 0.0
            message = f"waiting for neuron-monitor's first report ({waited:.0f} s so far)"
            return f"{message}; before this start, {state.last_exit}" if state.last_exit else message
        reason = state.last_exit
        if state.restart_at is not None:
            wait = max(0.0, state.restart_at - now)
            return f"{reason}; restarting it in {wait:.1f} s" if wait < 10 else f"{reason}; restarting it in {wait:.0f} s"
        return reason

    def _notes(
        self,
        state: MonitorState,
        report: Mapping[str, Any],
        entry: Mapping[str, Any] | None,
        values: Mapping[str, float] | None,
    ) -> tuple[str, ...]:
        notes = []
        age = self._clock() - state.received_at if state.received_at is not None else 0.0
        if age > self.stale_after:
            notes.append(f"neuron-monitor has sent no report for {age:.0f} s; these values are from its last one")
        if state.skipped:
            lines = "line" if state.skipped == 1 else "lines"
            notes.append(f"skipped {state.skipped} {lines} from neuron-monitor that were not JSON reports")
        if entry is None:
            notes.append(self._no_runtime())
        elif values is None:
            notes.append("neuron-monitor's report lacks the NeuronCore counters or memory figures")
        error = _mapping(report.get("neuron_hardware_info")).get("error")
        if isinstance(error, str) and error:
            notes.append(f"neuron-monitor: {error[:200]}")
        return tuple(notes)

    def _no_runtime(self) -> str:
        if self.pid is not None and self.local_rank is None:
            return f"no Neuron runtime belongs to process {self.pid}"
        return "no process is running on a NeuronCore"


def _write_config(config: Mapping[str, Any]) -> str:
    """W&B's config in a private temp file: a fixed shared name could be raced or pre-planted."""
    handle, path = tempfile.mkstemp(prefix="leet-neuron-monitor-", suffix=".json")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(config, out, indent=2)
    except OSError:
        try:
            os.unlink(path)
        except OSError:
            pass
        raise
    return path
