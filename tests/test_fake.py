"""Fake collectors: deterministic, lively, and shaped exactly like the real ones."""

from __future__ import annotations

import threading

from collectors import Health, Hub
from collectors.fake import (
    GPU_KEYS,
    FakeClock,
    FakeGPUCollector,
    FakeHostCollector,
    GpuInfo,
    make_fake_collectors,
    replay,
)
from collectors.hostinfo import HostInfo
from collectors.processes import ProcessRow

T0 = 1_700_000_000.0
MIB = 2**20


def host_at(t: float, **kwargs):
    clock = FakeClock(T0)
    host = FakeHostCollector(clock, **kwargs)
    clock.set(t)
    return host, clock


def test_clock_is_settable_and_advances():
    clock = FakeClock(10.0)
    assert clock() == 10.0
    assert clock.advance(2.5) == 12.5
    clock.set(100.0)
    assert clock() == clock.now == 100.0


def test_same_time_same_values_whatever_came_before():
    host, clock = host_at(T0 + 50)
    gpu = FakeGPUCollector(clock, count=2, origin=T0)
    first = (host.sample(), host.extras(), gpu.sample())
    clock.set(T0 + 999)
    host.sample(), gpu.sample()
    clock.set(T0 + 50)
    assert (host.sample(), host.extras(), gpu.sample()) == first

    twin, _ = host_at(T0 + 50)
    assert twin.sample() == first[0]


def test_host_keys_are_exactly_the_real_collectors_keys():
    host, _ = host_at(T0 + 10, cores=4, disks=("nvme0n1", "sda"), disk_paths=("/", "/data"), nics=2)
    expected = {f"cpu.{i}.cpu_percent" for i in range(4)} | {
        "cpu.avg_temp",
        "memory_percent",
        "proc.memory.availableMB",
        "memory.used",
        "swap.used",
        "swap.used_percent",
        "network.sent",
        "network.recv",
        "network.sentBps",
        "network.recvBps",
        "network.tcpRetransmits",
    }
    for path in ("/", "/data"):
        expected |= {f"disk.{path}.usagePercent", f"disk.{path}.usageGB"}
    for dev in ("nvme0n1", "sda"):
        expected |= {f"disk.{dev}.{k}" for k in ("in", "out", "readBps", "writeBps")}
    assert set(host.sample()) == expected


def test_gpu_keys_follow_the_nvidia_names():
    clock = FakeClock(T0)
    gpu = FakeGPUCollector(clock, count=3)
    assert set(gpu.sample()) == {f"gpu.{i}.{key}" for i in range(3) for key in GPU_KEYS}
    assert "gpu.0.uncorrectedMemoryErrors" in gpu.sample()
    assert gpu.extras() == {
        "gpus": tuple(GpuInfo(i, "NVIDIA H100 80GB HBM3", 81559 * MIB, 700.0) for i in range(3))
    }
    assert not FakeGPUCollector(clock, count=0).probe().available


def test_curves_move_differ_per_core_and_stay_in_range():
    host, clock = host_at(T0)
    gpu = FakeGPUCollector(clock, count=2)
    series = []
    for step in range(120):
        clock.set(T0 + step)
        series.append({**host.sample(), **gpu.sample()})
    for key in ("cpu.0.cpu_percent", "gpu.0.gpu", "memory_percent", "network.recvBps"):
        assert len({round(row[key], 3) for row in series}) > 30, f"{key} is flat"
    assert [r["cpu.0.cpu_percent"] for r in series] != [r["cpu.1.cpu_percent"] for r in series]
    assert [r["gpu.0.gpu"] for r in series] != [r["gpu.1.gpu"] for r in series]
    for row in series:
        for key, value in row.items():
            if key.endswith(("percent", "Percent", "_percent", ".gpu", ".memory", "memoryAllocated")):
                assert 0.0 <= value <= 100.0, (key, value)


