"""Host collectors against fake /proc and /sys trees: parsing and selection rules."""

from __future__ import annotations

import getpass
from pathlib import Path

import pytest

from collectors.cpu import CpuCollector
from collectors.disk import (
    DiskCollector,
    backing_devices,
    parse_diskstats,
    real_fs_types,
    real_mounts,
)
from collectors.network import NetworkCollector
from collectors.process import (
    CLOCK_TICKS,
    PAGE_SIZE,
    ProcessCollector,
    ProcessExited,
    parse_stat,
    ticks_between,
)
from collectors.processes import ProcessRow, ProcessTableCollector
from collectors.procfs import parse_mountinfo

MIB = 2**20

FILESYSTEMS = "nodev\tsysfs\nnodev\tproc\nnodev\toverlay\nnodev\ttmpfs\n\text4\n\txfs\n\tsquashfs\n"


def write(root: Path, path: str, text: str | bytes) -> None:
    target = root / path.lstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        target.write_bytes(text)
    else:
        target.write_text(text)


# --- CPU ---------------------------------------------------------------------

PROC_STAT_BEFORE = """\
cpu  200 0 100 1000 0 0 0 0 0 0
cpu0 100 0 50 500 0 0 0 0 0 0
cpu1 100 0 50 500 0 0 0 0 0 0
intr 12345
"""
# cpu0: +30 user +20 system +50 idle → 50 % busy; cpu1: +80 idle +20 iowait → 0 %.
PROC_STAT_AFTER = """\
cpu  250 0 120 1150 20 0 0 0 0 0
cpu0 130 0 70 550 0 0 0 0 0 0
cpu1 100 0 50 580 20 0 0 0 0 0
intr 12399
"""


def test_per_core_percent_over_the_interval(tmp_path):
    write(tmp_path, "/proc/stat", PROC_STAT_BEFORE)
    collector = CpuCollector(root=str(tmp_path))
    assert collector.probe().available
    write(tmp_path, "/proc/stat", PROC_STAT_AFTER)
    values = collector.sample()
    assert values == {"cpu.0.cpu_percent": 50.0, "cpu.1.cpu_percent": 0.0}


def test_cpu_temperature_is_the_mean_of_cpu_sensors_only(tmp_path):
    write(tmp_path, "/proc/stat", PROC_STAT_BEFORE)
    write(tmp_path, "/sys/class/hwmon/hwmon0/name", "coretemp\n")
    write(tmp_path, "/sys/class/hwmon/hwmon0/temp1_input", "50000\n")
    write(tmp_path, "/sys/class/hwmon/hwmon0/temp2_input", "60000\n")
    write(tmp_path, "/sys/class/hwmon/hwmon1/name", "nvme\n")
    write(tmp_path, "/sys/class/hwmon/hwmon1/temp1_input", "90000\n")
    collector = CpuCollector(root=str(tmp_path))
    collector.probe()
    assert collector.sample()["cpu.avg_temp"] == pytest.approx(55.0)


def test_no_cpu_sensors_means_no_temperature_key(tmp_path):
    write(tmp_path, "/proc/stat", PROC_STAT_BEFORE)
    collector = CpuCollector(root=str(tmp_path))
    collector.probe()
    assert "cpu.avg_temp" not in collector.sample()


def test_cpu_without_proc_stat_is_absent(tmp_path):
    probe = CpuCollector(root=str(tmp_path)).probe()
    assert not probe.available
    assert "/proc/stat" in probe.reason


# --- Disk --------------------------------------------------------------------

DISKSTATS = """\
   7       0 loop0 120 0 2400 10 0 0 0 0 0 10 10 0 0 0 0 0 0
 254       0 vda 14947 6008 854586 4875 1593 11694 497104 1758 0 3536 6900 0 0 0 0 0 0
   8      17 sdb1 100 0 2000 5 50 0 4000 5 0 10 10 0 0 0 0 0 0
   8       0 sda 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
 253       0 zram0 5 0 40 0 0 0 0 0 0 0 0 0 0 0 0 0 0
"""

MOUNTS_PLAIN = """\
22 27 0:21 / /proc rw - proc proc rw
27 1 254:0 / / rw,relatime - ext4 /dev/root rw
40 27 8:17 / /data rw - xfs /dev/sdb1 rw
41 27 7:0 / /snap/tool rw - squashfs /dev/loop0 ro
"""

MOUNTS_OVERLAY = """\
600 500 0:50 / / rw - overlay overlay rw,lowerdir=/l,upperdir=/u
601 600 0:51 / /proc rw - proc proc rw
602 600 8:17 / /scratch rw - xfs /dev/sdb1 rw
603 600 254:0 /var/lib/docker/containers/abc/hosts /etc/hosts rw - ext4 /dev/vda rw
"""

