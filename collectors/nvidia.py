"""NVIDIA GPUs through NVML (``nvidia-ml-py``): W&B's ``gpu.{i}.*`` keys, GPU processes, MIG.

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
import os
import re
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Sequence

from collectors import pidns
from collectors.base import Collector, Probe
from collectors.gpu import GpuInfo, GpuProcess, MigInstance
from collectors.process import child_pids, children_by_scan, has_children_files
from collectors.processes import command_line
from collectors.procfs import UserNames, read_bytes

STATIC_REFRESH = 30.0
RETRY_UNSUPPORTED = 60.0
RETRY_LOST = 60.0

# NVML return codes (C ABI constants, the same in every driver).
UNINITIALIZED = 1
NOT_SUPPORTED = 3
NO_PERMISSION = 4
DRIVER_NOT_LOADED = 9
LIBRARY_NOT_FOUND = 12
FUNCTION_NOT_FOUND = 13
GPU_IS_LOST = 15
LIB_RM_VERSION_MISMATCH = 18
ARGUMENT_VERSION_MISMATCH = 25

# Answers that will not change by asking again soon.
LASTING = {NOT_SUPPORTED, NO_PERMISSION, FUNCTION_NOT_FOUND, ARGUMENT_VERSION_MISMATCH}
# Answers that mean the driver as a whole is gone, not one field.
DRIVER_GONE = {UNINITIALIZED, DRIVER_NOT_LOADED, LIB_RM_VERSION_MISMATCH}

MIG_ENABLED = 1
NO_INSTANCE = 0xFFFFFFFF  # gpuInstanceId / computeInstanceId outside MIG

# W&B mirrors these device values under gpu.process.{i}.* for the watched tree.
PROCESS_MIRRORED = (
    "gpu",
    "memory",
    "memoryAllocated",
    "memoryAllocatedBytes",
    "temp",
    "powerWatts",
    "enforcedPowerLimitWatts",
    "powerPercent",
)

CONTAINER_NOTE = (
    "GPU processes are reported by host PID, which this container cannot see: "
    "per-process attribution is not possible here (run with --pid=host)"
)

_MIG_PROFILE = re.compile(r"\bMIG\s+(\S+)\s*$")


def mig_profile(device_name: str) -> str:
    """``"NVIDIA A100-SXM4-80GB MIG 1g.10gb"`` → ``"1g.10gb"``; ``""`` when absent."""
    found = _MIG_PROFILE.search(device_name or "")
    return found.group(1) if found else ""


def mig_label(profile: str, gpu_instance: int | None, compute_instance: int | None) -> str:
    """How a process's MIG slice is named on screen, e.g. ``"1g.10gb GI 3 CI 0"``."""
    ids = f"GI {gpu_instance} CI {compute_instance}"
    return f"{profile} {ids}" if profile else ids


def process_tree(proc_dir: str, pid: int, descendants: bool = True) -> frozenset[int]:
    """``pid`` and, with ``descendants``, every process below it."""
    tree = {pid}
    if not descendants or not os.path.isdir(f"{proc_dir}/{pid}"):
        return frozenset(tree)
    if has_children_files(proc_dir, pid):
        children_of: Callable[[int], list[int]] = functools.partial(child_pids, proc_dir)
    else:
        scanned = children_by_scan(proc_dir)
        children_of = lambda parent: scanned.get(parent, [])  # noqa: E731
    queue = [pid]
    while queue:
        for child in children_of(queue.pop()):
            if child not in tree:
                tree.add(child)
                queue.append(child)
    return frozenset(tree)


def init_failure(exc: BaseException) -> str:
    """Why NVML would not start, in words a person can act on."""
    code = getattr(exc, "value", None)
    if code == LIBRARY_NOT_FOUND:
        return "no NVIDIA driver: libnvidia-ml.so.1 not found"
    if code == DRIVER_NOT_LOADED:
        return "no NVIDIA driver: the NVIDIA kernel module is not loaded"
    if code == LIB_RM_VERSION_MISMATCH:
        return "NVIDIA driver and libnvidia-ml versions differ (was the driver updated without a reboot?)"
    if code == NO_PERMISSION:
        return "NVML: no permission to open the NVIDIA devices (/dev/nvidia*)"
    return f"NVML could not start: {exc}"


