"""Fake accelerators beside the fake NVIDIA GPUs: an 8 × MI300X box, a TPU v6e-4 host, a trn1.32xlarge, and an
OpenMetrics endpoint like node_exporter's.

Each speaks the keys and extras of the real collector it stands in for
(``amd``, ``tpu``, ``trainium``, ``openmetrics:<endpoint>``), and every value
is a pure function of the injected clock, as in ``collectors.fake``.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from collectors.base import Collector, Probe
from collectors.fake_curves import GIB, MIB, TAU, Wave, clamp, counter_at, sawtooth
from collectors.gpu import AcceleratorInfo, GpuInfo

# -- AMD Instinct MI300X -------------------------------------------------------

MI300X_NAME = "AMD Instinct MI300X"
MI300X_MEMORY_TOTAL = 196592 * MIB  # what amd-smi reports as total VRAM
MI300X_POWER_LIMIT = 750.0


def _training_load(t: float, period: float, phase: float) -> float:
    """Busy, with a short dip at the end of each ``period`` (an evaluation, a checkpoint)."""
    cycle = sawtooth(t, period, phase)
    pause = 0.55 * math.exp(-(((cycle - 0.92) / 0.035) ** 2))
    return 1.0 - pause


class FakeAMDCollector(Collector):
    """The ``amd`` collector on an 8 × MI300X box (amdsmi library keys: no fan, energy in joules)."""

    name = "amd"

    def __init__(self, clock: Any, count: int = 8, origin: float | None = None) -> None:
        self._clock = clock
        self.count = max(0, int(count))
        self.origin = float(clock()) if origin is None else float(origin)
        self._power = [Wave(520.0, ((60.0, 13.0 + i, i), (25.0, 3.1, 2 * i))) for i in range(self.count)]

    def probe(self) -> Probe:
        return Probe.ok() if self.count else Probe.absent("no AMD GPU driver: the amdgpu kernel module is not loaded")

    def utilization(self, index: int, t: float) -> float:
        jitter = 2.5 * math.sin(TAU * t / (3.7 + 0.3 * index)) + 1.5 * math.sin(TAU * t / 13.0 + index)
        return clamp(97.0 * _training_load(t, 120.0, 0.05 * index) + jitter)

    def sample(self) -> Mapping[str, float]:
        t = self._clock()
        values: dict[str, float] = {}
        for i in range(self.count):
            for key, value in self._device(i, t).items():
                values[f"gpu.{i}.{key}"] = value
        return values

    def _device(self, i: int, t: float) -> dict[str, float]:
        util = self.utilization(i, t)
        used = MI300X_MEMORY_TOTAL * (0.71 + 0.02 * i + 0.12 * sawtooth(t, 300.0, 0.15 * i))
        power = min(MI300X_POWER_LIMIT, self._power[i].at(t) * (0.45 + 0.55 * util / 100.0) + 120.0)
        clock = float(round(2100 - 3.0 * max(0.0, util - 70) + 20 * math.sin(TAU * t / 23.0 + i)))
        return {
            "gpu": util,
            "memoryReadWriteActivity": clamp(0.62 * util + 7.0 * math.sin(TAU * t / 6.0 + i)),
            "memoryAllocated": used / MI300X_MEMORY_TOTAL * 100,
            "memoryAllocatedBytes": float(int(used)),
            "temp": float(round(44.0 + 0.28 * util + 1.5 * math.sin(TAU * t / 140.0 + i))),
            "powerWatts": power,
            "powerPercent": power / MI300X_POWER_LIMIT * 100,
            "enforcedPowerLimitWatts": MI300X_POWER_LIMIT,
            "energyJoules": 4.1e9 + counter_at(self._power[i], self.origin, t),
            "graphicsClock": clock,
            "memoryClock": 1300.0,
            "correctedMemoryErrors": float(math.floor(max(0.0, t - self.origin) / 600.0)) if i == 5 else 0.0,
            "uncorrectedMemoryErrors": 0.0,
        }

    def extras(self) -> Mapping[str, Any]:
        gpus = tuple(GpuInfo(i, MI300X_NAME, MI300X_MEMORY_TOTAL, MI300X_POWER_LIMIT) for i in range(self.count))
        lines = tuple(
            AcceleratorInfo(
                vendor="AMD",
                index=i,
                name=MI300X_NAME,
                utilization_key=f"gpu.{i}.gpu",
                memory_key=f"gpu.{i}.memoryAllocated",
                temp_key=f"gpu.{i}.temp",
                power_key=f"gpu.{i}.powerWatts",
                memory_total=MI300X_MEMORY_TOTAL,
                power_limit_watts=MI300X_POWER_LIMIT,
            )
            for i in range(self.count)
        )
        return {"gpus": gpus, "accelerators.amd": lines, "notes.amd": ()}


# -- Google TPU v6e ----------------------------------------------------------------

TPU_NAME = "TPU v6e"
TPU_HBM = 32 * GIB  # per v6e chip (one device per chip)
TPU_STATS = ("mean", "p50", "p90", "p95", "p999")
TPU_STAT_SPREAD = {"mean": 1.0, "p50": 0.93, "p90": 1.35, "p95": 1.6, "p999": 3.2}
TPU_TRANSFER_SIZES = (("1mb_4mb", 180.0), ("4mb_8mb", 420.0), ("8mb_plus_", 950.0))


class FakeTPUCollector(Collector):
    """The ``tpu`` collector on a TPU v6e-4 host with a JAX job holding the chips (wandb 0.26+ keys)."""

    name = "tpu"

    def __init__(self, clock: Any, chips: int = 4) -> None:
        self._clock = clock
        self.chips = max(0, int(chips))

    def probe(self) -> Probe:
        return Probe.ok() if self.chips else Probe.absent("no Google TPU on the PCI bus")

    def sample(self) -> Mapping[str, float]:
        t = self._clock()
        values: dict[str, float] = {}
        for i in range(self.chips):
            busy = _training_load(t, 75.0, 0.11 * i)
            duty = clamp(93.0 * busy + 2.0 * math.sin(TAU * t / (5.3 + i)))
            used = TPU_HBM * (0.58 + 0.05 * i + 0.2 * sawtooth(t, 210.0, 0.25 * i))
            values[f"tpu.{i}.dutyCycle"] = duty
            values[f"tpu.{i}.tensorcoreUtilization"] = clamp(duty * (0.62 + 0.08 * math.sin(TAU * t / 17.0 + i)))
            values[f"tpu.{i}.hbmCapacityTotal"] = float(TPU_HBM)
            values[f"tpu.{i}.hbmCapacityUsage"] = float(int(used))
            values[f"tpu.{i}.hbmMemoryUsage"] = used / TPU_HBM * 100
            values[f"tpu.hloQueueSize.tensor_core-{i}"] = float(round(2 + 2 * busy + math.sin(TAU * t / 9.0 + i)))
            self._stats(values, f"tpu.hloExecTiming.tensor_core_{i}", 2400.0 * (1 + 0.05 * i), t + i)
        for label, base in TPU_TRANSFER_SIZES:
            self._stats(values, f"tpu.hostToDeviceTransferLatency.{label}", base, t)
        return values

    @staticmethod
    def _stats(values: dict[str, float], prefix: str, base: float, t: float) -> None:
        swing = 1.0 + 0.12 * math.sin(TAU * t / 37.0) + 0.05 * math.sin(TAU * t / 4.3)
        for stat in TPU_STATS:
            values[f"{prefix}.{stat}Us"] = base * TPU_STAT_SPREAD[stat] * swing

    def extras(self) -> Mapping[str, Any]:
        lines = tuple(
            AcceleratorInfo(
                vendor="Google",
                index=i,
                name=TPU_NAME,
                utilization_key=f"tpu.{i}.dutyCycle",
                memory_key=f"tpu.{i}.hbmMemoryUsage",
                memory_total=TPU_HBM,
            )
            for i in range(self.chips)
        )
        return {"accelerators.tpu": lines, "notes.tpu": ()}


# -- AWS Trainium (trn1.32xlarge) -----------------------------------------------------

TRN_INSTANCE = "trn1.32xlarge"
TRN_DEVICES = 16
TRN_CORES_PER_DEVICE = 2
TRN_CORE_MEMORY_PARTS = {  # bytes at rest, per NeuronCore
    "constants": 96 * MIB,
    "model_code": 310 * MIB,
    "model_shared_scratchpad": 512 * MIB,
    "runtime_memory": 64 * MIB,
    "tensors": 9 * GIB,
}
TRN_HOST_PARTS = {"application_memory": 6 * GIB, "constants": 192 * MIB, "dma_buffers": 1536 * MIB, "tensors": 2 * GIB}
TRN_UNUSED_REASON = "not in use by the watched Neuron runtime"


class FakeTrainiumCollector(Collector):
    """The ``trainium`` collector on a trn1.32xlarge (16 devices, 32 NeuronCores) whose job uses ``busy_cores`` of them."""

    name = "trainium"

    def __init__(self, clock: Any, devices: int = TRN_DEVICES, busy_cores: int = 24) -> None:
        self._clock = clock
        self.cores = max(0, int(devices)) * TRN_CORES_PER_DEVICE
        self.busy_cores = max(0, min(self.cores, int(busy_cores)))

    def probe(self) -> Probe:
        return Probe.ok() if self.cores else Probe.absent("no Neuron device (/dev/neuron*) on this machine")

    def sample(self) -> Mapping[str, float]:
        t = self._clock()
        values: dict[str, float] = {}
        device_total = 0.0
        for core in range(self.busy_cores):
            busy = _training_load(t, 100.0, 0.03 * (core // 8))
            values[f"trn.{core}.neuroncore_utilization"] = clamp(
                88.0 * busy + 4.0 * math.sin(TAU * t / (4.1 + 0.2 * core)) - 6.0 * (core % 8 == 7)
            )
            growth = 1.0 + 0.1 * sawtooth(t, 260.0, 0.05 * core)
            for part, amount in TRN_CORE_MEMORY_PARTS.items():
                value = float(int(amount * (growth if part == "tensors" else 1.0)))
                values[f"trn.{core}.neuroncore_memory_usage.{part}"] = value
                device_total += value
        host_total = 0.0
        for part, amount in TRN_HOST_PARTS.items():
            value = float(int(amount * (1.0 + 0.05 * math.sin(TAU * t / 90.0))))
            values[f"trn.host_memory_usage.{part}"] = value
            host_total += value
        values["trn.host_total_memory_usage"] = host_total
        values["trn.neuron_device_total_memory_usage"] = device_total
        return values

    def extras(self) -> Mapping[str, Any]:
        name = f"{TRN_INSTANCE} NeuronCore"
        lines = tuple(
            AcceleratorInfo(vendor="AWS", index=core, name=name, utilization_key=f"trn.{core}.neuroncore_utilization")
            if core < self.busy_cores
            else AcceleratorInfo(vendor="AWS", index=core, name=name, reason=TRN_UNUSED_REASON)
            for core in range(self.cores)
        )
        return {"accelerators.trainium": lines, "notes.trainium": ()}


# -- an OpenMetrics endpoint (node_exporter) -------------------------------------------

NODE_CPUS = 4
NODE_MODES = ("idle", "user", "system", "iowait")
NODE_DEVICES = ("eth0", "lo")
NODE_MOUNTS = ((1800 * GIB, 0.38), (3576 * GIB, 0.61))  # (size, share used)
NODE_SENSORS = 4


class FakeOpenMetricsCollector(Collector):
    """An ``openmetrics:<endpoint>`` collector scraping a node_exporter: W&B's keys, label sets as indices."""

    def __init__(self, clock: Any, endpoint: str = "node", origin: float | None = None) -> None:
        self._clock = clock
        self.endpoint = endpoint
        self.name = f"openmetrics:{endpoint}"
        self.origin = float(clock()) if origin is None else float(origin)
        shares = {"idle": 0.55, "user": 0.35, "system": 0.08, "iowait": 0.02}
        self._cpu = [
            Wave(shares[mode], ((0.5 * shares[mode], 29.0 + cpu, cpu + n),)) for cpu in range(NODE_CPUS) for n, mode in enumerate(NODE_MODES)
        ]
        self._rx = [Wave(9.5e6, ((4e6, 31.0, 0.3),)), Wave(2.0e4, ((1e4, 7.0, 0.0),))]
        self._tx = [Wave(2.1e6, ((1e6, 23.0, 1.1),)), Wave(2.0e4, ((1e4, 7.0, 0.0),))]

    def sample(self) -> Mapping[str, float]:
        t = self._clock()
        load = 6.0 + 2.5 * math.sin(TAU * t / 300.0) + 0.8 * math.sin(TAU * t / 41.0)
        metrics: dict[str, list[float]] = {
            "node_load1": [round(load, 2)],
            "node_load5": [round(6.0 + 2.0 * math.sin(TAU * t / 300.0 - 0.4), 2)],
            "node_load15": [round(6.0 + 1.2 * math.sin(TAU * t / 300.0 - 1.0), 2)],
            "node_memory_MemAvailable_bytes": [float(int((301 + 24 * math.sin(TAU * t / 200.0)) * GIB))],
            "node_procs_running": [float(round(9 + 3 * math.sin(TAU * t / 17.0)))],
            "node_cpu_seconds_total": [round(5.0e5 + counter_at(wave, self.origin, t), 2) for wave in self._cpu],
            "node_network_receive_bytes_total": [float(int(8.8e11 + counter_at(w, self.origin, t))) for w in self._rx],
            "node_network_transmit_bytes_total": [float(int(2.3e11 + counter_at(w, self.origin, t))) for w in self._tx],
            "node_filesystem_avail_bytes": [
                float(int(size * (1.0 - share - 0.002 * sawtooth(t, 600.0, n)))) for n, (size, share) in enumerate(NODE_MOUNTS)
            ],
            "node_hwmon_temp_celsius": [round(48.0 + 4 * n + 3.0 * math.sin(TAU * t / (60.0 + 7 * n)), 1) for n in range(NODE_SENSORS)],
        }
        return {
            f"openmetrics.{self.endpoint}.{metric}.{index}": value
            for metric, values in metrics.items()
            for index, value in enumerate(values)
        }


class RefusedEndpointCollector(Collector):
    """An ``openmetrics:<endpoint>`` whose server is down: every sample fails, as a refused scrape does."""

    def __init__(self, endpoint: str = "vllm", url: str = "http://localhost:8000/metrics") -> None:
        self.name = f"openmetrics:{endpoint}"
        self.url = url

    def sample(self) -> Mapping[str, float]:
        raise ConnectionRefusedError(f"{self.url}: connection refused")
