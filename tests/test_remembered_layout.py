"""The layout is remembered: change it, quit, start again with the same state folder, and it is back."""

from __future__ import annotations

import json
import os
from contextlib import asynccontextmanager
from pathlib import Path

from pilot_waits import until

from leet.config import Config, load
from leet.config.layout_state import FILE_NAME, LayoutFile, state_dir
from leet.config.remembered import remembered
from leet.testing.demo import make_demo
from leet.ui.app import LeetApp

SIZE = (120, 36)


def _state() -> Path:
    return state_dir()  # the test's own folder (tests/conftest.py)


def _remembered_app(demo, config: Config | None = None) -> LeetApp:
    """The demo's app again, remembering in the test's state folder."""
    config, remembering = remembered(config or demo.app.config)
    demo.app = LeetApp(demo.source, config, clock=demo.clock, live=False, remembering=remembering)
    return demo.app


@asynccontextmanager
async def symon(config: Config | None = None, **demo_options):
    demo = make_demo(**demo_options)
    app = _remembered_app(demo, config)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        yield app, pilot
        app.exit()  # as q does: the layout is written on the way out


async def test_grid_sidebar_tables_sort_tree_and_modes_come_back():
    async with symon() as (app, pilot):
        await pilot.press("C", "R", "T", "greater_than_sign", "right", "y")
        await pilot.pause()
        screen = app.screen
        chart_id = screen.grid.focused_chart_id()
        mode = screen._modes[chart_id]
        expected = (screen.grid.rows, screen.grid.cols, screen.processes.sort, screen.processes.descending)
        assert (screen.grid.rows, screen.grid.cols) == (2, 2) and screen.processes.sort != "cpu"
    saved = json.loads((_state() / FILE_NAME).read_text())["views"]["symon"]
    assert saved["grid"] == [2, 2] and saved["tree"] is True and saved["modes"] == {chart_id: mode}
    async with symon() as (app, pilot):
        screen = app.screen
        assert (screen.grid.rows, screen.grid.cols, screen.processes.sort, screen.processes.descending) == expected
        assert screen.processes.tree_view is True
        assert screen._modes == {chart_id: mode}


async def test_hidden_sidebar_comes_back_hidden():
    async with symon() as (app, pilot):
        await pilot.press("left_square_bracket")
        await pilot.pause()
    async with symon() as (app, pilot):
        assert app.screen.query_one("#sidebar").display is False


async def test_a_grid_flag_beats_the_remembered_grid(tmp_path):
    async with symon() as (app, pilot):
        await pilot.press("c")
        await pilot.pause()
    flagged = load({"grid_rows": 2, "grid_cols": 2}, environ={}, path=tmp_path / "none.toml")
    async with symon(flagged) as (app, pilot):
        assert (app.screen.grid.rows, app.screen.grid.cols) == (2, 2)


async def test_changes_are_saved_within_a_second_without_quitting():
    async with symon() as (app, pilot):
        await pilot.press("left_square_bracket")
        path = _state() / FILE_NAME
        for _ in range(200):  # the keeper waits SAVE_DELAY, then writes
            if path.exists():
                break
            await pilot.pause(0.05)
        assert json.loads(path.read_text())["views"]["symon"]["sidebar"] is False


async def test_a_hostile_file_is_one_notice_and_the_defaults():
    os.makedirs(_state(), exist_ok=True)
    (_state() / FILE_NAME).write_text('{"version": 1, "views": {"symon": {"grid": [99, -1], "sidebar": "no", "sort": ["x", 1]}}}')
    async with symon() as (app, pilot):
        screen = app.screen
        assert (screen.grid.rows, screen.grid.cols) == (3, 3) and screen.query_one("#sidebar").display is True
    (_state() / FILE_NAME).write_text("{broken")
    async with symon() as (app, pilot):
        notices = [n.message for n in app._notifications]
        assert len(notices) == 1 and "remembered layout not used" in notices[0]
        assert (app.screen.grid.rows, app.screen.grid.cols) == (3, 3)


