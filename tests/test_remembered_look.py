"""The charts' look is remembered: smoothing per chart and for all, the crosshair's sync, and zooms where x stands still.

The state goes through ``layout.json`` like the rest of the layout: unit
tests of the values' round trip and their checks, and pilot tests that set
a look on a real run (the SDK's ``basic_run``), quit, start a new app on the
same state folder (tests/conftest.py gives each test its own) and find it
back.
"""

from __future__ import annotations

import json
from contextlib import asynccontextmanager

from loading import load as loaded
from pilot_waits import until

from leet.config import Config
from leet.config.layout_state import (
    FILE_NAME,
    MAX_TEXT,
    Layout,
    parse_layout,
    remembered_weights,
    remembered_window,
    remembered_windows,
    state_dir,
)
from leet.config.remembered import remembered
from leet.ui.app import LeetApp
from leet.ui.screens.chart_look import REMEMBERED_CHARTS, ChartLook
from leet.ui.screens.run import RunScreen
from widgets.smoothing import WEIGHTS

SIZE = (160, 48)


class Looks(ChartLook):
    """The look state alone, without a screen."""

    def __init__(self) -> None:
        self.init_looks()


def test_weights_keep_only_the_ones_e_steps_through():
    saved = {"a": 0.8, "b": 0.5, "c": "0.8", "d": True, "e": None, "f": 0.0, "g": [0.6]}
    assert remembered_weights(saved, WEIGHTS) == {"a": 0.8, "f": 0.0}
    assert remembered_weights([0.8], WEIGHTS) == {}


def test_a_window_is_two_finite_numbers_low_then_high():
    assert remembered_window([10, 20.5]) == (10.0, 20.5)
    for bad in ([20, 10], [5, 5], [1], [1, 2, 3], ["1", "2"], [True, 2], [-1e308, 1e308], {"lo": 1}, None):
        assert remembered_window(bad) is None, bad
    assert remembered_windows({"a": [0, 1], "b": [1, 0], "c": "x"}) == {"a": (0.0, 1.0)}
    assert remembered_windows([[0, 1]]) == {}


def test_the_looks_go_through_the_file_and_come_back():
    looks = Looks()
    looks.chart_smoothing = {"metrics:loss": 0.9, "metrics:acc": 0.0}
    looks.smoothing_all = 0.6
    looks.crosshair_synced = True
    looks.chart_zooms = {"metrics:loss": (12.5, 80.0)}
    layout = Layout(views={"run": looks.remembered_looks()})
    back = Looks()
    back.restore_looks(parse_layout(layout.as_json()).view("run"))
    assert back.chart_smoothing == looks.chart_smoothing
    assert (back.smoothing_all, back.crosshair_synced) == (0.6, True)
    assert back.shown_range("metrics:loss", (0.0, 100.0)) == (12.5, 80.0)
    assert back.chart_zooms == {"metrics:loss": (12.5, 80.0)}


def test_without_zooms_no_window_is_written_nor_taken_back():
    looks = Looks()
    looks.chart_zooms = {"cpu": (1.0, 2.0)}
    assert "zooms" not in looks.remembered_looks(zooms=False)
    back = Looks()
    back.restore_looks({"zooms": {"cpu": [1.0, 2.0]}}, zooms=False)
    assert back.shown_range("cpu", (0.0, 3.0)) == (0.0, 3.0)


def test_bad_values_leave_the_start_and_the_good_ones_are_taken():
    back = Looks()
    back.restore_looks({"smoothing": {"a": 7, "b": 0.95}, "smoothing_all": "lots", "crosshair_synced": 1, "zooms": {"a": [3, 1], "b": [1, 3]}})
    assert back.chart_smoothing == {"b": 0.95}
    assert (back.smoothing_all, back.crosshair_synced) == (0.0, False)
    assert back.shown_range("a", (0.0, 10.0)) == (0.0, 10.0)
    assert back.shown_range("b", (0.0, 10.0)) == (1.0, 3.0)
    back.restore_looks({"smoothing": "x", "zooms": 5})
    assert back.chart_smoothing == {"b": 0.95}


def test_a_window_waits_for_its_chart_and_for_data_that_reaches_it():
    back = Looks()
    back.restore_looks({"zooms": {"gone": [1, 2], "loss": [100, 200]}})
    assert back.shown_range("loss", (0.0, 50.0)) == (0.0, 50.0), "still loading: steps 100-200 not read yet"
    assert back.shown_range("loss", (0.0, 300.0)) == (100.0, 200.0)
    assert back.remembered_looks()["zooms"] == {"gone": [1.0, 2.0], "loss": [100.0, 200.0]}, "a chart not shown keeps its window"


