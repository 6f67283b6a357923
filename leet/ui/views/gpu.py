"""The GPU and accelerator parts of the vitals sidebar, from the latest values and the collectors' records.

Pure: ``gpu.{i}.*`` values and ``GpuInfo`` records in, plain text and
fractions out (``widgets.vitals.GpuSection``), so the widget never sees a
metric key. GPUs that only appear as keys (a backend without records) still
get a row, with what the keys tell.

Other accelerators (TPUs, NeuronCores, IPUs, Apple's GPU, AMD GPUs beside
NVIDIA ones, DCGM's GPUs on other nodes) come as ``AcceleratorInfo`` records
in ``accelerators.<collector>`` extras, each naming the keys its line reads;
they are drawn as ``AcceleratorGroup`` lines, one group per vendor and model.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from typing import Any, Iterable, Mapping, Sequence

from leet.common.units import format_used_total, format_value
from leet.model.keys import LABEL_SEPARATOR, KeyLabel, split_label
from leet.model.store import SeriesKey
from leet.ui.views.energy import device_energies, energy_detail
from widgets.vitals import (
    AcceleratorGroup,
    GpuRow,
    GpuSection,
    GpuSlice,
    VitalsModel,
    accelerator_line_count,
    vitals_line_count,
)

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


def gpu_details(latest: Mapping[str, float], index: int, info: Any | None, energy: Any | None = None) -> tuple[tuple[str, str], ...]:
    """Memory used/total, temperature, power/limit, energy since leet started: what is known, in that order."""
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
    if energy is not None:
        details.append((energy_detail((energy,)), "value"))
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


def gpu_row(latest: Mapping[str, float], index: int, info: Any | None = None, energy: Any | None = None) -> GpuRow:
    label = f"GPU{index}"
    if info is not None and info.lost:
        # Its last values are stale: the reason takes their place.
        reason = ((info.reason, "muted"),) if info.reason else ()
        return GpuRow(label, "lost", meter=False, reading_style="warn", details=reason)
    details = gpu_details(latest, index, info, energy)
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


def gpu_section(
    latest: Mapping[str, float], gpus: Sequence[Any] | None = None, absent_reasons: Iterable[str] = (), energies: Mapping[int, Any] | None = None
) -> GpuSection:
    """Rows for every GPU; with none, the calm note of why (empty when nothing was looked for).

    ``energies`` maps a GPU's index to its energy since leet started (``collectors.energy.DeviceEnergy``).
    """
    energies = energies or {}
    gpus = tuple(gpus or ())
    by_index = {info.index: info for info in gpus}
    indices = gpu_indices(latest, gpus)
    if not indices:
        return GpuSection(note=absent_note(absent_reasons))
    rows = tuple(gpu_row(latest, index, by_index.get(index), energies.get(index)) for index in indices)
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


# -- other accelerators ------------------------------------------------------

ACCELERATORS_PREFIX = "accelerators."
# How a device's line is labelled, by vendor: "TPU0", "NC12" (a NeuronCore), "AMD3".
VENDOR_TAGS = {"AMD": "AMD", "NVIDIA": "GPU", "Google": "TPU", "AWS": "NC", "Graphcore": "IPU", "Apple": "GPU"}
NO_FIGURES = "no figures yet"
MAX_GROUP_ROWS = 16  # devices a group lists one per line (a box of 16 Trainium2 or IPUs); more become a strip
_GPU_INDEX = re.compile(r"gpu\.(\d+)\.")


def accelerator_infos(extras: Mapping[str, Any]) -> list[Any]:
    """Every ``AcceleratorInfo`` of every ``accelerators.*`` extra, collectors in the order they came."""
    return [info for key, infos in extras.items() if key.startswith(ACCELERATORS_PREFIX) for info in infos or ()]


class Readings:
    """The latest value of each series, found by the keys a record names.

    A record names its keys as W&B writes them: without the label that
    ``--label`` (or a shared run) gives every series, or, for DCGM's, with
    their node's label, which ``--label`` may follow in the stored label
    (``node1/l:rank0``). Under a bare key, the first labelled value stands in.
    """

    def __init__(self, latest: Mapping[SeriesKey, float]) -> None:
        self._values: dict[KeyLabel, float] = {}
        for series, value in latest.items():
            key, label = series.key, series.label
            self._values[(key, label)] = value
            self._values.setdefault((key, None), value)
            parts = label.split(LABEL_SEPARATOR) if label else []
            for end in range(1, len(parts)):  # each node label the stored one begins with
                self._values.setdefault((key, LABEL_SEPARATOR.join(parts[:end])), value)

    def get(self, key: str) -> float | None:
        return _finite(self._values.get(split_label(key))) if key else None


def vendor_tag(info: Any) -> str:
    vendor = str(info.vendor or "")
    return VENDOR_TAGS.get(vendor, vendor[:3] or "ACC")


def _memory_detail(percent: float | None, total: float | None) -> str | None:
    if percent is None:
        return None
    if total:
        return format_used_total(total * percent / 100.0, total, "B")
    return f"mem {format_value(percent, '%')}"


def accelerator_details(readings: Readings, info: Any) -> tuple[tuple[str, str], ...]:
    """Memory, temperature, power: what the record's keys give, in that order."""
    details: list[tuple[str, str]] = []
    memory = _memory_detail(readings.get(info.memory_key), info.memory_total)
    if memory is not None:
        details.append((memory, "value"))
    temperature = temperature_text(readings.get(info.temp_key))
    if temperature is not None:
        details.append(temperature)
    power = power_text(readings.get(info.power_key), info.power_limit_watts)
    if power is not None:
        details.append((power, "value"))
    return tuple(details)


