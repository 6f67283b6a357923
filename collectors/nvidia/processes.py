"""Which process uses which NVIDIA GPU, and who it is: the driver's process lists turned into ``GpuProcess`` rows.

The driver lists processes by host PID. Where this procfs shows host PIDs,
each one gets its user, command, its PID as our namespace numbers it and,
when it runs in a nested namespace (a container), its PID there, from
``/proc``; inside a container with its own PID namespace none of that can be
done (``CONTAINER_NOTE``).
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from collectors import pidns
from collectors.gpu import GpuProcess, MigInstance
from collectors.nvidia.device import COMPUTE_PROCESSES, GRAPHICS_PROCESSES, NO_INSTANCE, NO_PERMISSION, Gpu, NvmlCalls
from collectors.process import child_pids, children_by_scan, has_children_files
from collectors.processes import command_line
from collectors.procfs import UserNames, read_bytes

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


@dataclass
class Seen:
    """One process as the driver listed it."""

    pid: int
    used_memory: int | None
    gpu_instance: int | None
    compute_instance: int | None
    kind: str
    mig: str = ""
    sm_percent: float | None = None


@dataclass(frozen=True)
class Identity:
    pid: int  # as our PID namespace numbers it
    user: str
    command: str
    container_pid: int | None = None


class NvidiaProcesses(NvmlCalls):
    """The process side of ``NvidiaCollector``: listing, SM shares, identities, ``gpu.process.*`` values.

    ``NvidiaCollector`` sets the attributes below.
    """

    pid: int | None
    track_tree: bool
    proc_root: str
    _host_view: bool | None
    _depth: int
    _identities: dict[int, Identity]
    _users: UserNames

    def _processes(self, gpu: Gpu, now: float) -> list[Seen]:
        """Compute and graphics processes on one GPU, one row per PID."""
        found: dict[int, Seen] = {}
        for kind, variants in (("compute", COMPUTE_PROCESSES), ("graphics", GRAPHICS_PROCESSES)):
            for entry, slot in self._listed(gpu, now, kind, variants):
                if entry.pid not in found:
                    found[entry.pid] = self._seen(gpu, entry, kind, slot)
        if found:
            self._attach_sm(gpu, now, found)
        return list(found.values())

    def _listed(self, gpu: Gpu, now: float, kind: str, variants: tuple) -> list[tuple[Any, MigInstance | None]]:
        """The driver's process list; per MIG slice where the GPU refuses (non-root in MIG mode)."""
        group = f"{kind}Processes"
        if gpu.mig_enabled and gpu.mig_processes_by_slice:
            listed: list[tuple[Any, MigInstance | None]] = []
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

    def _seen(self, gpu: Gpu, entry: Any, kind: str, slot: MigInstance | None) -> Seen:
        gi = getattr(entry, "gpuInstanceId", NO_INSTANCE)
        ci = getattr(entry, "computeInstanceId", NO_INSTANCE)
        gi = None if gi in (None, NO_INSTANCE) else int(gi)
        ci = None if ci in (None, NO_INSTANCE) else int(ci)
        used = entry.usedGpuMemory
        seen = Seen(int(entry.pid), None if used is None else int(used), gi, ci, kind)
        if slot is not None:
            seen.mig = mig_label(slot.profile, slot.gpu_instance_id, slot.compute_instance_id)
        elif gpu.mig_enabled and gi is not None:
            seen.mig = mig_label(_slice_profile(gpu, gi, ci), gi, ci)
        return seen

    def _attach_sm(self, gpu: Gpu, now: float, found: dict[int, Seen]) -> None:
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

    def _process_rows(self, seen: list[tuple[Gpu, list[Seen]]]) -> tuple[GpuProcess, ...]:
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

    def _identity(self, host_pid: int) -> Identity:
        known = self._identities.get(host_pid)
        if known is not None:
            return known
        identity = Identity(host_pid, "", "")
        status = None if self._host_view is False else pidns.read_status(self.proc_root, host_pid)
        if status is not None:
            argv = command_line(read_bytes(f"{self.proc_root}/{host_pid}/cmdline") or b"")
            nested = len(status.nspids) > self._depth + 1
            identity = Identity(
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


def _slice_profile(gpu: Gpu, gpu_instance: int, compute_instance: int | None) -> str:
    for slot in gpu.mig:
        instance = slot.instance
        if instance.gpu_instance_id == gpu_instance and instance.compute_instance_id in (compute_instance, None):
            return instance.profile
    return ""
