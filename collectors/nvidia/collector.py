"""The NVIDIA collector: W&B's ``gpu.{i}.*`` keys from NVML, GPU processes, MIG.

NVML is initialised once, in ``probe``; device handles are kept for the
collector's life and ``close`` shuts NVML down. Each sweep asks every
selected GPU for its gauges; what rarely changes (name, UUID, power limit,
maximum PCIe link, MIG layout) is re-read only every ``STATIC_REFRESH``
seconds.

A field a GPU does not support is left out and asked again only every
``RETRY_UNSUPPORTED`` seconds; any other NVML error costs that field for one
sweep. A GPU that falls off the bus is marked lost while the others go on.

Processes: the driver lists them by host PID. Where this procfs shows host
PIDs, each one gets its user, command, its PID as our namespace numbers it
and, when it runs in a nested namespace (a container), its PID there, from
``/proc``; inside a container with its own PID namespace none of that can be
done, and ``notes.nvidia`` says so. ``pid`` (the watched process) is
numbered as the procfs at ``proc_root`` numbers it.
"""

from __future__ import annotations

import functools
import time
from dataclasses import replace
from typing import Any, Callable, Mapping, Sequence

from collectors import pidns
from collectors.base import Collector, Probe
from collectors.energy import EnergyMeter
from collectors.gpu import GpuProcess, MigInstance
from collectors.nvidia.device import (
    FAN_SPEED,
    GPU_IS_LOST,
    MIG_ENABLED,
    PCIE_THROUGHPUT,
    SCALARS,
    TEMPERATURE,
    Gpu,
    GpuLost,
    MigSlot,
    init_failure,
)
from collectors.nvidia.processes import CONTAINER_NOTE, Identity, NvidiaProcesses, Seen, mig_profile
from collectors.procfs import UserNames

STATIC_REFRESH = 30.0
RETRY_LOST = 60.0


