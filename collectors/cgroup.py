"""cgroup v2 limits of one process: the denominators for host percentages.

Only the leaf cgroup of the process is read (its own ``memory.max``,
``memory.current`` and ``cpu.max``), found through the unified ``0::`` entry
of ``/proc/<pid>/cgroup`` and the ``cgroup2`` mount in its mountinfo. cgroup
v1 hierarchies are ignored by design: their limits are spread over many
controllers and W&B does not read them either.

Every path is taken relative to ``root`` so tests can build a fake tree.
"""

from __future__ import annotations

import os
import threading

from collectors.procfs import Mount, parse_mountinfo, read_text, under_root

UNLIMITED = "max"


def parse_cpu_list(text: str) -> int:
    """Count the CPUs in a list such as ``0-3,8`` (5 CPUs)."""
    count = 0
    for part in text.strip().split(","):
        part = part.strip()
        if not part:
            continue
        low, _, high = part.partition("-")
        count += int(high) - int(low) + 1 if high else 1
    return count


def unified_cgroup_path(cgroup_text: str) -> str | None:
    """The path of the ``0::`` (cgroup v2) entry in ``/proc/<pid>/cgroup``."""
    for line in cgroup_text.splitlines():
        if line.startswith("0::"):
            return line[3:].strip() or "/"
    return None


def leaf_directory(cgroup_path: str, mounts: list[Mount]) -> str | None:
    """Where the process's own cgroup lives among the mounted ``cgroup2`` trees.

    A mount may expose only a sub-tree (its mountinfo root is not ``/``), as
    in containers; then the part of the cgroup path under that root is
    appended to the mount point. With a cgroup namespace the path is already
    relative to the mount.
    """
    best: tuple[int, str] | None = None
    fallback: str | None = None
    for mount in mounts:
        if mount.fs_type != "cgroup2":
            continue
        mount_root = mount.root.rstrip("/") or "/"
        if mount_root == "/":
            rel = cgroup_path
        elif cgroup_path == mount_root or cgroup_path.startswith(mount_root + "/"):
            rel = cgroup_path[len(mount_root) :]
        else:
            fallback = fallback or mount.mount_point
            continue
        candidate = os.path.join(mount.mount_point, rel.lstrip("/"))
        depth = len(mount_root)
        if best is None or depth > best[0]:
            best = (depth, candidate)
    if best is not None:
        return best[1].rstrip("/") or "/"
    return fallback


def parse_memory_max(text: str | None) -> int | None:
    """``memory.max`` in bytes, or None when unlimited or unreadable."""
    if text is None:
        return None
    value = text.strip()
    if not value or value == UNLIMITED:
        return None
    try:
        limit = int(value)
    except ValueError:
        return None
    return limit if limit > 0 else None


def parse_cpu_max(text: str | None) -> float | None:
    """``cpu.max`` (``quota period``) as a number of cores; None when unlimited."""
    if text is None:
        return None
    parts = text.split()
    if len(parts) != 2 or parts[0] == UNLIMITED:
        return None
    try:
        quota, period = int(parts[0]), int(parts[1])
    except ValueError:
        return None
    if quota <= 0 or period <= 0:
        return None
    return quota / period


def allowed_cpu_count(status_text: str | None) -> int | None:
    """The CPU count of ``Cpus_allowed_list`` in ``/proc/<pid>/status``."""
    if status_text is None:
        return None
    for line in status_text.splitlines():
        if line.startswith("Cpus_allowed_list:"):
            try:
                return parse_cpu_list(line.split(":", 1)[1])
            except ValueError:
                return None
    return None


class CgroupReader:
    """Reads the cgroup v2 limits that apply to one process.

    The leaf cgroup is found once (lazily) and kept; ``memory_current`` is
    read live each time. With ``disabled`` every limit is None, as with
    W&B's ``x_stats_no_cgroup``.
    """

    def __init__(
        self,
        pid: int | str = "self",
        root: str = "/",
        disabled: bool = False,
        logical_cpus: int | None = None,
    ) -> None:
        self.pid = pid
        self.root = root
        self.disabled = disabled
        self.logical_cpus = logical_cpus or os.cpu_count() or 1
        self._lock = threading.Lock()
        self._resolved = False
        self._leaf: str | None = None
        self._memory_max: int | None = None
        self._cpu_limit: float | None = None

    def _proc(self, name: str) -> str:
        return under_root(self.root, f"/proc/{self.pid}/{name}")

    def _resolve(self) -> None:
        # Collectors sharing one reader may run on different threads.
        with self._lock:
            if self._resolved:
                return
            if not self.disabled:
                self._leaf = self._find_leaf()
                if self._leaf is not None:
                    self._memory_max = parse_memory_max(read_text(self._leaf_file("memory.max")))
                self._cpu_limit = self._find_cpu_limit()
            self._resolved = True

    def _find_leaf(self) -> str | None:
        cgroup_text = read_text(self._proc("cgroup"))
        mountinfo_text = read_text(self._proc("mountinfo"))
        if cgroup_text is None or mountinfo_text is None:
            return None
        path = unified_cgroup_path(cgroup_text)
        if path is None:
            return None
        leaf = leaf_directory(path, parse_mountinfo(mountinfo_text))
        if leaf is None:
            return None
        directory = under_root(self.root, leaf)
        return directory if os.path.isdir(directory) else None

    def _leaf_file(self, name: str) -> str:
        assert self._leaf is not None
        return os.path.join(self._leaf, name)

    def _find_cpu_limit(self) -> float | None:
        limits = []
        if self._leaf is not None:
            quota = parse_cpu_max(read_text(self._leaf_file("cpu.max")))
            if quota is not None:
                limits.append(quota)
        allowed = allowed_cpu_count(read_text(self._proc("status")))
        if allowed is not None and 0 < allowed < self.logical_cpus:
            limits.append(float(allowed))
        return min(limits) if limits else None

    @property
    def leaf(self) -> str | None:
        """The leaf cgroup directory (under ``root``), or None."""
        self._resolve()
        return self._leaf

    def memory_max(self) -> int | None:
        """The finite ``memory.max`` in bytes, else None."""
        self._resolve()
        return self._memory_max

    def memory_current(self) -> int | None:
        """Live ``memory.current`` in bytes, when a finite limit applies."""
        self._resolve()
        if self._leaf is None or self._memory_max is None:
            return None
        text = read_text(self._leaf_file("memory.current"))
        try:
            return int(text.strip()) if text else None
        except ValueError:
            return None

    def cpu_limit(self) -> float | None:
        """Cores available: min of ``cpu.max`` and a narrowed CPU set, else None."""
        self._resolve()
        return self._cpu_limit
