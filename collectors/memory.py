"""System memory and swap, with cgroup v2 denominators when a limit applies."""

from __future__ import annotations

from typing import Mapping

from collectors.base import Collector, Probe
from collectors.cgroup import CgroupReader
from collectors.procfs import read_text, under_root

MIB = 2**20


def parse_meminfo(text: str) -> dict[str, int]:
    """``/proc/meminfo`` as bytes per field (``MemTotal`` → bytes)."""
    info = {}
    for line in text.splitlines():
        name, _, rest = line.partition(":")
        parts = rest.split()
        if not parts:
            continue
        try:
            value = int(parts[0])
        except ValueError:
            continue
        info[name] = value * 1024 if len(parts) > 1 and parts[1] == "kB" else value
    return info


def available_bytes(info: Mapping[str, int]) -> int:
    """``MemAvailable``, or its estimate on kernels that lack it."""
    if "MemAvailable" in info:
        return info["MemAvailable"]
    return info.get("MemFree", 0) + info.get("Cached", 0) + info.get("SReclaimable", 0)


def read_meminfo(root: str = "/") -> dict[str, int]:
    """Read and parse meminfo under ``root``; empty when unreadable."""
    text = read_text(under_root(root, "/proc/meminfo"))
    return parse_meminfo(text) if text else {}


def memory_denominator(cgroup: CgroupReader | None, root: str = "/") -> int:
    """Bytes a process can use: a finite cgroup ``memory.max``, else total RAM."""
    limit = cgroup.memory_max() if cgroup is not None else None
    if limit is not None:
        return limit
    return read_meminfo(root).get("MemTotal", 0)


def usable_memory(cgroup: CgroupReader | None, root: str = "/") -> tuple[int, bool]:
    """(bytes, limited): RAM, or the cgroup limit when it is below the RAM.

    For display: a limit above the RAM does not make more memory usable.
    """
    ram = read_meminfo(root).get("MemTotal", 0)
    limit = cgroup.memory_max() if cgroup is not None else None
    if limit is not None and (ram == 0 or limit < ram):
        return limit, True
    return ram, False


class MemoryCollector(Collector):
    """``memory_percent``, ``proc.memory.availableMB``, ``memory.used``, swap."""

    name = "memory"

    def __init__(self, cgroup: CgroupReader | None = None, root: str = "/") -> None:
        self.root = root
        self.cgroup = cgroup if cgroup is not None else CgroupReader(root=root)

    def probe(self) -> Probe:
        if "MemTotal" not in read_meminfo(self.root):
            return Probe.absent("/proc/meminfo is not readable")
        self.cgroup.memory_max()  # resolve the leaf cgroup once, now
        return Probe.ok()

    def sample(self) -> Mapping[str, float]:
        info = read_meminfo(self.root)
        if "MemTotal" not in info:
            raise RuntimeError("/proc/meminfo is not readable")
        values = self._cgroup_memory() or self._host_memory(info)
        values.update(self._swap(info))
        return values

    def _cgroup_memory(self) -> dict[str, float] | None:
        limit = self.cgroup.memory_max()
        current = self.cgroup.memory_current() if limit is not None else None
        if limit is None or current is None:
            return None
        return {
            "memory_percent": current / limit * 100,
            "proc.memory.availableMB": max(limit - current, 0) / MIB,
            "memory.used": float(current),
        }

    @staticmethod
    def _host_memory(info: Mapping[str, int]) -> dict[str, float]:
        total = info["MemTotal"]
        available = available_bytes(info)
        used = max(total - available, 0)
        return {
            "memory_percent": used / total * 100 if total else 0.0,
            "proc.memory.availableMB": available / MIB,
            "memory.used": float(used),
        }

    @staticmethod
    def _swap(info: Mapping[str, int]) -> dict[str, float]:
        total = info.get("SwapTotal", 0)
        if total <= 0:
            return {}
        used = max(total - info.get("SwapFree", 0), 0)
        return {"swap.used": float(used), "swap.used_percent": used / total * 100}
