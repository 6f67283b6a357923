"""The system monitor driven by keys, on fake hardware: what a person sees change."""

from __future__ import annotations

from contextlib import asynccontextmanager

from leet.testing.demo import make_demo
from leet.ui.screens.help import HelpScreen
from widgets.filterbar import FilterBar
from widgets.gridfit import MIN_CELL_HEIGHT, MIN_CELL_WIDTH

SIZE = (120, 36)
ALL_CHARTS = 16  # what the fake host (8 cores, one disk, one NIC, no GPU) is drawn as


@asynccontextmanager
async def running(size: tuple[int, int] = SIZE, **demo_options):
    demo = make_demo(**demo_options)
    async with demo.app.run_test(size=size) as pilot:
        await pilot.pause()
        yield demo, pilot


async def press(pilot, *keys: str) -> None:
    await pilot.press(*keys)
    await pilot.pause()


def header(app) -> str:
    return app.screen.query_one("#header").plain_rows()[0]


def grid(app):
    return app.screen.grid


def visible_ids(app) -> list[str]:
    return [chart_id for chart_id, _ in grid(app).visible_charts()]


def order(app) -> list[str]:
    """Every chart id in display order (all pages)."""
    return grid(app).chart_ids


def chart_widths(app) -> list[int]:
    return [chart.size.width for _, chart in grid(app).visible_charts()]


def focused_chart(app):
    """(chart id, the title line it draws) for the focused chart."""
    chart_id = grid(app).focused_chart_id()
    index = visible_ids(app).index(chart_id)
    return chart_id, grid(app).visible_charts()[index][1].plain_rows()[0]


def process_pids(app) -> list[int]:
    rows = app.screen.processes.plain_rows()[2:]
    return [int(row.split()[0]) for row in rows if row.strip()]


# -- help and quit ------------------------------------------------------------


async def test_h_and_question_mark_open_help_and_any_key_closes_it():
    async with running() as (demo, pilot):
        app = demo.app
        await press(pilot, "h")
        assert isinstance(app.screen, HelpScreen)
        help_text = str(app.screen.query_one("#help-text").render())
        assert "Next page" in help_text and "Press any key to close." in help_text
        await press(pilot, "x")
        assert not isinstance(app.screen, HelpScreen)
        await press(pilot, "question_mark")
        assert isinstance(app.screen, HelpScreen)
        await press(pilot, "escape")
        assert not isinstance(app.screen, HelpScreen)


async def test_q_closes_help_first_then_quits():
    async with running() as (demo, pilot):
        app = demo.app
        await press(pilot, "h", "q")
        assert app.is_running and not isinstance(app.screen, HelpScreen)
        await press(pilot, "q")
        assert not app.is_running
    assert app.return_code == 0


# -- data arriving ------------------------------------------------------------


async def test_charts_appear_and_update_as_samples_arrive():
    async with running(samples=0) as (demo, pilot):
        app = demo.app
        assert "no charts yet" in header(app)
        assert "collecting" in header(app)
        demo.feed(5)
        await pilot.pause()
        assert f"charts 1-9 of {ALL_CHARTS}" in header(app)
        assert "gpu-node-07" in header(app)
        cores = grid(app).visible_charts()[0][1]
        before = cores.plain_rows()
        assert "CPU Core (%)" in before[0]
        demo.feed(3)
        await pilot.pause()
        assert cores.plain_rows() != before


# -- chart focus ----------------------------------------------------------------


async def test_wasd_and_arrows_move_chart_focus_across_the_grid():
    async with running() as (demo, pilot):
        app = demo.app
        ids = order(app)
        assert app.focused is None, "nothing is focused at start"
        await press(pilot, "d")  # with nothing focused: the first chart
        assert focused_chart(app)[0] == ids[0] == "cpu.core"
        await press(pilot, "d")
        chart_id, title = focused_chart(app)
        assert chart_id == ids[1] == "memory.percent" and "System Memory" in title
        await press(pilot, "s")
        assert focused_chart(app)[0] == ids[4]
        await press(pilot, "a")
        assert focused_chart(app)[0] == ids[3]
        await press(pilot, "w")
        assert focused_chart(app)[0] == ids[0]
        await press(pilot, "right", "down", "down")
        assert focused_chart(app)[0] == ids[7]
        await press(pilot, "left", "up")
        assert focused_chart(app)[0] == ids[3]


