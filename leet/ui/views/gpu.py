"""The GPU part of the vitals sidebar, from the latest values and the collectors' GPU records.

Pure: ``gpu.{i}.*`` values and ``GpuInfo`` records in, plain text and
fractions out (``widgets.vitals.GpuSection``), so the widget never sees a
metric key. GPUs that only appear as keys (a backend without records) still
get a row, with what the keys tell.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from typing import Any, Iterable, Mapping, Sequence

from widgets.units import format_used_total, format_value
from widgets.vitals import GpuRow, GpuSection, GpuSlice, VitalsModel, vitals_line_count

HOT_CELSIUS = 85.0  # where datacentre GPUs start to slow themselves down
MIG_MESSAGE = "MIG · no utilisation from NVML"

_GPU_KEY = re.compile(r"gpu\.(\d+)\.[A-Za-z]+$")


def _finite(value: Any) -> float | None:
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    return None


def _value(latest: Mapping[str, float], index: int, name: str) -> float | None:
    return _finite(latest.get(f"gpu.{index}.{name}"))


def gpu_indices(latest: Mapping[str, float], gpus: Sequence[Any]) -> list[int]:
    """Every GPU that has a record or a ``gpu.{i}.*`` value, in index order."""
    indices = {info.index for info in gpus}
    for key in latest:
        match = _GPU_KEY.match(key)
        if match:
            indices.add(int(match.group(1)))
    return sorted(indices)


def memory_text(used: float | None, total: float | None) -> str | None:
    """ "61.2/79.6 GiB", or "61.2 GiB" without a total; None when nothing is known."""
    if used is None:
        return None
    return format_used_total(used, total, "B") if total else format_value(used, "B")


def power_text(watts: float | None, limit: float | None) -> str | None:
    if watts is None:
        return None
    return f"{watts:.0f}/{limit:.0f}W" if limit else f"{watts:.0f}W"


def temperature_text(celsius: float | None) -> tuple[str, str] | None:
    if celsius is None:
        return None
    return format_value(celsius, "°C"), "warn" if celsius >= HOT_CELSIUS else "value"


def _memory(latest: Mapping[str, float], index: int, info: Any | None) -> tuple[float | None, float | None]:
    used = _value(latest, index, "memoryAllocatedBytes")
    total = float(info.memory_total) if info is not None and info.memory_total else None
    percent = _value(latest, index, "memoryAllocated")
    if total is None and used is not None and percent:
        total = used / (percent / 100.0)
    if used is None and total is not None and percent is not None:
        used = total * percent / 100.0
    return used, total


def gpu_details(latest: Mapping[str, float], index: int, info: Any | None) -> tuple[tuple[str, str], ...]:
    """Memory used/total, temperature, power/limit: what is known, in that order."""
    used, total = _memory(latest, index, info)
    limit = _value(latest, index, "enforcedPowerLimitWatts")
    if limit is None and info is not None:
        limit = info.power_limit_watts
    details: list[tuple[str, str]] = []
    memory = memory_text(used, total)
    if memory is not None:
        details.append((memory, "value"))
    temperature = temperature_text(_value(latest, index, "temp"))
    if temperature is not None:
        details.append(temperature)
    power = power_text(_value(latest, index, "powerWatts"), limit)
    if power is not None:
        details.append((power, "value"))
    return tuple(details)


def mig_slices(info: Any) -> tuple[GpuSlice, ...]:
    slices = []
    for instance in info.mig:
        label = instance.profile or f"MIG {instance.index}"
        used, total = instance.memory_used, instance.memory_total
        fraction = max(0.0, min(1.0, used / total)) if used is not None and total else None
        text = memory_text(used, total) or "N/A"
        slices.append(GpuSlice(label, fraction, text))
    return tuple(slices)


def gpu_row(latest: Mapping[str, float], index: int, info: Any | None = None) -> GpuRow:
    label = f"GPU{index}"
    if info is not None and info.lost:
        # Its last values are stale: the reason takes their place.
        reason = ((info.reason, "muted"),) if info.reason else ()
        return GpuRow(label, "lost", meter=False, reading_style="warn", details=reason)
    details = gpu_details(latest, index, info)
    if info is not None and not info.utilization_supported:
        if info.mig or "MIG" in info.reason:
            message, brief = MIG_MESSAGE, "MIG"
        else:
            message, brief = info.reason or "no utilisation from NVML", "no utilisation"
        return GpuRow(label, message, meter=False, brief=brief, reading_style="muted", details=details, slices=mig_slices(info))
    utilization = _value(latest, index, "gpu")
    if utilization is None:
        return GpuRow(label, "N/A", None, details=details, reading_style="muted")
    fraction = max(0.0, min(1.0, utilization / 100.0))
    return GpuRow(label, format_value(utilization, "%"), fraction, details=details)


def gpu_heading(gpus: Sequence[Any], count: int) -> str:
    """ "8 × NVIDIA H100 80GB HBM3"; "8 GPUs" when models differ or are unknown."""
    names = {info.name for info in gpus if info.name}
    if len(names) == 1 and len(gpus) == count:
        name = names.pop()
        return name if count == 1 else f"{count} × {name}"
    return "1 GPU" if count == 1 else f"{count} GPUs"


def absent_note(reasons: Iterable[str]) -> str:
    """The gist of why no GPU backend found anything: "no NVIDIA driver"."""
    gists = []
    for reason in reasons:
        gist = reason.split(": ", 1)[0].strip()
        if gist and gist not in gists:
            gists.append(gist)
    return "; ".join(gists)


def gpu_section(latest: Mapping[str, float], gpus: Sequence[Any] | None = None, absent_reasons: Iterable[str] = ()) -> GpuSection:
    """Rows for every GPU; with none, the calm note of why (empty when nothing was looked for)."""
    gpus = tuple(gpus or ())
    by_index = {info.index: info for info in gpus}
    indices = gpu_indices(latest, gpus)
    if not indices:
        return GpuSection(note=absent_note(absent_reasons))
    rows = tuple(gpu_row(latest, index, by_index.get(index)) for index in indices)
    return GpuSection(heading=gpu_heading(gpus, len(indices)), rows=rows)


def lost_gpu_notes(gpus: Sequence[Any] | None) -> list[str]:
    """A warning per GPU that fell off the bus: worth a look even with the sidebar hidden."""
    return [f"GPU{info.index} lost: {info.reason}" if info.reason else f"GPU{info.index} lost" for info in gpus or () if info.lost]


def fit_gpu_section(model: VitalsModel, height: int, keep: int) -> VitalsModel:
    """``model`` with one line per GPU when two would leave fewer than ``keep`` of ``height`` lines."""
    if not model.gpu.rows or model.gpu.compact:
        return model
    if height - vitals_line_count(model) >= keep:
        return model
    return replace(model, gpu=replace(model.gpu, compact=True))
