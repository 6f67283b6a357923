"""W&B's reading of ``neuron-monitor`` reports (and of ``LOCAL_RANK``): which runtime counts, its ``trn.*`` keys, one line per NeuronCore.

Which runtime is reported follows W&B: the first ``neuron_runtime_data``
entry whose ``pid`` is the watched process, or, when ``LOCAL_RANK`` is set
(torchrun), the first entry whatever its pid, and then only NeuronCore
``LOCAL_RANK`` (zeros when that core is absent). Without a watched process
leet watches the machine and takes the first entry.
"""

from __future__ import annotations

import math
import re
from typing import Any, Mapping

from collectors.gpu import AcceleratorInfo

MAX_CORES = 4096  # beyond any instance; guards the core list against a broken report

HOST_MEMORY_FIELDS = ("application_memory", "constants", "dma_buffers", "tensors")
CORE_MEMORY_FIELDS = ("constants", "model_code", "model_shared_scratchpad", "runtime_memory", "tensors")

_ATOI = re.compile(r"[+-]?[0-9]+")


def local_rank_from(env: Mapping[str, str]) -> int | None:
    """``LOCAL_RANK`` as W&B reads it: unset or empty is None; not a number counts as 0."""
    value = env.get("LOCAL_RANK", "")
    if value == "":
        return None
    return int(value) if _ATOI.fullmatch(value) else 0


def select_runtime(report: Mapping[str, Any], pid: int | None, local_rank: int | None) -> Mapping[str, Any] | None:
    """The runtime entry W&B reports: the first whose pid matches, any with ``LOCAL_RANK``.

    An entry without a numeric ``pid`` never matches, even under ``LOCAL_RANK``.
    """
    runtimes = report.get("neuron_runtime_data")
    if not isinstance(runtimes, list):
        return None
    for entry in runtimes:
        entry_pid = _number(entry.get("pid")) if isinstance(entry, Mapping) else None
        if entry_pid is None:
            continue
        if local_rank is not None or pid is None or int(entry_pid) == pid:
            return entry
    return None


def runtime_values(entry: Mapping[str, Any], local_rank: int | None) -> dict[str, float] | None:
    """W&B's ``trn.*`` keys for one runtime entry; None when a section W&B needs is missing."""
    report = _mapping(entry.get("report"))
    in_use = _section(_mapping(report.get("neuroncore_counters")).get("neuroncores_in_use"))
    used_bytes = _section(_mapping(report.get("memory_used")).get("neuron_runtime_used_bytes"))
    if in_use is None or used_bytes is None:
        return None
    breakdown = _section(used_bytes.get("usage_breakdown"))
    if breakdown is None:
        return None
    utilization = _core_utilization(in_use)
    core_memory = _core_memory(_mapping(breakdown.get("neuroncore_memory_usage")))
    if local_rank is not None:
        utilization = {local_rank: utilization.get(local_rank, 0.0)}
        core_memory = {local_rank: core_memory.get(local_rank, dict.fromkeys(CORE_MEMORY_FIELDS, 0))}
    values: dict[str, float] = {}
    for core, busy in utilization.items():
        values[f"trn.{core}.neuroncore_utilization"] = busy
    values["trn.host_total_memory_usage"] = float(_truncated(used_bytes.get("host")))
    values["trn.neuron_device_total_memory_usage"] = float(_truncated(used_bytes.get("neuron_device")))
    for field, amount in _integer_fields(_mapping(breakdown.get("host")), HOST_MEMORY_FIELDS).items():
        values[f"trn.host_memory_usage.{field}"] = float(amount)
    for core, fields in core_memory.items():
        for field, amount in fields.items():
            values[f"trn.{core}.neuroncore_memory_usage.{field}"] = float(amount)
    return values


def _core_utilization(in_use: Mapping[str, Any]) -> dict[int, float]:
    utilization = {}
    for core, counters in in_use.items():
        busy = _number(_mapping(counters).get("neuroncore_utilization"))
        if busy is not None:
            utilization[_core_id(core)] = busy
    return utilization


def _core_memory(usage: Mapping[str, Any]) -> dict[int, dict[str, int]]:
    """Per-core memory; W&B drops a core whose fields are not all whole numbers."""
    cores = {}
    for core, fields in usage.items():
        if fields is None:
            cores[_core_id(core)] = dict.fromkeys(CORE_MEMORY_FIELDS, 0)
        elif isinstance(fields, Mapping) and all(fields.get(f) is None or _whole(fields.get(f)) is not None for f in CORE_MEMORY_FIELDS):
            cores[_core_id(core)] = _integer_fields(fields, CORE_MEMORY_FIELDS)
    return cores


def _integer_fields(source: Mapping[str, Any], names: tuple[str, ...]) -> dict[str, int]:
    """Every field, 0 where absent or not a whole number (W&B decodes them into ints)."""
    return {name: _whole(source.get(name)) or 0 for name in names}


def _core_id(key: Any) -> int:
    """A core's index the way W&B parses it: a key that is not a number becomes core 0."""
    return int(key) if isinstance(key, str) and _ATOI.fullmatch(key) else 0


def _truncated(value: Any) -> int:
    number = _number(value)
    return int(number) if number is not None and abs(number) < 2**63 else 0


def _number(value: Any) -> float | None:
    """A JSON number as a finite float; None for anything else (booleans included)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _whole(value: Any) -> int | None:
    """A JSON integer; None for anything else, ``1.0`` too (W&B decodes these into ints)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _section(value: Any) -> Mapping[str, Any] | None:
    return value if isinstance(value, Mapping) else None


def neuron_cores(report: Mapping[str, Any], emitted: Mapping[str, float], local_rank: int | None) -> tuple[AcceleratorInfo, ...]:
    """One line per NeuronCore the machine has, naming the keys this sample carries for it."""
    hardware = _mapping(report.get("neuron_hardware_info"))
    devices, per_device = _whole(hardware.get("neuron_device_count")), _whole(hardware.get("neuroncore_per_device_count"))
    cores: set[int] = set()
    if devices is not None and per_device is not None and 0 < devices * per_device <= MAX_CORES:
        cores.update(range(devices * per_device))
    cores.update(int(key.split(".")[1]) for key in emitted if re.fullmatch(r"trn\.-?[0-9]+\.neuroncore_utilization", key))
    instance = _mapping(report.get("instance_info")).get("instance_type")
    name = f"{instance} NeuronCore" if isinstance(instance, str) and instance else "NeuronCore"
    lines = []
    for core in sorted(cores)[:MAX_CORES]:
        key = f"trn.{core}.neuroncore_utilization"
        if key in emitted:
            lines.append(AcceleratorInfo(vendor="AWS", index=core, name=name, utilization_key=key))
        else:
            lines.append(AcceleratorInfo(vendor="AWS", index=core, name=name, reason=_unreported(local_rank)))
    return tuple(lines)


def _unreported(local_rank: int | None) -> str:
    if local_rank is not None:
        return f"LOCAL_RANK={local_rank}: only NeuronCore {local_rank} is reported"
    return "not in use by the watched Neuron runtime"


def hardware_error(report: Mapping[str, Any]) -> str:
    """The error neuron-monitor reports about the hardware; "" when none."""
    error = _mapping(report.get("neuron_hardware_info")).get("error")
    return error if isinstance(error, str) else ""