async def test_an_unwritable_folder_is_one_notice_and_leet_runs_on(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("LEET_STATE_DIR", str(blocker / "state"))
    async with symon() as (app, pilot):
        for key in ("c", "C", "c"):
            await pilot.press(key)
            app.layout_keeper.save()
        notices = [n.message for n in app._notifications if "not remembered" in n.message]
        assert len(notices) == 1 and "cannot write" in notices[0]


async def test_no_remember_leaves_the_file_alone():
    config = load({"remember": False}, environ={}, path=Path("/nonexistent/config.toml"))
    async with symon(config) as (app, pilot):
        assert app.layout_keeper is None
        await pilot.press("c")
    assert not (_state() / FILE_NAME).exists()


def test_layout_file_never_touches_config_toml(tmp_path):
    LayoutFile(tmp_path).save()
    assert not any(path.name.endswith(".toml") for path in tmp_path.iterdir())


# -- the run view, the workspace and the cluster ------------------------------------------
def _remembering(app: LeetApp) -> LeetApp:
    """``app`` remembering its layout in the test's state folder, as ``leet`` starts it."""
    from leet.ui.layout_keeper import LayoutKeeper

    config, remembering = remembered(app.config)
    assert remembering is not None
    app.config = config
    app.layout_keeper = LayoutKeeper(app, remembering, config.origin)
    return app


@asynccontextmanager
async def started(make):
    app = _remembering(make().app)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        yield app, pilot
        app.exit()


def _shown(app, *names: str) -> dict[str, bool]:
    return {name: bool(app.screen.query_one(f"#{name}").display) for name in names}


async def test_the_run_views_panes_grid_and_modes_come_back():
    from leet.testing.demo import make_run_demo

    async with started(make_run_demo) as (app, pilot):
        before = _shown(app, "metrics", "system", "console", "overview")
        await pilot.press("4", "2", "left_square_bracket", "C", "right", "y")
        await pilot.pause()
        after = _shown(app, "metrics", "system", "console", "overview")
        assert after == {"metrics": True, "system": not before["system"], "console": not before["console"], "overview": not before["overview"]}
        grid = app.screen.query_one("#metrics")
        size, modes = (grid.rows, grid.cols), dict(app.screen._modes)
        assert size == (3, 2) and len(modes) == 1
    async with started(make_run_demo) as (app, pilot):
        assert _shown(app, "metrics", "system", "console", "overview") == after
        grid = app.screen.query_one("#metrics")
        assert (grid.rows, grid.cols) == size and app.screen._modes == modes


async def test_the_workspace_runs_list_and_grid_come_back():
    from leet.testing.workspace_demo import make_workspace_demo

    async with started(make_workspace_demo) as (app, pilot):
        await pilot.press("left_square_bracket", "R")
        await pilot.pause()
        assert _shown(app, "runs") == {"runs": False}
    async with started(make_workspace_demo) as (app, pilot):
        assert _shown(app, "runs") == {"runs": False}
        assert (app.screen.grid.rows, app.screen.grid.cols) == (2, 2)


async def test_the_clusters_panes_sort_and_heatmap_metric_come_back():
    from leet.testing.cluster_demo import make_cluster_demo

    async with started(lambda: make_cluster_demo(nodes=8, gpus=2)) as (app, pilot):
        await pilot.press("right_square_bracket", "m", "t", "C")
        await pilot.pause()
        screen = app.screen
        state = (screen._heatmap_visible, screen.heat_metric, screen.table.sort, screen.table.descending, screen.grid.cols)
        assert state[1] == "temp" and state[0] is True  # m shows the heatmap again
    async with started(lambda: make_cluster_demo(nodes=8, gpus=2)) as (app, pilot):
        screen = app.screen
        assert (screen._heatmap_visible, screen.heat_metric, screen.table.sort, screen.table.descending, screen.grid.cols) == state
    async with started(lambda: make_cluster_demo(nodes=8, gpus=2)) as (app, pilot):
        await pilot.press("left_square_bracket")
        await pilot.pause()
    async with started(lambda: make_cluster_demo(nodes=8, gpus=2)) as (app, pilot):
        assert app.screen.query_one("#cluster-sidebar").display is False


async def test_the_monitors_smoothing_and_sync_come_back_but_not_its_zoom():
    async with symon() as (app, pilot):
        await pilot.press("right", "e", "V", "z")
        await pilot.pause()
        screen = app.screen
        smoothing = dict(screen.chart_smoothing)
        assert smoothing and screen.chart_zooms and screen.crosshair_synced, "e, V and z on the focused chart"
    saved = json.loads((_state() / FILE_NAME).read_text())["views"]["symon"]
    assert "zooms" not in saved, "a moving time window is not kept"
    async with symon() as (app, pilot):
        screen = app.screen
        assert screen.chart_smoothing == smoothing and screen.chart_zooms == {} and screen.crosshair_synced


async def test_the_clusters_smoothing_comes_back():
    from leet.testing.cluster_demo import make_cluster_demo

    async with started(lambda: make_cluster_demo(nodes=8, gpus=2)) as (app, pilot):
        await pilot.press("E")
        await pilot.pause()
        smoothing_all = app.screen.smoothing_all
        assert smoothing_all
    async with started(lambda: make_cluster_demo(nodes=8, gpus=2)) as (app, pilot):
        assert app.screen.smoothing_all == smoothing_all


async def test_the_theme_is_remembered_when_it_changes():
    async with symon() as (app, pilot):
        app.theme = "nord"
        await pilot.pause()
    saved = json.loads((_state() / FILE_NAME).read_text())
    assert saved["settings"]["theme"] == "nord"
    async with symon(Config(theme="textual-dark")) as (app, pilot):
        assert app.theme == "nord"


async def test_a_run_view_closed_at_once_is_still_remembered(tmp_path_factory):
    from test_workspace import session_workspace

    from leet.model.store import Store
    from leet.sources.workspace import WorkspaceSource
    from leet.ui.screens.run import RunScreen
    from leet.ui.screens.workspace import WorkspaceScreen

    root = session_workspace(tmp_path_factory).root

    @asynccontextmanager
    async def workspace():
        source = WorkspaceSource(root, Store())
        source.refresh()
        app = _remembering(LeetApp(source, Config(theme="textual-dark"), live=False, screen=lambda: WorkspaceScreen(source)))
        try:
            async with app.run_test(size=(160, 48)) as pilot:
                await pilot.pause()
                yield app, pilot
                app.exit()
        finally:
            source.stop()

    async with workspace() as (app, pilot):
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, RunScreen)
        await pilot.press("4", "escape")  # the console shown, and straight back: sooner than a save
        await pilot.pause()
        assert isinstance(app.screen, WorkspaceScreen)
    async with workspace() as (app, pilot):
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, RunScreen) and app.screen.query_one("#console").display is True


async def test_the_layout_file_is_written_off_the_screens_thread(monkeypatch):
    import threading

    from leet.config import layout_state

    writers: list[str] = []
    original = layout_state.write_atomically

    def recorded(path, text):
        writers.append(threading.current_thread().name)
        original(path, text)

    monkeypatch.setattr(layout_state, "write_atomically", recorded)
    async with symon() as (app, pilot):
        await pilot.press("c")
        await until(pilot, lambda: bool(writers), "the save a second after the key")
        assert writers == ["leet-layout_0"], writers
    assert json.loads((_state() / FILE_NAME).read_text())["views"]["symon"]["grid"]