class _Lost(Exception):
    """A GPU answered GPU_IS_LOST."""


@dataclass
class _MigSlot:
    handle: Any
    instance: MigInstance


@dataclass
class _Seen:
    """One process as the driver listed it."""

    pid: int
    used_memory: int | None
    gpu_instance: int | None
    compute_instance: int | None
    kind: str
    mig: str = ""
    sm_percent: float | None = None


@dataclass
class _Gpu:
    """What the collector keeps for one physical GPU."""

    index: int
    handle: Any
    name: str = ""
    uuid: str = ""
    memory_total: int = 0
    power_limit_watts: float | None = None
    fixed: dict[str, float] = field(default_factory=dict)  # max PCIe link
    mig_enabled: bool = False
    mig: list[_MigSlot] = field(default_factory=list)
    mig_now: tuple[MigInstance, ...] = ()
    mig_processes_by_slice: bool = False
    static_due: float = 0.0
    lost: str = ""  # why, when lost
    retry_at: float = 0.0
    unsupported: dict[str, float] = field(default_factory=dict)  # field group -> when to ask again
    utilization_supported: bool = True
    samples_since: int = 0  # µs timestamp of the newest process-utilisation sample seen

    def info(self) -> GpuInfo:
        return GpuInfo(
            index=self.index,
            name=self.name,
            memory_total=self.memory_total,
            power_limit_watts=self.power_limit_watts,
            uuid=self.uuid,
            lost=bool(self.lost),
            reason=self.lost or self._limits(),
            mig=self.mig_now,
            utilization_supported=self.utilization_supported,
        )

    def _limits(self) -> str:
        if self.utilization_supported:
            return ""
        if self.mig_enabled:
            return "MIG mode: NVML gives no utilisation for the whole GPU"
        return "NVML gives no utilisation for this GPU"


@dataclass(frozen=True)
class _Identity:
    pid: int  # as our PID namespace numbers it
    user: str
    command: str
    container_pid: int | None = None


