"""The workspace view (``leet DIR``) driven by keys, on a folder of real runs: what a person sees change.

The runs come from the session's ``workspace`` (see test_workspace.py):
the basic run is the newest, so it is selected at start. Selected runs
load on their own threads, so tests wait for what should appear.
"""

from __future__ import annotations

import re
import shutil
from contextlib import asynccontextmanager

import pytest
from pilot_waits import until
from test_workspace import copy_run, session_workspace

from leet.config import Config
from leet.model.store import Store
from leet.sources.workspace import WorkspaceSource
from leet.ui.app import LeetApp
from leet.ui.screens.help import HelpScreen
from leet.ui.screens.run import RunScreen
from leet.ui.screens.workspace import WorkspaceScreen
from widgets.filterbar import FilterBar
from widgets.runlist import RunList

SIZE = (160, 48)
BASIC_METRICS = ["acc", "eval.loss", "loss", "lr"]
WAIT = 20.0


@pytest.fixture(scope="session")
def workspace(tmp_path_factory):
    return session_workspace(tmp_path_factory)


@asynccontextmanager
async def running(workspace, size: tuple[int, int] = SIZE, *, root=None):
    """The app over ``root`` (default: the workspace's folder), once the newest run (the basic run) is charted."""
    source = WorkspaceSource(root or workspace.root, Store())
    source.refresh()
    app = LeetApp(source, Config(theme="textual-dark"), live=False, screen=lambda: WorkspaceScreen(source))
    try:
        async with app.run_test(size=size) as pilot:
            await until(pilot, lambda: isinstance(app.screen, WorkspaceScreen) and titles(app) == BASIC_METRICS, "the newest run's charts")
            yield app, pilot, source
    finally:
        source.stop()



async def press(pilot, *keys: str) -> None:
    await pilot.press(*keys)
    await pilot.pause()


def header(app) -> str:
    return app.screen.query_one("#header").plain_rows()[0]


def run_rows(app) -> list[str]:
    """The runs list below its title, one line per run."""
    return [row for row in app.screen.query_one(RunList).plain_rows()[1:] if row.strip()]


def list_title(app) -> str:
    return app.screen.query_one(RunList).plain_rows()[0]


def mark(app, title: str) -> str:
    """● or ○ in front of the run named ``title``."""
    for row in run_rows(app):
        if row[2:].startswith(title + " "):
            return row[0]
    raise AssertionError(f"{title!r} is not listed: {run_rows(app)}")


def titles(app) -> list[str]:
    """Each visible chart's title, without the ``[n]`` count of overlaid runs."""
    drawn = [rows[0].strip("╭╮─ ").split(" ─")[0].strip() for rows in chart_rows(app)]
    return [re.sub(r" \[\d+\]$", "", title) for title in drawn]


def chart_rows(app) -> list[list[str]]:
    """What each visible chart draws; a chart not laid out yet draws nothing."""
    return [chart.plain_rows() or [""] for _, chart in app.screen.grid.visible_charts()]


def chart(app, title: str):
    for chart_id, widget in app.screen.grid.visible_charts():
        if chart_id == title:
            return widget
    raise AssertionError(f"no {title!r} chart among {titles(app)}")


def legend(app, title: str) -> str:
    return (chart(app, title).plain_rows() or [""])[-1]


async def cursor_to(pilot, app, key: str) -> None:
    keys = [entry.key for entry in app.screen.source.entries()]
    await press(pilot, *["down"] * keys.index(key))
    assert app.screen.query_one(RunList).cursor_key == key


# -- at start ------------------------------------------------------------------------


async def test_the_newest_run_is_selected_and_charted_at_start(workspace):
    async with running(workspace) as (app, pilot, source):
        basic = workspace.basic
        assert source.selected() == [basic.run_dir.name]
        assert run_rows(app)[0].startswith(f"● {basic.name}")
        assert mark(app, workspace.failed.run_id) == "○"
        total = len(source.entries())  # a shared run's writers are one run
        assert f"{total} runs · 1 selected" in header(app) and str(workspace.runs) in header(app)
        assert "metrics 1-4 of 4" in header(app)
        assert list_title(app).startswith(f"Runs [1-{total} of {total}] · flat · all jobs")
        states = " ".join(run_rows(app))
        assert "failed (3)" in states and "crashed?" in states and "finished" in states
        assert "●" not in legend(app, "loss"), "one run: no legend"


