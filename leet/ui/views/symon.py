"""From the latest sample and host facts to the live monitor's sidebar and header.

Pure functions: collector values and extras in; the vitals model and header
text out.
"""

from __future__ import annotations

import math
import time
from typing import Any, Iterable, Mapping, Sequence

from leet.common.units import format_used_total, format_value
from leet.model.catalog import ChartSpec
from widgets.vitals import AcceleratorGroup, GpuSection, Meter, VitalsModel


def _mean(values: Iterable[float]) -> float | None:
    finite = [v for v in values if isinstance(v, (int, float)) and math.isfinite(v)]
    return sum(finite) / len(finite) if finite else None


def _fraction(percent: float | None) -> float | None:
    return None if percent is None else max(0.0, min(1.0, percent / 100.0))


def _cpu_meter(latest: Mapping[str, float]) -> Meter | None:
    cores = [v for k, v in latest.items() if k.startswith("cpu.") and k.endswith(".cpu_percent") and k[4:-12].isdigit()]
    average = _mean(cores)
    if average is None:
        return None
    text = format_value(average, "%")
    temp = latest.get("cpu.avg_temp")
    if temp is not None and math.isfinite(temp):
        text += f" {format_value(temp, '°C')}"
    return Meter("CPU", _fraction(average), text)


def _memory_meter(latest: Mapping[str, float], host: Any | None) -> Meter | None:
    percent = latest.get("memory_percent")
    if percent is None:
        return None
    used = latest.get("memory.used")
    total = getattr(host, "memory_total", None)
    if used is not None and total:
        text = format_used_total(used, float(total), "B")
    else:
        text = format_value(percent, "%")
    return Meter("Mem", _fraction(percent), text)


def _swap_meter(latest: Mapping[str, float], host: Any | None) -> Meter | None:
    """Used of total swap; a host without swap reads "0/0 B" (htop: ``Swp 0K/0K``) rather than no row."""
    total = getattr(host, "swap_total", None)
    percent = latest.get("swap.used_percent")
    if percent is None and total is None:
        return None  # nothing known yet
    used = latest.get("swap.used", 0.0)
    if total is not None:
        text = format_used_total(used, float(total), "B")
    else:
        text = format_value(percent or 0.0, "%")
    return Meter("Swap", _fraction(percent or 0.0), text)


def _disk_meters(latest: Mapping[str, float], disk_paths: Sequence[str], spaces: Mapping[str, Any] | None = None) -> list[Meter]:
    """Used of size per path, as ``df`` shows them.

    With the disk collector's figures (``df``'s Size, Used and Use%: the
    size counts blocks reserved for root and any the file system keeps back,
    so it is not used + available), those; else the size is worked back
    from W&B's keys, which gives used + available.
    """
    meters = []
    for path in disk_paths:
        space = (spaces or {}).get(path)
        if space is not None:
            meters.append(Meter(f"Disk {path}", _fraction(space.use_percent), format_used_total(space.used, space.size, "B")))
            continue
        percent = latest.get(f"disk.{path}.usagePercent")
        if percent is None:
            continue
        used_gib = latest.get(f"disk.{path}.usageGB")
        text = format_value(percent, "%")
        if used_gib is not None and percent > 0:
            total = used_gib / (percent / 100.0) * 2**30
            text = format_used_total(used_gib * 2**30, total, "B")
        meters.append(Meter(f"Disk {path}", _fraction(percent), text))
    return meters


def _sum_matching(latest: Mapping[str, float], prefix: str, suffix: str) -> float | None:
    values = [v for k, v in latest.items() if k.startswith(prefix) and k.endswith(suffix)]
    return sum(values) if values else None


def _rate_lines(latest: Mapping[str, float]) -> list[tuple[str, str]]:
    lines = []
    recv, sent = latest.get("network.recvBps"), latest.get("network.sentBps")
    if recv is not None or sent is not None:
        lines.append(("Net", f"↓ {format_value(recv or 0.0, 'B/s')}  ↑ {format_value(sent or 0.0, 'B/s')}"))
    read = _sum_matching(latest, "disk.", ".readBps")
    write = _sum_matching(latest, "disk.", ".writeBps")
    if read is not None or write is not None:
        lines.append(("I/O", f"R {format_value(read or 0.0, 'B/s')}  W {format_value(write or 0.0, 'B/s')}"))
    return lines


