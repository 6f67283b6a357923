"""Reading the figures and words AMD's tools and library report: numbers with units, "N/A", nested fields, processes."""

from __future__ import annotations

import math
import re
from typing import Any, Mapping

from collectors.amd.source import Listed

MIB = 1 << 20

# Sentinels some amdsmi releases return for a field the GPU does not report.
_UNREPORTED = {0xFFFF_FFFF, 0xFFFF_FFFF_FFFF_FFFF}
_BINARY_UNITS = {"B": 1, "KB": 1 << 10, "KIB": 1 << 10, "MB": MIB, "MIB": MIB, "GB": 1 << 30, "GIB": 1 << 30}
_ENERGY_UNITS = {"J": 1.0, "MJ": 1e-3, "UJ": 1e-6, "µJ": 1e-6}


def number(value: Any) -> float | None:
    """A finite reading from a tool or library value; None for "N/A", sentinels and junk."""
    if isinstance(value, bool):
        return None
    if isinstance(value, Mapping):
        return number(value.get("value"))
    if isinstance(value, (int, float)):
        if value in _UNREPORTED:
            return None
        result = float(value)
    elif isinstance(value, str):
        found = re.match(r"\s*\(?\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)(?![xX\d])", value)
        if found is None:
            return None
        result = float(found.group(1))
    else:
        return None
    return result if math.isfinite(result) else None


def _unit(value: Any) -> str:
    if isinstance(value, Mapping):
        return str(value.get("unit") or "").strip()
    if isinstance(value, str):
        found = re.match(r"\s*[-+.\d]+\s*([A-Za-zµ%/]+)", value)
        return found.group(1) if found else ""
    return ""


def in_bytes(value: Any, default_unit: str = "MB") -> float | None:
    """Bytes from a figure with a binary unit, or ``default_unit`` when it names none."""
    amount = number(value)
    if amount is None:
        return None
    scale = _BINARY_UNITS.get((_unit(value) or default_unit).upper())
    return None if scale is None else amount * scale


def in_joules(value: Any) -> float | None:
    """Joules from an energy figure in J, mJ or µJ (J when it names no unit)."""
    amount = number(value)
    if amount is None:
        return None
    unit = _unit(value) or "J"
    scale = _ENERGY_UNITS.get(unit) or _ENERGY_UNITS.get(unit.upper())
    return None if scale is None else amount * scale


def put(values: dict[str, float], key: str, value: float | None) -> None:
    """``values[key] = value``, unless the source gave nothing."""
    if value is not None:
        values[key] = value


def dig(data: Any, *path: str) -> Any:
    """The value at ``path`` in nested objects; None where the path breaks off."""
    for step in path:
        if not isinstance(data, Mapping):
            return None
        data = data.get(step)
    return data


def reported_text(value: Any) -> str:
    """A string the source reported, or "" for "N/A"."""
    if not isinstance(value, str) or value.strip().upper().startswith("N/A"):
        return ""
    return value.strip()


def reported_name(value: Any) -> str:
    """A name, or "" for "N/A" and for a bare PCI id standing in for a name (ROCm 4.3 does that)."""
    value = reported_text(value)
    return "" if re.fullmatch(r"0x[0-9a-fA-F]+", value) else value


def first_field(data: Any, *names: str) -> Any:
    """The first of ``names`` that ``data`` has (releases rename fields); None when none."""
    if not isinstance(data, Mapping):
        return None
    return next((data[name] for name in names if name in data), None)


def listed_process(gpu: int, info: Mapping[str, Any]) -> Listed | None:
    """One process from a library dictionary or an amd-smi ``process_info``; None without a PID."""
    pid = number(info.get("pid"))
    if pid is None or pid <= 0:
        return None
    memory = in_bytes(dig(info, "memory_usage", "vram_mem"), "B")
    if memory is None:
        memory = in_bytes(first_field(info, "mem", "mem_usage"), "B")
    gfx = number(dig(first_field(info, "engine_usage", "usage"), "gfx"))  # ns, though some docs say %
    return Listed(gpu, int(pid), reported_text(info.get("name")), None if memory is None else int(memory), gfx)


def excerpt(text: str, width: int = 120) -> str:
    """``text`` on one line, cut to ``width`` characters, for a note."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"