class NvidiaCollector(Collector):
    """W&B's ``gpu.{i}.*`` and ``gpu.process.{i}.*`` keys from NVML, plus GPU facts and processes.

    ``gpu_ids`` picks GPUs by NVML index (None: all). ``pid`` is the process
    whose tree (with ``track_tree``, its descendants too) gets the
    ``gpu.process.*`` keys. ``pcie_throughput`` adds PCIe Tx/Rx rates; it is
    off by default because NVML measures each over a 20 ms window, in the call.
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
        self._gpus: list[_Gpu] = []
        self._setup_notes: tuple[str, ...] = ()
        self._host_view: bool | None = None
        self._depth = 0  # PID namespaces between the procfs's and ours
        self._variant: dict[str, Callable[..., Any]] = {}
        self._identities: dict[int, _Identity] = {}
        self._users = UserNames()
        self._driver_trouble = ""
        self._answered = False
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
        seen: list[tuple[_Gpu, list[_Seen]]] = []
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
                self._gpus.append(_Gpu(index, nvml.nvmlDeviceGetHandleByIndex(index)))
            except nvml.NVMLError as exc:
                if getattr(exc, "value", None) == GPU_IS_LOST:
                    lost = f"fell off the bus (NVML: {exc})"
                    self._gpus.append(_Gpu(index, None, lost=lost, retry_at=self._clock() + RETRY_LOST))
                else:
                    notes.append(f"GPU {index} cannot be opened: {exc}")
        self._setup_notes = tuple(notes)
        if not self._gpus:
            return "; ".join(notes) or "no NVIDIA GPU found"
        return ""

    # -- one GPU, one sweep ------------------------------------------------------

    def _sample_gpu(self, gpu: _Gpu, now: float) -> tuple[dict[str, float], list[_Seen]]:
        if gpu.lost and not self._reopen(gpu, now):
            return {}, []
        return self._guard_lost(gpu, now, self._read_gpu) or ({}, [])

    def _read_gpu(self, gpu: _Gpu, now: float) -> tuple[dict[str, float], list[_Seen]]:
        if now >= gpu.static_due:
            self._refresh_static(gpu, now)
        values = self._gauges(gpu, now)
        gpu.mig_now = self._mig_memory(gpu)
        return values, self._processes(gpu, now)

    def _guard_lost(self, gpu: _Gpu, now: float, read: Callable[[_Gpu, float], Any]) -> Any:
        """``read(gpu, now)``, or None with the GPU marked lost when it fell off the bus."""
        try:
            return read(gpu, now)
        except _Lost as lost:
            gpu.lost = f"fell off the bus (NVML: {lost})"
            gpu.retry_at = now + RETRY_LOST
            return None

    def _reopen(self, gpu: _Gpu, now: float) -> bool:
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

    def _gauges(self, gpu: _Gpu, now: float) -> dict[str, float]:
        nvml, handle = self._nvml, gpu.handle
        values = self._activity(gpu, now)
        values.update(self._power(gpu, now))
        for key, read in _SCALARS + (_PCIE_THROUGHPUT if self.pcie_throughput else ()):
            _put(values, key, self._call(gpu, now, key, read, nvml, handle))
        _put(values, "temp", self._call_variants(gpu, now, "temp", _TEMPERATURE, handle))
        _put(values, "fanSpeed", self._call_variants(gpu, now, "fanSpeed", _FAN_SPEED, handle))
        values.update(gpu.fixed)
        return values

    def _activity(self, gpu: _Gpu, now: float) -> dict[str, float]:
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

    def _power(self, gpu: _Gpu, now: float) -> dict[str, float]:
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

    def _refresh_static(self, gpu: _Gpu, now: float) -> None:
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

    def _refresh_mig(self, gpu: _Gpu, now: float) -> None:
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
                _MigSlot(
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

    def _mig_memory(self, gpu: _Gpu) -> tuple[MigInstance, ...]:
        instances = []
        for slot in gpu.mig:
            memory = self._quiet(self._nvml.nvmlDeviceGetMemoryInfo, slot.handle)
            if memory is None:
                instances.append(slot.instance)
            else:
                instances.append(replace(slot.instance, memory_used=int(memory.used), memory_total=int(memory.total)))
        return tuple(instances)

    # -- processes ---------------------------------------------------------------

    def _processes(self, gpu: _Gpu, now: float) -> list[_Seen]:
        """Compute and graphics processes on one GPU, one row per PID."""
        found: dict[int, _Seen] = {}
        for kind, variants in (("compute", _COMPUTE_PROCESSES), ("graphics", _GRAPHICS_PROCESSES)):
            for entry, slot in self._listed(gpu, now, kind, variants):
                if entry.pid not in found:
                    found[entry.pid] = self._seen(gpu, entry, kind, slot)
        if found:
            self._attach_sm(gpu, now, found)
        return list(found.values())

    def _listed(self, gpu: _Gpu, now: float, kind: str, variants: tuple) -> list[tuple[Any, MigInstance | None]]:
        """The driver's process list; per MIG slice where the GPU refuses (non-root in MIG mode)."""
        group = f"{kind}Processes"
        if gpu.mig_enabled and gpu.mig_processes_by_slice:
            listed = []
            for slot in gpu.mig:
                entries = self._call_variants(gpu, now, group, variants, slot.handle, slot.instance)
                listed.extend((entry, slot.instance) for entry in entries or ())
            return listed
        if gpu.mig_enabled:
            if gpu.unsupported.get(group, 0.0) > now:
                return []
            try:
                entries = self._first_variant(group, variants, gpu.handle)
            except self._nvml.NVMLError as exc:
                code = getattr(exc, "value", None)
                if code != NO_PERMISSION:
                    self._failed(gpu, now, group, code, exc)
                    return []
                gpu.mig_processes_by_slice = True
                return self._listed(gpu, now, kind, variants)
            self._answered = True
            return [(entry, None) for entry in entries]
        return [(entry, None) for entry in self._call_variants(gpu, now, group, variants, gpu.handle) or ()]

    def _seen(self, gpu: _Gpu, entry: Any, kind: str, slot: MigInstance | None) -> _Seen:
        gi = getattr(entry, "gpuInstanceId", NO_INSTANCE)
        ci = getattr(entry, "computeInstanceId", NO_INSTANCE)
        gi = None if gi in (None, NO_INSTANCE) else int(gi)
        ci = None if ci in (None, NO_INSTANCE) else int(ci)
        used = entry.usedGpuMemory
        seen = _Seen(int(entry.pid), None if used is None else int(used), gi, ci, kind)
        if slot is not None:
            seen.mig = mig_label(slot.profile, slot.gpu_instance_id, slot.compute_instance_id)
        elif gpu.mig_enabled and gi is not None:
            seen.mig = mig_label(_slice_profile(gpu, gi, ci), gi, ci)
        return seen

    def _attach_sm(self, gpu: _Gpu, now: float, found: dict[int, _Seen]) -> None:
        """Each process's SM busy % from the driver's samples since the last sweep."""
        read = self._nvml.nvmlDeviceGetProcessUtilization
        samples = self._call(gpu, now, "processUtilization", read, gpu.handle, gpu.samples_since)
        newest: dict[int, Any] = {}
        for sample in samples or ():
            known = newest.get(sample.pid)
            if known is None or sample.timeStamp >= known.timeStamp:
                newest[sample.pid] = sample
            gpu.samples_since = max(gpu.samples_since, int(sample.timeStamp))
        for pid, sample in newest.items():
            if pid in found:
                found[pid].sm_percent = float(sample.smUtil)

    def _process_rows(self, seen: list[tuple[_Gpu, list[_Seen]]]) -> tuple[GpuProcess, ...]:
        pids = {entry.pid for _, entries in seen for entry in entries}
        tree = self._watched_tree() if pids and self.pid is not None else frozenset()
        for gone in [pid for pid in self._identities if pid not in pids]:
            del self._identities[gone]
        rows = []
        for gpu, entries in seen:
            for entry in sorted(entries, key=lambda e: e.pid):
                who = self._identity(entry.pid)
                rows.append(
                    GpuProcess(
                        gpu=gpu.index,
                        pid=who.pid,
                        host_pid=entry.pid,
                        user=who.user,
                        command=who.command,
                        used_memory=entry.used_memory,
                        sm_percent=entry.sm_percent,
                        kind=entry.kind,
                        in_tree=entry.pid in tree,
                        mig=entry.mig,
                        container_pid=who.container_pid,
                    )
                )
        return tuple(rows)

    def _watched_tree(self) -> frozenset[int]:
        if self._host_view is False or self.pid is None:
            return frozenset()
        return process_tree(self.proc_root, self.pid, self.track_tree)

    def _identity(self, host_pid: int) -> _Identity:
        known = self._identities.get(host_pid)
        if known is not None:
            return known
        identity = _Identity(host_pid, "", "")
        status = None if self._host_view is False else pidns.read_status(self.proc_root, host_pid)
        if status is not None:
            argv = command_line(read_bytes(f"{self.proc_root}/{host_pid}/cmdline") or b"")
            nested = len(status.nspids) > self._depth + 1
            identity = _Identity(
                pid=status.pid_at(self._depth) or host_pid,
                user=self._user(status.uid),
                command=" ".join(argv) or status.name,
                container_pid=status.local_pid if nested else None,
            )
            self._identities[host_pid] = identity
        return identity

    def _user(self, uid: int | None) -> str:
        return "" if uid is None else self._users.name(uid)

    def _process_values(self, rows: tuple[GpuProcess, ...], values: Mapping[str, float]) -> dict[str, float]:
        """``gpu.process.{i}.*`` for every GPU the watched tree runs on."""
        mine: dict[int, list[GpuProcess]] = {}
        for row in rows:
            if row.in_tree:
                mine.setdefault(row.gpu, []).append(row)
        out: dict[str, float] = {}
        for index, processes in mine.items():
            for name in PROCESS_MIRRORED:
                value = values.get(f"gpu.{index}.{name}")
                if value is not None:
                    out[f"gpu.process.{index}.{name}"] = value
            used = [p.used_memory for p in processes if p.used_memory is not None]
            if used:
                out[f"gpu.process.{index}.memoryUsedBytes"] = float(sum(used))
        return out

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
        }

    # -- calling NVML ----------------------------------------------------------

    def _call(self, gpu: _Gpu, now: float, group: str, read: Callable[..., Any], *args: Any) -> Any:
        """One NVML call for one field group of one GPU; None when it gave nothing."""
        if gpu.unsupported.get(group, 0.0) > now:
            return None
        try:
            result = read(*args)
        except self._nvml.NVMLError as exc:
            self._failed(gpu, now, group, getattr(exc, "value", None), exc)
            return None
        gpu.unsupported.pop(group, None)
        self._answered = True
        return result

    def _call_variants(
        self, gpu: _Gpu, now: float, group: str, variants: tuple, handle: Any, slot: Any = None
    ) -> Any:
        """Like ``_call``, for a field NVML offers under several versioned names."""
        key = group if slot is None else f"{group}:{slot.index}"
        if gpu.unsupported.get(key, 0.0) > now:
            return None
        try:
            result = self._first_variant(group, variants, handle)
        except self._nvml.NVMLError as exc:
            self._failed(gpu, now, key, getattr(exc, "value", None), exc)
            return None
        gpu.unsupported.pop(key, None)
        self._answered = True
        return result

    def _first_variant(self, group: str, variants: tuple, handle: Any) -> Any:
        """Call the newest variant this driver and pynvml have, and remember it."""
        chosen = self._variant.get(group)
        if chosen is not None:
            return chosen(self._nvml, handle)
        last: BaseException | None = None
        for variant in variants:
            try:
                result = variant(self._nvml, handle)
            except AttributeError:
                continue  # this pynvml predates the variant
            except self._nvml.NVMLError as exc:
                if getattr(exc, "value", None) in (FUNCTION_NOT_FOUND, ARGUMENT_VERSION_MISMATCH):
                    last = exc
                    continue
                raise
            self._variant[group] = variant
            return result
        raise last if last is not None else self._nvml.NVMLError(FUNCTION_NOT_FOUND)

    def _failed(self, gpu: _Gpu, now: float, group: str, code: int | None, exc: BaseException) -> None:
        if code == GPU_IS_LOST:
            raise _Lost(str(exc)) from None
        if code in LASTING:
            gpu.unsupported[group] = now + RETRY_UNSUPPORTED
        elif code in DRIVER_GONE:
            self._driver_trouble = str(exc)

    def _quiet(self, read: Callable[..., Any], *args: Any) -> Any:
        """A best-effort call (MIG slices): None on any NVML error but a lost GPU."""
        try:
            return read(*args)
        except self._nvml.NVMLError as exc:
            if getattr(exc, "value", None) == GPU_IS_LOST:
                raise _Lost(str(exc)) from None
            return None


