"""The host's collectors, built together so they share one cgroup reader."""

from __future__ import annotations

from typing import Iterable

from collectors.accelerators import sys_root
from collectors.base import Collector
from collectors.cgroup import CgroupReader
from collectors.cpu import CpuCollector
from collectors.disk import DiskCollector
from collectors.hostinfo import HostInfoCollector
from collectors.memory import MemoryCollector
from collectors.network import NetworkCollector
from collectors.process import ProcessCollector
from collectors.processes import ProcessTableCollector


def host_collectors(
    pid: int | None = None,
    disk_paths: Iterable[str] = ("/",),
    track_tree: bool = False,
    use_cgroup: bool = True,
) -> list[Collector]:
    """CPU, memory, disk, network, process table and host facts; plus the
    watched process when ``pid`` is given.

    Limits come from the cgroup of ``pid`` (else of this process), as W&B
    reads them from the run's process; ``use_cgroup=False`` ignores them.
    """
    cgroup = CgroupReader(pid=pid if pid is not None else "self", disabled=not use_cgroup)
    collectors: list[Collector] = [
        CpuCollector(),
        MemoryCollector(cgroup=cgroup),
        DiskCollector(paths=tuple(disk_paths)),
        NetworkCollector(),
    ]
    if pid is not None:
        collectors.append(ProcessCollector(pid, track_tree=track_tree, cgroup=cgroup))
    collectors.append(ProcessTableCollector(cgroup=cgroup, sys_root=sys_root()))
    collectors.append(HostInfoCollector(cgroup=cgroup))
    return collectors
