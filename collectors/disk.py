"""Disk usage of chosen paths, and I/O of the block devices behind them.

Usage uses the ``df`` formula (used / (used + available)), so space
reserved for root does not count as free. ``df``'s own figures (Size,
Used, Avail, Use%) travel as the ``disk_space`` extra for the screen: the
size is every block of the file system, which is more than used + available
whenever blocks are reserved for root or held back by the file system.
I/O counters come from ``/proc/diskstats`` (sectors are always 512 bytes there).
"""

from __future__ import annotations

import errno
import os
import time
from dataclasses import dataclass
from typing import Iterable, Mapping

from collectors.base import Collector, Probe
from collectors.procfs import Mount, parse_mountinfo, read_text, under_root

SECTOR_BYTES = 512
MIB = 2**20
GIB = 2**30
# Virtual block devices that never stand for a file system's disk.
VIRTUAL_DEVICE_PREFIXES = ("loop", "ram", "zram")
# Real file systems that /proc/filesystems lists as nodev.
EXTRA_REAL_FS_TYPES = frozenset({"zfs"})
# File systems whose subvolumes appear with a root other than "/".
SUBVOLUME_FS_TYPES = frozenset({"btrfs"})


@dataclass(frozen=True)
class DiskCounters:
    major_minor: str
    name: str
    sectors_read: int
    sectors_written: int
    all_zero: bool


def parse_diskstats(text: str) -> dict[str, DiskCounters]:
    """``/proc/diskstats`` as ``{device name: counters}``."""
    devices = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 10:
            continue
        try:
            numbers = [int(v) for v in parts[3:]]
        except ValueError:
            continue
        devices[parts[2]] = DiskCounters(
            major_minor=f"{parts[0]}:{parts[1]}",
            name=parts[2],
            sectors_read=numbers[2],
            sectors_written=numbers[6],
            all_zero=not any(numbers),
        )
    return devices


def real_fs_types(filesystems_text: str) -> set[str]:
    """File system types backed by a block device (not ``nodev``)."""
    types = set(EXTRA_REAL_FS_TYPES)
    for line in filesystems_text.splitlines():
        parts = line.split()
        if len(parts) == 1:
            types.add(parts[0])
    return types


def is_virtual_device(name: str) -> bool:
    return name.startswith(VIRTUAL_DEVICE_PREFIXES)


def real_mounts(mounts: Iterable[Mount], fs_types: set[str]) -> list[Mount]:
    """Mounts of real file systems, leaving out bind mounts."""
    kept = []
    for mount in mounts:
        if mount.fs_type not in fs_types:
            continue
        if mount.root != "/" and mount.fs_type not in SUBVOLUME_FS_TYPES:
            continue
        kept.append(mount)
    return kept


def device_name(mount: Mount, counters: Mapping[str, DiskCounters], root: str) -> str | None:
    """The diskstats name of the device behind a mount, if it has one.

    The device number is tried first (it also resolves ``/dev/root``), then
    the source path with symlinks such as ``/dev/mapper/*`` followed.
    """
    for device in counters.values():
        if device.major_minor == mount.major_minor:
            return device.name
    if mount.source.startswith("/dev/"):
        name = os.path.basename(os.path.realpath(under_root(root, mount.source)))
        if name in counters:
            return name
    return None


def backing_devices(
    paths: Iterable[str],
    mounts: list[Mount],
    counters: Mapping[str, DiskCounters],
    root: str = "/",
) -> list[str]:
    """Block devices that back the given paths, in diskstats order.

    A mount backs a path when its mount point is a string prefix of the
    path. With an overlay (or other non-device) root file system, every
    real device seen stands in for ``/``. When nothing matches, every
    non-virtual device with any I/O is used.
    """
    paths = list(paths)
    matched = [m for m in mounts if any(p.startswith(m.mount_point) for p in paths)]
    if "/" in paths and not any(m.mount_point == "/" for m in mounts):
        matched = mounts
    names = (device_name(mount, counters, root) for mount in matched)
    chosen = {name for name in names if name and not counters[name].all_zero}
    if not chosen:
        chosen = {
            name
            for name, device in counters.items()
            if not is_virtual_device(name) and not device.all_zero
        }
    return [name for name in counters if name in chosen]


