"""cgroup v2 limits, read from fake /proc and /sys/fs/cgroup trees."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.cgroup import (
    CgroupReader,
    leaf_directory,
    parse_cpu_list,
    parse_cpu_max,
    parse_memory_max,
    parse_mountinfo,
)
from collectors.memory import MemoryCollector

GIB = 2**30
MIB = 2**20

MOUNTINFO_SUBTREE = """\
22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw
31 23 0:28 /kubepods/pod1 /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw
"""

MEMINFO = """\
MemTotal:        8000000 kB
MemFree:         1000000 kB
MemAvailable:    6000000 kB
Cached:          2000000 kB
SwapTotal:       2000000 kB
SwapFree:        1500000 kB
"""


def write(root: Path, path: str, text: str) -> None:
    target = root / path.lstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)


def fake_cgroup(
    root: Path,
    *,
    cgroup_path: str = "/kubepods/pod1/ctr",
    mountinfo: str = MOUNTINFO_SUBTREE,
    leaf: str = "/sys/fs/cgroup/ctr",
    memory_max: str = "max",
    memory_current: str = "0",
    cpu_max: str = "max 100000",
    cpus_allowed: str = "0-15",
) -> None:
    write(root, "/proc/self/cgroup", f"4:memory:/v1-ignored\n0::{cgroup_path}\n")
    write(root, "/proc/self/mountinfo", mountinfo)
    write(root, "/proc/self/status", f"Name:\tpython\nCpus_allowed_list:\t{cpus_allowed}\n")
    write(root, f"{leaf}/memory.max", memory_max + "\n")
    write(root, f"{leaf}/memory.current", memory_current + "\n")
    write(root, f"{leaf}/cpu.max", cpu_max + "\n")


def test_cpu_list_counts_ranges_and_single_cpus():
    assert parse_cpu_list("0-3,8") == 5
    assert parse_cpu_list("0\n") == 1
    assert parse_cpu_list("0-1,4-5,7") == 5


def test_cpu_max_quota_over_period_is_cores():
    assert parse_cpu_max("50000 100000") == 0.5
    assert parse_cpu_max("250000 100000\n") == 2.5
    assert parse_cpu_max("max 100000") is None
    assert parse_cpu_max("garbage") is None


def test_memory_max_unlimited_is_none():
    assert parse_memory_max("max\n") is None
    assert parse_memory_max("1073741824\n") == GIB
    assert parse_memory_max(None) is None


def test_mountinfo_decodes_escaped_spaces():
    mounts = parse_mountinfo("40 1 8:1 / /mnt/my\\040disk rw - ext4 /dev/sda1 rw\n")
    assert mounts[0].mount_point == "/mnt/my disk"
    assert mounts[0].source == "/dev/sda1"
    assert mounts[0].major_minor == "8:1"


def test_leaf_under_a_subtree_mount_drops_the_mount_root():
    mounts = parse_mountinfo(MOUNTINFO_SUBTREE)
    assert leaf_directory("/kubepods/pod1/ctr", mounts) == "/sys/fs/cgroup/ctr"
    assert leaf_directory("/kubepods/pod1", mounts) == "/sys/fs/cgroup"


def test_leaf_with_full_tree_mount_keeps_the_path():
    mounts = parse_mountinfo("41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n")
    assert leaf_directory("/user.slice/session-1.scope", mounts) == (
        "/sys/fs/cgroup/unified/user.slice/session-1.scope"
    )


def test_limits_from_a_container_cgroup(tmp_path):
    fake_cgroup(
        tmp_path,
        memory_max=str(GIB),
        memory_current=str(256 * MIB),
        cpu_max="50000 100000",
        cpus_allowed="0-3,8",
    )
    reader = CgroupReader(root=str(tmp_path), logical_cpus=16)
    assert reader.leaf == str(tmp_path / "sys/fs/cgroup/ctr")
    assert reader.memory_max() == GIB
    assert reader.memory_current() == 256 * MIB
    assert reader.cpu_limit() == 0.5


def test_cpu_set_narrower_than_quota_wins(tmp_path):
    fake_cgroup(tmp_path, cpu_max="800000 100000", cpus_allowed="0-3,8")
    assert CgroupReader(root=str(tmp_path), logical_cpus=16).cpu_limit() == 5.0


def test_cpu_set_of_every_cpu_is_no_limit(tmp_path):
    fake_cgroup(tmp_path, cpus_allowed="0-15")
    assert CgroupReader(root=str(tmp_path), logical_cpus=16).cpu_limit() is None


def test_unlimited_memory_gives_no_denominator(tmp_path):
    fake_cgroup(tmp_path, memory_max="max", memory_current=str(GIB))
    reader = CgroupReader(root=str(tmp_path))
    assert reader.memory_max() is None
    assert reader.memory_current() is None


def test_disabled_reader_ignores_every_limit(tmp_path):
    fake_cgroup(tmp_path, memory_max=str(GIB), cpu_max="50000 100000", cpus_allowed="0")
    reader = CgroupReader(root=str(tmp_path), disabled=True, logical_cpus=16)
    assert reader.memory_max() is None
    assert reader.cpu_limit() is None


def test_cgroup_v1_only_host_has_no_limits(tmp_path):
    write(tmp_path, "/proc/self/cgroup", "4:memory:/docker/abc\n1:cpu:/docker/abc\n")
    v1_mount = "35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
    write(tmp_path, "/proc/self/mountinfo", v1_mount)
    reader = CgroupReader(root=str(tmp_path), logical_cpus=4)
    assert reader.leaf is None
    assert reader.memory_max() is None
    assert reader.cpu_limit() is None


def test_missing_proc_files_mean_no_limits(tmp_path):
    reader = CgroupReader(root=str(tmp_path), logical_cpus=4)
    assert reader.memory_max() is None
    assert reader.cpu_limit() is None


def test_memory_percent_uses_the_cgroup_limit(tmp_path):
    fake_cgroup(tmp_path, memory_max=str(GIB), memory_current=str(256 * MIB))
    write(tmp_path, "/proc/meminfo", MEMINFO)
    collector = MemoryCollector(root=str(tmp_path))
    assert collector.probe().available
    values = collector.sample()
    assert values["memory_percent"] == pytest.approx(25.0)
    assert values["proc.memory.availableMB"] == pytest.approx(768.0)
    assert values["memory.used"] == 256 * MIB


def test_memory_over_the_limit_has_nothing_available(tmp_path):
    fake_cgroup(tmp_path, memory_max=str(GIB), memory_current=str(GIB + MIB))
    write(tmp_path, "/proc/meminfo", MEMINFO)
    collector = MemoryCollector(root=str(tmp_path))
    collector.probe()
    assert collector.sample()["proc.memory.availableMB"] == 0.0


def test_memory_without_a_limit_uses_meminfo(tmp_path):
    fake_cgroup(tmp_path, memory_max="max")
    write(tmp_path, "/proc/meminfo", MEMINFO)
    collector = MemoryCollector(root=str(tmp_path))
    collector.probe()
    values = collector.sample()
    assert values["memory_percent"] == pytest.approx(25.0)  # (8 - 6) / 8
    assert values["proc.memory.availableMB"] == pytest.approx(6000000 * 1024 / MIB)
    assert values["swap.used"] == 500000 * 1024
    assert values["swap.used_percent"] == pytest.approx(25.0)


def test_no_swap_means_no_swap_keys(tmp_path):
    no_swap = MEMINFO.replace("SwapTotal:       2000000", "SwapTotal:       0")
    no_swap = no_swap.replace("SwapFree:        1500000", "SwapFree:        0")
    write(tmp_path, "/proc/meminfo", no_swap)
    collector = MemoryCollector(root=str(tmp_path))
    collector.probe()
    values = collector.sample()
    assert "swap.used" not in values
    assert "swap.used_percent" not in values
    assert "memory_percent" in values


def test_memory_without_meminfo_is_absent_with_a_reason(tmp_path):
    probe = MemoryCollector(root=str(tmp_path)).probe()
    assert not probe.available
    assert "meminfo" in probe.reason
