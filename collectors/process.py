"""CPU, threads and memory of one process (optionally with its descendants).

Everything comes from ``/proc/<pid>/stat``: one small read per process.
"""

from __future__ import annotations

import functools
import os
import time
from dataclasses import dataclass
from typing import Callable, Mapping

import psutil

from collectors.base import Collector, Probe
from collectors.cgroup import CgroupReader
from collectors.memory import memory_denominator
from collectors.procfs import read_bytes, under_root

MIB = 2**20
CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


class ProcessExited(ProcessLookupError):
    """The watched process is gone."""

    def __init__(self, pid: int) -> None:
        super().__init__(f"process {pid} has exited")
        self.pid = pid


@dataclass(frozen=True)
class ProcStat:
    """The fields of ``/proc/<pid>/stat`` the monitor uses."""

    pid: int
    name: str
    state: str
    ppid: int
    cpu_ticks: int  # utime + stime
    threads: int
    rss_bytes: int
    start_ticks: int  # clock ticks after boot


def parse_stat(text: str) -> ProcStat | None:
    """Parse one ``/proc/<pid>/stat`` line; None when it is malformed.

    The name sits in parentheses and may itself hold spaces or ``)``, so
    the fixed fields are split after the last ``)``.
    """
    open_at = text.find("(")
    close_at = text.rfind(")")
    if open_at < 0 or close_at < open_at:
        return None
    fields = text[close_at + 2 :].split()
    if len(fields) < 22:
        return None
    try:
        return ProcStat(
            pid=int(text[:open_at]),
            name=text[open_at + 1 : close_at],
            state=fields[0],
            ppid=int(fields[1]),
            cpu_ticks=int(fields[11]) + int(fields[12]),
            threads=int(fields[17]),
            rss_bytes=int(fields[21]) * PAGE_SIZE,
            start_ticks=int(fields[19]),
        )
    except ValueError:
        return None


def read_stat(proc_dir: str, pid: int) -> ProcStat | None:
    """``/proc/<pid>/stat`` parsed, or None when the process is gone."""
    data = read_bytes(f"{proc_dir}/{pid}/stat")
    return parse_stat(data.decode("utf-8", "replace")) if data else None


def child_pids(proc_dir: str, pid: int) -> list[int]:
    """Direct children, from ``/proc/<pid>/task/*/children``."""
    try:
        tids = os.listdir(f"{proc_dir}/{pid}/task")
    except OSError:
        return []
    children: list[int] = []
    for tid in tids:
        data = read_bytes(f"{proc_dir}/{pid}/task/{tid}/children")
        if data:
            children.extend(int(v) for v in data.split())
    return children


def has_children_files(proc_dir: str, pid: int) -> bool:
    """Whether the kernel offers ``task/*/children`` (CONFIG_PROC_CHILDREN)."""
    return os.path.exists(f"{proc_dir}/{pid}/task/{pid}/children")


def children_by_scan(proc_dir: str) -> dict[int, list[int]]:
    """Parent → children for every process, for kernels without ``children`` files."""
    tree: dict[int, list[int]] = {}
    for entry in os.scandir(proc_dir):
        if entry.name.isdigit():
            stat = read_stat(proc_dir, int(entry.name))
            if stat is not None:
                tree.setdefault(stat.ppid, []).append(stat.pid)
    return tree


def boot_seconds() -> float:
    """Seconds since boot on the clock ``/proc/<pid>/stat`` start times use."""
    return time.clock_gettime(time.CLOCK_BOOTTIME)


def ticks_between(before: ProcStat | None, now: ProcStat, before_boot: float) -> int:
    """CPU ticks a process used since an earlier reading taken at ``before_boot``.

    A process missing from that reading (or a reused pid) counts whole only
    if it started after the reading; otherwise it just joined the view and
    its past is not part of this span.
    """
    if before is not None and before.start_ticks == now.start_ticks:
        return max(now.cpu_ticks - before.cpu_ticks, 0)
    started = now.start_ticks / CLOCK_TICKS
    return now.cpu_ticks if started >= before_boot - 1 / CLOCK_TICKS else 0