def _host_subtitle(host: Any | None) -> str:
    if host is None:
        return ""
    parts = []
    cores = getattr(host, "logical_cores", None)
    physical = getattr(host, "physical_cores", None)
    if cores:
        parts.append(f"{cores} cores" if not physical or physical == cores else f"{physical}C/{cores}T")
    limit = getattr(host, "cpu_limit", None)
    if limit:
        parts.append(f"limit {limit:g} CPU")
    total = getattr(host, "memory_total", None)
    if total:
        memory = format_value(float(total), "B")
        parts.append(memory + (" (cgroup)" if getattr(host, "memory_limited_by_cgroup", False) else ""))
    return " • ".join(parts)


def vitals_model(
    latest: Mapping[str, float],
    host: Any | None,
    disk_paths: Sequence[str],
    notes: Sequence[str] = (),
    gpu: GpuSection | None = None,
    disks: Mapping[str, Any] | None = None,
    accelerators: Sequence[AcceleratorGroup] = (),
    energy: tuple[str, str] | None = None,
) -> VitalsModel:
    """Host meters and rates; ``gpu`` and ``accelerators`` (see ``leet.ui.views.gpu``) add the device sections.

    ``energy`` is the host's energy line (``leet.ui.views.energy.host_energy_line``), drawn after the rates.

    ``disks`` maps a disk path to its ``df`` figures (``size``, ``used``,
    ``use_percent``), as the disk collector's ``disk_space`` extra gives them.
    """
    meters = [m for m in (_cpu_meter(latest), _memory_meter(latest, host), _swap_meter(latest, host)) if m]
    meters += _disk_meters(latest, disk_paths, disks)
    return VitalsModel(
        title=getattr(host, "cpu_model", "") or "",
        subtitle=_host_subtitle(host),
        meters=tuple(meters),
        lines=tuple(_rate_lines(latest)) + ((energy,) if energy else ()),
        notes=tuple(notes),
        gpu=gpu or GpuSection(),
        accelerators=tuple(accelerators),
    )


# -- header ------------------------------------------------------------------


def process_charts_first(specs: Sequence[ChartSpec]) -> list[ChartSpec]:
    """The watched process's charts (family ``Process``) first, so ``--pid`` shows them on page 1."""
    return sorted(specs, key=lambda spec: spec.family != "Process")


def format_uptime(seconds: float) -> str:
    seconds = max(0, int(seconds))
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes = rest // 60
    if days:
        return f"{days}d {hours}h"
    if hours:
        return f"{hours}h {minutes}m"
    return f"{minutes}m"


def host_summary(host: Any | None, now: float | None = None, width: int | None = None) -> str:
    """``name • up 3d 2h • load 1.50 0.75 0.25``; with ``width``, the fullest form that fits that many cells.

    Parts give way whole, never a number cut in half: first the uptime, then
    the 5- and 15-minute load averages, then the load. The host name stays
    (the header cuts it if it alone is too long).
    """
    if host is None:
        return "collecting system metrics…"
    now = time.time() if now is None else now
    name = getattr(host, "hostname", "") or "host"
    boot = getattr(host, "boot_time", None)
    uptime = [f"up {format_uptime(now - boot)}"] if boot else []
    load = getattr(host, "load_avg", None)
    loads = [f"load {load[0]:.2f}"] if load else []
    full_load = ["load " + " ".join(f"{v:.2f}" for v in load)] if load else []
    forms = ([name, *uptime, *full_load], [name, *full_load], [name, *loads], [name])
    texts = [" • ".join(parts) for parts in forms]
    if width is None:
        return texts[0]
    return next((text for text in texts if len(text) <= width), texts[-1])
