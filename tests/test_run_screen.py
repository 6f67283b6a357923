"""The run view (``leet PATH``) driven by keys, on a real finished run: what a person sees change."""

from __future__ import annotations

import time
from contextlib import asynccontextmanager

from loading import load as loaded
from wandb_runs import BLOCK_SIZE

from leet.config import Config
from leet.model.store import Store
from leet.sources.run import RunSource
from leet.ui.app import LeetApp
from leet.ui.screens.help import HelpScreen
from leet.ui.screens.run import RunScreen
from widgets.filterbar import FilterBar
from widgets.lines import StyledLines

CONTROL = frozenset(chr(c) for c in (*range(0x00, 0x20), *range(0x7F, 0xA0)))

SIZE = (160, 48)



@asynccontextmanager
async def running(run, size: tuple[int, int] = SIZE):
    source = loaded(run.run_dir)
    app = LeetApp(source, Config(theme="textual-dark"), live=False, screen=lambda: RunScreen(source))
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        yield app, pilot


async def press(pilot, *keys: str) -> None:
    await pilot.press(*keys)
    await pilot.pause()


def header(app) -> str:
    return app.screen.query_one("#header").plain_rows()[0]


def pane(app, name: str):
    return app.screen.query_one(f"#{name}")


def shown(app, name: str) -> bool:
    return pane(app, name).display


def titles(app, grid: str = "metrics") -> list[str]:
    """The title each visible chart draws in its top border."""
    return [chart.plain_rows()[0].strip("╭╮─ ").split(" ─")[0].strip() for _, chart in pane(app, grid).visible_charts()]


def focused_chart(app, grid: str = "metrics"):
    chart_id = pane(app, grid).focused_chart_id()
    for visible_id, chart in pane(app, grid).visible_charts():
        if visible_id == chart_id:
            return chart
    return None


async def test_header_names_the_run_its_state_and_last_step(basic_run):
    async with running(basic_run) as (app, pilot):
        text = header(app)
        assert basic_run.run_id in text and basic_run.name in text
        assert "finished" in text and f"step {basic_run.steps - 1}" in text
        assert "metrics 1-4 of 4" in text


async def test_every_logged_metric_is_a_chart_with_data(basic_run):
    async with running(basic_run) as (app, pilot):
        assert titles(app) == ["acc", "eval.loss", "loss", "lr"]
        for _, chart in pane(app, "metrics").visible_charts():
            assert any("\u2800" < char <= "\u28ff" for row in chart.plain_rows() for char in row), "braille dots"
        assert titles(app, "system"), "the run's system metrics are charted too"


async def test_overview_lists_the_run_and_its_config(basic_run):
    async with running(basic_run) as (app, pilot):
        lines = pane(app, "overview").lines
        assert any(basic_run.group in line for line in lines)
        assert any(line.split() == ["model.depth", "12"] for line in lines)


async def test_number_keys_and_brackets_show_and_hide_panes(basic_run):
    async with running(basic_run) as (app, pilot):
        assert shown(app, "metrics") and shown(app, "system") and shown(app, "overview")
        assert not shown(app, "console")
        for key, name in (("1", "metrics"), ("2", "system"), ("right_square_bracket", "system"), ("4", "console"), ("left_square_bracket", "overview")):
            before = shown(app, name)
            await press(pilot, key)
            assert shown(app, name) is not before, f"{key} toggles {name}"
            await press(pilot, key)
            assert shown(app, name) is before, f"{key} toggles {name} back"


async def test_console_pane_shows_the_output_when_opened(console_run):
    async with running(console_run) as (app, pilot):
        await press(pilot, "4")
        lines = pane(app, "console").lines
        assert "Epoch 0: 100%|██████████| 100/100" in lines
        assert "done" in lines and "green ok bold" in lines