class PreviousReading:
    """The last ``/proc/<pid>/stat`` readings, and when they were taken, for CPU deltas."""

    def __init__(self) -> None:
        self.stats: dict[int, ProcStat] = {}
        self.at = 0.0
        self.boot = 0.0

    def remember(self, stats: dict[int, ProcStat]) -> None:
        self.stats = stats
        self.at = time.monotonic()
        self.boot = boot_seconds()

    def elapsed(self) -> float:
        return time.monotonic() - self.at

    def ticks(self, stat: ProcStat) -> int:
        """CPU ticks ``stat``'s process used since the remembered reading."""
        return ticks_between(self.stats.get(stat.pid), stat, self.boot)


def physical_core_count() -> int:
    return psutil.cpu_count(logical=False) or os.cpu_count() or 1


class ProcessCollector(Collector):
    """``cpu``, ``proc.cpu.threads``, ``proc.memory.rssMB``, ``proc.memory.percent``.

    ``cpu`` is the share of the machine's capacity used since the previous
    sample (100 = every core the process may use): capacity is the cgroup
    CPU limit if one applies, else the physical core count, as in W&B.
    """

    name = "process"

    def __init__(
        self,
        pid: int,
        track_tree: bool = False,
        cgroup: CgroupReader | None = None,
        root: str = "/",
        capacity: float | None = None,
    ) -> None:
        self.pid = pid
        self.track_tree = track_tree
        self.root = root
        self.proc_dir = under_root(root, "/proc").rstrip("/")
        self.cgroup = cgroup if cgroup is not None else CgroupReader(pid=pid, root=root)
        self._capacity = capacity
        self._memory_total = 0
        self._previous = PreviousReading()

    def probe(self) -> Probe:
        if not os.path.isdir(self.proc_dir):
            return Probe.absent(f"{self.proc_dir} is not available on this system")
        try:
            stats = self._read()
        except ProcessExited as gone:
            return Probe.absent(str(gone))
        if self._capacity is None:
            self._capacity = self.cgroup.cpu_limit() or float(physical_core_count())
        self._memory_total = memory_denominator(self.cgroup, self.root)
        self._previous.remember(stats)
        return Probe.ok()

    def sample(self) -> Mapping[str, float]:
        stats = self._read()
        elapsed = self._previous.elapsed()
        ticks = sum(self._previous.ticks(stat) for stat in stats.values())
        self._previous.remember(stats)
        rss = sum(stat.rss_bytes for stat in stats.values())
        values = {
            "proc.cpu.threads": float(sum(stat.threads for stat in stats.values())),
            "proc.memory.rssMB": rss / MIB,
        }
        if self._memory_total:
            values["proc.memory.percent"] = rss / self._memory_total * 100
        if elapsed > 0 and self._capacity:
            values["cpu"] = ticks / CLOCK_TICKS / elapsed * 100 / self._capacity
        return values

    def _read(self) -> dict[int, ProcStat]:
        """The watched process (and, with ``track_tree``, its descendants)."""
        stat = read_stat(self.proc_dir, self.pid)
        if stat is None or stat.state in ("Z", "X"):
            raise ProcessExited(self.pid)
        stats = {self.pid: stat}
        if self.track_tree:
            for pid in self._descendants():
                child = read_stat(self.proc_dir, pid)
                if child is not None:
                    stats[pid] = child
        return stats

    def _descendants(self) -> list[int]:
        children_of = self._children_lookup()
        found: list[int] = []
        queue = [self.pid]
        seen = {self.pid}
        while queue:
            for child in children_of(queue.pop()):
                if child not in seen:
                    seen.add(child)
                    found.append(child)
                    queue.append(child)
        return found

    def _children_lookup(self) -> Callable[[int], list[int]]:
        if has_children_files(self.proc_dir, self.pid):
            return functools.partial(child_pids, self.proc_dir)
        tree = children_by_scan(self.proc_dir)
        return lambda pid: tree.get(pid, [])
