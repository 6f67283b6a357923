"""A fake NVIDIA GPU collector: a training job on H100s, with optional processes, lost GPUs and MIG slices."""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

from collectors.base import Collector, Probe
from collectors.fake_curves import GIB, MIB, TAU, clamp, sawtooth
from collectors.gpu import GpuInfo, GpuProcess, MigInstance

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
        mig: tuple[MigInstance, ...] = ()
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
