"""Host figures that must read as the system's own tools read them.

The CPU meter leaves the monitor's own start-up out, the disk meter shows
``df``'s size, a host without swap says so, and every clock label on one
screen is written alike.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from collectors.cpu import CpuCollector, OwnTicks, own_busy_ticks, parse_task_stat
from collectors.disk import DiskCollector, DiskSpace, disk_space
from collectors.hostinfo import HostInfoCollector
from collectors.memory import MemoryCollector
from leet.common.ticks import time_format
from leet.testing.demo import make_demo
from leet.ui.views.symon import vitals_model
from widgets.chartframe import ChartView, compose_rows, row_text
from widgets.raster import SeriesView

GIB = 2**30


def write(root: Path, path: str, text: str) -> None:
    target = root / path.lstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)


# -- CPU: the monitor's own start-up is not the host's load ---------------------------


def proc_stat(*cores: tuple[int, int]) -> str:
    """/proc/stat with one line per core: (busy ticks as user, idle ticks)."""
    total_busy = sum(busy for busy, _ in cores)
    total_idle = sum(idle for _, idle in cores)
    lines = [f"cpu  {total_busy} 0 0 {total_idle} 0 0 0 0 0 0"]
    lines += [f"cpu{i} {busy} 0 0 {idle} 0 0 0 0 0 0" for i, (busy, idle) in enumerate(cores)]
    return "\n".join(lines) + "\nintr 1\n"


def task_stat(tid: int, utime: int, stime: int, core: int, name: str = "python (leet)") -> str:
    fields = ["R", 1] + [0] * 9 + [utime, stime] + [0] * 23 + [core] + [0] * 13
    return f"{tid} ({name}) " + " ".join(str(f) for f in fields) + "\n"


def own_process(root: Path, total: tuple[int, int], threads: dict[int, tuple[int, int, int]]) -> None:
    """This process as /proc/self shows it: all its ticks, and per thread (utime, stime, core)."""
    write(root, "/proc/self/stat", task_stat(4242, *total, core=0))
    for tid, (utime, stime, core) in threads.items():
        write(root, f"/proc/self/task/{tid}/stat", task_stat(tid, utime, stime, core))


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def started(root: Path, clock: Clock | None = None, startup: float = 5.0) -> CpuCollector:
    write(root, "/proc/stat", proc_stat((100, 900), (100, 900)))
    own_process(root, (40, 10), {4242: (40, 10, 0)})
    collector = CpuCollector(root=str(root), startup=startup, clock=clock or Clock())
    assert collector.probe().available
    return collector


def test_parse_task_stat_reads_ticks_and_last_core():
    assert parse_task_stat(task_stat(7, 30, 12, 5, name="odd ) name")) == (42, 5)
    assert parse_task_stat("7 (short) R 1 2") is None


def test_the_first_sample_leaves_out_the_monitors_own_start_up(tmp_path):
    """An idle host while leet imports its UI: the import's ticks are not the host's load."""
    collector = started(tmp_path)
    # cpu0: +60 busy, +40 idle; cpu1: +10 busy, +90 idle. leet's main thread ran 50 of cpu0's busy ticks.
    write(tmp_path, "/proc/stat", proc_stat((160, 940), (110, 990)))
    own_process(tmp_path, (80, 20), {4242: (80, 20, 0)})
    values = collector.sample()
    assert values["cpu.0.cpu_percent"] == pytest.approx(10.0)  # 84 % before: (60 − 50) / 100
    assert values["cpu.1.cpu_percent"] == pytest.approx(10.0)


def test_ticks_of_a_thread_that_moved_still_come_off_only_once(tmp_path):
    collector = started(tmp_path)
    # leet's 50 ticks ran on cpu0, but its thread was last seen on cpu1 (10 busy ticks there).
    write(tmp_path, "/proc/stat", proc_stat((160, 940), (110, 990)))
    own_process(tmp_path, (80, 20), {4242: (80, 20, 1)})
    values = collector.sample()
    assert values["cpu.1.cpu_percent"] == pytest.approx(0.0)
    assert values["cpu.0.cpu_percent"] == pytest.approx(20.0)  # the other 40 come off cpu0's 60
    assert sum(values[f"cpu.{i}.cpu_percent"] for i in (0, 1)) == pytest.approx(70 - 50)


def test_ticks_of_a_thread_that_ended_come_off_the_busy_cores(tmp_path):
    collector = started(tmp_path)
    # An import thread ran 30 ticks and ended: only the process total still counts them.
    write(tmp_path, "/proc/stat", proc_stat((130, 970), (130, 970)))
    own_process(tmp_path, (70, 10), {4242: (40, 10, 0)})
    values = collector.sample()
    assert values["cpu.0.cpu_percent"] == pytest.approx(15.0)
    assert values["cpu.1.cpu_percent"] == pytest.approx(15.0)


def test_after_start_up_the_monitor_counts_like_any_process(tmp_path):
    clock = Clock()
    collector = started(tmp_path, clock)
    clock.now += 2.0
    write(tmp_path, "/proc/stat", proc_stat((160, 940), (110, 990)))
    own_process(tmp_path, (80, 20), {4242: (80, 20, 0)})
    assert collector.sample()["cpu.0.cpu_percent"] == pytest.approx(10.0)  # began in start-up
    clock.now += 10.0  # start-up is over, but this interval began in it: still left out
    write(tmp_path, "/proc/stat", proc_stat((220, 980), (120, 1080)))
    own_process(tmp_path, (120, 20), {4242: (120, 20, 0)})
    assert collector.sample()["cpu.0.cpu_percent"] == pytest.approx(20.0)
    # The first interval that began after start-up is counted whole, leet's 40 ticks included.
    write(tmp_path, "/proc/stat", proc_stat((280, 1020), (130, 1170)))
    own_process(tmp_path, (160, 20), {4242: (160, 20, 0)})
    assert collector.sample()["cpu.0.cpu_percent"] == pytest.approx(60.0)


def test_no_start_up_window_counts_everything(tmp_path):
    collector = started(tmp_path, startup=0)
    write(tmp_path, "/proc/stat", proc_stat((160, 940), (110, 990)))
    own_process(tmp_path, (80, 20), {4242: (80, 20, 0)})
    assert collector.sample()["cpu.0.cpu_percent"] == pytest.approx(60.0)


def test_without_proc_self_nothing_is_taken_out(tmp_path):
    write(tmp_path, "/proc/stat", proc_stat((100, 900)))
    collector = CpuCollector(root=str(tmp_path))
    collector.probe()
    write(tmp_path, "/proc/stat", proc_stat((150, 950)))
    assert collector.sample() == {"cpu.0.cpu_percent": 50.0}


def test_own_ticks_never_exceed_a_cores_busy_ticks():
    before = OwnTicks(0, {1: (0, 0), 2: (0, 1)})
    after = OwnTicks(500, {1: (300, 0), 2: (100, 1)})
    own = own_busy_ticks(before, after, {0: 50, 1: 20})
    assert own == {0: 50, 1: 20}  # 500 own ticks, but only 70 busy: all of them, no more


def test_start_up_on_this_machine_is_left_out():
    """The real /proc: work this process does in start-up is not counted, and per-core values stay in range."""
    burn = CpuCollector(startup=0)
    quiet = CpuCollector()
    assert burn.probe().available and quiet.probe().available
    start = os.times()
    while sum(os.times()[:2]) - sum(start[:2]) < 0.3:
        pass
    counted, left_out = burn.sample(), quiet.sample()
    cores = [key for key in counted if key.endswith(".cpu_percent")]
    assert cores and set(cores) == {key for key in left_out if key.endswith(".cpu_percent")}
    assert all(0.0 <= left_out[key] <= 100.0 for key in cores)
    # 0.3 s of this process's work spread over the cores' ticks: at least most of it comes off.
    total_counted = sum(counted[key] for key in cores)
    total_left = sum(left_out[key] for key in cores)
    assert total_left <= total_counted


# -- disk: df's size, not used + available -----------------------------------------------


def test_disk_space_is_what_statvfs_gives_in_dfs_formulas():
    stats = os.statvfs("/")
    space = DiskSpace.of(stats)
    assert space.size == stats.f_blocks * stats.f_frsize
    assert space.used == (stats.f_blocks - stats.f_bfree) * stats.f_frsize
    assert space.available == stats.f_bavail * stats.f_frsize
    capacity = space.used + space.available
    assert space.use_percent == math.ceil(space.used * 100 / capacity)
    assert space.percent == pytest.approx(space.used / capacity * 100)


def test_df_rounds_use_up_and_its_size_counts_reserved_blocks():
    # ext4 keeps 5 % for root: 100 blocks, 40 used, 55 free for users.
    space = DiskSpace(size=100 * 4096, used=40 * 4096, available=55 * 4096)
    assert space.use_percent == 43  # 42.1 % up, as df writes it
    assert space.percent == pytest.approx(40 / 95 * 100)  # W&B's usagePercent keeps its own formula
    assert DiskSpace(size=0, used=0, available=0).use_percent == 0


def _df(path: str) -> tuple[int, int, int, int]:
    out = subprocess.run(["df", "-B1", "-P", path], capture_output=True, text=True, check=True).stdout
    fields = out.splitlines()[-1].split()
    return int(fields[1]), int(fields[2]), int(fields[3]), int(fields[4].rstrip("%"))


@pytest.mark.skipif(shutil.which("df") is None, reason="no df here")
def test_disk_figures_match_df_on_this_machine():
    for _ in range(10):  # other writers may move the figures while df runs: take a still moment
        before = disk_space("/")
        size, used, available, percent = _df("/")
        if disk_space("/") == before:
            break
    assert (before.size, before.used, before.available, before.use_percent) == (size, used, available, percent)


def test_the_disk_meter_shows_dfs_size_and_the_keys_keep_wandbs_meaning(tmp_path):
    collector = DiskCollector(paths=("/",), root=str(tmp_path))
    assert collector.probe().available
    values = collector.sample()
    space = collector.extras()["disk_space"]["/"]
    assert values["disk./.usagePercent"] == pytest.approx(space.used / (space.used + space.available) * 100)
    assert values["disk./.usageGB"] == pytest.approx(space.used / GIB)
    # A file system whose size is far more than used + available (reserved or held-back blocks).
    reserved = DiskSpace(size=252 * GIB, used=26 * GIB, available=75 * GIB)
    latest = {"disk./.usagePercent": reserved.percent, "disk./.usageGB": 26.0}
    meter = next(m for m in vitals_model(latest, None, ("/",), disks={"/": reserved}).meters if m.label == "Disk /")
    assert meter.text == "26.0/252 GiB"
    assert meter.fraction == pytest.approx(0.26)  # df's Use%: 26 / (26 + 75), up
    # Without the collector's figures, the size is worked back from W&B's keys: used + available.
    fallback = next(m for m in vitals_model(latest, None, ("/",)).meters if m.label == "Disk /")
    assert fallback.text == "26.0/101 GiB"


# -- swap: none is shown as none -------------------------------------------------------------


MEMINFO_NO_SWAP = """\
MemTotal:       16384000 kB
MemFree:         8192000 kB
MemAvailable:   12288000 kB
Cached:          2048000 kB
SwapTotal:             0 kB
SwapFree:              0 kB
"""


def test_a_host_without_swap_shows_swap_as_zero(tmp_path):
    write(tmp_path, "/proc/meminfo", MEMINFO_NO_SWAP)
    memory = MemoryCollector(root=str(tmp_path))
    assert memory.probe().available
    latest = memory.sample()
    assert "swap.used" not in latest  # no W&B key made up for swap that is not there
    host = HostInfoCollector(root=str(tmp_path))
    host.probe()
    info = host.extras()["host"]
    assert info.swap_total == 0
    meters = {m.label: m for m in vitals_model(latest, info, ()).meters}
    assert meters["Swap"].text == "0/0 B" and meters["Swap"].fraction == 0.0
    assert meters["Mem"].text == "3.91/15.6 GiB"


def test_swap_is_not_guessed_before_the_host_is_known():
    assert "Swap" not in {m.label for m in vitals_model({"memory_percent": 10.0}, None, ()).meters}


# -- one clock format per screen -----------------------------------------------------------

CLOCK = re.compile(r"\b\d\d:\d\d(?::\d\d)?\b|\b[A-Z][a-z]{2} \d\d\b")


def clock_labels(rows: list[str]) -> list[str]:
    return [found for row in rows for found in CLOCK.findall(row)]


def shapes(labels: list[str]) -> set[str]:
    return {re.sub(r"\d", "9", re.sub(r"[A-Z][a-z]{2}", "Mon", label)) for label in labels}


@pytest.mark.parametrize("span", [50.0, 120.0, 149.0, 150.0, 600.0, 3 * 3600.0, 86400.0, 3 * 86400.0])
def test_charts_of_one_span_label_the_clock_alike_at_any_width(span: float):
    t0 = 1_772_700_000.0
    series = SeriesView.points([t0, t0 + span], [1.0, 2.0])
    view = ChartView(title="x", data=(series,), x_range=(t0, t0 + span))
    labels = []
    for width in (18, 24, 31, 40, 57, 80, 121):
        labels += clock_labels([row_text(row) for row in compose_rows(view, width, 10)[-2:-1]])
    assert labels and len(shapes(labels)) == 1, labels
    assert len(labels[0]) == {"%H:%M:%S": 8, "%H:%M": 5, "%b %d": 6}[time_format(span)]


def _screen_labels(app) -> list[str]:
    labels = []
    for _, chart in app.screen.grid.visible_charts():
        rows = chart.plain_rows()
        labels += clock_labels(rows[-2:-1])  # the x axis, above the bottom border
    return labels


@pytest.mark.parametrize(("samples", "size", "grid"), [(30, (120, 40), (3, 3)), (61, (150, 40), (2, 3)), (61, (97, 30), (2, 2)), (200, (160, 45), (3, 4))])
async def test_every_time_axis_on_the_symon_screen_writes_the_same_format(samples, size, grid):
    demo = make_demo(samples=samples, grid=grid)
    async with demo.app.run_test(size=size) as pilot:
        await pilot.pause()
        labels = _screen_labels(demo.app)
        widths = {chart.size.width for _, chart in demo.app.screen.grid.visible_charts()}
    assert labels, "no clock labels drawn"
    assert len(shapes(labels)) == 1, (widths, labels)