async def test_stepping_past_the_last_chart_turns_the_page_and_back():
    async with running() as (demo, pilot):
        app = demo.app
        ids = order(app)
        await press(pilot, "d", "s", "s", "d", "d")
        assert focused_chart(app)[0] == ids[8]
        assert grid(app).page == 0
        await press(pilot, "d")
        assert grid(app).page == 1
        assert focused_chart(app)[0] == ids[9]
        assert f"charts 10-{ALL_CHARTS} of {ALL_CHARTS}" in header(app)
        await press(pilot, "a")
        assert grid(app).page == 0
        assert focused_chart(app)[0] == ids[8]


async def test_tab_cycles_focus_between_processes_and_charts():
    async with running() as (demo, pilot):
        app = demo.app
        assert app.focused is None
        await press(pilot, "tab")
        assert app.focused is app.screen.processes
        await press(pilot, "tab")
        assert focused_chart(app)[0] == "cpu.core"
        await press(pilot, "tab")
        assert app.focused is app.screen.processes
        await press(pilot, "shift+tab")
        assert focused_chart(app)[0] == "cpu.core"
        await press(pilot, "left_square_bracket", "tab")
        assert focused_chart(app)[0] == "cpu.core", "with the sidebar hidden, tab stays on the charts"


# -- pages ----------------------------------------------------------------------


async def test_page_keys_turn_chart_pages_and_stop_at_the_ends():
    async with running(grid=(2, 2)) as (demo, pilot):
        app = demo.app
        assert app.focused is None, "page keys reach the grid at start"
        pages = []
        for key in ("n", "n", "N", "end", "n", "home", "N", "pagedown", "pageup"):
            await press(pilot, key)
            pages.append(grid(app).page)
        assert pages == [1, 2, 1, 3, 3, 0, 0, 1, 0]
        await press(pilot, "end")
        assert f"charts 13-16 of {ALL_CHARTS}" in header(app)
        assert visible_ids(app) == order(app)[12:16]
        await press(pilot, "home")
        assert f"charts 1-4 of {ALL_CHARTS}" in header(app)


# -- chart filter ---------------------------------------------------------------


async def test_backslash_filters_charts_live_enter_keeps_escape_restores():
    async with running() as (demo, pilot):
        app = demo.app
        bar = app.screen.query_one(FilterBar)
        await press(pilot, "backslash")
        assert bar.display
        await press(pilot, "n", "e", "t")
        assert bar.display, "the charts filter while typing, before Enter"
        assert all(chart_id.startswith("network.") for chart_id in visible_ids(app))
        assert "charts 1-5 of 5 · filter (text): net" in header(app)
        await press(pilot, "enter")
        assert not bar.display
        assert len(visible_ids(app)) == 5
        assert focused_chart(app)[0] == "network.rx_rate"

        await press(pilot, "backslash", "backspace", "backspace", "backspace", "c", "p", "u")
        assert visible_ids(app) == ["cpu.core", "cpu.temp"]
        await press(pilot, "escape")
        assert not bar.display
        assert "filter (text): net" in header(app)
        assert len(visible_ids(app)) == 5

        await press(pilot, "ctrl+backslash")
        assert "filter" not in header(app)
        assert f"charts 1-9 of {ALL_CHARTS}" in header(app)


async def test_regex_filter_and_invalid_regex_falls_back_to_text():
    async with running() as (demo, pilot):
        app = demo.app
        await press(pilot, "backslash", *"^(cpu|disk)", "enter")
        ids = visible_ids(app)
        assert len(ids) == 6 and all(i.startswith(("cpu.", "disk.")) for i in ids)
        assert "filter (regex): ^(cpu|disk)" in header(app)

        # "(%" is not a valid regex; as text it finds every percent chart.
        await press(pilot, "ctrl+backslash", "backslash", "(", "%", "enter")
        assert visible_ids(app) == ["cpu.core", "memory.percent", "swap.used_percent", "disk.usage_percent"]
        assert "filter (text): (%" in header(app)

        await press(pilot, "ctrl+backslash", "backslash", *"gpu[", "enter")
        assert visible_ids(app) == []
        assert "filter (text): gpu[" in header(app)
        assert app.is_running