def test_counters_never_decrease_and_match_their_rates():
    host, clock = host_at(T0, nics=2)
    gpu = FakeGPUCollector(clock, count=2, origin=T0)
    counters = (
        "disk.nvme0n1.in",
        "disk.nvme0n1.out",
        "network.sent",
        "network.recv",
        "network.tcpRetransmits",
        "gpu.1.correctedMemoryErrors",
    )
    previous = None
    for step in range(0, 4000, 7):
        clock.set(T0 + step)
        row = {**host.sample(), **gpu.sample()}
        if previous is not None:
            for key in counters:
                assert row[key] >= previous[key], key
        previous = row
    assert previous["network.tcpRetransmits"] > 0
    assert previous["gpu.1.correctedMemoryErrors"] > 0

    # Over a short step the counter grows by (about) rate × time.
    clock.set(T0 + 500)
    before = host.sample()
    clock.set(T0 + 500.01)
    after = host.sample()
    grown = (after["disk.nvme0n1.in"] - before["disk.nvme0n1.in"]) * MIB / 0.01
    assert abs(grown - before["disk.nvme0n1.readBps"]) < 0.01 * before["disk.nvme0n1.readBps"]
    sent = (after["network.sent"] - before["network.sent"]) / 0.01
    assert abs(sent - before["network.sentBps"]) < 0.01 * before["network.sentBps"]


def test_counters_start_at_zero_at_the_origin():
    host, clock = host_at(T0)
    row = host.sample()
    assert row["network.sent"] == row["disk.nvme0n1.in"] == row["network.tcpRetransmits"] == 0.0


def test_host_extras_describe_a_stable_machine():
    host, clock = host_at(T0 + 5, cores=16)
    info = host.extras()["host"]
    assert isinstance(info, HostInfo)
    assert info.hostname == "gpu-node-07"
    assert info.cpu_model == "AMD EPYC 7763 64-Core Processor"
    assert info.logical_cores == 16
    assert info.boot_time < T0
    rows = host.extras()["processes"]
    assert len(rows) == 15 and sum(r.kernel for r in rows) == 3 and all(isinstance(r, ProcessRow) for r in rows)
    assert any(r.command.startswith("python train.py") for r in rows)
    assert any(r.name == "sshd" for r in rows)
    clock.set(T0 + 600)
    later = host.extras()["processes"]
    assert {(r.pid, r.name) for r in later} == {(r.pid, r.name) for r in rows}
    assert [r.cpu_percent for r in later] == sorted((r.cpu_percent for r in later), reverse=True)


def test_make_fake_collectors_adds_gpus_on_request():
    clock = FakeClock(T0)
    assert [c.name for c in make_fake_collectors(clock)] == ["fake-host"]
    with_gpus = make_fake_collectors(clock, gpus=4, cores=2)
    keys = set().union(*(c.sample() for c in with_gpus))
    assert "gpu.3.powerWatts" in keys and "cpu.1.cpu_percent" in keys
    assert "cpu.2.cpu_percent" not in keys


def test_replay_is_deterministic_and_starts_no_thread():
    threads_before = threading.active_count()
    clock = FakeClock(T0)
    history = replay(make_fake_collectors(clock, gpus=1), clock, T0, 2.0, 30)
    assert threading.active_count() == threads_before
    assert [s.timestamp for s in history] == [T0 + 2.0 * k for k in range(30)]
    assert all(st.health is Health.OK for s in history for st in s.status)
    assert "host" in history[0].extras and "gpus" in history[0].extras

    again_clock = FakeClock(T0)
    again = replay(make_fake_collectors(again_clock, gpus=1), again_clock, T0, 2.0, 30)
    assert [dict(s.values) for s in again] == [dict(s.values) for s in history]


def test_replay_through_a_hub_uses_its_label_without_starting_it():
    clock = FakeClock(T0)
    hub = Hub(make_fake_collectors(clock, cores=2), clock=clock, label="node1")
    history = replay(hub, clock, T0 + 10, 1.0, 3)
    assert all(key.endswith("/l:node1") for key in history[0].values)
    assert "cpu.1.cpu_percent/l:node1" in history[-1].values
    assert hub.status()[0].reason == "starting"  # the hub itself never ran