# -- selecting and overlaying ----------------------------------------------------------


async def test_space_selects_the_run_under_the_cursor_and_charts_overlay_both(workspace):
    async with running(workspace) as (app, pilot, source):
        failed = workspace.failed
        await cursor_to(pilot, app, failed.run_dir.name)
        await press(pilot, "space")
        assert mark(app, failed.run_id) == "●"
        assert "2 selected" in header(app)
        await until(pilot, lambda: failed.run_id in legend(app, "loss"), "the failed run in the loss legend")
        assert workspace.basic.name in legend(app, "loss")
        assert "loss [2]" in chart(app, "loss").plain_rows()[0], "the title counts the runs"
        assert titles(app) == BASIC_METRICS, "the failed run logged only loss"

        await press(pilot, "space")
        assert mark(app, failed.run_id) == "○"
        assert "1 selected" in header(app)
        assert failed.run_id not in legend(app, "loss")
        assert source.store.series(failed.run_dir.name) == [], "a deselected run leaves the store"


async def test_deselecting_every_run_leaves_no_charts(workspace):
    async with running(workspace) as (app, pilot, source):
        await press(pilot, "space")  # the cursor starts on the selected newest run
        assert mark(app, workspace.basic.name) == "○"
        assert titles(app) == [] and "no metrics" in header(app)


# -- shared runs and groups ---------------------------------------------------------------


async def test_a_shared_run_is_one_row_with_its_writer_count(workspace):
    async with running(workspace) as (app, pilot, source):
        tagged = [row for row in run_rows(app) if "×2" in row]
        assert len(tagged) == 1, run_rows(app)
        assert workspace.shared.run_id[:7] in tagged[0]


async def test_g_groups_the_runs_and_space_and_enter_still_act_on_the_run_under_the_cursor(workspace):
    async with running(workspace) as (app, pilot, source):
        await press(pilot, "g")
        assert "· by group ·" in list_title(app)
        rows = run_rows(app)
        assert rows[0].startswith(f"{workspace.basic.group} · 1 run ─") and rows[1].startswith(f"● {workspace.basic.name}")
        assert rows[2].startswith("(no group) · ")
        failed = workspace.failed.run_dir.name
        for _ in range(len(rows)):
            if app.screen.query_one(RunList).cursor_key == failed:
                break
            await press(pilot, "down")
        await press(pilot, "space")
        assert mark(app, workspace.failed.run_id) == "●" and "2 selected" in header(app)
        await press(pilot, "enter")
        assert isinstance(app.screen, RunScreen)
        await until(pilot, lambda: "failed (exit 3)" in header(app), "the opened run to load")
        await press(pilot, "escape")
        assert "· by group ·" in list_title(app), "the grouping outlives the run view"


# -- the run view ----------------------------------------------------------------------


async def test_enter_opens_the_run_view_and_escape_comes_back(workspace):
    async with running(workspace) as (app, pilot, source):
        failed = workspace.failed
        depth = len(app.screen_stack)
        await cursor_to(pilot, app, failed.run_dir.name)
        await press(pilot, "enter")
        assert isinstance(app.screen, RunScreen) and len(app.screen_stack) == depth + 1
        await until(pilot, lambda: "failed (exit 3)" in header(app), "the opened run to load")
        assert failed.run_id in header(app)

        await press(pilot, "escape")
        assert isinstance(app.screen, WorkspaceScreen) and len(app.screen_stack) == depth
        assert titles(app) == BASIC_METRICS
        assert not [run for run in source.store.runs() if run.endswith("#open")], "the closed view's series are dropped"
        assert source.selected() == [workspace.basic.run_dir.name], "opening a run does not select it"


