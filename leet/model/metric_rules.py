"""What a W&B system-metric key means: display units and the ordered table of key rules.

Rules are tried most specific first, host keys before accelerator keys; each
gives a family, chart id, title, unit and series name for the keys it
matches. A key no rule knows falls back to a chart of its own, in the family
its prefix names (``_fallback``). ``catalog`` turns a meaning into what is
shown and groups keys into charts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Mapping

# --- units ------------------------------------------------------------------


@dataclass(frozen=True)
class Unit:
    """Display unit, the factor from W&B's raw unit, and default axis bounds."""

    unit: str
    scale: float = 1.0
    percent: bool = False
    y_min: float | None = 0.0
    y_max: float | None = None
    integer: bool = False  # a count: whole numbers only, so whole-number ticks


PERCENT = Unit("%", percent=True, y_min=0.0, y_max=100.0)
BYTES = Unit("B")
MIB = Unit("B", 2.0**20)
GIB = Unit("B", 2.0**30)
BYTES_PER_S = Unit("B/s")
# NVML GPM reports PCIe/NVLink traffic in MiB/s although W&B names the keys
# "...Bytes"; the in-process DCGM path writes bytes/s under the same keys.
MIB_PER_S = Unit("B/s", 2.0**20)
BITS_PER_S = Unit("bit/s")
MBITS_PER_S = Unit("bit/s", 1e6)
CELSIUS = Unit("°C", y_min=None)
WATTS = Unit("W")
JOULES = Unit("J")
MILLIJOULES = Unit("J", 1e-3)
MHZ = Unit("Hz", 1e6)
SECONDS = Unit("s")
MICROSECONDS = Unit("s", 1e-6)
COUNT = Unit("", integer=True)
UNKNOWN = Unit("", y_min=None)


# --- rules ------------------------------------------------------------------


@dataclass(frozen=True)
class Meaning:
    """What a key is, before its node label and untrusted text are dealt with (``catalog`` does that)."""

    family: str
    chart: str
    title: str
    unit: Unit
    series: str = "Default"


@dataclass(frozen=True)
class _Rule:
    """A regex over the whole key; chart, title and series are format templates
    filled from the regex's named groups."""

    pattern: str
    family: str
    chart: str
    title: str
    unit: Unit
    series: str = "Default"
    paths: bool = False  # the groups are mount paths as W&B spells them in keys: shown as paths
    regex: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "regex", re.compile(self.pattern))

    def __call__(self, key: str) -> Meaning | None:
        found = self.regex.fullmatch(key)
        if found is None:
            return None
        groups = found.groupdict()
        if self.paths:
            groups = {name: disk_path(value) for name, value in groups.items()}
        return Meaning(
            self.family,
            self.chart.format(**groups),
            self.title.format(**groups),
            self.unit,
            self.series.format(**groups),
        )


@dataclass(frozen=True)
class _Field:
    title: str
    unit: Unit
    chart: str = ""  # chart suffix when several fields share a chart


@dataclass(frozen=True)
class _FieldRule:
    """``<prefix>.<index>.<field>`` keys: the field picks title and unit from a
    table; fields not in the table still chart in the same family."""

    pattern: str  # must define the groups ``index`` and ``field``
    family: str
    chart_prefix: str
    title_prefix: str  # before a known field's title
    unknown_prefix: str  # before the raw name of a field not in the table
    series: str
    fields: Mapping[str, _Field]
    regex: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "regex", re.compile(self.pattern))

    def __call__(self, key: str) -> Meaning | None:
        found = self.regex.fullmatch(key)
        if found is None:
            return None
        name = found["field"]
        known = self.fields.get(name)
        series = self.series.format(index=found["index"])
        if known is None:
            return Meaning(self.family, self.chart_prefix + name, self.unknown_prefix + name, UNKNOWN, series)
        chart = self.chart_prefix + (known.chart or name)
        return Meaning(self.family, chart, self.title_prefix + known.title, known.unit, series)