def test_what_is_written_always_reads_back():
    looks = Looks()
    looks.chart_smoothing = {f"metrics:m{index}": 0.6 for index in range(5000)}
    looks.chart_smoothing["x" * (MAX_TEXT + 1)] = 0.9
    looks.chart_zooms = {f"metrics:m{index}": (0.0, 1.0) for index in range(5000)}
    saved = looks.remembered_looks()
    assert len(saved["smoothing"]) == len(saved["zooms"]) == REMEMBERED_CHARTS
    assert "metrics:m4999" in saved["smoothing"], "the latest are kept"
    parse_layout(Layout(views={"run": saved}).as_json())


# -- across a restart ------------------------------------------------------------------------
@asynccontextmanager
async def run_view(run):
    source = loaded(run.run_dir)
    config, remembering = remembered(Config(theme="textual-dark"))
    app = LeetApp(source, config, live=False, screen=lambda: RunScreen(source), remembering=remembering)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        yield app, pilot
        app.exit()  # as q does: the layout is written on the way out


def title(app, chart_id: str) -> str:
    widget = dict(app.screen.query_one("#metrics").visible_charts())[chart_id]
    return widget.view.title


async def test_a_charts_smoothing_the_sync_and_a_zoom_come_back_after_a_restart(basic_run):
    async with run_view(basic_run) as (app, pilot):
        await pilot.press("d", "e", "e", "V", "z")  # the first chart focused, smoothed twice, crosshair synced, zoomed
        screen = app.screen
        await until(pilot, lambda: screen.chart_smoothing and screen.chart_zooms, "the look set")
        smoothing, zooms = dict(screen.chart_smoothing), dict(screen.chart_zooms)
        assert smoothing == {"metrics:acc": 0.8} and list(zooms) == ["metrics:acc"]
    saved = json.loads((state_dir() / FILE_NAME).read_text())["views"]["run"]
    assert saved["smoothing"] == {"metrics:acc": 0.8} and saved["crosshair_synced"] is True
    async with run_view(basic_run) as (app, pilot):
        screen = app.screen
        assert screen.chart_smoothing == smoothing and screen.crosshair_synced is True
        await until(pilot, lambda: screen.chart_zooms == zooms, "the zoom taken back")
        assert "~0.8" in title(app, "acc")


async def test_smoothing_all_comes_back_and_a_chart_that_is_gone_costs_nothing(basic_run):
    state_dir().mkdir(parents=True, exist_ok=True)
    views = {"run": {"smoothing": {"metrics:no such metric": 0.9}, "smoothing_all": 0.95, "zooms": {"metrics:gone": [1, 2], "metrics:acc": "wide"}}}
    (state_dir() / FILE_NAME).write_text(json.dumps({"version": 1, "views": views}))
    async with run_view(basic_run) as (app, pilot):
        screen = app.screen
        assert screen.smoothing_all == 0.95 and not app._notifications
        await until(pilot, lambda: "~0.95" in title(app, "loss"), "every chart smoothed")
        assert screen.chart_zooms == {}


@asynccontextmanager
async def workspace():
    from leet.testing.workspace_demo import make_workspace_demo
    from leet.ui.layout_keeper import LayoutKeeper

    app = make_workspace_demo().app
    config, remembering = remembered(app.config)
    assert remembering is not None
    app.config = config
    app.layout_keeper = LayoutKeeper(app, remembering, config.origin)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        yield app, pilot
        app.exit()


async def test_the_workspaces_zoom_and_smoothing_come_back():
    async with workspace() as (app, pilot):
        await pilot.press("tab", "z", "e", "E")
        screen = app.screen
        await until(pilot, lambda: screen.chart_zooms and screen.smoothing_all, "the look set")
        zooms, smoothing_all = dict(screen.chart_zooms), screen.smoothing_all
        assert screen.chart_smoothing == {}, "E sets every chart's"
    async with workspace() as (app, pilot):
        screen = app.screen
        assert screen.smoothing_all == smoothing_all
        await until(pilot, lambda: screen.chart_zooms == zooms, "the zoom taken back")


async def test_the_media_pane_open_at_quit_is_open_again():
    async with workspace() as (app, pilot):
        await pilot.press("3")
        screen = app.screen
        await until(pilot, lambda: screen.media_panel is not None and screen.media_panel.shown, "the media pane")
    async with workspace() as (app, pilot):
        screen = app.screen
        await until(pilot, lambda: screen.media_panel is not None and screen.media_panel.shown, "the media pane again")
    async with workspace() as (app, pilot):
        await pilot.press("3")
        await until(pilot, lambda: not app.screen.media_panel.shown, "the media pane closed")
    async with workspace() as (app, pilot):
        await pilot.pause()
        assert app.screen.media_panel is None, "closed at quit: not opened"


async def test_the_run_views_media_pane_comes_back(basic_run):
    async with run_view(basic_run) as (app, pilot):
        await pilot.press("3")
        await until(pilot, lambda: app.screen.media_panel is not None and app.screen.media_panel.shown, "the media pane")
    async with run_view(basic_run) as (app, pilot):
        await until(pilot, lambda: app.screen.media_panel is not None and app.screen.media_panel.shown, "the media pane again")
