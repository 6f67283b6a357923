"""Deterministic stand-ins for real hardware, for tests and screenshots.

Every value is a pure function of the injected clock's time (and of the
``origin`` that counters count from): the same time always gives the same
numbers, and nothing here reads real time or draws random numbers. Curves
are sums of sines and sawtooths, different per core and per device, so charts
look alive. Counters are integrals of never-negative rates, so they only grow.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

from collectors.base import Collector, Probe
from collectors.disk import DiskSpace
from collectors.fake_curves import (
    DEFAULT_START,
    GIB,
    MIB,
    TAU,
    FakeClock,
    Wave,
    clamp,
    counter_at,
    sawtooth,
)
from collectors.fake_gpu import FAKE_LOST_AFTER, GPU_KEYS, FakeGPUCollector, GpuInfo
from collectors.fake_replay import replay
from collectors.hostinfo import HostInfo
from collectors.processes import ProcessRow

# -- host ---------------------------------------------------------------------

FAKE_HOSTNAME = "gpu-node-07"
FAKE_CPU_MODEL = "AMD EPYC 7763 64-Core Processor"
FAKE_MEMORY_TOTAL = 512 * GIB
FAKE_SWAP_TOTAL = 8 * GIB
FAKE_DISK_TOTAL = 3576 * GIB
FAKE_UPTIME = 3.5 * 86400

# (pid, name, user, command, base CPU % of one core, base RSS GiB, threads)
FAKE_PROCESSES = (
    (48213, "python", "ml", "/opt/conda/bin/python train.py --config configs/llama-7b.yaml", 320.0, 38.0, 96),
    (48190, "torchrun", "ml", "torchrun --nproc-per-node 8 train.py", 2.0, 0.4, 6),
    (48251, "pt_data_worker", "ml", "python train.py --config configs/llama-7b.yaml", 85.0, 6.5, 4),
    (48252, "pt_data_worker", "ml", "python train.py --config configs/llama-7b.yaml", 80.0, 6.4, 4),
    (48260, "wandb-core", "ml", "wandb-core --port-filename /tmp/wandb-port", 3.5, 0.2, 18),
    (31877, "tensorboard", "ml", "tensorboard --logdir runs --port 6006", 1.2, 0.9, 22),
    (30112, "jupyter-lab", "ml", "jupyter-lab --no-browser --port 8888", 0.8, 0.5, 9),
    (1422, "dockerd", "root", "/usr/bin/dockerd -H fd://", 0.6, 0.1, 40),
    (1180, "nvidia-persistenced", "root", "/usr/bin/nvidia-persistenced --verbose", 0.1, 0.01, 1),
    (29554, "sshd", "root", "sshd: ml@pts/0", 0.3, 0.01, 1),
    (29601, "bash", "ml", "-bash", 0.0, 0.005, 1),
    (1, "systemd", "root", "/sbin/init", 0.1, 0.012, 1),
)
# Kernel threads, (pid, name, CPU %): children of kthreadd (pid 2), which is the kernel's own.
FAKE_KERNEL_THREADS = ((2, "kthreadd", 0.0), (15, "ksoftirqd/0", 0.2), (1984, "kworker/u16:2-events_unbound", 0.1))
# pid → parent pid, for the tree view; any other process is systemd's child.
FAKE_PARENTS = {1: 0, 29601: 29554, 31877: 29601, 48190: 29601, 48213: 48190, 48251: 48213, 48252: 48213, 48260: 48213}


class FakeHostCollector(Collector):
    """CPU, memory, disk and network keys of the real host collectors, made up."""

    name = "fake-host"

    def __init__(
        self,
        clock: Any,
        cores: int = 8,
        disks: Sequence[str] = ("nvme0n1",),
        disk_paths: Sequence[str] = ("/",),
        nics: int = 1,
        origin: float | None = None,
    ) -> None:
        self._clock = clock
        self.cores = max(1, int(cores))
        self.disks = tuple(disks)
        self.disk_paths = tuple(disk_paths)
        self.nics = max(0, int(nics))
        self.origin = float(clock()) if origin is None else float(origin)
        # Byte rates per device and per NIC; the counters are their integrals.
        disks_n, nics_n = range(len(self.disks)), range(self.nics)
        self._reads = [Wave(40e6, ((25e6, 17 + 5 * n, n), (12e6, 3.1 + n, 2 * n))) for n in disks_n]
        self._writes = [Wave(60e6, ((35e6, 41 + 7 * n, 1 + n), (20e6, 5.3 + n, n))) for n in disks_n]
        self._sent = [Wave(9e6, ((6e6, 23 + 4 * n, n), (2.5e6, 2.9 + n, 3 * n))) for n in nics_n]
        self._recv = [Wave(25e6, ((15e6, 13 + 3 * n, 2 * n), (8e6, 4.7 + n, n))) for n in nics_n]
        self._retransmits = Wave(0.6, ((0.5, 53.0, 0.0),))

    def probe(self) -> Probe:
        return Probe.ok()

    def sample(self) -> Mapping[str, float]:
        t = self._clock()
        values: dict[str, float] = {}
        values.update(self._cpu(t))
        values.update(self._memory(t))
        values.update(self._disks(t))
        values.update(self._network(t))
        return values

    def extras(self) -> Mapping[str, Any]:
        t = self._clock()
        return {"host": self._host_info(t), "processes": self._processes(t), "disk_space": self._disk_space(t)}

    def core_percent(self, core: int, t: float) -> float:
        wave = Wave(
            52.0,
            ((24.0, 37.0 + 3 * core, core), (11.0, 6.1 + 0.7 * core, 2.0 * core)),
        ).at(t)
        burst = 14.0 * sawtooth(t, 23.0 + core, core / self.cores)
        return clamp(wave + burst - 7.0)

    def _cpu(self, t: float) -> dict[str, float]:
        values = {f"cpu.{i}.cpu_percent": self.core_percent(i, t) for i in range(self.cores)}
        average = sum(values.values()) / self.cores
        values["cpu.avg_temp"] = 38.0 + 0.35 * average + 1.5 * math.sin(TAU * t / 97.0)
        return values

    def memory_used(self, t: float) -> float:
        growth = 48 * GIB * sawtooth(t, 600.0)
        return 170 * GIB + growth + 6 * GIB * math.sin(TAU * t / 71.0)

    def swap_used(self, t: float) -> float:
        return 0.6 * GIB + 0.25 * GIB * math.sin(TAU * t / 301.0)

    def _memory(self, t: float) -> dict[str, float]:
        used = float(round(self.memory_used(t)))
        swap = float(round(self.swap_used(t)))
        return {
            "memory_percent": used / FAKE_MEMORY_TOTAL * 100,
            "proc.memory.availableMB": (FAKE_MEMORY_TOTAL - used) / MIB,
            "memory.used": used,
            "swap.used": swap,
            "swap.used_percent": swap / FAKE_SWAP_TOTAL * 100,
        }

    def _disk_used(self, n: int, t: float) -> tuple[float, float]:
        total = FAKE_DISK_TOTAL / (n + 1)
        return total * (0.34 + 0.05 * sawtooth(t, 900.0 + 60 * n, 0.3 * n)), total

    def _disk_space(self, t: float) -> dict[str, DiskSpace]:
        spaces = {}
        for n, path in enumerate(self.disk_paths):
            used, total = self._disk_used(n, t)
            spaces[path] = DiskSpace(size=int(total), used=int(used), available=int(total) - int(used))
        return spaces

    def _disks(self, t: float) -> dict[str, float]:
        values: dict[str, float] = {}
        for n, path in enumerate(self.disk_paths):
            used, total = self._disk_used(n, t)
            values[f"disk.{path}.usagePercent"] = used / total * 100
            values[f"disk.{path}.usageGB"] = used / GIB
        for dev, reads, writes in zip(self.disks, self._reads, self._writes):
            values[f"disk.{dev}.in"] = counter_at(reads, self.origin, t) / MIB
            values[f"disk.{dev}.out"] = counter_at(writes, self.origin, t) / MIB
            values[f"disk.{dev}.readBps"] = reads.at(t)
            values[f"disk.{dev}.writeBps"] = writes.at(t)
        return values

    def _network(self, t: float) -> dict[str, float]:
        return {
            "network.sent": sum(counter_at(w, self.origin, t) for w in self._sent),
            "network.recv": sum(counter_at(w, self.origin, t) for w in self._recv),
            "network.sentBps": sum(w.at(t) for w in self._sent),
            "network.recvBps": sum(w.at(t) for w in self._recv),
            "network.tcpRetransmits": float(math.floor(counter_at(self._retransmits, self.origin, t))),
        }

    def _host_info(self, t: float) -> HostInfo:
        average = sum(self.core_percent(i, t) for i in range(self.cores)) / self.cores
        busy = self.cores * average / 100
        load = (
            round(busy, 2),
            round(busy * (0.95 + 0.05 * math.sin(TAU * t / 300.0)), 2),
            round(busy * (0.9 + 0.03 * math.sin(TAU * t / 900.0)), 2),
        )
        return HostInfo(
            hostname=FAKE_HOSTNAME,
            cpu_model=FAKE_CPU_MODEL,
            physical_cores=max(1, self.cores // 2),
            logical_cores=self.cores,
            memory_total=FAKE_MEMORY_TOTAL,
            memory_limited_by_cgroup=False,
            swap_total=FAKE_SWAP_TOTAL,
            boot_time=self.origin - FAKE_UPTIME,
            load_avg=load,
            cpu_limit=None,
        )

    def _processes(self, t: float) -> tuple[ProcessRow, ...]:
        rows = []
        for n, (pid, name, user, command, cpu, rss_gib, threads) in enumerate(FAKE_PROCESSES):
            swing = 0.25 * math.sin(TAU * t / (19.0 + 4 * n) + n) + 0.1 * math.sin(TAU * t / (3.3 + n))
            rss = int(rss_gib * GIB * (1.0 + 0.04 * math.sin(TAU * t / (61.0 + 5 * n))))
            rows.append(
                ProcessRow(
                    pid=pid,
                    name=name,
                    user=user,
                    cpu_percent=round(max(0.0, cpu * (1.0 + swing)), 1),
                    rss_bytes=rss,
                    memory_percent=rss / FAKE_MEMORY_TOTAL * 100,
                    threads=threads,
                    command=command,
                    ppid=FAKE_PARENTS.get(pid, 1),
                    state="R" if cpu >= 50 else "S",
                )
            )
        for pid, name, cpu in FAKE_KERNEL_THREADS:
            rows.append(
                ProcessRow(
                    pid=pid, name=name, user="root", cpu_percent=cpu, rss_bytes=0, memory_percent=0.0, threads=1,
                    command=f"[{name}]", ppid=0 if pid == 2 else 2, state="S", kernel=True,
                )
            )
        rows.sort(key=lambda row: (-row.cpu_percent, row.pid))
        return tuple(rows)


class MissingCollector(Collector):
    """A backend whose hardware or driver is not there, as on a CPU-only box."""

    def __init__(self, name: str = "nvidia", reason: str = "no NVIDIA driver: libnvidia-ml.so.1 not found") -> None:
        self.name = name
        self.reason = reason

    def probe(self) -> Probe:
        return Probe.absent(self.reason)

    def sample(self) -> Mapping[str, float]:
        raise RuntimeError(f"{self.name} is absent: {self.reason}")


def make_fake_collectors(
    clock: Any,
    gpus: int = 0,
    cores: int = 8,
    *,
    lost_gpus: Sequence[int] = (),
    mig_gpus: Sequence[int] = (),
    gpu_notes: Sequence[str] = (),
    missing_gpu_driver: bool = False,
) -> list[Collector]:
    """A fake host, plus a fake GPU collector (with uuids and processes) when ``gpus`` > 0.

    ``missing_gpu_driver`` adds an absent ``nvidia`` collector instead, as a
    CPU-only machine has.
    """
    collectors: list[Collector] = [FakeHostCollector(clock, cores=cores)]
    if gpus:
        collectors.append(
            FakeGPUCollector(clock, count=gpus, uuids=True, processes=True, lost=lost_gpus, mig=mig_gpus, notes=gpu_notes)
        )
    elif missing_gpu_driver:
        collectors.append(MissingCollector())
    return collectors


# What the tests, screenshots and demos import from here; the GPU fake, the
# curves and ``replay`` live in modules of their own.
__all__ = [
    "DEFAULT_START",
    "FAKE_LOST_AFTER",
    "GPU_KEYS",
    "FakeClock",
    "FakeGPUCollector",
    "FakeHostCollector",
    "GpuInfo",
    "MissingCollector",
    "make_fake_collectors",
    "replay",
]