# Fields that are one NVML number each: (key, (nvml module, handle) -> value).
_SCALARS: tuple[tuple[str, Callable[[Any, Any], Any]], ...] = (
    ("smClock", lambda nvml, h: nvml.nvmlDeviceGetClockInfo(h, nvml.NVML_CLOCK_SM)),
    ("memoryClock", lambda nvml, h: nvml.nvmlDeviceGetClockInfo(h, nvml.NVML_CLOCK_MEM)),
    ("graphicsClock", lambda nvml, h: nvml.nvmlDeviceGetClockInfo(h, nvml.NVML_CLOCK_GRAPHICS)),
    # Volatile counts (since the driver loaded): aggregate ones stay non-zero
    # after a row remap, and W&B reads these.
    (
        "correctedMemoryErrors",
        lambda nvml, h: nvml.nvmlDeviceGetMemoryErrorCounter(
            h, nvml.NVML_MEMORY_ERROR_TYPE_CORRECTED, nvml.NVML_VOLATILE_ECC, nvml.NVML_MEMORY_LOCATION_DEVICE_MEMORY
        ),
    ),
    (
        "uncorrectedMemoryErrors",
        lambda nvml, h: nvml.nvmlDeviceGetMemoryErrorCounter(
            h, nvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, nvml.NVML_VOLATILE_ECC, nvml.NVML_MEMORY_LOCATION_DEVICE_MEMORY
        ),
    ),
    ("encoderUtilization", lambda nvml, h: nvml.nvmlDeviceGetEncoderUtilization(h)[0]),
    ("pcieLinkGen", lambda nvml, h: nvml.nvmlDeviceGetCurrPcieLinkGeneration(h)),
    ("pcieLinkWidth", lambda nvml, h: nvml.nvmlDeviceGetCurrPcieLinkWidth(h)),
    ("energyJoules", lambda nvml, h: nvml.nvmlDeviceGetTotalEnergyConsumption(h) / 1000),
)
# KiB/s, each measured by the driver over 20 ms inside the call.
_PCIE_THROUGHPUT: tuple[tuple[str, Callable[[Any, Any], Any]], ...] = (
    ("pcieTxKBps", lambda nvml, h: nvml.nvmlDeviceGetPcieThroughput(h, nvml.NVML_PCIE_UTIL_TX_BYTES)),
    ("pcieRxKBps", lambda nvml, h: nvml.nvmlDeviceGetPcieThroughput(h, nvml.NVML_PCIE_UTIL_RX_BYTES)),
)

