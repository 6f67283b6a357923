"""Deterministic stand-ins for real hardware, for tests and screenshots.

Every value is a pure function of the injected clock's time (and of the
``origin`` that counters count from): the same time always gives the same
numbers, and nothing here reads real time or draws random numbers. Curves
are sums of sines and sawtooths, different per core and per device, so charts
look alive. Counters are integrals of never-negative rates, so they only grow.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from collectors.base import Collector, CollectorStatus, Health, Probe, Sample
from collectors.gpu import GpuInfo, GpuProcess, MigInstance
from collectors.hostinfo import HostInfo
from collectors.hub import Hub, clean_values, describe_error, merge_extras, with_label
from collectors.processes import ProcessRow

GIB = 2**30
MIB = 2**20
TAU = 2 * math.pi

DEFAULT_START = 1_700_000_000.0


class FakeClock:
    """A clock that stands still until told: ``clock()`` returns the set time."""

    def __init__(self, start: float = DEFAULT_START) -> None:
        self._now = float(start)

    def __call__(self) -> float:
        return self._now

    @property
    def now(self) -> float:
        return self._now

    def set(self, seconds: float) -> None:
        self._now = float(seconds)

    def advance(self, seconds: float) -> float:
        self._now += float(seconds)
        return self._now


@dataclass(frozen=True)
class Wave:
    """``base + Σ amp·sin(2π·t/period + phase)``, with its exact integral.

    With ``base`` at least the sum of the amplitudes the wave never goes
    negative, so as a rate its integral is a counter that never decreases.
    """

    base: float
    terms: tuple[tuple[float, float, float], ...] = ()  # (amplitude, period s, phase rad)

    def at(self, t: float) -> float:
        return self.base + sum(a * math.sin(TAU * t / p + ph) for a, p, ph in self.terms)

    def integral(self, start: float, end: float) -> float:
        total = self.base * (end - start)
        for amplitude, period, phase in self.terms:
            scale = amplitude * period / TAU
            total += scale * (math.cos(TAU * start / period + phase) - math.cos(TAU * end / period + phase))
        return total


def sawtooth(t: float, period: float, phase: float = 0.0) -> float:
    """Rises linearly from 0 to 1 over ``period``, then drops back."""
    return (t / period + phase) % 1.0


def clamp(value: float, low: float = 0.0, high: float = 100.0) -> float:
    return min(max(value, low), high)


def _counter(wave: Wave, origin: float, t: float) -> float:
    """What a counter fed at ``wave`` holds at ``t``, counting from ``origin``."""
    return wave.integral(origin, t) if t > origin else 0.0


# -- host ---------------------------------------------------------------------

FAKE_HOSTNAME = "gpu-node-07"
FAKE_CPU_MODEL = "AMD EPYC 7763 64-Core Processor"
FAKE_MEMORY_TOTAL = 512 * GIB
FAKE_SWAP_TOTAL = 8 * GIB
FAKE_DISK_TOTAL = 3576 * GIB
FAKE_UPTIME = 3.5 * 86400

# (pid, name, user, command, base CPU % of one core, base RSS GiB, threads)
FAKE_PROCESSES = (
    (48213, "python", "ml", "python train.py --config configs/llama-7b.yaml", 320.0, 38.0, 96),
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
        return {"host": self._host_info(t), "processes": self._processes(t)}

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

    def _disks(self, t: float) -> dict[str, float]:
        values: dict[str, float] = {}
        for n, path in enumerate(self.disk_paths):
            total = FAKE_DISK_TOTAL / (n + 1)
            used = total * (0.34 + 0.05 * sawtooth(t, 900.0 + 60 * n, 0.3 * n))
            values[f"disk.{path}.usagePercent"] = used / total * 100
            values[f"disk.{path}.usageGB"] = used / GIB
        for dev, reads, writes in zip(self.disks, self._reads, self._writes):
            values[f"disk.{dev}.in"] = _counter(reads, self.origin, t) / MIB
            values[f"disk.{dev}.out"] = _counter(writes, self.origin, t) / MIB
            values[f"disk.{dev}.readBps"] = reads.at(t)
            values[f"disk.{dev}.writeBps"] = writes.at(t)
        return values

    def _network(self, t: float) -> dict[str, float]:
        return {
            "network.sent": sum(_counter(w, self.origin, t) for w in self._sent),
            "network.recv": sum(_counter(w, self.origin, t) for w in self._recv),
            "network.sentBps": sum(w.at(t) for w in self._sent),
            "network.recvBps": sum(w.at(t) for w in self._recv),
            "network.tcpRetransmits": float(math.floor(_counter(self._retransmits, self.origin, t))),
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
                )
            )
        rows.sort(key=lambda row: (-row.cpu_percent, row.pid))
        return tuple(rows)


# -- GPUs -----------------------------------------------------------------------

H100_MEMORY_TOTAL = 81559 * MIB
H100_POWER_LIMIT = 700.0

GPU_KEYS = (
    "gpu",
    "memory",
    "memoryAllocated",
    "memoryAllocatedBytes",
    "temp",
    "powerWatts",
    "powerPercent",
    "enforcedPowerLimitWatts",
    "smClock",
    "memoryClock",
    "graphicsClock",
    "fanSpeed",
    "correctedMemoryErrors",
    "uncorrectedMemoryErrors",
    "encoderUtilization",
)


# (profile, memory MiB) of the MIG slices a fake MIG-enabled GPU is cut into.
FAKE_MIG_SLICES = (("3g.40gb", 40448), ("2g.20gb", 20224), ("1g.10gb", 9984), ("1g.10gb", 9984))
FAKE_LOST_AFTER = 120.0  # seconds after ``origin`` when a GPU asked to be lost falls off the bus
FAKE_LOST_REASON = "fell off the bus"
FAKE_TRAIN_COMMAND = "python train.py --config configs/llama-7b.yaml"
FAKE_RANK0_PID = 48213  # the trainer in the fake host's process table
FAKE_OTHER_RANK_PIDS = 48300  # rank r > 0 runs as 48300 + r
FAKE_KERNEL = (30187, "ml", "python -m ipykernel_launcher -f kernel-4f2a.json")
FAKE_FOREIGN_PID = 4012731  # a process from another PID namespace: no user, command or memory
FAKE_SERVERS = (  # (pid, user, command) of inference servers on the MIG slices
    (51220, "infer", "python serve.py --model llama-7b --port 9000"),
    (51388, "infer", "python serve.py --model llama-7b --port 9001"),
    (51402, "infer", "python embed.py --batch 64"),
    (51467, "infer", "python embed.py --batch 32"),
)


def fake_gpu_uuid(index: int) -> str:
    return f"GPU-5d8a{index:04x}-3c1e-4f6b-9a2d-7e0c81f4{index:04x}"


class FakeGPUCollector(Collector):
    """NVIDIA-style ``gpu.{i}.*`` keys for a training job with periodic eval pauses.

    Options beyond the plain keys (all off by default): ``uuids`` in the
    ``GpuInfo`` records, ``processes`` (a ``gpu_processes`` extra: one
    training rank per GPU in the watched tree, a notebook kernel, a process
    from another container), ``lost`` GPUs that fall off the bus
    ``FAKE_LOST_AFTER`` seconds after ``origin``, ``mig`` GPUs cut into
    MIG slices (no utilisation keys, as NVML gives none), and ``notes``.
    """

    name = "fake-gpu"

    def __init__(
        self,
        clock: Any,
        count: int = 2,
        name: str = "NVIDIA H100 80GB HBM3",
        origin: float | None = None,
        *,
        uuids: bool = False,
        processes: bool = False,
        lost: Sequence[int] = (),
        mig: Sequence[int] = (),
        notes: Sequence[str] = (),
    ) -> None:
        self._clock = clock
        self.count = max(0, int(count))
        self.device_name = name
        self.origin = float(clock()) if origin is None else float(origin)
        self.uuids = uuids
        self.processes = processes
        self.lost = frozenset(lost)
        self.mig = frozenset(mig)
        self.notes = tuple(notes)
        self._gpus = tuple(self._info(i, lost=False) for i in range(self.count))

    def probe(self) -> Probe:
        if not self.count:
            return Probe.absent("no GPUs in this fake")
        return Probe.ok()

    def sample(self) -> Mapping[str, float]:
        t = self._clock()
        values: dict[str, float] = {}
        for i in range(self.count):
            if self.is_lost(i, t):
                continue
            for key, value in self._device(i, t).items():
                values[f"gpu.{i}.{key}"] = value
        return values

    def extras(self) -> Mapping[str, Any]:
        t = self._clock()
        extras: dict[str, Any] = {"gpus": self._gpu_infos(t)}
        if self.processes:
            extras["gpu_processes"] = self._processes(t)
        if self.notes:
            extras[f"notes.{self.name}"] = self.notes
        return extras

    def is_lost(self, index: int, t: float) -> bool:
        return index in self.lost and t - self.origin >= FAKE_LOST_AFTER

    def utilization(self, index: int, t: float) -> float:
        """Busy while training; every 90 s a short evaluation pause dips it."""
        cycle = sawtooth(t, 90.0, 0.07 * index)
        pause = 0.6 * math.exp(-(((cycle - 0.9) / 0.04) ** 2))
        jitter = 3.0 * math.sin(TAU * t / (2.3 + 0.4 * index)) + 2.0 * math.sin(TAU * t / 11.0 + index)
        return clamp(95.0 * (1.0 - pause) + jitter)

    def memory_used(self, index: int, t: float) -> int:
        if index in self.mig:
            return sum(used for used, _ in self._slice_memory(index, t))
        return int(H100_MEMORY_TOTAL * (0.62 + 0.03 * index + 0.15 * sawtooth(t, 240.0, 0.2 * index)))

    def _slice_memory(self, index: int, t: float) -> list[tuple[int, int]]:
        """(used, total) bytes of each MIG slice of GPU ``index``."""
        slices = []
        for n, (_, mib) in enumerate(FAKE_MIG_SLICES):
            total = mib * MIB
            share = 0.35 + 0.4 * sawtooth(t, 180.0 + 40 * n, 0.3 * n + 0.1 * index)
            slices.append((int(total * share), total))
        return slices

    def _info(self, i: int, lost: bool, t: float = 0.0) -> GpuInfo:
        mig = ()
        if i in self.mig:
            memory = self._slice_memory(i, t)
            mig = tuple(
                MigInstance(
                    gpu=i,
                    index=n,
                    uuid=f"MIG-{fake_gpu_uuid(i)[4:]}-{n}" if self.uuids else "",
                    profile=profile,
                    gpu_instance_id=n + 1,
                    compute_instance_id=0,
                    memory_used=used,
                    memory_total=total,
                )
                for n, ((profile, _), (used, total)) in enumerate(zip(FAKE_MIG_SLICES, memory))
            )
        return GpuInfo(
            i,
            self.device_name,
            H100_MEMORY_TOTAL,
            H100_POWER_LIMIT,
            uuid=fake_gpu_uuid(i) if self.uuids else "",
            lost=lost,
            reason=FAKE_LOST_REASON if lost else "",
            mig=mig,
            utilization_supported=i not in self.mig,
        )

    def _gpu_infos(self, t: float) -> tuple[GpuInfo, ...]:
        if not self.lost and not self.mig:
            return self._gpus
        return tuple(self._info(i, self.is_lost(i, t), t) for i in range(self.count))

    def _device(self, i: int, t: float) -> dict[str, float]:
        # A MIG-enabled GPU reports no utilisation; its power and heat still follow a load.
        util = 55.0 + 5.0 * math.sin(TAU * t / 31.0) if i in self.mig else self.utilization(i, t)
        used = self.memory_used(i, t)
        power = 90.0 + 5.8 * util + 12.0 * math.sin(TAU * t / (7.0 + i))
        sm_clock = float(round(1980 - 4.5 * max(0.0, util - 60) + 15 * math.sin(TAU * t / 29.0 + i)))
        errors = math.floor(max(0.0, t - self.origin) / 900.0) if i % 2 else 0
        values = {
            "gpu": util,
            "memory": clamp(0.55 * util + 6.0 * math.sin(TAU * t / 5.0 + i)),
            "memoryAllocated": used / H100_MEMORY_TOTAL * 100,
            "memoryAllocatedBytes": float(used),
            "temp": float(round(36.0 + 0.33 * util + 2.0 * math.sin(TAU * t / 120.0 + i))),
            "powerWatts": power,
            "powerPercent": power / H100_POWER_LIMIT * 100,
            "enforcedPowerLimitWatts": H100_POWER_LIMIT,
            "smClock": sm_clock,
            "memoryClock": 2619.0,
            "graphicsClock": sm_clock,
            "fanSpeed": float(round(30 + 0.4 * util)),
            "correctedMemoryErrors": float(errors),
            "uncorrectedMemoryErrors": 0.0,
            "encoderUtilization": 0.0,
        }
        if i in self.mig:
            del values["gpu"], values["memory"]
        return values

    def _processes(self, t: float) -> tuple[GpuProcess, ...]:
        rows: list[GpuProcess] = []
        trainers = [i for i in range(self.count) if i not in self.mig]
        for rank, i in enumerate(trainers):
            if self.is_lost(i, t):
                continue
            pid = FAKE_RANK0_PID if rank == 0 else FAKE_OTHER_RANK_PIDS + rank
            rows.append(
                GpuProcess(
                    gpu=i,
                    pid=pid,
                    host_pid=pid,
                    user="ml",
                    command=FAKE_TRAIN_COMMAND,
                    used_memory=self.memory_used(i, t) - (2 * GIB if i == 0 else GIB),
                    sm_percent=float(round(0.97 * self.utilization(i, t))),
                    in_tree=True,
                )
            )
        if trainers:
            pid, user, command = FAKE_KERNEL
            rows.append(GpuProcess(trainers[0], pid, pid, user, command, used_memory=GIB, sm_percent=float(round(1.5 + math.sin(TAU * t / 17.0)))))
        if len(trainers) > 1 and not self.is_lost(trainers[-1], t):
            rows.append(GpuProcess(trainers[-1], FAKE_FOREIGN_PID, FAKE_FOREIGN_PID))
        for i in sorted(self.mig):
            memory = self._slice_memory(i, t)
            for (pid, user, command), (profile, _), (used, _) in zip(FAKE_SERVERS, FAKE_MIG_SLICES, memory):
                rows.append(GpuProcess(i, pid, pid, user, command, used_memory=used - 512 * MIB, mig=profile))
        rows.sort(key=lambda row: (row.gpu, row.pid))
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


def replay(
    source: Hub | Sequence[Collector],
    clock: FakeClock,
    start: float,
    interval: float,
    count: int,
    label: str | None = None,
) -> list[Sample]:
    """``count`` Samples at ``start + k*interval``, made on this thread.

    Sets ``clock`` to each time and calls the collectors directly, as a hub
    would (probe once, cadence, label, extras kept between samples), so a
    test can feed an app a history without starting any thread. A Hub
    passes its collectors and label.
    """
    if isinstance(source, Hub):
        collectors, label = source.collectors, source.label
    else:
        collectors = tuple(source)
    clock.set(start)
    probes = [_probe(collector) for collector in collectors]
    last_sampled: dict[int, float] = {}
    kept_extras: dict[int, Mapping[str, Any]] = {}
    samples = []
    for k in range(count):
        now = start + k * interval
        clock.set(now)
        values: dict[str, float] = {}
        statuses = []
        for n, (collector, probe) in enumerate(zip(collectors, probes)):
            if not probe.available:
                statuses.append(CollectorStatus(collector.name, Health.ABSENT, probe.reason))
                continue
            previous = last_sampled.get(n)
            if previous is not None and now - previous < collector.cadence:
                statuses.append(CollectorStatus(collector.name, Health.OK))
                continue
            last_sampled[n] = now
            try:
                values.update(clean_values(collector.sample()))
                kept_extras[n] = collector.extras()
            except Exception as exc:  # noqa: BLE001 - mirror the hub: one collector's fault
                statuses.append(CollectorStatus(collector.name, Health.FAILING, describe_error(exc)))
                continue
            statuses.append(CollectorStatus(collector.name, Health.OK))
        samples.append(
            Sample(
                timestamp=clock(),
                values=with_label(values, label),
                extras=merge_extras([kept_extras[n] for n in sorted(kept_extras)]),
                status=tuple(statuses),
            )
        )
    return samples


def _probe(collector: Collector) -> Probe:
    try:
        probe = collector.probe()
    except Exception as exc:  # noqa: BLE001
        return Probe.absent(f"probe failed: {describe_error(exc)}")
    if not isinstance(probe, Probe):
        return Probe.absent(f"probe failed: probe() returned {type(probe).__name__}, expected Probe")
    return probe