@dataclass(frozen=True)
class DiskSpace:
    """One file system as ``df -B1`` shows it, in bytes."""

    size: int  # f_blocks × f_frsize: every block, reserved ones included
    used: int  # (f_blocks − f_bfree) × f_frsize
    available: int  # f_bavail × f_frsize: what an unprivileged user can still write

    @classmethod
    def of(cls, stats: os.statvfs_result) -> DiskSpace:
        frsize = stats.f_frsize
        return cls(
            size=stats.f_blocks * frsize,
            used=max(stats.f_blocks - stats.f_bfree, 0) * frsize,
            available=max(stats.f_bavail, 0) * frsize,
        )

    @property
    def percent(self) -> float:
        """used / (used + available) × 100: W&B's ``usagePercent`` (0 for an empty file system)."""
        capacity = self.used + self.available
        return self.used / capacity * 100 if capacity > 0 else 0.0

    @property
    def use_percent(self) -> int:
        """``df``'s Use%: the same ratio, rounded up to a whole percent."""
        capacity = self.used + self.available
        if capacity <= 0:
            return 0
        return -(-self.used * 100 // capacity)


def disk_space(path: str) -> DiskSpace:
    """``df``'s figures for the file system holding ``path``; raises ``OSError``."""
    return DiskSpace.of(os.statvfs(path))


def usage(path: str) -> tuple[float, float]:
    """(percent used, GiB used) of the file system holding ``path``."""
    space = disk_space(path)
    return space.percent, space.used / GIB


def usage_problem(path: str, error: OSError) -> str:
    if error.errno == errno.ENOENT:
        return f"disk path {path} does not exist"
    if error.errno == errno.EACCES:
        return f"disk path {path} is not readable (permission denied)"
    return f"disk path {path}: {error.strerror or error}"


class DiskCollector(Collector):
    """``disk.{path}.usagePercent/usageGB``, ``disk.{dev}.in/out``, and rates.

    ``in``/``out`` are MiB since the collector started; ``readBps`` and
    ``writeBps`` are bytes per second since the previous sample. Paths that
    cannot be measured give no keys; ``path_problems`` says why.
    ``root`` relocates /proc (for tests); the paths themselves are real.
    """

    name = "disk"

    def __init__(self, paths: Iterable[str] = ("/",), root: str = "/") -> None:
        self.paths = tuple(paths)
        self.root = root
        self.devices: list[str] = []
        self.path_problems: dict[str, str] = {}
        self.spaces: dict[str, DiskSpace] = {}
        self._start: dict[str, DiskCounters] = {}
        self._previous: dict[str, DiskCounters] = {}
        self._previous_at = 0.0

    def probe(self) -> Probe:
        existing = self._check_paths()
        counters = self._read_counters()
        if counters:
            mounts = self._mounts()
            self.devices = backing_devices(existing or self.paths, mounts, counters, self.root)
            self._start = {name: counters[name] for name in self.devices}
            self._previous = dict(self._start)
            self._previous_at = time.monotonic()
        if not existing and not self.devices:
            problems = "; ".join(self.path_problems.values())
            return Probe.absent(problems or "no disk paths and no /proc/diskstats")
        return Probe.ok()

    def _check_paths(self) -> list[str]:
        self.path_problems.clear()
        existing = []
        for path in self.paths:
            try:
                os.statvfs(path)
            except OSError as error:
                self.path_problems[path] = usage_problem(path, error)
                continue
            existing.append(path)
        return existing

    def _mounts(self) -> list[Mount]:
        text = read_text(under_root(self.root, "/proc/1/mountinfo"))
        text = text or read_text(under_root(self.root, "/proc/self/mountinfo")) or ""
        fs_text = read_text(under_root(self.root, "/proc/filesystems")) or ""
        return real_mounts(parse_mountinfo(text), real_fs_types(fs_text))

    def _read_counters(self) -> dict[str, DiskCounters] | None:
        text = read_text(under_root(self.root, "/proc/diskstats"))
        return parse_diskstats(text) if text is not None else None

    def extras(self) -> Mapping[str, object]:
        # Partial trouble (one path of several) is not a collector failure;
        # it travels as a note so the screen can still say it.
        return {"notes.disk": tuple(self.path_problems.values()), "disk_space": dict(self.spaces)}

    def sample(self) -> Mapping[str, float]:
        values: dict[str, float] = {}
        for path in self.paths:
            try:
                space = disk_space(path)
            except OSError as error:
                self.path_problems[path] = usage_problem(path, error)
                self.spaces.pop(path, None)
                continue
            self.path_problems.pop(path, None)
            self.spaces[path] = space
            values[f"disk.{path}.usagePercent"] = space.percent
            values[f"disk.{path}.usageGB"] = space.used / GIB
        if self.devices:
            values.update(self._io())
        return values

    def _io(self) -> dict[str, float]:
        counters = self._read_counters() or {}
        now = time.monotonic()
        elapsed = now - self._previous_at
        values: dict[str, float] = {}
        for name in self.devices:
            current, start = counters.get(name), self._start.get(name)
            if current is None or start is None:
                continue
            read, written = _moved(start, current)
            values[f"disk.{name}.in"] = read / MIB
            values[f"disk.{name}.out"] = written / MIB
            before = self._previous.get(name)
            if before is not None and elapsed > 0:
                read, written = _moved(before, current)
                values[f"disk.{name}.readBps"] = read / elapsed
                values[f"disk.{name}.writeBps"] = written / elapsed
            self._previous[name] = current
        self._previous_at = now
        return values


def _moved(then: DiskCounters, now: DiskCounters) -> tuple[int, int]:
    """Bytes read and written between two readings (0 if a counter went back)."""
    read = max(now.sectors_read - then.sectors_read, 0) * SECTOR_BYTES
    written = max(now.sectors_written - then.sectors_written, 0) * SECTOR_BYTES
    return read, written
