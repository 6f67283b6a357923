"""Prometheus names for W&B system-metric keys.

One W&B key (``gpu.0.smClock``, ``disk./.usagePercent``, ``network.recv``)
becomes one Prometheus series: a metric name in Prometheus style (``leet_``,
snake case, the base unit as a suffix, ``_total`` on counters), the parts
of the key that tell devices apart as labels (``gpu``, ``core``, ``path``,
``device`` …), and a factor that turns W&B's unit into the base unit (MiB
and GiB into bytes, bits into bytes, MHz into hertz, mJ into joules, µs
into seconds).

The unit and its factor come from the catalog (``leet.model.catalog``), so
a key is measured here as it is drawn on screen; the rules below only name
the quantity and say which parts of the key are labels. A key no rule names
is kept under the one generic metric ``leet_metric``, never dropped. Every
series also carries ``node`` and ``wandb_key`` (the key without its ``/l:``
suffix): ``wandb_key`` makes every series unique and lets a reader map it
back to W&B's key; ``wandb_value`` undoes the factor.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, Mapping

from leet.model.catalog import describe
from leet.model.keys import split_label
from leet.model.metric_rules import disk_path

PREFIX = "leet_"
GAUGE = "gauge"
COUNTER = "counter"
NODE = "node"
WANDB_KEY = "wandb_key"

# The catalog's display unit → the Prometheus suffix, how HELP says it, and the factor to it
# (Prometheus counts data in bytes, bits included).
_UNITS: Mapping[str, tuple[str, str, float]] = {
    "%": ("percent", "percent", 1.0),
    "B": ("bytes", "bytes", 1.0),
    "B/s": ("bytes_per_second", "bytes per second", 1.0),
    "bit/s": ("bytes_per_second", "bytes per second", 1 / 8),
    "°C": ("celsius", "degrees Celsius", 1.0),
    "W": ("watts", "watts", 1.0),
    "J": ("joules", "joules", 1.0),
    "Hz": ("hertz", "hertz", 1.0),
    "s": ("seconds", "seconds", 1.0),
    "": ("", "", 1.0),
}


@dataclass(frozen=True)
class MetricName:
    """One Prometheus metric family: what a set of W&B keys is called and how it is read."""

    name: str  # with its unit; a counter's without "_total", which the exposition adds
    kind: str  # GAUGE or COUNTER
    help: str
    unit: str = ""  # the Prometheus unit suffix ("bytes", "hertz"), "" for a count

    @property
    def sample_name(self) -> str:
        """The name each sample goes out under."""
        return f"{self.name}_total" if self.kind == COUNTER else self.name


@dataclass(frozen=True)
class Series:
    """One W&B key as a Prometheus series."""

    metric: MetricName
    labels: tuple[tuple[str, str], ...]  # node and wandb_key first, then the key's own parts
    scale: float  # W&B value × scale = exported value


@dataclass(frozen=True)
class _Quantity:
    """What a rule names: the stem of the metric name (before the unit) and its help."""

    stem: str
    help: str
    kind: str = GAUGE


def _q(stem: str, help: str) -> _Quantity:
    return _Quantity(stem, help)


def _counter(stem: str, help: str) -> _Quantity:
    return _Quantity(stem, help, COUNTER)


# Quantities that several W&B keys share (old and new spellings, vendors, sources).
_MEMORY_USED = _q("memory_used", "System memory in use")
_SYSTEM_POWER = _q("system_power", "Whole-system power draw")
_DISK_READ = _counter("disk_read", "Data read from the disk since leet started")
_DISK_WRITTEN = _counter("disk_written", "Data written to the disk since leet started")
_GPU_MEMORY_USED = _q("gpu_memory_used", "GPU memory in use")
_GPU_MEMORY_ACTIVITY = _q("gpu_memory_activity", "Share of time GPU memory was being read or written")
_GPU_ENERGY = _counter("gpu_energy", "Energy the GPU used since its driver loaded")
_GPU_PCIE_TX = _q("gpu_pcie_transmit", "PCIe traffic sent by the GPU")
_GPU_PCIE_RX = _q("gpu_pcie_receive", "PCIe traffic received by the GPU")
_TPU_HBM_USED = _q("tpu_hbm_used", "TPU high-bandwidth memory in use")

_GPU_FIELDS: Mapping[str, _Quantity] = {
    "gpu": _q("gpu_utilization", "Share of time the GPU ran a kernel"),
    "memory": _GPU_MEMORY_ACTIVITY,
    "memoryReadWriteActivity": _GPU_MEMORY_ACTIVITY,
    "memoryAllocated": _GPU_MEMORY_USED,
    "memoryAllocatedBytes": _GPU_MEMORY_USED,
    "memoryUsed": _GPU_MEMORY_USED,
    "memoryUsedBytes": _GPU_MEMORY_USED,
    "memoryTotal": _q("gpu_memory_total", "GPU memory in all"),
    "memoryFree": _q("gpu_memory_free", "GPU memory free"),
    "memoryOverDrive": _q("gpu_memory_overdrive", "GPU memory overdrive setting"),
    "temp": _q("gpu_temperature", "GPU temperature"),
    "memoryTemp": _q("gpu_memory_temperature", "GPU memory temperature"),
    "maxOpTemp": _q("gpu_max_operating_temperature", "Highest temperature the GPU is meant to run at"),
    "memoryMaxOpTemp": _q("gpu_memory_max_operating_temperature", "Highest temperature GPU memory is meant to run at"),
    "powerWatts": _q("gpu_power", "GPU power draw"),
    "powerPercent": _q("gpu_power", "GPU power draw, of its power limit"),
    "enforcedPowerLimitWatts": _q("gpu_power_limit", "GPU power limit the driver enforces"),
    "energyJoules": _GPU_ENERGY,
    "totalEnergyConsumption": _GPU_ENERGY,
    "smClock": _q("gpu_sm_clock", "GPU streaming-multiprocessor clock"),
    "memoryClock": _q("gpu_memory_clock", "GPU memory clock"),
    "graphicsClock": _q("gpu_graphics_clock", "GPU graphics clock"),
    "freq": _q("gpu_frequency", "GPU frequency"),
    "fanSpeed": _q("gpu_fan_speed", "GPU fan speed, of its maximum"),
    "encoderUtilization": _q("gpu_encoder_utilization", "Share of time the GPU video encoder was busy"),
    "correctedMemoryErrors": _counter("gpu_corrected_memory_errors", "Corrected GPU memory (ECC) errors since the driver loaded"),
    "uncorrectedMemoryErrors": _counter("gpu_uncorrected_memory_errors", "Uncorrected GPU memory (ECC) errors since the driver loaded"),
    "recoveryCount": _counter("gpu_recoveries", "GPU recoveries"),
    "pcieLinkGen": _q("gpu_pcie_link_generation", "PCIe generation the GPU link runs at"),
    "maxPcieLinkGen": _q("gpu_pcie_max_link_generation", "Highest PCIe generation the GPU link supports"),
    "pcieLinkWidth": _q("gpu_pcie_link_width_lanes", "PCIe lanes the GPU link uses"),
    "maxPcieLinkWidth": _q("gpu_pcie_max_link_width_lanes", "Most PCIe lanes the GPU link supports"),
    "pcieLinkSpeed": _q("gpu_pcie_link_speed", "PCIe link speed of the GPU"),
    "smActive": _q("gpu_sm_active", "Share of time at least one warp was active on an SM, averaged over SMs"),
    "smOccupancy": _q("gpu_sm_occupancy", "Warps resident on the SMs, of the most they hold"),
    "pipeTensorActive": _q("gpu_tensor_active", "Share of cycles the tensor pipes were active"),
    "pipeTensorHmmaActive": _q("gpu_tensor_hmma_active", "Share of cycles the tensor HMMA pipes were active"),
    "dramActive": _q("gpu_dram_active", "Share of cycles GPU memory was sending or receiving data"),
    "pipeFp64Active": _q("gpu_fp64_active", "Share of cycles the FP64 pipes were active"),
    "pipeFp32Active": _q("gpu_fp32_active", "Share of cycles the FP32 pipes were active"),
    "pipeFp16Active": _q("gpu_fp16_active", "Share of cycles the FP16 pipes were active"),
    "pcieTxBytes": _GPU_PCIE_TX,
    "pcieRxBytes": _GPU_PCIE_RX,
    "pcieTxKBps": _GPU_PCIE_TX,
    "pcieRxKBps": _GPU_PCIE_RX,
    "nvlinkTxBytes": _q("gpu_nvlink_transmit", "NVLink traffic sent by the GPU"),
    "nvlinkRxBytes": _q("gpu_nvlink_receive", "NVLink traffic received by the GPU"),
}

# gpu.process.{i}.*: W&B copies a device's figures there while the watched process (--pid) uses it.
_GPU_PROCESS_FIELDS: Mapping[str, _Quantity] = {
    name: _Quantity(f"process_{quantity.stem}", f"{quantity.help}, while the watched process uses the GPU", quantity.kind)
    for name, quantity in _GPU_FIELDS.items()
}

_TPU_FIELDS: Mapping[str, _Quantity] = {
    "tensorcoreUtilization": _q("tpu_tensorcore_utilization", "Share of time the TensorCore was busy"),
    "tensorcoreIdleDuration": _q("tpu_tensorcore_idle_duration", "How long the TensorCore has been idle"),
    "dutyCycle": _q("tpu_duty_cycle", "Share of time the TPU was executing"),
    "hbmCapacityTotal": _q("tpu_hbm_total", "TPU high-bandwidth memory in all"),
    "hbmCapacityUsage": _TPU_HBM_USED,
    "memoryUsageBytes": _TPU_HBM_USED,
    "hbmMemoryUsage": _TPU_HBM_USED,
    "memoryUsage": _TPU_HBM_USED,
    "runtimeHbmUtilization": _q("tpu_hbm_bandwidth_utilization", "TPU high-bandwidth memory bandwidth in use"),
    "iciLinkHealth": _q("tpu_ici_link_health", "TPU inter-chip link health"),
    "throttleScore": _q("tpu_throttle_score", "TPU throttle score"),
}

_TPU_DISTRIBUTIONS: Mapping[str, _Quantity] = {
    "bufferTransferLatency": _q("tpu_buffer_transfer_latency", "TPU buffer transfer latency"),
    "inboundBufferTransferLatency": _q("tpu_inbound_buffer_transfer_latency", "TPU inbound buffer transfer latency"),
    "hostToDeviceTransferLatency": _q("tpu_host_to_device_transfer_latency", "TPU host-to-device transfer latency"),
    "deviceToHostTransferLatency": _q("tpu_device_to_host_transfer_latency", "TPU device-to-host transfer latency"),
    "collectiveE2ELatency": _q("tpu_collective_e2e_latency", "TPU collective end-to-end latency"),
    "hostComputeLatency": _q("tpu_host_compute_latency", "TPU host compute latency"),
    "hloExecTiming": _q("tpu_hlo_execution_time", "TPU HLO execution time"),
}

_IPU_FIELDS: Mapping[str, _Quantity] = {
    "average board temp": _q("ipu_board_temperature", "IPU board temperature, averaged"),
    "average die temp": _q("ipu_die_temperature", "IPU die temperature, averaged"),
    "clock": _q("ipu_clock", "IPU clock"),
    "ipu power": _q("ipu_power", "IPU power draw"),
    "ipu utilisation": _q("ipu_utilization", "Share of time the IPU was busy"),
    "ipu utilisation (session)": _q("ipu_session_utilization", "Share of time the IPU was busy in this session"),
}

_NEURONCORE_MEMORY = _q("neuroncore_memory_used", "NeuronCore memory in use, by what holds it")


@dataclass(frozen=True)
class _Rule:
    """A regex over the whole key (its label suffix cut off). Named groups are labels, except
    ``field``, which picks the quantity from ``fields``; ``quantity`` names keys without one."""

    pattern: str
    quantity: _Quantity | None = None
    fields: Mapping[str, _Quantity] | None = None
    regex: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "regex", re.compile(self.pattern))

    def match(self, key: str) -> tuple[_Quantity, dict[str, str]] | None:
        found = self.regex.fullmatch(key)
        if found is None:
            return None
        labels = {name: value for name, value in found.groupdict().items() if value is not None}
        if self.fields is None:
            return (self.quantity, labels) if self.quantity is not None else None
        quantity = self.fields.get(labels.pop("field", ""))
        return None if quantity is None else (quantity, labels)


_R = _Rule

# Most specific first, in the catalog's order, so a key is read here as it is there.
_RULES: tuple[_Rule, ...] = (
    # CPU
    _R(r"cpu\.(?P<core>\d+)\.cpu_percent", _q("cpu_utilization", "Share of time the CPU core was busy")),
    _R(r"cpu\.avg_temp", _q("cpu_temperature", "CPU temperature, averaged over its sensors")),
    _R(r"cpu\.powerWatts", _q("cpu_power", "CPU power draw")),
    _R(r"cpu\.(?P<cluster>[ep])cpu_percent", _q("cpu_cluster_utilization", "Share of time the CPU cluster (e: efficiency, p: performance) was busy")),
    _R(r"cpu\.(?P<cluster>[ep])cpu_freq", _q("cpu_cluster_frequency", "CPU cluster (e: efficiency, p: performance) frequency")),
    _R(r"system\.powerWatts|powerWatts", _SYSTEM_POWER),
    # Memory
    _R(r"memory_percent|memory", _MEMORY_USED),
    _R(r"memory\.used_percent|memory\.used", _MEMORY_USED),
    _R(r"swap\.used_percent|swap\.used", _q("swap_used", "Swap in use")),
    _R(r"proc\.memory\.availableMB", _q("memory_available", "Memory available to new programs without swapping")),
    # Network (W&B adds up every interface but loopback, bond and bridge members)
    _R(r"network\.recvBps", _q("network_received", "Network data received")),
    _R(r"network\.sentBps", _q("network_sent", "Network data sent")),
    _R(r"network\.recv", _counter("network_received", "Network data received since leet started")),
    _R(r"network\.sent", _counter("network_sent", "Network data sent since leet started")),
    _R(r"network\.tcpRetransmits", _counter("network_tcp_retransmits", "TCP segments retransmitted since leet started")),
    # Disk: paths may hold dots, so the path rules come before the device rules
    _R(r"disk", _q("disk_usage", "Disk space in use")),
    _R(r"disk\.(?P<path>.+)\.usagePercent", _q("disk_usage", "Disk space in use")),
    _R(r"disk\.(?P<path>.+)\.usageGB", _q("disk_used", "Disk space in use")),
    _R(r"disk\.(?P<device>.+)\.readBps", _q("disk_read", "Disk read throughput")),
    _R(r"disk\.(?P<device>.+)\.writeBps", _q("disk_written", "Disk write throughput")),
    _R(r"disk\.in", _DISK_READ),
    _R(r"disk\.out", _DISK_WRITTEN),
    _R(r"disk\.(?P<device>.+)\.in", _DISK_READ),
    _R(r"disk\.(?P<device>.+)\.out", _DISK_WRITTEN),
    # The watched process (--pid), and W&B's own processes
    _R(r"cpu", _q("process_cpu_utilization", "CPU the watched process uses, of the CPUs it may use")),
    _R(r"proc\.memory\.rssMB", _q("process_resident_memory", "Resident memory of the watched process")),
    _R(r"proc\.memory\.percent", _q("process_memory", "Resident memory of the watched process, of the memory it may use")),
    _R(r"proc\.cpu\.threads", _q("process_threads", "Threads of the watched process")),
    _R(r"proc\.cpu\.throttledPercent", _q("process_cpu_throttled", "Share of CPU periods the watched process's cgroup was throttled")),
    _R(r"proc\.memory\.oomKills", _counter("process_oom_kills", "Processes the watched process's cgroup lost to the OOM killer since leet started")),
    _R(r"wandb\.cpu", _q("wandb_cpu_utilization", "CPU W&B's own processes use")),
    _R(r"wandb\.memory\.rssMB", _q("wandb_resident_memory", "Resident memory of W&B's own processes")),
    # GPUs, every vendor
    _R(r"gpu\.process\.(?P<gpu>\d+)\.(?P<field>.+)", fields=_GPU_PROCESS_FIELDS),
    _R(r"gpu\.(?P<gpu>\d+)\.(?P<field>.+)", fields=_GPU_FIELDS),
    # Apple
    _R(r"ane\.power", _q("neural_engine_power", "Apple Neural Engine power draw")),
    # TPU
    _R(r"tpu", _q("tpu_utilization", "Share of time the TPU was busy")),
    _R(r"tpu\.(?P<tpu>\d+)\.(?P<field>.+)", fields=_TPU_FIELDS),
    _R(r"tpu\.grpcTcpMinRtt\.(?P<stat>mean|p\d+)Us", _q("tpu_grpc_tcp_min_rtt", "Smallest TCP round trip of the TPU's gRPC connections")),
    _R(r"tpu\.grpcTcpDeliveryRate\.(?P<stat>mean|p\d+)Mbps", _q("tpu_grpc_tcp_delivery_rate", "TCP delivery rate of the TPU's gRPC connections")),
    _R(r"tpu\.hloQueueSize\.(?P<queue>.+)", _q("tpu_hlo_queue_size", "HLO programs queued on the TPU")),
    _R(r"tpu\.(?P<field>[A-Za-z0-9]+)\.(?P<category>.+)\.(?P<stat>mean|p\d+)Us", fields=_TPU_DISTRIBUTIONS),
    # Trainium / Inferentia
    _R(r"trn\.(?P<core>\d+)\.neuroncore_utilization", _q("neuroncore_utilization", "Share of time the NeuronCore was busy")),
    _R(r"trn\.host_total_memory_usage", _q("neuron_host_memory_used", "Host memory the Neuron runtime holds")),
    _R(r"trn\.neuron_device_total_memory_usage", _q("neuron_device_memory_used", "Neuron device memory the runtime holds")),
    _R(r"trn\.host_memory_usage\.(?P<part>.+)", _q("neuron_host_memory_part", "Host memory the Neuron runtime holds, by what holds it")),
    _R(r"trn\.(?P<core>\d+)\.neuroncore_memory_usage\.(?P<part>.+)", _NEURONCORE_MEMORY),
    # Graphcore IPU, with the unit suffix legacy W&B appended to the key
    _R(r"ipu\.(?P<ipu>\d+)\.(?P<field>.+?)(?: \((?:C|MHz|W|%|GT/s)\))?", fields=_IPU_FIELDS),
    # OpenMetrics endpoints: the metric as its endpoint named it, and W&B's label-set index
    _R(
        r"openmetrics\.(?P<endpoint>[^.]+)\.(?P<metric>.+)\.(?P<index>\d+)",
        _q("openmetrics", "A value read from an OpenMetrics endpoint (--openmetrics): endpoint, metric and W&B's label-set index as in its key"),
    ),
)

# Label values that are spelled in keys unlike what they name.
_LABEL_VALUES: Mapping[str, Callable[[str], str]] = {"path": disk_path}

GENERIC = MetricName(f"{PREFIX}metric", GAUGE, "A W&B system metric that has no name of its own here: wandb_key names it, in W&B's unit")


def _metric(quantity: _Quantity, unit: str) -> MetricName:
    suffix, spoken, _ = _UNITS[unit]
    name = f"{PREFIX}{quantity.stem}_{suffix}" if suffix else f"{PREFIX}{quantity.stem}"
    help = f"{quantity.help}, in {spoken}" if spoken else quantity.help
    return MetricName(name, quantity.kind, help, suffix)


@lru_cache(maxsize=16384)
def _named(key: str) -> tuple[MetricName, tuple[tuple[str, str], ...], float]:
    """The metric, the key's own labels and the factor for one W&B key without its ``/l:`` suffix."""
    info = describe(key)
    if info.unit in _UNITS:
        for rule in _RULES:
            found = rule.match(key)
            if found is not None:
                quantity, labels = found
                parts = tuple((name, _LABEL_VALUES.get(name, str)(value)) for name, value in labels.items())
                return _metric(quantity, info.unit), parts, info.scale * _UNITS[info.unit][2]
    return GENERIC, (), 1.0


def series(raw_key: str, node: str) -> Series:
    """The Prometheus series for one W&B key (``/l:LABEL`` allowed); ``node`` unless the key names its own."""
    key, label = split_label(raw_key)
    metric, parts, scale = _named(key)
    return Series(metric, ((NODE, label or node), (WANDB_KEY, key), *parts), scale)


def wandb_value(raw_key: str, value: float) -> float:
    """A value read from Prometheus for ``raw_key``'s series, back in W&B's unit."""
    _, _, scale = _named(split_label(raw_key)[0])
    return value / scale


__all__ = ["COUNTER", "GAUGE", "GENERIC", "NODE", "PREFIX", "WANDB_KEY", "MetricName", "Series", "series", "wandb_value"]