class NvidiaCollector(NvidiaProcesses, Collector):
    """W&B's ``gpu.{i}.*`` and ``gpu.process.{i}.*`` keys from NVML, plus GPU facts and processes.

    ``gpu_ids`` picks GPUs by NVML index (None: all). ``pid`` is the process
    whose tree (with ``track_tree``, its descendants too) gets the
    ``gpu.process.*`` keys. ``pcie_throughput`` adds PCIe Tx/Rx rates; it is
    off by default because NVML measures each over a 20 ms window, in the call.
    Each GPU's energy since the first sweep (its counter, else its power
    integrated) goes in the extra ``energy.nvidia``.
    """

    name = "nvidia"

    def __init__(
        self,
        gpu_ids: Sequence[int] | None = None,
        pid: int | None = None,
        track_tree: bool = True,
        proc_root: str = "/proc",
        nvml: Any | None = None,
        clock: Callable[[], float] = time.monotonic,
        pcie_throughput: bool = False,
    ) -> None:
        self.gpu_ids = None if gpu_ids is None else tuple(dict.fromkeys(int(i) for i in gpu_ids))
        self.pid = pid if pid else None
        self.track_tree = track_tree
        self.proc_root = proc_root.rstrip("/") or "/"
        self.pcie_throughput = pcie_throughput
        self._nvml = nvml
        self._clock = clock
        self._started = False
        self._gpus: list[Gpu] = []
        self._setup_notes: tuple[str, ...] = ()
        self._host_view: bool | None = None
        self._depth = 0  # PID namespaces between the procfs's and ours
        self._variant: dict[str, Callable[..., Any]] = {}
        self._identities: dict[int, Identity] = {}
        self._users = UserNames()
        self._driver_trouble = ""
        self._answered = False
        self._energy = EnergyMeter("gpu")
        self._extras: dict[str, Any] = {"gpus": (), "gpu_processes": (), "notes.nvidia": ()}

    # -- the contract --------------------------------------------------------

    def probe(self) -> Probe:
        if self._started:
            return Probe.ok() if self._gpus else Probe.absent("no NVIDIA GPU found")
        if self._nvml is None:
            try:
                import pynvml
            except ImportError:
                return Probe.absent("nvidia-ml-py is not installed (it provides the pynvml module)")
            self._nvml = pynvml
        self._gpus = []
        try:
            self._nvml.nvmlInit()
        except Exception as exc:  # noqa: BLE001 - any failure here means "no NVIDIA GPU"
            return Probe.absent(init_failure(exc))
        self._started = True
        reason = self._open_gpus()
        if reason:
            self.close()
            return Probe.absent(reason)
        now = self._clock()
        for gpu in self._gpus:
            if not gpu.lost:
                self._guard_lost(gpu, now, self._refresh_static)
        self._host_view = pidns.shows_host_pids(self.proc_root)
        self._depth = pidns.own_depth(self.proc_root)
        self._extras = self._make_extras((), self._setup_notes)
        return Probe.ok()

    def sample(self) -> Mapping[str, float]:
        now = self._clock()
        self._driver_trouble = ""
        self._answered = False
        values: dict[str, float] = {}
        seen: list[tuple[Gpu, list[Seen]]] = []
        for gpu in self._gpus:
            readings, processes = self._sample_gpu(gpu, now)
            for key, value in readings.items():
                values[f"gpu.{gpu.index}.{key}"] = value
            seen.append((gpu, processes))
        if self._driver_trouble and not self._answered:
            raise RuntimeError(f"the NVIDIA driver stopped answering: {self._driver_trouble}")
        rows = self._process_rows(seen)
        values.update(self._process_values(rows, values))
        self._extras = self._make_extras(rows, self._sweep_notes(rows))
        return values

    def extras(self) -> Mapping[str, Any]:
        return self._extras

    def close(self) -> None:
        if not self._started:
            return
        self._started = False
        try:
            self._nvml.nvmlShutdown()
        except Exception:  # noqa: BLE001 - close must not raise
            pass

    # -- opening -------------------------------------------------------------

    def _open_gpus(self) -> str:
        """Handles for the selected GPUs; a reason when there are none to watch."""
        nvml = self._nvml
        try:
            count = nvml.nvmlDeviceGetCount()
        except nvml.NVMLError as exc:
            return f"NVML could not count the GPUs: {exc}"
        if count == 0:
            return "no NVIDIA GPU found"
        wanted = self.gpu_ids if self.gpu_ids is not None else tuple(range(count))
        present = [i for i in wanted if 0 <= i < count]
        absent = [i for i in wanted if not 0 <= i < count]
        notes = []
        if absent:
            notes.append(f"{_gpus_named(absent)} not found: this machine has {_gpu_range(count)}")
        for index in present:
            try:
                self._gpus.append(Gpu(index, nvml.nvmlDeviceGetHandleByIndex(index)))
            except nvml.NVMLError as exc:
                if getattr(exc, "value", None) == GPU_IS_LOST:
                    lost = f"fell off the bus (NVML: {exc})"
                    self._gpus.append(Gpu(index, None, lost=lost, retry_at=self._clock() + RETRY_LOST))
                else:
                    notes.append(f"GPU {index} cannot be opened: {exc}")
        self._setup_notes = tuple(notes)
        if not self._gpus:
            return "; ".join(notes) or "no NVIDIA GPU found"
        return ""

    # -- one GPU, one sweep ------------------------------------------------------

    def _sample_gpu(self, gpu: Gpu, now: float) -> tuple[dict[str, float], list[Seen]]:
        if gpu.lost and not self._reopen(gpu, now):
            return {}, []
        return self._guard_lost(gpu, now, self._read_gpu) or ({}, [])

    def _read_gpu(self, gpu: Gpu, now: float) -> tuple[dict[str, float], list[Seen]]:
        if now >= gpu.static_due:
            self._refresh_static(gpu, now)
        values = self._gauges(gpu, now)
        self._energy.observe(gpu.index, now, values.get("energyJoules"), values.get("powerWatts"))
        gpu.mig_now = self._mig_memory(gpu)
        return values, self._processes(gpu, now)

    def _guard_lost(self, gpu: Gpu, now: float, read: Callable[[Gpu, float], Any]) -> Any:
        """``read(gpu, now)``, or None with the GPU marked lost when it fell off the bus."""
        try:
            return read(gpu, now)
        except GpuLost as lost:
            gpu.lost = f"fell off the bus (NVML: {lost})"
            gpu.retry_at = now + RETRY_LOST
            return None

    def _reopen(self, gpu: Gpu, now: float) -> bool:
        """Try a lost GPU again, rarely; True when it answers."""
        if now < gpu.retry_at:
            return False
        gpu.retry_at = now + RETRY_LOST
        nvml = self._nvml
        try:
            handle = nvml.nvmlDeviceGetHandleByIndex(gpu.index)
            nvml.nvmlDeviceGetMemoryInfo(handle)
        except nvml.NVMLError:
            return False
        gpu.handle, gpu.lost, gpu.static_due = handle, "", 0.0
        return True

    def _gauges(self, gpu: Gpu, now: float) -> dict[str, float]:
        nvml, handle = self._nvml, gpu.handle
        values = self._activity(gpu, now)
        values.update(self._power(gpu, now))
        for key, read in SCALARS + (PCIE_THROUGHPUT if self.pcie_throughput else ()):
            _put(values, key, self._call(gpu, now, key, read, nvml, handle))
        _put(values, "temp", self._call_variants(gpu, now, "temp", TEMPERATURE, handle))
        _put(values, "fanSpeed", self._call_variants(gpu, now, "fanSpeed", FAN_SPEED, handle))
        values.update(gpu.fixed)
        return values

    def _activity(self, gpu: Gpu, now: float) -> dict[str, float]:
        """Busy % (not on MIG-enabled GPUs) and allocated memory."""
        nvml, values = self._nvml, {}
        utilization = self._call(gpu, now, "utilization", nvml.nvmlDeviceGetUtilizationRates, gpu.handle)
        if utilization is not None:
            values["gpu"] = float(utilization.gpu)
            values["memory"] = float(utilization.memory)
        gpu.utilization_supported = "utilization" not in gpu.unsupported
        # The v1 query on purpose: its "used" includes driver-reserved memory,
        # which is the number W&B records.
        memory = self._call(gpu, now, "memory", nvml.nvmlDeviceGetMemoryInfo, gpu.handle)
        if memory is not None:
            gpu.memory_total = int(memory.total)
            values["memoryAllocatedBytes"] = float(memory.used)
            if memory.total:
                values["memoryAllocated"] = memory.used / memory.total * 100
        return values

    def _power(self, gpu: Gpu, now: float) -> dict[str, float]:
        """Power now, the cached limit, and their ratio when both are known."""
        values = {}
        power = self._call(gpu, now, "powerWatts", self._nvml.nvmlDeviceGetPowerUsage, gpu.handle)
        if power is not None:
            values["powerWatts"] = power / 1000
        limit = gpu.power_limit_watts
        if limit is not None:
            values["enforcedPowerLimitWatts"] = limit
            if power is not None and limit > 0:
                values["powerPercent"] = values["powerWatts"] / limit * 100
        return values

    def _refresh_static(self, gpu: Gpu, now: float) -> None:
        """What rarely changes: identity, power limit, maximum PCIe link, MIG layout."""
        nvml, handle = self._nvml, gpu.handle
        call = functools.partial(self._call, gpu, now)
        gpu.static_due = now + STATIC_REFRESH
        gpu.name = call("name", nvml.nvmlDeviceGetName, handle) or gpu.name
        gpu.uuid = call("uuid", nvml.nvmlDeviceGetUUID, handle) or gpu.uuid
        memory = call("memory", nvml.nvmlDeviceGetMemoryInfo, handle)
        if memory is not None:
            gpu.memory_total = int(memory.total)
        limit = call("enforcedPowerLimitWatts", nvml.nvmlDeviceGetEnforcedPowerLimit, handle)
        if limit is not None:
            gpu.power_limit_watts = limit / 1000
        elif "enforcedPowerLimitWatts" in gpu.unsupported:
            gpu.power_limit_watts = None
        for key, read in (
            ("maxPcieLinkGen", nvml.nvmlDeviceGetMaxPcieLinkGeneration),
            ("maxPcieLinkWidth", nvml.nvmlDeviceGetMaxPcieLinkWidth),
        ):
            value = call(key, read, handle)
            if value is not None:
                gpu.fixed[key] = float(value)
            elif key in gpu.unsupported:
                gpu.fixed.pop(key, None)
        self._refresh_mig(gpu, now)

    def _refresh_mig(self, gpu: Gpu, now: float) -> None:
        nvml = self._nvml
        mode = self._call(gpu, now, "migMode", nvml.nvmlDeviceGetMigMode, gpu.handle)
        gpu.mig_enabled = bool(mode) and mode[0] == MIG_ENABLED
        gpu.mig = []
        if not gpu.mig_enabled:
            gpu.mig_processes_by_slice = False
            return
        slots = self._call(gpu, now, "migCount", nvml.nvmlDeviceGetMaxMigDeviceCount, gpu.handle) or 0
        for index in range(slots):
            handle = self._quiet(nvml.nvmlDeviceGetMigDeviceHandleByIndex, gpu.handle, index)
            if handle is None:
                continue  # an empty slot
            gpu.mig.append(
                MigSlot(
                    handle,
                    MigInstance(
                        gpu=gpu.index,
                        index=index,
                        uuid=self._quiet(nvml.nvmlDeviceGetUUID, handle) or "",
                        profile=mig_profile(self._quiet(nvml.nvmlDeviceGetName, handle) or ""),
                        gpu_instance_id=self._quiet(nvml.nvmlDeviceGetGpuInstanceId, handle),
                        compute_instance_id=self._quiet(nvml.nvmlDeviceGetComputeInstanceId, handle),
                    ),
                )
            )

    def _mig_memory(self, gpu: Gpu) -> tuple[MigInstance, ...]:
        instances = []
        for slot in gpu.mig:
            memory = self._quiet(self._nvml.nvmlDeviceGetMemoryInfo, slot.handle)
            if memory is None:
                instances.append(slot.instance)
            else:
                instances.append(replace(slot.instance, memory_used=int(memory.used), memory_total=int(memory.total)))
        return tuple(instances)

    # -- extras ------------------------------------------------------------------

    def _sweep_notes(self, rows: tuple[GpuProcess, ...]) -> tuple[str, ...]:
        notes = list(self._setup_notes)
        notes.extend(
            f"GPU {gpu.index} is lost: {gpu.lost}; asking again every {RETRY_LOST:.0f} s"
            for gpu in self._gpus
            if gpu.lost
        )
        hidden = self._host_view is False or (
            self._host_view is None and rows and not any(row.user or row.command for row in rows)
        )
        if hidden and (rows or self.pid is not None):
            notes.append(CONTAINER_NOTE)
        return tuple(notes)

    def _make_extras(self, rows: tuple[GpuProcess, ...], notes: tuple[str, ...]) -> dict[str, Any]:
        return {
            "gpus": tuple(gpu.info() for gpu in self._gpus),
            "gpu_processes": rows,
            "notes.nvidia": notes,
            "energy.nvidia": self._energy.readings(),
        }


def _put(values: dict[str, float], key: str, value: Any) -> None:
    if value is not None:
        values[key] = float(value)


def _gpus_named(indices: Sequence[int]) -> str:
    if len(indices) == 1:
        return f"GPU {indices[0]}"
    return "GPUs " + ", ".join(str(i) for i in indices)


def _gpu_range(count: int) -> str:
    return "GPU 0" if count == 1 else f"GPUs 0–{count - 1}"
