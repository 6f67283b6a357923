"""Zooming a run view's chart with keys and the mouse wheel: the title and x labels say what is shown."""

from __future__ import annotations

from contextlib import asynccontextmanager

from textual import events

from leet.config import Config
from leet.model.store import Store
from leet.sources.run import RunSource
from leet.ui.app import LeetApp
from leet.ui.screens.run import RunScreen

SIZE = (160, 48)


@asynccontextmanager
async def running(run):
    source = RunSource(run.run_dir, Store())
    while not source.model.loaded:
        source.step()
    app = LeetApp(source, Config(theme="textual-dark"), live=False, screen=lambda: RunScreen(source))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        yield app, pilot


def metrics(app):
    return app.screen.query_one("#metrics")


def focused(app):
    grid = metrics(app)
    index = grid.focused_index()
    return None if index is None else grid.visible_charts()[index]


async def test_z_zooms_the_focused_chart_x_resets_it(basic_run):
    async with running(basic_run) as (app, pilot):
        await pilot.press("d")
        await pilot.pause()
        chart_id, chart = focused(app)
        full = chart.view.x_range
        axis = chart.plain_rows()[-2]
        assert "⌕" not in chart.plain_rows()[0]
        await pilot.press("z")
        await pilot.pause()
        lo, hi = chart.view.x_range
        assert hi == full[1] and hi - lo == (full[1] - full[0]) / 2  # around the newest step
        assert "⌕" in chart.plain_rows()[0]
        assert chart.plain_rows()[-2] != axis  # the x labels moved
        assert app.screen.chart_zooms == {f"metrics:{chart_id}": (lo, hi)}
        await pilot.press("comma")
        await pilot.pause()
        assert chart.view.x_range[0] < lo
        await pilot.press("x")
        await pilot.pause()
        assert chart.view.x_range == full
        assert "⌕" not in chart.plain_rows()[0]
        assert chart.plain_rows()[-2] == axis


async def test_the_wheel_zooms_around_the_pointer_and_back_out(basic_run):
    async with running(basic_run) as (app, pilot):
        chart_id, chart = metrics(app).visible_charts()[0]
        full = chart.view.x_range
        width = chart.size.width
        chart.post_message(events.MouseScrollUp(chart, 0, 1, 0, 0, 0, False, False, False))
        await pilot.pause()
        lo, hi = chart.view.x_range
        assert lo == full[0] and hi < full[1]  # pointer at the left edge: the left end stays
        assert "⌕" in chart.plain_rows()[0]
        chart.post_message(events.MouseScrollDown(chart, width - 1, 1, 0, 0, 0, False, False, False))
        await pilot.pause()
        assert chart.view.x_range == full
        assert app.screen.chart_zooms == {}


async def test_v_shows_a_readout_that_comma_and_the_pointer_move(basic_run):
    async with running(basic_run) as (app, pilot):
        await pilot.press("d", "v")
        await pilot.pause()
        _, chart = focused(app)
        readout = lambda: chart.plain_rows()[1]  # noqa: E731
        first = readout()
        assert "step " in first
        x = chart.crosshair
        await pilot.press("comma", "comma", "comma")
        await pilot.pause()
        assert chart.crosshair < x
        # The pointer places the crosshair: over the plot's right end, the last step reads out.
        await pilot.hover(chart, offset=(chart.size.width - 2, chart.size.height // 2))
        await pilot.pause()
        lo, hi = chart.view.x_range
        assert chart.crosshair > lo + (hi - lo) * 0.9
        last = max(series.t[-1] for series in chart.view.data)
        assert f"step {last:.0f}" in readout()
        await pilot.press("v")
        await pilot.pause()
        assert chart.crosshair is None and "step " not in chart.plain_rows()[1]


async def test_comma_pans_a_zoomed_chart_while_no_crosshair_is_shown(basic_run):
    async with running(basic_run) as (app, pilot):
        await pilot.press("d", "z", "z")
        await pilot.pause()
        _, chart = focused(app)
        lo, _ = chart.view.x_range
        await pilot.press("comma")
        await pilot.pause()
        assert chart.view.x_range[0] < lo


async def test_a_drag_pans_a_zoomed_chart(basic_run):
    async with running(basic_run) as (app, pilot):
        await pilot.press("d", "z")
        await pilot.pause()
        _, chart = focused(app)
        lo, _ = chart.view.x_range
        middle = chart.size.height // 2
        await pilot.mouse_down(chart, offset=(20, middle))
        await pilot.hover(chart, offset=(40, middle))
        await pilot.mouse_up(chart, offset=(40, middle))
        await pilot.pause()
        assert chart.view.x_range[0] < lo  # dragged right: earlier steps come into view


async def test_e_smooths_the_focused_chart_and_E_every_chart(basic_run):
    async with running(basic_run) as (app, pilot):
        await pilot.press("d", "e")
        await pilot.pause()
        chart_id, chart = focused(app)
        assert "~0.6" in chart.plain_rows()[0]
        assert chart.view.faint  # the raw line stays, faint
        assert app.screen.chart_smoothing == {f"metrics:{chart_id}": 0.6}
        await pilot.press("e")
        await pilot.pause()
        assert "~0.8" in chart.plain_rows()[0]
        await pilot.press("E")
        await pilot.pause()
        assert app.screen.chart_smoothing == {} and app.screen.smoothing_all == 0.6
        assert all("~0.6" in widget.plain_rows()[0] for _, widget in metrics(app).visible_charts())


async def test_V_shows_the_crosshair_on_every_step_chart_at_one_x(basic_run):
    async with running(basic_run) as (app, pilot):
        await pilot.press("d", "v")
        await pilot.pause()
        charts = [widget for _, widget in metrics(app).visible_charts()]
        assert sum(chart.crosshair is not None for chart in charts) == 1
        await pilot.press("V")
        await pilot.pause()
        assert len({chart.crosshair for chart in charts}) == 1 and charts[0].crosshair is not None
        assert all("step " in chart.plain_rows()[1] for chart in charts)
        system = [widget for _, widget in app.screen.query_one("#system").visible_charts()]
        assert all(chart.crosshair is None for chart in system)  # by time, not by step
