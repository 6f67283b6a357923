"""Facts about the host for the header and the overview: read once, load refreshed."""

from __future__ import annotations

import dataclasses
import os
import platform
import socket
from dataclasses import dataclass
from typing import Any, Mapping

from collectors.base import Collector, Probe
from collectors.cgroup import CgroupReader
from collectors.memory import read_meminfo, usable_memory
from collectors.procfs import read_text, under_root

# /proc/cpuinfo fields that name the CPU, by architecture (x86, ARM, others).
CPU_MODEL_FIELDS = ("model name", "Hardware", "Processor", "cpu model", "cpu")


@dataclass(frozen=True)
class HostInfo:
    hostname: str
    cpu_model: str
    physical_cores: int
    logical_cores: int
    memory_total: int  # bytes; the cgroup limit when it is below the RAM
    memory_limited_by_cgroup: bool
    swap_total: int  # bytes
    boot_time: float  # Unix seconds
    load_avg: tuple[float, float, float]
    cpu_limit: float | None  # cores allowed by the cgroup, if limited


def cpu_model(cpuinfo_text: str) -> str:
    """The CPU's marketing name from ``/proc/cpuinfo``, first field found."""
    fields: dict[str, str] = {}
    for line in cpuinfo_text.splitlines():
        key, sep, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if sep and value and key not in fields:
            fields[key] = value
    for key in CPU_MODEL_FIELDS:
        if key in fields:
            return fields[key]
    return ""


def boot_time() -> float:
    import psutil  # here, not at import: it then loads on the hub thread, beside the UI's imports

    try:
        return psutil.boot_time()
    except (OSError, RuntimeError):
        return 0.0


def load_average() -> tuple[float, float, float]:
    try:
        return os.getloadavg()
    except OSError:
        return (0.0, 0.0, 0.0)


class HostInfoCollector(Collector):
    """No metric keys; ``extras()`` gives ``{"host": HostInfo}``."""

    name = "host"

    def __init__(self, cgroup: CgroupReader | None = None, root: str = "/") -> None:
        self.root = root
        self.cgroup = cgroup if cgroup is not None else CgroupReader(root=root)
        self._info: HostInfo | None = None

    def probe(self) -> Probe:
        self._info = self._read_facts()
        return Probe.ok()

    def _read_facts(self) -> HostInfo:
        import psutil

        meminfo = read_meminfo(self.root)
        memory_total, limited = usable_memory(self.cgroup, self.root)
        logical = psutil.cpu_count(logical=True) or os.cpu_count() or 1
        model = cpu_model(read_text(under_root(self.root, "/proc/cpuinfo")) or "")
        return HostInfo(
            hostname=socket.gethostname(),
            cpu_model=model or platform.machine(),
            physical_cores=psutil.cpu_count(logical=False) or logical,
            logical_cores=logical,
            memory_total=memory_total,
            memory_limited_by_cgroup=limited,
            swap_total=meminfo.get("SwapTotal", 0),
            boot_time=boot_time(),
            load_avg=load_average(),
            cpu_limit=self.cgroup.cpu_limit(),
        )

    def sample(self) -> Mapping[str, float]:
        if self._info is None:
            self._info = self._read_facts()
        else:
            self._info = dataclasses.replace(self._info, load_avg=load_average())
        return {}

    def extras(self) -> Mapping[str, Any]:
        return {"host": self._info} if self._info is not None else {}