# Versioned entry points, newest first: (nvml module, handle) -> value.
_TEMPERATURE = (
    lambda nvml, h: nvml.nvmlDeviceGetTemperatureV(h, nvml.NVML_TEMPERATURE_GPU),
    lambda nvml, h: nvml.nvmlDeviceGetTemperature(h, nvml.NVML_TEMPERATURE_GPU),
)
_FAN_SPEED = (
    lambda nvml, h: nvml.nvmlDeviceGetFanSpeed_v2(h, 0),
    lambda nvml, h: nvml.nvmlDeviceGetFanSpeed(h),
)
_COMPUTE_PROCESSES = (
    lambda nvml, h: nvml.nvmlDeviceGetComputeRunningProcesses_v3(h),
    lambda nvml, h: nvml.nvmlDeviceGetComputeRunningProcesses_v2(h),
)
_GRAPHICS_PROCESSES = (
    lambda nvml, h: nvml.nvmlDeviceGetGraphicsRunningProcesses_v3(h),
    lambda nvml, h: nvml.nvmlDeviceGetGraphicsRunningProcesses_v2(h),
)


def _slice_profile(gpu: _Gpu, gpu_instance: int, compute_instance: int | None) -> str:
    for slot in gpu.mig:
        instance = slot.instance
        if instance.gpu_instance_id == gpu_instance and instance.compute_instance_id in (compute_instance, None):
            return instance.profile
    return ""


def _put(values: dict[str, float], key: str, value: Any) -> None:
    if value is not None:
        values[key] = float(value)


def _gpus_named(indices: Sequence[int]) -> str:
    if len(indices) == 1:
        return f"GPU {indices[0]}"
    return "GPUs " + ", ".join(str(i) for i in indices)


def _gpu_range(count: int) -> str:
    return "GPU 0" if count == 1 else f"GPUs 0–{count - 1}"