_GPU_FIELDS: dict[str, _Field] = {
    "gpu": _Field("GPU Utilization", PERCENT),
    "memory": _Field("GPU Memory Access", PERCENT),
    "memoryAllocated": _Field("GPU Memory Allocated", PERCENT),
    "memoryAllocatedBytes": _Field("GPU Memory Allocated", BYTES),
    # DCGM-exporter writes MiB under memoryUsed; the old Apple helper wrote
    # bytes under the same key. The current (DCGM) meaning wins.
    "memoryUsed": _Field("GPU Memory Used", MIB),
    "memoryUsedBytes": _Field("GPU Memory Used", BYTES, chart="memoryUsed"),
    "memoryTotal": _Field("GPU Memory Total", MIB),
    "memoryFree": _Field("GPU Memory Free", MIB),
    "memoryReadWriteActivity": _Field("GPU Memory Read/Write Activity", PERCENT),
    "memoryOverDrive": _Field("GPU Memory OverDrive", PERCENT),
    "temp": _Field("GPU Temp", CELSIUS),
    "memoryTemp": _Field("GPU Memory Temp", CELSIUS),
    "maxOpTemp": _Field("GPU Max Operating Temp", CELSIUS),
    "memoryMaxOpTemp": _Field("GPU Memory Max Operating Temp", CELSIUS),
    "powerWatts": _Field("GPU Power", WATTS),
    "powerPercent": _Field("GPU Power", PERCENT),
    "enforcedPowerLimitWatts": _Field("GPU Power Limit", WATTS),
    "energyJoules": _Field("GPU Energy", JOULES, chart="energy"),
    "totalEnergyConsumption": _Field("GPU Energy", MILLIJOULES, chart="energy"),
    "smClock": _Field("GPU SM Clock", MHZ),
    "memoryClock": _Field("GPU Memory Clock", MHZ),
    "graphicsClock": _Field("GPU Graphics Clock", MHZ),
    "freq": _Field("GPU Freq", MHZ),
    "fanSpeed": _Field("GPU Fan Speed", PERCENT),
    "encoderUtilization": _Field("GPU Encoder Utilization", PERCENT),
    "correctedMemoryErrors": _Field("GPU Corrected Memory Errors", COUNT),
    "uncorrectedMemoryErrors": _Field("GPU Uncorrected Memory Errors", COUNT),
    "recoveryCount": _Field("GPU Recovery Count", COUNT),
    "pcieLinkGen": _Field("GPU PCIe Link Gen", COUNT),
    "maxPcieLinkGen": _Field("GPU PCIe Max Link Gen", COUNT),
    "pcieLinkWidth": _Field("GPU PCIe Link Width", COUNT),
    "maxPcieLinkWidth": _Field("GPU PCIe Max Link Width", COUNT),
    "pcieLinkSpeed": _Field("GPU PCIe Link Speed", BITS_PER_S),
    "smActive": _Field("GPU SM Active", PERCENT),
    "smOccupancy": _Field("GPU SM Occupancy", PERCENT),
    "pipeTensorActive": _Field("GPU Tensor Active", PERCENT),
    "pipeTensorHmmaActive": _Field("GPU Tensor HMMA Active", PERCENT),
    "dramActive": _Field("GPU DRAM Active", PERCENT),
    "pipeFp64Active": _Field("GPU FP64 Active", PERCENT),
    "pipeFp32Active": _Field("GPU FP32 Active", PERCENT),
    "pipeFp16Active": _Field("GPU FP16 Active", PERCENT),
    "pcieTxBytes": _Field("GPU PCIe Tx", MIB_PER_S),
    "pcieRxBytes": _Field("GPU PCIe Rx", MIB_PER_S),
    # NVML's own PCIe counters (nvmlDeviceGetPcieThroughput), in KiB/s: the
    # same traffic as GPM's MiB/s "...Bytes" keys, so the same chart.
    "pcieTxKBps": _Field("GPU PCIe Tx", Unit("B/s", 2.0**10), chart="pcieTxBytes"),
    "pcieRxKBps": _Field("GPU PCIe Rx", Unit("B/s", 2.0**10), chart="pcieRxBytes"),
    "nvlinkTxBytes": _Field("GPU NVLink Tx", MIB_PER_S),
    "nvlinkRxBytes": _Field("GPU NVLink Rx", MIB_PER_S),
}

