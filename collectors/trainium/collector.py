"""The Trainium and Inferentia collector: W&B's ``trn.*`` keys from one long-lived ``neuron-monitor`` child.

The probe starts the child (W&B's config, written to a temp file) under a
``NeuronMonitorProcess``; ``sample`` maps the latest report it kept and
never waits on the pipe; ``close`` ends the child.
"""

from __future__ import annotations

import os
import time
from typing import Any, Callable, Mapping

from collectors.base import Collector, Probe
from collectors.trainium.launch import DEFAULT_NEURON_MONITOR, DEV_ROOT, find_neuron_monitor, neuron_devices, neuron_monitor_config, whole_seconds, write_config
from collectors.trainium.parse import hardware_error, local_rank_from, neuron_cores, runtime_values, select_runtime
from collectors.trainium.supervisor import MonitorState, NeuronMonitorProcess


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
                config = self._written_config = write_config(neuron_monitor_config(self.period))
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
        error = hardware_error(report)
        if error:
            notes.append(f"neuron-monitor: {error[:200]}")
        return tuple(notes)

    def _no_runtime(self) -> str:
        if self.pid is not None and self.local_rank is None:
            return f"no Neuron runtime belongs to process {self.pid}"
        return "no process is running on a NeuronCore"