async def test_a_run_deleted_after_the_scan_neither_opens_nor_selects(workspace, tmp_path):
    runs = tmp_path / "wandb"
    copy_run(workspace.basic.run_dir, runs)
    failed = copy_run(workspace.failed.run_dir, runs)
    async with running(workspace, root=tmp_path) as (app, pilot, source):
        shutil.rmtree(failed)
        await cursor_to(pilot, app, failed.name)
        await press(pilot, "enter")
        assert isinstance(app.screen, WorkspaceScreen), "no run view for a run that is gone"
        assert app.is_running
        await press(pilot, "space")
        assert mark(app, workspace.failed.run_id) == "○" and "1 selected" in header(app)


# -- filters ----------------------------------------------------------------------------


async def test_f_filters_the_runs_list_by_name_group_or_state(workspace):
    async with running(workspace) as (app, pilot, source):
        await press(pilot, "f")
        assert app.screen.query_one(FilterBar).display
        await press(pilot, "f", "a", "i", "l")
        assert [row[2:].split()[0] for row in run_rows(app)] == [workspace.failed.run_id], "the list previews while typing"
        await press(pilot, "enter")
        assert not app.screen.query_one(FilterBar).display
        assert "filter: fail" in list_title(app) and "runs filter: fail" in header(app)
        assert f"{len(source.entries())} runs" in header(app), "the header still counts every run"

        await press(pilot, "ctrl+f", "f", "s", "w", "e", "e", "p", "enter")  # the basic run's group
        assert [row[2:].split()[0] for row in run_rows(app)] == [workspace.basic.name]
        assert "filter: sweep" in list_title(app)

        await press(pilot, "ctrl+f", "f", "c", "r", "a", "s", "h", "enter")  # the state column
        assert [row[2:].split()[0] for row in run_rows(app)] == [workspace.killed.run_id]

        await press(pilot, "ctrl+f")
        assert len(run_rows(app)) == len(source.entries())
        assert "filter" not in list_title(app) and "filter" not in header(app)


async def test_the_list_title_follows_a_run_filter_that_matches_every_run(workspace):
    async with running(workspace) as (app, pilot, source):
        await press(pilot, "f", "o", "f", "f")  # every directory is offline-run-…
        assert len(run_rows(app)) == len(source.entries())
        assert "filter: off" in list_title(app), "while typing"
        await press(pilot, "enter", "ctrl+f")
        assert "filter" not in list_title(app), "cleared"


async def test_slash_filters_the_metrics(workspace):
    async with running(workspace) as (app, pilot, source):
        await press(pilot, "slash", "l", "o", "s", "s")
        assert titles(app) == ["eval.loss", "loss"], "the grid previews while typing"
        await press(pilot, "enter")
        assert "metrics filter: loss" in header(app) and "metrics 1-2 of 2" in header(app)
        await press(pilot, "ctrl+l")
        assert titles(app) == BASIC_METRICS
        assert "filter" not in header(app)


# -- other keys ----------------------------------------------------------------------------


async def test_h_shows_the_workspace_keys_and_any_key_closes_them(workspace):
    async with running(workspace) as (app, pilot, source):
        await press(pilot, "h")
        assert isinstance(app.screen, HelpScreen)
        text = str(app.screen.query_one("#help-text").render())
        assert "workspace" in text and "Filter runs by name" in text and "Filter metrics" in text
        await press(pilot, "x")
        assert isinstance(app.screen, WorkspaceScreen)


async def test_left_bracket_hides_the_runs_list_and_the_charts_widen(workspace):
    async with running(workspace) as (app, pilot, source):
        width = chart(app, "loss").size.width
        await press(pilot, "left_square_bracket")
        assert not app.screen.query_one(RunList).display
        assert chart(app, "loss").size.width > width
        await press(pilot, "left_square_bracket")
        assert app.screen.query_one(RunList).display


async def test_q_quits(workspace):
    async with running(workspace) as (app, pilot, source):
        await press(pilot, "q")
        assert not app.is_running
