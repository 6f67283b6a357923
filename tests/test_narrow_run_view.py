"""The run view in a narrow terminal: the metrics grid comes first, the overview waits for ``[``.

On a real finished run (the SDK's ``basic_run``) at 80×24, the size of a
terminal nobody resized, and at 160×48; resizing across the threshold
switches between the two.
"""

from __future__ import annotations

from contextlib import asynccontextmanager

from loading import load as loaded
from pilot_waits import until

from leet.config import Config
from leet.testing.demo import make_run_demo
from leet.ui.app import LeetApp
from leet.ui.screens.run import RunScreen
from leet.ui.views.run import NARROW_COLUMNS

NARROW = (80, 24)
WIDE = (160, 48)


@asynccontextmanager
async def running(run, size: tuple[int, int]):
    source = loaded(run.run_dir)
    app = LeetApp(source, Config(theme="textual-dark"), live=False, screen=lambda: RunScreen(source))
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        yield app, pilot


def pane(app, name: str):
    return app.screen.query_one(f"#{name}")


def widths(app) -> dict[str, int]:
    """The cells across each pane shown, and each metrics chart's."""
    shown = {name: pane(app, name).outer_size.width for name in ("overview", "metrics", "system") if pane(app, name).display}
    shown["chart"] = min(chart.outer_size.width for _, chart in pane(app, "metrics").visible_charts())
    return shown


def test_the_threshold_lies_between_the_two_sizes():
    assert NARROW[0] < NARROW_COLUMNS <= WIDE[0]


async def test_at_80_columns_the_overview_hides_and_the_metrics_take_most_of_the_width(basic_run):
    async with running(basic_run, NARROW) as (app, pilot):
        assert not pane(app, "overview").display
        shown = widths(app)
        assert shown["metrics"] > NARROW[0] // 2, shown
        assert shown["chart"] >= 15, shown  # three across, each wide enough to draw a line


async def test_at_80_columns_bracket_shows_a_narrower_overview_and_hides_it_again(basic_run):
    async with running(basic_run, NARROW) as (app, pilot):
        await pilot.press("left_square_bracket")
        await until(pilot, lambda: pane(app, "overview").display and pane(app, "overview").lines, "the overview shown")
        assert 26 <= pane(app, "overview").outer_size.width <= 30
        assert any(basic_run.group in line for line in pane(app, "overview").lines)
        await pilot.press("left_square_bracket")
        await until(pilot, lambda: not pane(app, "overview").display, "the overview hidden again")


async def test_at_160_columns_the_overview_shows_at_its_full_width(basic_run):
    async with running(basic_run, WIDE) as (app, pilot):
        shown = widths(app)
        assert shown["overview"] == 38, shown
        assert shown["overview"] + shown["metrics"] + shown["system"] == WIDE[0], shown


async def test_resizing_across_the_threshold_hides_and_brings_back_the_overview(basic_run):
    async with running(basic_run, WIDE) as (app, pilot):
        wide = widths(app)
        await pilot.resize_terminal(*NARROW)
        await until(pilot, lambda: not pane(app, "overview").display and pane(app, "metrics").outer_size.width > NARROW[0] // 2, "the narrow layout")
        await pilot.resize_terminal(*WIDE)
        await until(pilot, lambda: pane(app, "overview").display and widths(app) == wide, "the wide layout again")
        assert pane(app, "overview").lines, "the overview is drawn when it comes back"


async def test_an_overview_hidden_by_hand_stays_hidden_when_the_terminal_grows(basic_run):
    async with running(basic_run, WIDE) as (app, pilot):
        await pilot.press("left_square_bracket")
        await until(pilot, lambda: not pane(app, "overview").display, "the overview hidden")
        await pilot.resize_terminal(*NARROW)
        await pilot.resize_terminal(*WIDE)
        await until(pilot, lambda: pane(app, "metrics").outer_size.width > WIDE[0] // 2, "the wide layout")
        assert not pane(app, "overview").display
        assert app.screen.remembered_layout()["panes"]["overview"] is False


async def test_a_narrow_start_remembers_the_overview_as_the_person_left_it(basic_run):
    async with running(basic_run, NARROW) as (app, pilot):
        assert app.screen.remembered_layout()["panes"]["overview"] is True


def test_the_run_view_at_80_by_24(snap_compare):
    assert snap_compare(make_run_demo().app, terminal_size=NARROW)
