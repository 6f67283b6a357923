"""The GPU process table: its rows as text, and the keys that drive it on the monitor."""

from __future__ import annotations

from contextlib import asynccontextmanager

from test_snapshots_gpu import gpu_demo

from collectors.gpu import GpuProcess
from leet.ui.bindings import SYMON_KEYS
from widgets.gpuprocs import (
    arrange_gpu_processes,
    gpu_header_row,
    gpu_process_row,
    note_rows,
)

GIB = 2**30

TRAINER = GpuProcess(0, 48213, 48213, "ml", "/usr/bin/python3 train.py --lr 3e-4", 61 * GIB, 93.0, in_tree=True)
NOTEBOOK = GpuProcess(0, 30187, 30187, "ml", "python -m ipykernel_launcher", 2 * GIB, 1.0)
HIDDEN = GpuProcess(1, 4012731, 4012731)  # another PID namespace: nothing known but the PID
SERVER = GpuProcess(1, 51220, 51220, "infer", "python serve.py", 20 * GIB, None, mig="3g.40gb GI 1 CI 0")
ROWS = (HIDDEN, NOTEBOOK, SERVER, TRAINER)


def text(row) -> str:
    return "".join(part for part, _ in row)


# -- rows ------------------------------------------------------------------------


def test_sorted_by_gpu_memory_with_unknown_last():
    assert arrange_gpu_processes(ROWS) == [TRAINER, SERVER, NOTEBOOK, HIDDEN]
    assert arrange_gpu_processes(ROWS, "sm") == [TRAINER, NOTEBOOK, SERVER, HIDDEN]
    assert arrange_gpu_processes(ROWS, "gpu") == [TRAINER, NOTEBOOK, HIDDEN, SERVER], "by GPU, then MIG slice"


def test_filter_by_command_user_or_pid():
    assert arrange_gpu_processes(ROWS, pattern="infer") == [SERVER]
    assert arrange_gpu_processes(ROWS, pattern="4012731") == [HIDDEN]
    assert arrange_gpu_processes(ROWS, pattern="^python") == [SERVER, NOTEBOOK]


def test_a_row_reads_gpu_pid_user_memory_sm_and_command():
    line = text(gpu_process_row(TRAINER, 60, "value"))
    assert line.split()[:7] == ["●", "0", "48213", "ml", "61", "GiB", "93"]
    assert line.rstrip().endswith("python3 train.py --lr 3e-4"), "the program path is cut to its name"


def test_unknown_values_read_na_never_zero():
    fields = text(gpu_process_row(HIDDEN, 60, "value")).split()
    assert fields == ["1", "4012731", "N/A", "N/A", "N/A", "N/A"]
    assert "0" not in fields[2:]


def test_only_the_watched_tree_is_marked():
    assert text(gpu_process_row(TRAINER, 60, "value"))[0] == "●"
    assert text(gpu_process_row(NOTEBOOK, 60, "value"))[0] == " "
    assert gpu_process_row(TRAINER, 60, "value")[0] == ("●", "ok")


def test_a_mig_process_names_its_slice_by_profile():
    assert "[3g.40gb] python serve.py" in text(gpu_process_row(SERVER, 60, "value"))


def test_the_header_marks_the_sort_and_narrow_tables_drop_user():
    assert text(gpu_header_row(60, "memory")).split() == ["GPU", "PID", "USER", "GPUMEM▼", "SM%", "COMMAND"]
    assert "SM%▼" in text(gpu_header_row(60, "sm")) and "GPU▲" in text(gpu_header_row(60, "gpu")), "GPU 0 first: ascending"
    narrow = text(gpu_process_row(TRAINER, 34, "value"))
    assert len(narrow) == 34 and "ml" not in narrow.split() and "USER" not in text(gpu_header_row(34, "memory"))


