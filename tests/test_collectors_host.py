"""The host collectors on this machine's real /proc and /sys."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from collectors.base import Collector
from collectors.cpu import CpuCollector
from collectors.disk import DiskCollector
from collectors.host import host_collectors
from collectors.hostinfo import HostInfo, HostInfoCollector
from collectors.memory import MemoryCollector
from collectors.network import NetworkCollector
from collectors.process import ProcessCollector, ProcessExited
from collectors.processes import ProcessRow, ProcessTableCollector


def probed(collector: Collector) -> Collector:
    probe = collector.probe()
    assert probe.available, probe.reason
    return collector


def burn_cpu(seconds: float) -> None:
    """Use at least ``seconds`` of this process's CPU time (not wall time)."""
    start = time.process_time()
    while time.process_time() - start < seconds:
        pass


def test_first_cpu_sample_right_after_probe_has_every_core():
    values = probed(CpuCollector()).sample()
    for core in range(os.cpu_count() or 1):
        assert 0.0 <= values[f"cpu.{core}.cpu_percent"] <= 100.0


def test_busy_core_shows_up_in_per_core_percent():
    collector = probed(CpuCollector(startup=0))  # this process's own work counts (no start-up window)
    burn_cpu(0.05)
    values = collector.sample()
    assert max(v for k, v in values.items() if k.endswith("cpu_percent")) > 0


def test_memory_keys_are_in_range():
    values = probed(MemoryCollector()).sample()
    assert 0 < values["memory_percent"] < 100
    assert values["proc.memory.availableMB"] > 0
    assert values["memory.used"] > 0
    if "swap.used_percent" in values:
        assert 0 <= values["swap.used_percent"] <= 100


def disk_backed_directory(tmp_path: Path) -> Path:
    """tmp_path, unless it lives in memory (tmpfs): then the repository's folder."""
    if os.major(os.stat(tmp_path).st_dev) != 0:
        return tmp_path
    return Path(__file__).resolve().parent


def test_disk_usage_and_io_grow_after_a_synced_write(tmp_path):
    directory = disk_backed_directory(tmp_path)
    collector = probed(DiskCollector(paths=("/", str(directory))))
    first = collector.sample()
    assert 0 < first["disk./.usagePercent"] <= 100
    assert first["disk./.usageGB"] > 0
    assert f"disk.{directory}.usagePercent" in first
    assert collector.devices, "no block device found for /"

    target = directory / f".leet-disk-test-{os.getpid()}"
    try:
        with open(target, "wb") as handle:
            handle.write(os.urandom(4 * 2**20))
            handle.flush()
            os.fsync(handle.fileno())
        second = collector.sample()
    finally:
        target.unlink(missing_ok=True)

    written_before = sum(first[f"disk.{dev}.out"] for dev in collector.devices)
    written_after = sum(second[f"disk.{dev}.out"] for dev in collector.devices)
    assert written_after > written_before
    assert max(second[f"disk.{dev}.writeBps"] for dev in collector.devices) > 0
    for dev in collector.devices:
        assert second[f"disk.{dev}.in"] >= first[f"disk.{dev}.in"]


def test_disk_path_that_does_not_exist_is_reported_not_raised(tmp_path):
    missing = str(tmp_path / "no-such-mount")
    collector = probed(DiskCollector(paths=("/", missing)))
    values = collector.sample()
    assert "disk./.usageGB" in values
    assert not any(missing in key for key in values)
    assert missing in collector.path_problems[missing]


def test_network_counters_are_present_and_monotonic():
    collector = probed(NetworkCollector())
    first = collector.sample()
    second = collector.sample()
    for key in ("network.sent", "network.recv"):
        assert first[key] >= 0
        assert second[key] >= first[key]
    for key in ("network.sentBps", "network.recvBps"):
        assert second.get(key, 0) >= 0
    if "network.tcpRetransmits" in second:
        assert second["network.tcpRetransmits"] >= first["network.tcpRetransmits"] >= 0


def test_own_process_cpu_memory_and_threads():
    collector = probed(ProcessCollector(os.getpid()))
    burn_cpu(0.05)
    values = collector.sample()
    assert values["cpu"] > 0
    assert values["proc.cpu.threads"] >= 1
    assert values["proc.memory.rssMB"] > 1
    assert 0 < values["proc.memory.percent"] < 100


def test_process_tree_includes_children():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        alone = probed(ProcessCollector(os.getpid())).sample()
        tree = probed(ProcessCollector(os.getpid(), track_tree=True)).sample()
        assert tree["proc.cpu.threads"] >= alone["proc.cpu.threads"] + 1
        assert tree["proc.memory.rssMB"] > alone["proc.memory.rssMB"]
    finally:
        child.kill()
        child.wait()


def test_exited_process_is_absent_then_raises():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    collector = probed(ProcessCollector(child.pid))
    child.kill()
    child.wait()
    with pytest.raises(ProcessExited, match=f"process {child.pid} has exited"):
        collector.sample()
    probe = ProcessCollector(child.pid).probe()
    assert not probe.available
    assert probe.reason == f"process {child.pid} has exited"


def test_process_table_lists_this_process():
    collector = probed(ProcessTableCollector())
    burn_cpu(0.05)
    assert collector.sample() == {}
    rows = collector.extras()["processes"]
    assert len(rows) > 1
    assert all(isinstance(row, ProcessRow) for row in rows)
    me = next(row for row in rows if row.pid == os.getpid())
    assert "pytest" in me.command or "python" in me.command
    assert me.cpu_percent > 0
    assert me.rss_bytes > 0
    assert 0 < me.memory_percent < 100
    with pytest.raises(dataclasses.FrozenInstanceError):
        me.cpu_percent = 0.0  # type: ignore[misc]


def test_host_info_facts_and_load():
    collector = probed(HostInfoCollector())
    assert collector.sample() == {}
    info = collector.extras()["host"]
    assert isinstance(info, HostInfo)
    assert info.hostname
    assert info.logical_cores == os.cpu_count()
    assert 1 <= info.physical_cores <= info.logical_cores
    assert info.memory_total > 0
    assert info.boot_time < time.time()
    assert len(info.load_avg) == 3
    assert all(load >= 0 for load in info.load_avg)


def test_host_collectors_have_stable_names():
    names = [c.name for c in host_collectors()]
    assert names == ["cpu", "memory", "disk", "network", "processes", "host"]
    with_pid = [c.name for c in host_collectors(pid=os.getpid(), use_cgroup=False)]
    assert "process" in with_pid
    assert len(set(with_pid)) == len(with_pid)


def test_every_host_collector_samples_floats():
    for collector in host_collectors(pid=os.getpid(), disk_paths=("/",), track_tree=True):
        probed(collector)
        values = collector.sample()
        assert all(isinstance(v, (int, float)) for v in values.values()), collector.name
        collector.close()