# gpu.process.{i}.* mirrors the device values of the GPUs the watched process uses.
_GPU_PROCESS_FIELDS = {
    name: _Field(f"Process {spec.title}", spec.unit, spec.chart) for name, spec in _GPU_FIELDS.items()
}

_TPU_FIELDS: dict[str, _Field] = {
    "tensorcoreUtilization": _Field("TensorCore Utilization", PERCENT),
    "tensorcoreIdleDuration": _Field("TensorCore Idle Duration", SECONDS),
    "dutyCycle": _Field("Duty Cycle", PERCENT),
    "hbmCapacityTotal": _Field("HBM Total", BYTES),
    "hbmCapacityUsage": _Field("HBM Used", BYTES, chart="hbm_used"),
    "memoryUsageBytes": _Field("HBM Used", BYTES, chart="hbm_used"),  # before 0.26
    "hbmMemoryUsage": _Field("HBM Used", PERCENT, chart="hbm_used_percent"),
    "memoryUsage": _Field("HBM Used", PERCENT, chart="hbm_used_percent"),  # before 0.26
    "runtimeHbmUtilization": _Field("HBM Bandwidth Utilization", PERCENT),
    "iciLinkHealth": _Field("ICI Link Health", COUNT),
    "throttleScore": _Field("Throttle Score", COUNT),
}

_TPU_DISTRIBUTIONS = {
    "bufferTransferLatency": "Buffer Transfer Latency",
    "inboundBufferTransferLatency": "Inbound Buffer Transfer Latency",
    "hostToDeviceTransferLatency": "Host-to-Device Transfer Latency",
    "deviceToHostTransferLatency": "Device-to-Host Transfer Latency",
    "collectiveE2ELatency": "Collective E2E Latency",
    "hostComputeLatency": "Host Compute Latency",
    "hloExecTiming": "HLO Execution Time",
}

_NEURON_MEMORY_PARTS = {
    "application_memory": "Application",
    "constants": "Constants",
    "dma_buffers": "DMA buffers",
    "tensors": "Tensors",
    "model_code": "Model code",
    "model_shared_scratchpad": "Shared scratchpad",
    "runtime_memory": "Runtime",
}

# IPU fields as legacy-py wrote them (unit suffix appended to the key) or as
# they appear without it; both land in the same chart.
_IPU_FIELDS: dict[str, _Field] = {
    "average board temp": _Field("Average Board Temp", CELSIUS),
    "average die temp": _Field("Average Die Temp", CELSIUS),
    "clock": _Field("Clock", MHZ),
    "ipu power": _Field("Power", WATTS),
    "ipu utilisation": _Field("Utilisation", PERCENT),
    "ipu utilisation (session)": _Field("Utilisation (session)", PERCENT),
}
_IPU_UNITS = {"C": CELSIUS, "MHz": MHZ, "W": WATTS, "%": PERCENT, "GT/s": Unit("GT/s")}

_BACKSLASHES = re.compile(r"\\{1,2}")


def disk_path(spelled: str) -> str:
    """A mount path as a disk key spells it, as a path: ``\\System\\Volumes\\Data`` → ``/System/Volumes/Data``.

    W&B's Python monitor wrote ``/`` as ``\\`` in ``disk.<path>.usage*`` keys
    (``disk.\\.usagePercent`` for ``/``; macOS runs show ``disk.\\System\\Volumes\\Data``);
    a doubled backslash (the same key escaped once more) is one ``/`` too.
    Paths spelled with ``/`` (wandb-core), or not starting with a backslash
    (a Windows drive, ``C:\\``), pass through.
    """
    return _BACKSLASHES.sub("/", spelled) if spelled.startswith("\\") else spelled