async def test_grid_reflows_when_fewer_charts_than_cells():
    async with running() as (demo, pilot):
        app = demo.app
        width = grid(app).size.width
        assert chart_widths(app) == [width // 3] * 9
        await press(pilot, "backslash", *"cpu", "enter")
        assert chart_widths(app) == [width // 2] * 2, "two charts share the full width"
        await press(pilot, "ctrl+backslash", "backslash", *"net", "enter")
        widths = chart_widths(app)
        assert widths[:3] == [width // 3] * 3
        assert widths[3] + widths[4] == width, "the last row has no blank cell"


# -- layout ---------------------------------------------------------------------


async def test_bracket_hides_the_sidebar_and_charts_grow_wider():
    async with running() as (demo, pilot):
        app = demo.app
        sidebar = app.screen.query_one("#sidebar")
        narrow = chart_widths(app)[0]
        await press(pilot, "left_square_bracket")
        assert not sidebar.display
        assert grid(app).size.width == SIZE[0]
        assert chart_widths(app)[0] > narrow
        await press(pilot, "left_square_bracket")
        assert sidebar.display
        assert chart_widths(app)[0] == narrow


async def test_c_and_r_change_the_grid_size():
    async with running() as (demo, pilot):
        app = demo.app
        await press(pilot, "left_square_bracket")  # room for a fourth column
        await press(pilot, "C")
        assert len(visible_ids(app)) == 6
        assert f"charts 1-6 of {ALL_CHARTS}" in header(app)
        await press(pilot, "R")
        assert len(visible_ids(app)) == 4
        await press(pilot, "r")
        assert len(visible_ids(app)) == 6
        await press(pilot, "c", "c")
        assert len(visible_ids(app)) == 12
        assert f"charts 1-12 of {ALL_CHARTS}" in header(app)


async def test_terminal_resize_shrinks_the_grid_to_fit():
    async with running() as (demo, pilot):
        app = demo.app
        assert len(visible_ids(app)) == 9
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        sizes = [chart.size for _, chart in grid(app).visible_charts()]
        assert 0 < len(sizes) < 9
        assert all(s.width >= MIN_CELL_WIDTH and s.height >= MIN_CELL_HEIGHT for s in sizes)
        assert f"charts 1-{len(sizes)} of {ALL_CHARTS}" in header(app)
        await pilot.resize_terminal(*SIZE)
        await pilot.pause()
        assert len(visible_ids(app)) == 9


# -- chart modes ----------------------------------------------------------------


async def test_y_cycles_the_focused_chart_through_log_and_heatmap():
    async with running() as (demo, pilot):
        app = demo.app
        await press(pilot, "d", "d")
        chart_id, _ = focused_chart(app)
        assert chart_id == "memory.percent"
        chart = dict(grid(app).visible_charts())[chart_id]
        def mode_line():
            return chart.plain_rows()[-1]  # the mode is named on the bottom border

        assert "log y" not in mode_line() and "heatmap" not in mode_line()
        await press(pilot, "y")
        assert "log y" in mode_line()
        await press(pilot, "y")
        assert "heatmap" in mode_line()
        await press(pilot, "y")
        assert "log y" not in mode_line() and "heatmap" not in mode_line()
        other = grid(app).visible_charts()[2][1].plain_rows()[-1]
        assert "log y" not in other and "heatmap" not in other


# -- processes ------------------------------------------------------------------


async def test_t_sorts_processes_by_cpu_or_memory():
    async with running() as (demo, pilot):
        app = demo.app
        table = app.screen.processes
        by_cpu = process_pids(app)
        assert "CPU%▼" in table.plain_rows()[1]
        cpu = {row.pid: row.cpu_percent for row in table.shown}
        assert [cpu[pid] for pid in by_cpu] == sorted(cpu.values(), reverse=True)
        await press(pilot, "t")
        assert "MEM▼" in table.plain_rows()[1]
        by_memory = process_pids(app)
        rss = {row.pid: row.rss_bytes for row in table.shown}
        assert [rss[pid] for pid in by_memory] == sorted(rss.values(), reverse=True)
        assert by_memory != by_cpu
        await press(pilot, "t")
        assert process_pids(app) == by_cpu


async def test_f_filters_processes_by_name_and_by_pid():
    async with running() as (demo, pilot):
        app = demo.app
        table = app.screen.processes
        await press(pilot, "f", *"data", "enter")
        assert sorted(process_pids(app)) == [48251, 48252]
        assert "filter: data" in table.plain_rows()[0]
        await press(pilot, "ctrl+f", "f", *"1422", "enter")
        assert process_pids(app) == [1422]
        await press(pilot, "ctrl+f")
        assert len(process_pids(app)) == 12


async def test_f_shows_a_hidden_sidebar():
    async with running() as (demo, pilot):
        app = demo.app
        await press(pilot, "left_square_bracket")
        await press(pilot, "f", *"bash", "enter")
        assert app.screen.query_one("#sidebar").display
        assert process_pids(app) == [29601]