MOUNTS_OVERLAY_ONLY = """\
600 500 0:50 / / rw - overlay overlay rw
603 600 254:0 /var/lib/docker/containers/abc/hosts /etc/hosts rw - ext4 /dev/vda rw
"""


def devices_for(paths, mountinfo: str) -> list[str]:
    counters = parse_diskstats(DISKSTATS)
    mounts = real_mounts(parse_mountinfo(mountinfo), real_fs_types(FILESYSTEMS))
    return backing_devices(paths, mounts, counters)


def test_root_path_is_backed_by_the_root_device_found_by_number():
    assert devices_for(["/"], MOUNTS_PLAIN) == ["vda"]


def test_mount_points_match_as_string_prefixes():
    assert devices_for(["/data"], MOUNTS_PLAIN) == ["vda", "sdb1"]


def test_overlay_root_uses_every_real_device_seen():
    assert devices_for(["/"], MOUNTS_OVERLAY) == ["sdb1"]


def test_nothing_matching_falls_back_to_disks_with_io():
    # Bind mounts do not count, so only the all-zero sda, loop0 and zram0 are left out.
    assert devices_for(["/"], MOUNTS_OVERLAY_ONLY) == ["vda", "sdb1"]


def test_all_zero_diskstats_lines_are_skipped():
    counters = parse_diskstats(DISKSTATS)
    assert counters["sda"].all_zero
    assert not counters["vda"].all_zero


def fake_disk_root(tmp_path: Path, diskstats: str = DISKSTATS) -> None:
    write(tmp_path, "/proc/1/mountinfo", MOUNTS_PLAIN)
    write(tmp_path, "/proc/filesystems", FILESYSTEMS)
    write(tmp_path, "/proc/diskstats", diskstats)


def test_disk_io_is_mib_since_start_and_bytes_per_second(tmp_path):
    fake_disk_root(tmp_path)
    collector = DiskCollector(paths=("/",), root=str(tmp_path))
    assert collector.probe().available
    assert collector.devices == ["vda"]
    more = DISKSTATS.replace("854586", str(854586 + 2048)).replace("497104", str(497104 + 4096))
    write(tmp_path, "/proc/diskstats", more)
    values = collector.sample()
    assert values["disk.vda.in"] == pytest.approx(1.0)
    assert values["disk.vda.out"] == pytest.approx(2.0)
    assert values["disk.vda.readBps"] > 0
    assert values["disk.vda.writeBps"] > values["disk.vda.readBps"]
    assert "disk./.usagePercent" in values
    assert 0 <= values["disk./.usagePercent"] <= 100


def test_missing_disk_path_gives_no_keys_and_a_reason(tmp_path):
    fake_disk_root(tmp_path)
    missing = str(tmp_path / "not-mounted")
    collector = DiskCollector(paths=("/", missing), root=str(tmp_path))
    assert collector.probe().available
    values = collector.sample()
    assert not any(key.startswith(f"disk.{missing}.") for key in values)
    assert "does not exist" in collector.path_problems[missing]
    assert "disk./.usageGB" in values


def test_only_missing_paths_and_no_diskstats_is_absent(tmp_path):
    missing = str(tmp_path / "nowhere")
    probe = DiskCollector(paths=(missing,), root=str(tmp_path)).probe()
    assert not probe.available
    assert "does not exist" in probe.reason


# --- Network -----------------------------------------------------------------

NET_DEV = """\
Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo: {lo} 10 0 0 0 0 0 0 {lo} 10 0 0 0 0 0 0
  eth0: {eth0_rx} 10 0 0 0 0 0 0 {eth0_tx} 10 0 0 0 0 0 0
  eth1: {eth1} 10 0 0 0 0 0 0 {eth1} 10 0 0 0 0 0 0
 bond0: {bond0} 10 0 0 0 0 0 0 {bond0} 10 0 0 0 0 0 0
 lback: {lback} 10 0 0 0 0 0 0 {lback} 10 0 0 0 0 0 0
"""

SNMP = """\
Ip: Forwarding DefaultTTL
Ip: 1 64
Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens AttemptFails EstabResets CurrEstab InSegs OutSegs RetransSegs InErrs OutRsts InCsumErrors
Tcp: 1 200 120000 -1 10 5 0 0 2 1000 900 {retrans} 0 0 0
"""


