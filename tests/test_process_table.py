"""The process table as an htop user meets it: columns that fit, whole kernel thread names, sort by
any column, the tree, the mouse, the watched process, and a cursor that keeps its process."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from contextlib import asynccontextmanager
from dataclasses import replace

import pytest
from test_collectors_procfs import fake_process, stat_line, write
from textual.events import MouseScrollDown, MouseScrollUp

from collectors.base import Sample
from collectors.process import CLOCK_TICKS
from collectors.processes import ProcessRow, ProcessTableCollector
from leet.testing.demo import make_demo
from leet.ui.screens.process_dialogs import SortPicker
from widgets.process_rows import (
    COMMAND_MIN,
    USER_ROOM,
    arrange,
    arrange_tree,
    choose_columns,
    column_spans,
    command_text,
    cpu_text,
    measured_widths,
    memory_text,
    process_row,
    time_text,
)

GIB = 2**30


def row(pid, name="x", *, ppid=1, cpu=0.0, rss=0, user="ml", command=None, state="S", threads=1, seconds=0.0, kernel=False):
    return ProcessRow(
        pid=pid, name=name, user=user, cpu_percent=cpu, rss_bytes=rss, memory_percent=0.0, threads=threads,
        command=name if command is None else command, ppid=ppid, state=state, cpu_seconds=seconds, kernel=kernel,
    )


INIT = row(1, "systemd", ppid=0, cpu=0.1, rss=12 * 2**20, user="root", command="/sbin/init")
SSHD = row(700, "sshd", cpu=0.3, rss=9 * 2**20, user="root", command="sshd: ml@pts/0")
BASH = row(800, "bash", ppid=700, cpu=0.0, rss=5 * 2**20, command="-bash")
TRAINER = row(900, "python", ppid=800, cpu=320.0, rss=38 * GIB, command="/usr/bin/python3 train.py --lr 3e-4", state="R")
LOADER_A = row(901, "pt_data_worker", ppid=900, cpu=85.0, rss=6 * GIB, command="python train.py --lr 3e-4")
LOADER_B = row(902, "pt_data_worker", ppid=900, cpu=80.0, rss=7 * GIB, command="python train.py --lr 3e-4")
KTHREADD = row(2, "kthreadd", ppid=0, user="root", command="[kthreadd]", kernel=True)
SOFTIRQ = row(14, "ksoftirqd/0", ppid=2, cpu=0.2, user="root", command="[ksoftirqd/0]", kernel=True)
WORKER = row(4, "kworker/R-rcu_gp", ppid=2, user="root", command="[kworker/R-rcu_gp]", kernel=True)
ROWS = (BASH, LOADER_B, SOFTIRQ, INIT, TRAINER, WORKER, SSHD, LOADER_A, KTHREADD)


def text(cells) -> str:
    return "".join(part for part, _ in cells)


def keys(layout) -> list[str]:
    return [column.key for column, _ in layout]


# -- columns for a width ----------------------------------------------------------


# Table widths at 80×24, 100×30, 120×36 and 160×48: the sidebar (28–46) less its border and padding.
@pytest.mark.parametrize("width", [26, 28, 34, 44])
def test_pid_cpu_memory_and_command_always_fit_the_sidebar(width):
    widths = measured_widths(ROWS)
    layout = choose_columns(width, widths)
    assert keys(layout)[0] == "pid" and {"cpu", "memory"} <= set(keys(layout))
    assert keys(layout)[-1] == "command" and layout[-1][1] >= COMMAND_MIN
    assert sum(cells + 1 for _, cells in layout) - 1 == width, "the command takes the rest of the width"


def test_user_is_dropped_first_when_narrow_and_extras_come_only_with_room():
    widths = measured_widths(ROWS)
    assert "user" not in keys(choose_columns(26, widths))
    assert "user" not in keys(choose_columns(30, widths))
    with_user = choose_columns(34, widths)
    assert "user" in keys(with_user) and with_user[-1][1] >= USER_ROOM, "USER only beside a usable command"
    wide = keys(choose_columns(44, widths))
    assert wide[:2] == ["pid", "user"] and "threads" not in wide
    full = keys(choose_columns(120, widths))
    assert full == ["pid", "user", "state", "cpu", "memory", "memory_percent", "threads", "time", "command"]


def test_command_never_vanishes_even_at_a_silly_width():
    layout = choose_columns(12, measured_widths(ROWS))
    assert keys(layout)[-1] == "command" and layout[-1][1] >= 1


def test_a_row_at_the_narrowest_sidebar_keeps_memory_whole_and_the_command():
    layout = choose_columns(26, measured_widths(ROWS))
    line = text(process_row(TRAINER, layout, "value"))
    assert len(line) == 26
    assert line.split()[:3] == ["900", "320", "38G"]
    assert "python3" in line, "the command keeps its cells"


def test_header_clicks_map_to_columns():
    layout = choose_columns(30, measured_widths(ROWS))
    spans = column_spans(layout)
    assert [key for _, _, key in spans] == ["pid", "cpu", "memory", "command"]
    assert spans[0][0] == 0 and spans[-1][1] == 30
    assert [first for first, _, _ in column_spans(layout, marker=1)] == [first + 1 for first, _, _ in spans]


def test_numbers_read_as_htop_writes_them():
    assert [memory_text(v) for v in (0, 512 * 1024, 4.8 * 2**20, 38 * GIB, 1000 * 2**20)] == ["0B", "512K", "4.8M", "38G", "1.0G"]
    assert [cpu_text(v) for v in (0.04, 85.0, 320.4)] == ["0.0", "85.0", "320"]
    assert [time_text(v) for v in (5.5, 754.25, 3 * 3600 + 125, 500 * 3600)] == ["0:05.50", "12:34.25", "3h02:05", "20d20h"]


# -- kernel threads ---------------------------------------------------------------------


def test_kernel_threads_keep_their_whole_names():
    assert command_text(SOFTIRQ) == "[ksoftirqd/0]"
    assert command_text(WORKER) == "[kworker/R-rcu_gp]"
    assert command_text(SOFTIRQ, "name") == "ksoftirqd/0"
    layout = choose_columns(30, measured_widths(ROWS))
    assert text(process_row(SOFTIRQ, layout, "value")).rstrip().endswith(" [ksoftirqd/0]")


def test_program_name_or_command_line():
    assert command_text(TRAINER) == "python3 train.py --lr 3e-4", "the program path is cut to its name"
    assert command_text(TRAINER, "name") == "python"
    assert command_text(SSHD) == "sshd: ml@pts/0"


def test_the_collector_brackets_kernel_threads_with_their_whole_names(tmp_path):
    fake_process(tmp_path, 1, "init", ppid=0, cmdline=b"/sbin/init\0")
    fake_process(tmp_path, 2, "kthreadd", ppid=0)
    fake_process(tmp_path, 14, "ksoftirqd/0", ppid=2)
    fake_process(tmp_path, 4, "kworker/R-rcu_gp", ppid=2, state="I")
    fake_process(tmp_path, 13954, "kworker/u8:3-events_unbound", ppid=2, state="I")
    fake_process(tmp_path, 50, "defunct", ppid=1, state="Z")  # a zombie: no command line, yet no kernel thread
    fake_process(tmp_path, 60, "python", ppid=1, ticks=(250, 50), threads=3, cmdline=b"python\0train.py\0", state="R")
    write(tmp_path, "/proc/meminfo", f"MemTotal: {1024 * 1024} kB\n")
    collector = ProcessTableCollector(root=str(tmp_path))
    assert collector.probe().available
    collector.sample()
    rows = {r.pid: r for r in collector.extras()["processes"]}
    assert rows[2].command == "[kthreadd]" and rows[2].kernel
    assert rows[14].command == "[ksoftirqd/0]" and rows[14].kernel
    assert rows[4].command == "[kworker/R-rcu_gp]" and rows[4].state == "I"
    assert rows[13954].command == "[kworker/u8:3-events_unbound]", "past 15 characters, as the kernel gives it"
    assert not rows[50].kernel and rows[50].command == "defunct" and rows[50].state == "Z"
    python = rows[60]
    assert (python.ppid, python.state, python.threads, python.kernel) == (1, "R", 3, False)
    assert python.cpu_seconds == pytest.approx(300 / CLOCK_TICKS)
    assert rows[1].ppid == 0


def test_the_collector_follows_a_new_parent_each_sweep(tmp_path):
    fake_process(tmp_path, 1, "init", ppid=0, cmdline=b"/sbin/init\0")
    fake_process(tmp_path, 70, "sleep", ppid=65, cmdline=b"sleep\x0060\0")
    collector = ProcessTableCollector(root=str(tmp_path), memory_total=2**30)
    collector.probe()
    collector.sample()
    assert {r.pid: r.ppid for r in collector.extras()["processes"]}[70] == 65
    write(tmp_path, "/proc/70/stat", stat_line(70, "sleep", ppid=1))  # its parent exited: adopted by init
    collector.sample()
    assert {r.pid: r.ppid for r in collector.extras()["processes"]}[70] == 1


def test_the_collector_on_this_machine_knows_parents_states_and_kernel_threads():
    child = subprocess.Popen(["sleep", "30"])
    try:
        collector = ProcessTableCollector()
        assert collector.probe().available
        collector.sample()
        rows = {r.pid: r for r in collector.extras()["processes"]}
        assert rows[os.getpid()].ppid == os.getppid()
        assert rows[os.getpid()].state in "RS"
        assert rows[child.pid].ppid == os.getpid() and not rows[child.pid].kernel
        line = arrange_tree(list(rows.values()), "pid")
        order = [entry.row.pid for entry in line]
        assert order.index(os.getpid()) < order.index(child.pid), "a parent sits above its child in the tree"
        assert next(e for e in line if e.row.pid == child.pid).guide.endswith(("└─", "├─"))
        kernel = [r for r in rows.values() if r.kernel]
        if 2 not in rows:
            return  # a PID namespace of its own (a container) sees no kernel threads
        assert kernel and all(r.pid == 2 or r.ppid == 2 for r in kernel)
        for thread in kernel:
            assert thread.command == f"[{thread.name}]" and command_text(thread) == thread.command, "never cut at its /"
            try:
                with open(f"/proc/{thread.pid}/stat") as handle:
                    stat = handle.read()
            except OSError:
                continue  # gone since
            now = stat[stat.find("(") + 1 : stat.rfind(")")]
            # A workqueue worker's name ends in the queue it last served, which changes as it works.
            assert thread.name.partition("-")[0] == now.partition("-")[0]
    finally:
        child.kill()
        child.wait()


# -- sort and tree -----------------------------------------------------------------


def test_sort_by_any_column_either_way_with_pid_breaking_ties():
    pids = lambda rows: [r.pid for r in rows]  # noqa: E731
    assert pids(arrange(ROWS, "cpu"))[:3] == [900, 901, 902]
    assert pids(arrange(ROWS, "memory"))[:3] == [900, 902, 901]
    assert pids(arrange(ROWS, "pid")) == sorted(pids(ROWS))
    assert pids(arrange(ROWS, "pid", descending=True)) == sorted(pids(ROWS), reverse=True)
    by_user = arrange(ROWS, "user")
    assert [r.user for r in by_user] == sorted(r.user for r in ROWS)
    assert pids(by_user)[:3] == [800, 900, 901], "ties stay in PID order"
    by_command = [command_text(r) for r in arrange(ROWS, "command")]
    assert by_command == sorted(by_command, key=str.casefold)
    assert pids(arrange(ROWS, "cpu", "data")) == [901, 902]


def test_the_tree_puts_children_under_parents_in_sort_order():
    lines = arrange_tree(ROWS, "cpu")
    drawn = [f"{line.guide}{line.row.name}" for line in lines]
    assert drawn == [
        "systemd",
        "└─sshd",
        "  └─bash",
        "    └─python",
        "      ├─pt_data_worker",
        "      └─pt_data_worker",
        "kthreadd",
        "├─ksoftirqd/0",
        "└─kworker/R-rcu_gp",
    ]
    assert [line.row.pid for line in lines][4:6] == [901, 902], "siblings follow the sort: CPU"
    by_memory = arrange_tree(ROWS, "memory")
    assert [line.row.pid for line in by_memory][4:6] == [902, 901]


def test_a_filtered_tree_keeps_the_ancestors_of_matches_as_context():
    lines = arrange_tree(ROWS, "cpu", "pt_data")
    assert [line.row.pid for line in lines] == [1, 700, 800, 900, 901, 902]
    assert [line.context for line in lines] == [True, True, True, True, False, False]


def test_a_deep_tree_gives_its_guide_way_before_the_command():
    chain = [row(1, "init", ppid=0)] + [row(n, f"level{n}", ppid=n - 1) for n in range(2, 12)]
    lines = arrange_tree(chain, "pid")
    deepest = lines[-1]
    assert len(deepest.guide) == 20
    layout = choose_columns(30, measured_widths(chain))
    drawn = text(process_row(deepest.row, layout, "value", guide=deepest.guide))
    command = drawn[-layout[-1][1]:]
    assert command.startswith("…") and "└─level11" in command, "the nearest levels of the guide and the whole name stay"


def test_a_parent_loop_still_lists_every_process_once():
    a, b = row(10, "a", ppid=11), row(11, "b", ppid=10)
    lines = arrange_tree([a, b, INIT], "pid")
    assert sorted(line.row.pid for line in lines) == [1, 10, 11]


def test_the_rows_are_built_without_textual():
    code = "import sys, widgets.process_rows; print(any(name.split('.')[0] == 'textual' for name in sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == "False", result.stderr


# -- on the monitor ------------------------------------------------------------------


@asynccontextmanager
async def running(size=(120, 36), *, pid=None, tree=False):
    demo = make_demo()
    if pid is not None:
        demo.app.config = replace(demo.app.config, pid=pid, track_tree=tree)
    async with demo.app.run_test(size=size) as pilot:
        await pilot.pause()
        yield demo.app, pilot


async def press(pilot, *keys: str) -> None:
    await pilot.press(*keys)
    await pilot.pause()


def body(table) -> list[str]:
    return [line for line in table.plain_rows()[2:] if line.strip()]


def pids(table) -> list[int]:
    return [int(line.split()[0].lstrip("●")) for line in body(table)]


def many(count: int) -> list[ProcessRow]:
    return [row(1000 + n, f"job{n}", cpu=float(count - n), rss=(n + 1) * 2**20) for n in range(count)]


@pytest.mark.parametrize("size", [(80, 24), (100, 30), (120, 36), (160, 48)])
async def test_at_every_terminal_size_memory_and_command_show_whole(size):
    async with running(size) as (app, pilot):
        table = app.screen.processes
        heading = table.plain_rows()[1].split()
        assert heading[:3] == ["PID", "CPU%▼", "MEM"] or heading[:2] == ["PID", "USER"]
        assert heading[-1] == "COMMAND"
        first = body(table)[0]
        assert "38G" in first and "python" in first
        assert ("USER" in heading) == (size[0] >= 160)


async def test_c_on_the_focused_table_steps_through_command_line_full_path_and_program_name():
    async with running(size=(200, 48)) as (app, pilot):
        table = app.screen.processes
        assert "python train.py" in body(table)[0] and "/opt/conda" not in body(table)[0]
        await press(pilot, "tab", "c")
        assert body(table)[0].split()[-1].startswith("/opt/conda/bin/py")
        await press(pilot, "c")
        assert table.plain_rows()[1].split()[-1] == "PROGRAM"
        assert body(table)[0].split()[-1] == "python"
        await press(pilot, "c")
        assert table.plain_rows()[1].split()[-1] == "COMMAND"
        assert "python train.py" in body(table)[0] and "/opt/conda" not in body(table)[0]


async def test_T_shows_the_tree_and_F5_flattens_it():
    async with running() as (app, pilot):
        table = app.screen.processes
        await press(pilot, "T")
        assert "tree" in table.plain_rows()[0]
        lines = body(table)
        assert lines[0].split()[-1] == "init"
        shown = table.shown
        parents = {r.pid: r.ppid for r in shown}
        order = [r.pid for r in shown]
        assert all(order.index(parents[pid]) < order.index(pid) for pid in order if parents[pid] in parents)
        assert any("└─python" in line and line.split()[0] == "48213" for line in lines)
        await press(pilot, "f5")
        assert "tree" not in table.plain_rows()[0]
        assert not any("└─" in line for line in body(table))


async def test_a_filtered_tree_shows_how_matches_descend_from_init():
    async with running() as (app, pilot):
        table = app.screen.processes
        await press(pilot, "T", "f", *"data", "enter")
        assert pids(table) == [1, 29554, 29601, 48190, 48213, 48251, 48252]


async def test_f6_chooses_the_sort_column_and_esc_leaves_it():
    async with running() as (app, pilot):
        table = app.screen.processes
        await press(pilot, "f6")
        assert isinstance(app.screen, SortPicker)
        await press(pilot, "escape")
        assert table.sort == "cpu"
        await press(pilot, "f6", "home", "enter")  # the first choice: PID
        assert not isinstance(app.screen, SortPicker)
        assert table.sort == "pid" and "PID▲" in table.plain_rows()[1]
        assert pids(table) == sorted(pids(table))
        await press(pilot, "f6", "enter")  # the sorted column again: reversed
        assert "PID▼" in table.plain_rows()[1]
        assert pids(table) == sorted(pids(table), reverse=True)


async def test_less_and_greater_move_the_sort_between_shown_columns():
    async with running() as (app, pilot):
        table = app.screen.processes
        await press(pilot, "greater_than_sign")
        assert table.sort == "memory" and "MEM▼" in table.plain_rows()[1]
        await press(pilot, "greater_than_sign")
        assert table.sort == "command" and "COMMAND▲" in table.plain_rows()[1]
        await press(pilot, "greater_than_sign")
        assert table.sort == "pid"
        await press(pilot, "less_than_sign", "less_than_sign")
        assert table.sort == "memory"
        await press(pilot, "t")
        assert table.sort == "cpu", "t still steps CPU ↔ memory"


async def test_a_sort_by_a_hidden_column_is_named_in_the_title():
    async with running() as (app, pilot):
        table = app.screen.processes
        table.set_sort("user")
        await pilot.pause()
        assert "by USER▲" in table.plain_rows()[0]
        assert [r.user for r in table.shown] == sorted(r.user for r in table.shown)


async def test_clicking_a_heading_sorts_and_again_reverses():
    async with running() as (app, pilot):
        table = app.screen.processes
        heading = table.plain_rows()[1]
        await pilot.click(table, offset=(heading.index("MEM") + 1, 1))
        await pilot.pause()
        assert table.sort == "memory" and "MEM▼" in table.plain_rows()[1]
        rss = [r.rss_bytes for r in table.shown]
        assert rss == sorted(rss, reverse=True)
        await pilot.click(table, offset=(heading.index("MEM") + 1, 1))
        await pilot.pause()
        assert "MEM▲" in table.plain_rows()[1]
        assert [r.rss_bytes for r in table.shown] == sorted(rss)
        await pilot.click(table, offset=(1, 1))
        await pilot.pause()
        assert table.sort == "pid"


async def test_clicking_a_row_selects_it_and_focuses_the_table():
    async with running() as (app, pilot):
        table = app.screen.processes
        assert app.focused is None
        third = pids(table)[2]
        await pilot.click(table, offset=(3, 4))
        await pilot.pause()
        assert app.focused is table
        assert table.selected_pid == third
        await press(pilot, "down")
        assert table.selected_pid == pids(table)[3]


async def wheel(pilot, table, event, times: int = 1) -> None:
    for _ in range(times):
        await pilot._post_mouse_events([event], table, offset=(5, 5))
    await pilot.pause()


async def test_the_wheel_scrolls_the_table():
    async with running() as (app, pilot):
        table = app.screen.processes
        table.set_processes(many(60))
        await pilot.pause()
        assert table.plain_rows()[0].startswith("Processes [1-")
        await wheel(pilot, table, MouseScrollDown, 2)
        assert table.plain_rows()[0].startswith("Processes [7-")
        assert pids(table)[0] == 1006
        assert table.selected_pid in pids(table), "the cursor stays in view"
        await wheel(pilot, table, MouseScrollUp, 5)
        assert table.plain_rows()[0].startswith("Processes [1-")
        assert app.screen.grid.page == 0, "the wheel over the table leaves the charts alone"


async def test_the_cursor_keeps_its_process_as_rows_reorder_and_go():
    async with running() as (app, pilot):
        table = app.screen.processes
        rows = many(60)
        table.set_processes(rows)
        await press(pilot, "tab", "down", "down")
        assert table.selected_pid == 1002
        # Its CPU drops: it sorts to the bottom, off the page; the cursor follows it there.
        moved = [replace(r, cpu_percent=-1.0) if r.pid == 1002 else r for r in rows]
        table.set_processes(moved)
        await pilot.pause()
        assert table.selected_pid == 1002
        assert pids(table)[-1] == 1002 and "[" in table.plain_rows()[0]
        # It exits: the cursor goes to its neighbour, the one that was above it at the bottom.
        table.set_processes([r for r in moved if r.pid != 1002])
        await pilot.pause()
        assert table.selected_pid == 1059
        # One in the middle exits: the one below it takes the cursor.
        await press(pilot, "home", "down", "down")  # 1000, 1001, 1003
        assert table.selected_pid == 1003
        table.set_processes([r for r in moved if r.pid not in (1002, 1003)])
        await pilot.pause()
        assert table.selected_pid == 1004


async def test_until_a_row_is_picked_the_table_shows_its_top():
    async with running() as (app, pilot):
        table = app.screen.processes
        rows = many(60)
        table.set_processes(rows)
        await pilot.pause()
        table.set_processes([replace(r, cpu_percent=-1.0) if r.pid == 1000 else r for r in rows])
        await pilot.pause()
        assert pids(table)[0] == 1001, "no cursor was placed: the busiest process stays on top"


async def test_after_a_shrink_and_grow_the_top_comes_back_into_view():
    demo = make_demo()
    # A machine with more processes than the table has rows.
    last = demo.source.time_span[1]
    demo.source.ingest(Sample(last + 2.0, {}, {"processes": tuple(many(60))}, demo.source.status))
    async with demo.app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        table = demo.app.screen.processes
        assert pids(table)[0] == 1000
        await press(pilot, "tab", *["down"] * 5)
        assert table.selected_pid == 1005
        await pilot.resize_terminal(80, 16)
        await pilot.pause()
        assert 1005 in pids(table), "the cursor stays in view"
        assert 1000 not in pids(table), "too short to show the top and the cursor"
        await pilot.resize_terminal(120, 36)
        await pilot.pause()
        assert pids(table)[0] == 1000 and 1005 in pids(table)
        assert table.plain_rows()[0].startswith("Processes [1-")


async def test_the_watched_process_and_its_tree_are_marked():
    async with running(pid=48190, tree=True) as (app, pilot):
        table = app.screen.processes
        assert "● watched" in table.plain_rows()[0]
        marked = {int(line[1:].split()[0]) for line in body(table) if line.startswith("●")}
        assert marked == {48190, 48213, 48251, 48252, 48260}
    async with running(pid=48190) as (app, pilot):
        marked = {int(line[1:].split()[0]) for line in body(app.screen.processes) if line.startswith("●")}
        assert marked == {48190}, "without --tree only the process itself"


def test_the_cli_pid_reaches_the_monitor(tmp_path):
    # --pid and --tree travel through the config to the screen that marks them.
    from leet.config import Config
    from leet.model.store import Store
    from leet.sources.live import LiveSource
    from leet.ui.app import LeetApp

    app = LeetApp(LiveSource(Store()), Config(pid=4242, track_tree=True), live=False)
    screen = app._symon_screen()
    assert (screen.watched_pid, screen.watch_tree) == (4242, True)


@pytest.mark.skipif(sys.platform != "linux", reason="procfs")
def test_cpu_time_grows_for_a_busy_process():
    collector = ProcessTableCollector()
    collector.probe()
    collector.sample()
    before = {r.pid: r.cpu_seconds for r in collector.extras()["processes"]}[os.getpid()]
    deadline = time.process_time() + 0.2
    while time.process_time() < deadline:
        pass
    collector.sample()
    after = {r.pid: r.cpu_seconds for r in collector.extras()["processes"]}[os.getpid()]
    assert after >= before + 0.1


# -- the GPU process table sorts the same way --------------------------------------


def test_gpu_rows_sort_by_any_column_and_unknowns_stay_last_either_way():
    from test_gpuprocs import HIDDEN, NOTEBOOK, SERVER, TRAINER
    from test_gpuprocs import ROWS as GPU_ROWS

    from widgets.gpuprocs import arrange_gpu_processes

    assert arrange_gpu_processes(GPU_ROWS, "memory", descending=False) == [NOTEBOOK, SERVER, TRAINER, HIDDEN]
    assert arrange_gpu_processes(GPU_ROWS, "pid") == [NOTEBOOK, TRAINER, SERVER, HIDDEN]
    assert arrange_gpu_processes(GPU_ROWS, "user") == [SERVER, NOTEBOOK, TRAINER, HIDDEN]
    assert arrange_gpu_processes(GPU_ROWS, "user", descending=True)[-1] == HIDDEN


async def test_the_gpu_table_sorts_by_click_chooser_and_arrows():
    from test_snapshots_gpu import gpu_demo

    demo = gpu_demo(2)
    async with demo.app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        app = demo.app
        gpu_table = app.screen.gpu_processes
        await press(pilot, "tab")
        assert app.focused is gpu_table
        heading = gpu_table.plain_rows()[1]
        await pilot.click(gpu_table, offset=(heading.index("PID"), 1))
        await pilot.pause()
        assert gpu_table.sort == "pid" and "PID▲" in gpu_table.plain_rows()[1]
        assert [r.pid for r in gpu_table.shown] == sorted(r.pid for r in gpu_table.shown)
        await press(pilot, "less_than_sign")
        assert gpu_table.sort == "gpu"
        await press(pilot, "f6")
        picker = app.screen
        assert isinstance(picker, SortPicker) and "GPU MEM" in "\n".join(picker.list.plain_rows())
        await press(pilot, "escape")
        assert app.screen.processes.sort == "cpu", "the host table keeps its own sort"


async def test_kernel_threads_are_hidden_until_K_and_the_title_counts_them():
    async with running(size=(160, 48)) as (app, pilot):
        table = app.screen.processes
        assert not any("[kthreadd]" in line for line in body(table))
        assert "+3 kthr" in table.plain_rows()[0]
        await press(pilot, "K")
        assert any("[kworker/u16:2-" in line for line in body(table))
        assert any("[kthreadd]" in line for line in body(table))
        assert "kthr" not in table.plain_rows()[0]
        await press(pilot, "K")
        assert not any("[kthreadd]" in line for line in body(table))