def accelerator_row(readings: Readings, info: Any) -> GpuRow:
    label = f"{vendor_tag(info)}{info.index}"
    details = accelerator_details(readings, info)
    utilization = readings.get(info.utilization_key)
    if utilization is None and not details:
        # Nothing to draw: the reason is the line, dim, as it is no fault.
        return GpuRow(label, info.reason or NO_FIGURES, meter=False, reading_style="muted")
    if utilization is None:
        return GpuRow(label, "N/A", None, details=details, reading_style="muted")
    return GpuRow(label, format_value(utilization, "%"), max(0.0, min(1.0, utilization / 100.0)), details=details)


def _has_figures(row: GpuRow) -> bool:
    return row.meter or bool(row.details)


def group_heading(vendor: str, name: str, count: int) -> str:
    """ "4 × Google TPU v6e": the vendor named unless the model's name says it."""
    name = name or "accelerator"
    if vendor and vendor.casefold() not in name.casefold():
        name = f"{vendor} {name}"
    return name if count == 1 else f"{count} × {name}"


def _idle_rows(rows: list[GpuRow], tag: str) -> list[GpuRow]:
    """Lines without figures that give the same reason, said once: "31 more: not in use …"."""
    by_reason: dict[str, list[GpuRow]] = {}
    for row in rows:
        by_reason.setdefault(row.reading, []).append(row)
    merged = []
    for reason, same in by_reason.items():
        if len(same) == 1:
            merged.append(same[0])
        else:
            merged.append(GpuRow(tag, f"{len(same)} more: {reason}", meter=False, reading_style="muted"))
    return merged


def _summary(rows: list[GpuRow], tag: str) -> GpuRow | None:
    """The group's mean utilisation and its spread, for a collapsed group."""
    busy = [row.fraction for row in rows if row.meter and row.fraction is not None]
    if len(busy) < 2:
        return None
    mean = sum(busy) / len(busy)
    low, high = format_value(min(busy) * 100, "%"), format_value(max(busy) * 100, "%")
    details = [(f"avg of {len(busy)}", "muted"), (f"{low}–{high}", "value")]
    idle = sum(not _has_figures(row) for row in rows)
    if idle:
        details.append((f"{idle} idle", "muted"))
    return GpuRow(tag, format_value(mean * 100, "%"), mean, details=tuple(details))


def accelerator_group(readings: Readings, infos: Sequence[Any]) -> AcceleratorGroup:
    """One group's lines: figures where there are any, reasons (dim) where there are none."""
    first = infos[0]
    tag = vendor_tag(first)
    heading = group_heading(str(first.vendor or ""), str(first.name or ""), len(infos))
    rows = [accelerator_row(readings, info) for info in sorted(infos, key=lambda info: info.index)]
    busy = [row for row in rows if _has_figures(row)]
    idle = [row for row in rows if not _has_figures(row)]
    if not busy and len({row.reading for row in idle}) == 1:
        return AcceleratorGroup(heading, note=idle[0].reading, tag=tag)
    strip = tuple((info.index, row.fraction if row.meter else None) for info, row in zip(sorted(infos, key=lambda i: i.index), rows))
    return AcceleratorGroup(heading, tuple(busy + _idle_rows(idle, tag)), tag=tag, summary=_summary(rows, tag), strip=strip)


def accelerator_groups(latest: Mapping[SeriesKey, float], infos: Sequence[Any]) -> tuple[AcceleratorGroup, ...]:
    """A group per vendor and model, in the order the records came; ``latest`` by series, labels kept."""
    readings = Readings(latest)
    by_kind: dict[tuple[str, str], list[Any]] = {}
    for info in infos:
        by_kind.setdefault((str(info.vendor or ""), str(info.name or "")), []).append(info)
    return tuple(accelerator_group(readings, group) for group in by_kind.values())