_R = _Rule

_HOST_RULES: tuple[_Rule, ...] = (
    # CPU
    _R(r"cpu\.(?P<i>\d+)\.cpu_percent", "CPU", "cpu.core", "CPU Core", PERCENT, "Core {i}"),
    # The whole host's CPU, busy of all cores (leet cluster: node_exporter, or leet serve's cores averaged).
    _R(r"cpu\.percent", "CPU", "cpu.percent", "CPU Utilization", PERCENT),
    _R(r"cpu\.avg_temp", "CPU", "cpu.temp", "CPU Temp", CELSIUS),
    _R(r"cpu\.powerWatts", "CPU", "cpu.power", "CPU Power", WATTS),
    _R(r"cpu\.ecpu_percent", "CPU", "cpu.cluster", "CPU E/P Cores", PERCENT, "E-cores"),
    _R(r"cpu\.pcpu_percent", "CPU", "cpu.cluster", "CPU E/P Cores", PERCENT, "P-cores"),
    _R(r"cpu\.ecpu_freq", "CPU", "cpu.cluster_freq", "CPU E/P Core Freq", MHZ, "E-cores"),
    _R(r"cpu\.pcpu_freq", "CPU", "cpu.cluster_freq", "CPU E/P Core Freq", MHZ, "P-cores"),
    _R(r"system\.powerWatts", "CPU", "system.power", "System Power", WATTS),
    # Read back from a run file, Apple's system.powerWatts loses "system." with
    # the prefix old writers put on every key (runfile.convert); nothing else is named so.
    _R(r"powerWatts", "CPU", "system.power", "System Power", WATTS),
    # Memory (swap ranks with memory)
    _R(r"memory_percent|memory", "Memory", "memory.percent", "System Memory", PERCENT),
    _R(r"memory\.used_percent", "Memory", "memory.used_percent", "RAM Used", PERCENT),
    _R(r"memory\.used", "Memory", "memory.used", "RAM Used", BYTES),
    _R(r"swap\.used_percent", "Memory", "swap.used_percent", "Swap Used", PERCENT),
    _R(r"swap\.used", "Memory", "swap.used", "Swap Used", BYTES),
    _R(r"proc\.memory\.availableMB", "Memory", "memory.available", "Memory Available", MIB),
    # Network
    _R(r"network\.recvBps", "Network", "network.rx_rate", "Network Rx", BYTES_PER_S),
    _R(r"network\.sentBps", "Network", "network.tx_rate", "Network Tx", BYTES_PER_S),
    _R(r"network\.recv", "Network", "network.rx_total", "Network Rx Total", BYTES),
    _R(r"network\.sent", "Network", "network.tx_total", "Network Tx Total", BYTES),
    _R(r"network\.tcpRetransmits", "Network", "network.tcp_retransmits", "Network TCP Retransmits", COUNT),
    # Disk: paths may hold dots and slashes (disk./mnt/data.v2.usageGB), so the
    # path rules come before the device rules and match the suffix.
    _R(r"disk", "Disk", "disk.usage_percent", "Disk Usage", PERCENT),
    _R(r"disk\.(?P<p>.+)\.usagePercent", "Disk", "disk.usage_percent", "Disk Usage", PERCENT, "{p}", paths=True),
    _R(r"disk\.(?P<p>.+)\.usageGB", "Disk", "disk.usage", "Disk Usage", GIB, "{p}", paths=True),
    _R(r"disk\.(?P<d>.+)\.readBps", "Disk", "disk.io_rate", "Disk I/O", BYTES_PER_S, "{d} read"),
    _R(r"disk\.(?P<d>.+)\.writeBps", "Disk", "disk.io_rate", "Disk I/O", BYTES_PER_S, "{d} write"),
    _R(r"disk\.in", "Disk", "disk.io_total", "Disk I/O Total", MIB, "read"),
    _R(r"disk\.out", "Disk", "disk.io_total", "Disk I/O Total", MIB, "write"),
    _R(r"disk\.(?P<d>.+)\.in", "Disk", "disk.io_total", "Disk I/O Total", MIB, "{d} read"),
    _R(r"disk\.(?P<d>.+)\.out", "Disk", "disk.io_total", "Disk I/O Total", MIB, "{d} write"),
    # Process (the monitored process tree, and W&B's own processes)
    _R(r"cpu", "Process", "proc.cpu", "Process CPU", PERCENT),
    _R(r"proc\.memory\.rssMB", "Process", "proc.memory.rss", "Process Memory", MIB),
    _R(r"proc\.memory\.percent", "Process", "proc.memory.percent", "Process Memory", PERCENT),
    _R(r"proc\.cpu\.threads", "Process", "proc.cpu.threads", "Process CPU Threads", COUNT),
    _R(r"proc\.cpu\.throttledPercent", "Process", "proc.cpu.throttled", "Process CPU Throttled", PERCENT),
    _R(r"proc\.memory\.oomKills", "Process", "proc.memory.oom_kills", "Process OOM Kills", COUNT),
    _R(r"wandb\.cpu", "Process", "wandb.cpu", "W&B CPU", PERCENT),
    _R(r"wandb\.memory\.rssMB", "Process", "wandb.memory.rss", "W&B Memory", MIB),
)