async def test_slash_filters_metrics_and_the_header_says_so(basic_run):
    async with running(basic_run) as (app, pilot):
        await press(pilot, "slash")
        assert app.screen.query_one(FilterBar).display
        await press(pilot, "l", "o", "s", "s")
        assert titles(app) == ["eval.loss", "loss"], "the grid previews while typing"
        await press(pilot, "enter")
        assert not app.screen.query_one(FilterBar).display
        assert titles(app) == ["eval.loss", "loss"]
        assert "metrics filter: loss" in header(app)
        assert "metrics 1-2 of 2" in header(app)
        await press(pilot, "ctrl+l")
        assert titles(app) == ["acc", "eval.loss", "loss", "lr"]
        assert "filter" not in header(app)


async def test_tab_cycles_focus_through_the_panes(basic_run):
    async with running(basic_run) as (app, pilot):
        assert app.focused is None
        await press(pilot, "tab")
        assert app.focused is pane(app, "overview")
        await press(pilot, "tab")
        assert pane(app, "metrics").focused_chart_id() == "acc"
        await press(pilot, "tab")
        assert pane(app, "system").focused_index() == 0
        await press(pilot, "tab")
        assert app.focused is pane(app, "overview")
        await press(pilot, "shift+tab")
        assert pane(app, "system").focused_index() == 0
        await press(pilot, "escape")
        assert app.focused is None


async def test_y_cycles_the_focused_charts_mode_shown_on_its_bottom_border(basic_run):
    async with running(basic_run) as (app, pilot):
        await press(pilot, "d")  # nothing focused: the first metric chart
        chart = focused_chart(app)
        assert chart is not None
        bottom = lambda: chart.plain_rows()[-1]  # noqa: E731
        assert "log y" not in bottom() and "heatmap" not in bottom()
        await press(pilot, "y")
        assert "log y" in bottom()
        await press(pilot, "y")
        assert "heatmap" in bottom()
        await press(pilot, "y")
        assert "log y" not in bottom() and "heatmap" not in bottom()


async def test_arrows_move_between_metric_charts(basic_run):
    async with running(basic_run) as (app, pilot):
        await press(pilot, "d", "d")
        assert pane(app, "metrics").focused_chart_id() == "eval.loss"
        await press(pilot, "a")
        assert pane(app, "metrics").focused_chart_id() == "acc"


async def test_h_opens_help_for_the_run_view_and_a_key_closes_it(basic_run):
    async with running(basic_run) as (app, pilot):
        await press(pilot, "h")
        assert isinstance(app.screen, HelpScreen)
        text = str(app.screen.query_one("#help-text").render())
        assert "Show / hide the console" in text and "Filter metrics" in text
        await press(pilot, "x")
        assert isinstance(app.screen, RunScreen)


async def test_q_quits(basic_run):
    async with running(basic_run) as (app, pilot):
        await press(pilot, "q")
        assert not app.is_running


async def test_hostile_names_reach_the_screen_inert(hostile_run):
    async with running(hostile_run) as (app, pilot):
        await press(pilot, "4")
        rows = [row for widget in app.screen.query(StyledLines) for row in widget.plain_rows()]
        bad = [row for row in rows if CONTROL.intersection(row)]
        assert not bad, f"control characters on screen: {bad[:3]}"
        assert any("[bold red]run[/]" in row for row in rows), "markup look-alikes show as written"


async def test_the_view_follows_a_file_that_grows(killed_run, tmp_path):
    data = killed_run.wandb_path.read_bytes()
    path = tmp_path / killed_run.wandb_path.name
    path.write_bytes(data[:BLOCK_SIZE])
    source = RunSource(path, Store(), poll_interval=0.02)
    app = LeetApp(source, Config(theme="textual-dark"), live=True, screen=lambda: RunScreen(source))
    async with app.run_test(size=SIZE) as pilot:
        await _until(pilot, lambda: "running" in header(app), "the first part loaded")
        before = source.snapshot().last_step
        assert f"step {before}" in header(app)
        with open(path, "ab") as handle:
            handle.write(data[BLOCK_SIZE:])
        await _until(pilot, lambda: source.snapshot().last_step > before, "the rest read")
        await _until(pilot, lambda: f"step {source.snapshot().last_step}" in header(app), "the header caught up")
    source.close()


async def _until(pilot, condition, what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what}: not within {timeout:g} s"
        await pilot.pause(0.02)