def in_gpu_section(info: Any, gpus: Sequence[Any]) -> bool:
    """Whether a record is a GPU the GPU section already shows (an AMD GPU without NVIDIA ones, DCGM's on one node)."""
    name = str(info.name or "")
    return any(gpu.index == info.index and (name == gpu.name or (gpu.name and name.startswith(f"{gpu.name} on "))) for gpu in gpus)


def claimed_gpu_indices(infos: Sequence[Any]) -> set[int]:
    """``gpu.{i}`` indices whose keys accelerator lines read (Apple's GPU, DCGM's on several nodes)."""
    claimed = set()
    for info in infos:
        for key in (info.utilization_key, info.memory_key, info.temp_key, info.power_key):
            match = _GPU_INDEX.match(key or "")
            if match:
                claimed.add(int(match.group(1)))
    return claimed


def gpu_vendors(extras: Mapping[str, Any]) -> list[str]:
    """Which vendors' GPUs write ``gpu.{i}.*`` keys here, in order: GPU records not an AMD collector's count as NVIDIA's."""
    gpus = tuple(extras.get("gpus") or ())
    vendors: list[str] = []
    amd = tuple(extras.get("accelerators.amd") or ())
    if any(not any(in_gpu_section(info, (gpu,)) for info in amd) for gpu in gpus) or extras.get("accelerators.dcgm"):
        vendors.append("NVIDIA")
    if amd:
        vendors.append("AMD")
    if extras.get("accelerators.apple"):
        vendors.append("Apple")
    return vendors


def device_sections(
    latest: Mapping[str, float],
    stored: Mapping[SeriesKey, float],
    extras: Mapping[str, Any],
    absent_reasons: Iterable[str] = (),
) -> tuple[GpuSection, tuple[AcceleratorGroup, ...]]:
    """The GPU section and the accelerator groups, each device shown once.

    GPUs with records stay in the GPU section (NVIDIA's, or AMD's where there
    is no NVIDIA GPU); every other accelerator gets a line of its own, and a
    GPU only known by keys that an accelerator line reads is left to that line.
    ``latest`` is keyed without node labels, ``stored`` by series, labels kept.
    """
    gpus = tuple(extras.get("gpus") or ())
    others = [info for info in accelerator_infos(extras) if not in_gpu_section(info, gpus)]
    claimed = claimed_gpu_indices(others) - {gpu.index for gpu in gpus}
    gpu_latest = {key: value for key, value in latest.items() if not _claimed(key, claimed)}
    # With accelerators to show, no GPU driver is how the machine is meant to be.
    reasons = () if others else absent_reasons
    section = gpu_section(gpu_latest, gpus, reasons, device_energies(extras, "gpu"))
    return _name_vendor(section, extras, gpus), accelerator_groups(stored, others)


def _name_vendor(section: GpuSection, extras: Mapping[str, Any], gpus: Sequence[Any]) -> GpuSection:
    """The GPU heading names its vendor when another vendor's GPUs are listed too ("NVIDIA · 8 × Tesla V100")."""
    if not section.heading or len(gpu_vendors(extras)) < 2:
        return section
    amd = extras.get("accelerators.amd") or ()
    vendor = "AMD" if any(in_gpu_section(info, gpus) for info in amd) else "NVIDIA"
    if vendor.casefold() in section.heading.casefold():
        return section
    return replace(section, heading=f"{vendor} · {section.heading}")


def _claimed(key: str, claimed: set[int]) -> bool:
    match = _GPU_KEY.match(key) if claimed else None
    return match is not None and int(match.group(1)) in claimed


def _saving(group: AcceleratorGroup) -> int:
    return accelerator_line_count(group) - accelerator_line_count(replace(group, collapsed=True))


def fit_accelerators(model: VitalsModel, height: int, keep: int) -> VitalsModel:
    """``model`` with its biggest accelerator groups collapsed, one by one, until ``keep`` of ``height`` lines are left.

    A group of more than ``MAX_GROUP_ROWS`` devices is collapsed whatever the
    room: past that, a strip compares them better than a column of meters.
    """
    groups = [replace(group, collapsed=True) if group.can_collapse and len(group.rows) > MAX_GROUP_ROWS else group for group in model.accelerators]
    while height - vitals_line_count(replace(model, accelerators=tuple(groups))) < keep:
        savings = {n: _saving(group) for n, group in enumerate(groups) if group.can_collapse}
        savings = {n: saved for n, saved in savings.items() if saved > 0}
        if not savings:
            break
        biggest = max(savings, key=lambda n: savings[n])
        groups[biggest] = replace(groups[biggest], collapsed=True)
    return replace(model, accelerators=tuple(groups)) if groups != list(model.accelerators) else model