_ACCELERATOR_RULES: tuple[Callable[[str], Meaning | None], ...] = (
    _FieldRule(
        r"gpu\.process\.(?P<index>\d+)\.(?P<field>.+)", "GPU", "gpu.process.", "", "Process GPU ",
        "GPU {index}", _GPU_PROCESS_FIELDS,
    ),
    _FieldRule(r"gpu\.(?P<index>\d+)\.(?P<field>.+)", "GPU", "gpu.", "", "GPU ", "GPU {index}", _GPU_FIELDS),
    # Apple
    _R(r"ane\.power", "Accelerators", "ane.power", "Neural Engine Power", WATTS),
    # TPU
    _R(r"tpu", "Accelerators", "tpu.utilization", "TPU Utilization", PERCENT),
    _FieldRule(
        r"tpu\.(?P<index>\d+)\.(?P<field>.+)", "Accelerators", "tpu.", "TPU ", "TPU ", "TPU {index}",
        _TPU_FIELDS,
    ),
    _R(r"tpu\.grpcTcpMinRtt\.(?P<s>mean|p\d+)Us", "Accelerators", "tpu.grpcTcpMinRtt",
       "TPU gRPC TCP Min RTT", MICROSECONDS, "{s}"),
    _R(r"tpu\.grpcTcpDeliveryRate\.(?P<s>mean|p\d+)Mbps", "Accelerators", "tpu.grpcTcpDeliveryRate",
       "TPU gRPC TCP Delivery Rate", MBITS_PER_S, "{s}"),
    _R(r"tpu\.hloQueueSize\.(?P<l>.+)", "Accelerators", "tpu.hloQueueSize", "TPU HLO Queue Size", COUNT, "{l}"),
    # Trainium / Inferentia
    _R(r"trn\.(?P<c>\d+)\.neuroncore_utilization", "Accelerators", "trn.neuroncore_utilization",
       "NeuronCore Utilization", PERCENT, "NeuronCore {c}"),
    _R(r"trn\.host_total_memory_usage", "Accelerators", "trn.host_memory", "Neuron Host Memory", BYTES, "Total"),
    _R(r"trn\.neuron_device_total_memory_usage", "Accelerators", "trn.device_memory",
       "Neuron Device Memory", BYTES, "Total"),
)