def fake_net(tmp_path: Path, retrans: int = 7, **received_and_sent: int) -> None:
    counters = dict.fromkeys(("lo", "eth0_rx", "eth0_tx", "eth1", "bond0", "lback"), 0)
    counters.update(received_and_sent)
    write(tmp_path, "/proc/net/dev", NET_DEV.format(**counters))
    write(tmp_path, "/proc/net/snmp", SNMP.format(retrans=retrans))


def test_network_counts_real_interfaces_only(tmp_path):
    write(tmp_path, "/sys/class/net/eth0/flags", "0x1003\n")
    write(tmp_path, "/sys/class/net/eth1/flags", "0x1803\n")
    write(tmp_path, "/sys/class/net/eth1/master", "")  # enslaved to bond0
    write(tmp_path, "/sys/class/net/bond0/flags", "0x1403\n")
    write(tmp_path, "/sys/class/net/lback/flags", "0x9\n")  # IFF_LOOPBACK
    fake_net(tmp_path, lo=100, eth0_rx=1000, eth0_tx=500, eth1=50, bond0=50, lback=10)
    collector = NetworkCollector(root=str(tmp_path))
    assert collector.probe().available
    fake_net(
        tmp_path, lo=9999, eth0_rx=3000, eth0_tx=600, eth1=550, bond0=550, lback=999, retrans=10
    )
    values = collector.sample()
    assert values["network.recv"] == 2000 + 500
    assert values["network.sent"] == 100 + 500
    assert values["network.tcpRetransmits"] == 3
    assert values["network.recvBps"] > values["network.sentBps"] > 0


def test_network_totals_never_go_back_when_an_interface_vanishes(tmp_path):
    fake_net(tmp_path, eth0_rx=1000, bond0=0)
    collector = NetworkCollector(root=str(tmp_path))
    collector.probe()
    fake_net(tmp_path, eth0_rx=5000, bond0=0)
    first = collector.sample()["network.recv"]
    write(tmp_path, "/proc/net/dev", "\n".join(NET_DEV.splitlines()[:2]) + "\n")
    second = collector.sample()["network.recv"]
    assert first == 4000
    assert second == first


def test_network_without_snmp_has_no_retransmit_key(tmp_path):
    fake_net(tmp_path)
    (tmp_path / "proc/net/snmp").unlink()
    collector = NetworkCollector(root=str(tmp_path))
    collector.probe()
    values = collector.sample()
    assert "network.tcpRetransmits" not in values
    assert values["network.recv"] == 0


# --- Process -----------------------------------------------------------------


def stat_line(pid, name, *, ppid=1, ticks=(0, 0), threads=1, rss_pages=0, start=0, state="S"):
    fields = [state, ppid, 0, 0, 0, -1, 0, 0, 0, 0, 0, ticks[0], ticks[1], 0, 0, 20, 0]
    fields += [threads, 0, start, 0, rss_pages]
    fields += [0] * 30
    return f"{pid} ({name}) " + " ".join(str(f) for f in fields) + "\n"


def fake_process(root, pid, name, *, children=(), cmdline=b"", **stat):
    write(root, f"/proc/{pid}/stat", stat_line(pid, name, **stat))
    write(root, f"/proc/{pid}/task/{pid}/children", " ".join(str(c) for c in children))
    write(root, f"/proc/{pid}/cmdline", cmdline)


def test_stat_line_with_a_tricky_name_parses():
    stat = parse_stat(stat_line(42, "my (odd) name", ticks=(7, 3), threads=4, rss_pages=10))
    assert stat is not None
    assert stat.name == "my (odd) name"
    assert stat.cpu_ticks == 10
    assert stat.threads == 4
    assert stat.rss_bytes == 10 * PAGE_SIZE


def test_ticks_count_whole_only_for_processes_born_in_the_span():
    old = parse_stat(stat_line(5, "x", ticks=(100, 0), start=10))
    later = parse_stat(stat_line(5, "x", ticks=(130, 0), start=10))
    assert ticks_between(old, later, before_boot=1000.0) == 30
    newborn = parse_stat(stat_line(6, "y", ticks=(40, 0), start=2000 * CLOCK_TICKS))
    assert ticks_between(None, newborn, before_boot=1000.0) == 40
    joined = parse_stat(stat_line(7, "z", ticks=(40, 0), start=10))
    assert ticks_between(None, joined, before_boot=1000.0) == 0


