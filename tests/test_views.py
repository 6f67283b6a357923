"""What the symon screen derives from the latest sample: vitals, header, filters."""

from __future__ import annotations

from dataclasses import dataclass

from stored_series import stored

from collectors.base import CollectorStatus, Health
from leet.model.catalog import group
from leet.ui.views.charts import filter_specs
from leet.ui.views.health import extra_notes, health_notes
from leet.ui.views.symon import format_uptime, host_summary, vitals_model


@dataclass(frozen=True)
class Host:
    hostname: str = "gpu-node-07"
    cpu_model: str = "AMD EPYC 7763"
    physical_cores: int = 4
    logical_cores: int = 8
    memory_total: int = 32 * 2**30
    memory_limited_by_cgroup: bool = False
    swap_total: int = 0
    boot_time: float = 1000.0
    load_avg: tuple = (1.5, 0.75, 0.25)
    cpu_limit: float | None = None


LATEST = {
    "cpu.0.cpu_percent": 20.0,
    "cpu.1.cpu_percent": 60.0,
    "memory_percent": 25.0,
    "memory.used": 8 * 2**30,
    "disk./.usagePercent": 50.0,
    "disk./.usageGB": 100.0,
    "network.recvBps": 2048.0,
    "network.sentBps": 512.0,
    "disk.sda.readBps": 1024.0,
    "disk.sdb.readBps": 1024.0,
    "disk.sda.writeBps": 0.0,
}


def test_vitals_meters_and_rates():
    model = vitals_model(LATEST, Host(), ("/",))
    meters = {m.label: m for m in model.meters}
    assert meters["CPU"].text == "40%" and abs(meters["CPU"].fraction - 0.4) < 1e-9
    assert meters["Mem"].text == "8.00/32.0 GiB"
    assert meters["Swap"].text == "0/0 B" and meters["Swap"].fraction == 0.0  # no swap on this host: shown as none
    assert meters["Disk /"].text == "100/200 GiB"
    lines = dict(model.lines)
    assert lines["Net"] == "↓ 2.00 KiB/s  ↑ 512 B/s"
    assert lines["I/O"].startswith("R 2.00 KiB/s")
    assert model.title == "AMD EPYC 7763" and "4C/8T" in model.subtitle


def test_header_summary():
    assert host_summary(Host(), now=1000.0 + 3 * 86400 + 7200) == "gpu-node-07 • up 3d 2h • load 1.50 0.75 0.25"
    assert host_summary(None) == "collecting system metrics…"
    assert format_uptime(59) == "0m" and format_uptime(3600 * 5 + 60 * 7) == "5h 7m"


def test_health_notes_name_the_collector_and_reason():
    statuses = (
        CollectorStatus("cpu", Health.OK),
        CollectorStatus("disk", Health.FAILING, "OSError: [Errno 5] Input/output error"),
        CollectorStatus("nvidia", Health.ABSENT, "no NVIDIA driver"),
    )
    assert health_notes(statuses) == ["disk: OSError: [Errno 5] Input/output error", "nvidia: no NVIDIA driver"]


def test_chart_filter_matches_titles_keys_and_labels():
    specs = group(stored(["cpu.0.cpu_percent", "network.recvBps", "gpu.0.gpu/l:rank3", "memory_percent"]))
    def titles(pattern):
        return [s.title for s in filter_specs(specs, pattern)]

    assert titles("network") == ["Network Rx"]
    assert titles("rank3") == [s.title for s in specs if s.family == "GPU"]
    assert titles("memory_percent") == ["System Memory"]
    assert len(titles("^(cpu|network)")) == 2
    assert titles("gpu[") == []  # invalid regex: plain substring, which nothing contains


def test_extra_notes_collects_partial_trouble():
    extras = {"notes.disk": ("disk path /data does not exist",), "host": object(), "notes.gpu": ()}
    assert extra_notes(extras) == ["disk path /data does not exist"]