def test_long_notes_wrap_onto_two_lines_at_most():
    note = "GPU processes are reported by host PID, which this container cannot see: per-process attribution is not possible here"
    rows = note_rows([note], 40)
    assert len(rows) == 2 and text(rows[0]).startswith("! GPU processes")
    assert text(rows[1]).rstrip().endswith("…") and all(len(text(r)) == 40 for r in rows)


# -- on the monitor --------------------------------------------------------------


@asynccontextmanager
async def running(gpus: int = 2, size: tuple[int, int] = (120, 36), **options):
    demo = gpu_demo(gpus, **options)
    async with demo.app.run_test(size=size) as pilot:
        await pilot.pause()
        yield demo.app, pilot


async def press(pilot, *keys: str) -> None:
    await pilot.press(*keys)
    await pilot.pause()


def status_line(app) -> str:
    return app.screen.query_one("#status").plain_rows()[0]


def vitals_text(app) -> str:
    return "\n".join(app.screen.query_one("#vitals").plain_rows())


async def test_gpu_rows_sit_above_host_processes_and_g_switches_the_tables():
    async with running() as (app, pilot):
        screen = app.screen
        gpu_table, host_table = screen.gpu_processes, screen.processes
        assert gpu_table.display and host_table.display
        assert gpu_table.region.y < host_table.region.y
        assert gpu_table.plain_rows()[0].startswith("GPU processes [1-4 of 4] ● watched")
        await press(pilot, "g")
        assert gpu_table.display and not host_table.display
        sidebar = screen.query_one("#sidebar")
        assert gpu_table.region.bottom == sidebar.content_region.bottom, "alone, the GPU table fills the sidebar"
        await press(pilot, "g")
        assert not gpu_table.display and host_table.display
        await press(pilot, "g")
        assert gpu_table.display and host_table.display


async def test_tab_focuses_gpu_processes_then_host_processes_then_charts():
    async with running() as (app, pilot):
        screen = app.screen
        await press(pilot, "tab")
        assert app.focused is screen.gpu_processes
        await press(pilot, "tab")
        assert app.focused is screen.processes
        await press(pilot, "tab")
        assert screen.grid.focused_chart_id() is not None
        await press(pilot, "shift+tab")
        assert app.focused is screen.processes


async def test_t_and_f_act_on_the_focused_gpu_table():
    async with running() as (app, pilot):
        screen = app.screen
        gpu_table = screen.gpu_processes
        await press(pilot, "tab", "t")
        assert "SM%▼" in gpu_table.plain_rows()[1]
        assert "CPU%▼" in screen.processes.plain_rows()[1], "the host table keeps its sort"
        await press(pilot, "f", *"ipykernel", "enter")
        assert [row.pid for row in gpu_table.shown] == [30187]
        assert len(screen.processes.shown) == 12
        await press(pilot, "ctrl+f")
        assert len(gpu_table.shown) == 4


async def test_a_box_without_a_driver_says_so_calmly():
    async with running(0, missing_driver=True) as (app, pilot):
        assert "GPU    no NVIDIA driver" in vitals_text(app)
        assert "⚠" not in status_line(app) and "⚠" not in vitals_text(app)
        assert not app.screen.gpu_processes.display
        await press(pilot, "g")
        assert not app.screen.gpu_processes.display and app.screen.processes.display


async def test_collector_notes_sit_by_the_gpu_table():
    note = "NVML reports no per-process SM% on MIG-enabled GPUs"
    async with running(4, lost=(3,), mig=(1,), notes=(note,)) as (app, pilot):
        rows = app.screen.gpu_processes.plain_rows()
        assert rows[1].startswith("! NVML reports no per-process SM%")
        assert note not in status_line(app)
        assert "⚠ GPU3 lost: fell off the bus" in status_line(app), "a lost GPU warns even with the sidebar hidden"
        vitals = vitals_text(app)
        assert "GPU3   lost fell off the bus" in vitals and "GPU1   MIG" in vitals and "1g.10gb" in vitals


def test_g_is_in_the_symon_help():
    assert any(key.keys == "g" and key.action == "cycle_tables" for key in SYMON_KEYS)