def build_tree(root: Path, *, child_ticks=(0, 0)) -> None:
    fake_process(root, 100, "trainer", children=(101, 102), threads=4, rss_pages=256)
    fake_process(root, 101, "worker", ppid=100, children=(103,), threads=2, rss_pages=256,
                 ticks=child_ticks)
    fake_process(root, 102, "worker", ppid=100, threads=2, rss_pages=256)
    fake_process(root, 103, "helper", ppid=101, threads=1, rss_pages=256)
    fake_process(root, 999, "unrelated", threads=50, rss_pages=99999)
    write(root, "/proc/meminfo", f"MemTotal: {1024 * 1024} kB\n")  # 1 GiB


def test_process_tree_sums_the_pid_and_all_descendants(tmp_path):
    build_tree(tmp_path)
    collector = ProcessCollector(100, track_tree=True, root=str(tmp_path), capacity=2.0)
    assert collector.probe().available
    build_tree(tmp_path, child_ticks=(50, 50))
    values = collector.sample()
    assert values["proc.cpu.threads"] == 9
    assert values["proc.memory.rssMB"] == pytest.approx(4 * 256 * PAGE_SIZE / MIB)
    assert values["proc.memory.percent"] == pytest.approx(4 * 256 * PAGE_SIZE / 2**30 * 100)
    assert values["cpu"] > 0


def test_process_alone_without_track_tree(tmp_path):
    build_tree(tmp_path)
    collector = ProcessCollector(100, root=str(tmp_path), capacity=2.0)
    collector.probe()
    values = collector.sample()
    assert values["proc.cpu.threads"] == 4
    assert values["cpu"] == 0.0


def test_process_tree_without_children_files_scans_parents(tmp_path):
    build_tree(tmp_path)
    for pid in (100, 101, 102, 103, 999):
        (tmp_path / f"proc/{pid}/task/{pid}/children").unlink()
    collector = ProcessCollector(100, track_tree=True, root=str(tmp_path), capacity=2.0)
    collector.probe()
    assert collector.sample()["proc.cpu.threads"] == 9


def test_missing_process_is_absent_with_a_clear_reason(tmp_path):
    (tmp_path / "proc").mkdir()
    probe = ProcessCollector(1234, root=str(tmp_path)).probe()
    assert not probe.available
    assert probe.reason == "process 1234 has exited"


def test_process_without_procfs_says_so(tmp_path):
    probe = ProcessCollector(1234, root=str(tmp_path)).probe()
    assert not probe.available
    assert "not available on this system" in probe.reason


def test_process_that_exits_raises_a_clear_error(tmp_path):
    build_tree(tmp_path)
    collector = ProcessCollector(100, root=str(tmp_path), capacity=2.0)
    collector.probe()
    write(tmp_path, "/proc/100/stat", stat_line(100, "trainer", state="Z"))
    with pytest.raises(ProcessExited, match="process 100 has exited"):
        collector.sample()


# --- Process table -----------------------------------------------------------


def test_process_table_rows_have_owner_command_and_cpu(tmp_path):
    fake_process(tmp_path, 10, "python", cmdline=b"python\0train.py\0--lr\x000.1\0", rss_pages=512,
                 threads=3, ticks=(10, 0))
    fake_process(tmp_path, 11, "kworker/0:1")
    fake_process(tmp_path, 12, "a_long_program_", cmdline=b"/usr/bin/a_long_program_name\0")
    write(tmp_path, "/proc/meminfo", f"MemTotal: {1024 * 1024} kB\n")
    collector = ProcessTableCollector(root=str(tmp_path))
    assert collector.probe().available
    fake_process(tmp_path, 10, "python", cmdline=b"python\0train.py\0--lr\x000.1\0", rss_pages=512,
                 threads=3, ticks=(60, 0))
    assert collector.sample() == {}
    rows = {row.pid: row for row in collector.extras()["processes"]}
    assert set(rows) == {10, 11, 12}
    python = rows[10]
    assert isinstance(python, ProcessRow)
    assert python.command == "python train.py --lr 0.1"
    assert python.user == getpass.getuser()
    assert python.threads == 3
    assert python.rss_bytes == 512 * PAGE_SIZE
    assert python.memory_percent == pytest.approx(512 * PAGE_SIZE / 2**30 * 100)
    assert python.cpu_percent > 0
    assert rows[11].command == "kworker/0:1"
    assert rows[11].cpu_percent == 0.0
    assert rows[12].name == "a_long_program_name"


def test_process_table_notices_an_exec(tmp_path):
    fake_process(tmp_path, 10, "bash", cmdline=b"bash\0")
    collector = ProcessTableCollector(root=str(tmp_path))
    collector.probe()
    fake_process(tmp_path, 10, "python", cmdline=b"python\0run.py\0")
    collector.sample()
    (row,) = collector.extras()["processes"]
    assert row.name == "python"
    assert row.command == "python run.py"