def _tpu_distribution(key: str) -> Meaning | None:
    """``tpu.<name>.<label>.<stat>Us`` latency summaries: one chart per name."""
    found = re.fullmatch(r"tpu\.(?P<name>[A-Za-z0-9]+)\.(?P<label>.+)\.(?P<stat>mean|p\d+)Us", key)
    if found is None:
        return None
    name = found["name"]
    title = _TPU_DISTRIBUTIONS.get(name, name)
    return Meaning(
        "Accelerators", f"tpu.{name}", f"TPU {title}", MICROSECONDS, f"{found['label']} {found['stat']}"
    )


def _neuron_memory(key: str) -> Meaning | None:
    found = re.fullmatch(r"trn\.host_memory_usage\.(?P<part>.+)", key)
    if found is not None:
        part = _NEURON_MEMORY_PARTS.get(found["part"], found["part"].replace("_", " "))
        return Meaning("Accelerators", "trn.host_memory", "Neuron Host Memory", BYTES, part)
    found = re.fullmatch(r"trn\.(?P<core>\d+)\.neuroncore_memory_usage\.(?P<part>.+)", key)
    if found is not None:
        part = _NEURON_MEMORY_PARTS.get(found["part"], found["part"].replace("_", " "))
        return Meaning(
            "Accelerators", "trn.neuroncore_memory", "NeuronCore Memory", BYTES,
            f"NeuronCore {found['core']} {part}",
        )
    return None


def _ipu(key: str) -> Meaning | None:
    """``ipu.{i}.<field>`` with an optional `` (unit)`` suffix (legacy-py)."""
    found = re.fullmatch(r"ipu\.(?P<i>\d+)\.(?P<field>.+?)(?: \((?P<unit>C|MHz|W|%|GT/s)\))?", key)
    if found is None:
        return None
    name, series = found["field"], f"IPU {found['i']}"
    known = _IPU_FIELDS.get(name)
    suffix_unit = _IPU_UNITS.get(found["unit"] or "")
    if known is not None:
        return Meaning("Accelerators", f"ipu.{name}", f"IPU {known.title}", known.unit, series)
    return Meaning("Accelerators", f"ipu.{name}", f"IPU {name}", suffix_unit or UNKNOWN, series)


def _openmetrics(key: str) -> Meaning | None:
    """``openmetrics.<endpoint>.<metric>.<index>``: titled by metric."""
    found = re.fullmatch(r"openmetrics\.(?P<ep>[^.]+)\.(?P<metric>.+)\.(?P<idx>\d+)", key)
    if found is None:
        return None
    metric = found["metric"]
    return Meaning("Other", f"openmetrics.{metric}", metric, UNKNOWN, f"{found['ep']} {found['idx']}")


_FAMILY_BY_PREFIX = {
    "cpu": "CPU",
    "system": "CPU",
    "memory": "Memory",
    "swap": "Memory",
    "network": "Network",
    "disk": "Disk",
    "gpu": "GPU",
    "tpu": "Accelerators",
    "trn": "Accelerators",
    "ipu": "Accelerators",
    "ane": "Accelerators",
    "proc": "Process",
    "wandb": "Process",
}


def _fallback(key: str) -> Meaning:
    """A key no rule knows: its own chart, titled by the key itself."""
    prefix = key.split(".", 1)[0]
    family = _FAMILY_BY_PREFIX.get(prefix, "Other")
    return Meaning(family, f"key:{key}", key or "(empty key)", UNKNOWN)


_RULES: tuple[Callable[[str], Meaning | None], ...] = (
    *_HOST_RULES,
    *_ACCELERATOR_RULES,
    _tpu_distribution,
    _neuron_memory,
    _ipu,
    _openmetrics,
)


def meaning_of(key: str) -> Meaning:
    """The first rule's reading of ``key`` (without its node label); a chart of its own when no rule knows it."""
    for rule in _RULES:
        found = rule(key)
        if found is not None:
            return found
    return _fallback(key)
