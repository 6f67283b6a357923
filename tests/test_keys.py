"""One key table per screen: every key does something, the footer and help come from it, and the keys people know work."""

from __future__ import annotations

import re
from contextlib import asynccontextmanager

import pytest
from textual import events
from textual.containers import VerticalScroll

from collectors import Hub
from leet.runfile.events import HistoryRow
from leet.testing.demo import make_demo, make_run_demo
from leet.testing.workspace_demo import make_workspace_demo
from leet.ui.bindings import CLUSTER_KEYS, RUN_KEYS, SYMON_KEYS, WORKSPACE_KEYS, Key, footer_hints, help_sections, screen_keys
from leet.ui.screens.cluster import ClusterScreen
from leet.ui.screens.help import HelpScreen, more_note
from leet.ui.screens.label_picker import LabelPicker
from leet.ui.screens.run import RunScreen
from leet.ui.screens.symon import INTERVALS, SymonScreen, next_interval
from leet.ui.screens.workspace import WorkspaceScreen
from leet.ui.views.footer import fit_hints, status_line
from widgets.filterbar import FilterBar
from widgets.media import MediaPane
from widgets.nodetable import NodeTable
from widgets.processes import ProcessTable
from widgets.runlist import RunList

TABLES = {"symon": SYMON_KEYS, "run": RUN_KEYS, "workspace": WORKSPACE_KEYS, "cluster": CLUSTER_KEYS}
SCREENS = {"symon": SymonScreen, "run": RunScreen, "workspace": WorkspaceScreen, "cluster": ClusterScreen}
WIDGETS = {"processes": ProcessTable, "runs": RunList, "nodes": NodeTable, "media": MediaPane}


def action_name(key: Key) -> str:
    return key.action.split("(")[0]


def rows(where: str | None = None) -> list[tuple[str, Key]]:
    return [(name, key) for name, table in TABLES.items() for key in table if where is None or (key.where == "screen") == (where == "screen")]


def row_id(row: tuple[str, Key]) -> str:
    name, key = row
    return f"{name}:{key.keys}:{key.where}"


# -- the tables --------------------------------------------------------------------------


@pytest.mark.parametrize("row", rows("screen"), ids=row_id)
def test_every_screen_row_names_an_action_of_its_screen(row):
    name, key = row
    assert hasattr(SCREENS[name], f"action_{action_name(key)}"), f"{SCREENS[name].__name__} has no action_{action_name(key)} for {key.keys!r}"


@pytest.mark.parametrize("row", rows("widget"), ids=row_id)
def test_every_widget_row_names_an_action_the_widget_binds_to_that_key(row):
    _, key = row
    widget = WIDGETS[key.where]
    assert hasattr(widget, f"action_{action_name(key)}"), f"{widget.__name__} has no action_{action_name(key)}"
    bound = {(k.strip(), binding.action) for binding in widget.BINDINGS for k in binding.key.split(",")}
    for name in key.keys.split(","):
        assert (name, key.action) in bound, f"{widget.__name__} does not bind {name!r} to {key.action!r}"


@pytest.mark.parametrize("name", TABLES)
def test_no_key_is_bound_twice_in_one_place(name):
    seen: dict[tuple[str, str], str] = {}
    for key in TABLES[name]:
        for one in key.keys.split(","):
            where = (key.where, one)
            assert where not in seen, f"{one!r} is bound to both {seen[where]!r} and {key.action!r} ({key.where})"
            seen[where] = key.action


@pytest.mark.parametrize("name", TABLES)
def test_f1_and_f10_are_help_and_quit_on_every_screen(name):
    actions = {one: key.action for key in screen_keys(TABLES[name]) for one in key.keys.split(",")}
    assert actions["f1"] == "help" and actions["f10"] == "quit" and actions["p"] == "toggle_pause"


def test_help_lists_the_keys_of_focused_widgets_in_sections_of_their_own():
    sections = dict(help_sections(SYMON_KEYS))
    assert ("c", "Focused process table: command line → with its path → program name") in sections["Process table (focused)"]
    assert all(shown != "c" for shown, _ in sections["Processes"])
    assert help_sections(SYMON_KEYS)[-1][0] == "Process table (focused)"
    workspace = dict(help_sections(WORKSPACE_KEYS))
    assert [shown for shown, _ in workspace["Runs list (focused)"]] == ["space", "enter"]


# -- the footer ----------------------------------------------------------------------------


def footer_text(left) -> str:
    return "".join(text for text, _ in left)


@pytest.mark.parametrize("name", TABLES)
def test_the_footer_fits_60_columns_in_whole_hints_and_keeps_help_and_quit(name):
    hints = footer_hints(TABLES[name])
    for right in ([], [("⚠ the GPU driver stopped answering: NVML_ERROR_GPU_IS_LOST on GPU 3 ", "warn")]):
        left, right_out = status_line(hints, right, 60)
        text = footer_text(left)
        assert len(text) + len(footer_text(right_out)) <= 60
        assert text.startswith(" h help q quit"), text
        shown = [(left[i][0][1:], left[i + 1][0][1:]) for i in range(0, len(left), 2)]
        assert all(pair in hints for pair in shown), "a hint was cut"
        assert shown == [pair for pair in hints if pair in shown], "hints keep table order"
    assert len(footer_text(status_line(hints, [], 400)[0])) == sum(len(k) + len(h) + 2 for k, h in hints)


def test_hints_give_way_from_the_end_and_help_and_quit_last():
    hints = [("h", "help"), ("q", "quit"), ("p", "pause"), ("tab", "focus"), ("/", "filter")]
    assert fit_hints(hints, 100) == hints
    assert fit_hints(hints, 32) == hints[:4]
    assert fit_hints(hints, 31) == hints[:3]
    assert fit_hints(hints, 14) == hints[:2]
    assert fit_hints(hints, 13) == hints[:1]
    assert fit_hints([("F6", "sort"), ("h", "help")], 7) == [("h", "help")]


def test_a_long_warning_is_cut_before_help_and_quit_go():
    left, right = status_line([("h", "help"), ("q", "quit"), ("p", "pause")], [("x" * 80, "warn")], 40)
    assert footer_text(left) == " h help q quit"
    assert footer_text(right).endswith("…") and len(footer_text(right)) == 40 - 14


def test_the_run_footer_offers_labels_only_for_a_shared_run():
    from leet.ui.screens.run import HINTS, SHARED_HINTS

    assert ("l", "labels") in SHARED_HINTS and ("l", "labels") not in HINTS


# -- the interval ladder -----------------------------------------------------------------------


def test_plus_and_minus_step_through_the_ladder_and_stop_at_its_ends():
    assert next_interval(2.0, 1) == 3.0 and next_interval(2.0, -1) == 1.0
    assert next_interval(0.7, 1) == 1.0 and next_interval(0.7, -1) == 0.5  # off the ladder: the nearest step that way
    assert next_interval(INTERVALS[-1], 1) == INTERVALS[-1] and next_interval(INTERVALS[0], -1) == INTERVALS[0]
    assert next_interval(30.0, -1) == 10.0 and next_interval(30.0, 1) == 30.0


def test_the_live_source_passes_a_new_interval_to_its_hub():
    from leet.model.store import Store
    from leet.sources.live import LiveSource

    hub = Hub([], interval=2.0)
    source = LiveSource(Store(), hub)
    assert source.interval == 2.0
    assert source.set_interval(0.5) == 0.5 and hub.interval == 0.5
    with pytest.raises(ValueError, match="interval"):
        source.set_interval(0)
    assert hub.interval == 0.5
    alone = LiveSource(Store())
    assert alone.interval is None and alone.set_interval(3) == 3.0 and alone.interval == 3.0


# -- pilots ---------------------------------------------------------------------------------------


async def press(pilot, *keys: str) -> None:
    await pilot.press(*keys)
    await pilot.pause()


def header(app) -> str:
    return app.screen.query_one("#header").plain_rows()[0]


def status(app) -> str:
    return app.screen.query_one("#status").plain_rows()[0]


@asynccontextmanager
async def symon(size=(120, 36), **options):
    demo = make_demo(**options)
    async with demo.app.run_test(size=size) as pilot:
        await pilot.pause()
        yield demo, pilot


@asynccontextmanager
async def run_view(size=(120, 36), **options):
    demo = make_run_demo(**options)
    async with demo.app.run_test(size=size) as pilot:
        await pilot.pause()
        yield demo, pilot


@asynccontextmanager
async def workspace(size=(120, 36)):
    demo = make_workspace_demo()
    async with demo.app.run_test(size=size) as pilot:
        await pilot.pause()
        yield demo, pilot


VIEWS = {"symon": symon, "run": run_view, "workspace": workspace}


@pytest.mark.parametrize("view", VIEWS)
async def test_f1_opens_help_and_f1_closes_it_on_every_screen(view):
    async with VIEWS[view]() as (demo, pilot):
        screen = demo.app.screen
        await press(pilot, "f1")
        assert isinstance(demo.app.screen, HelpScreen)
        await press(pilot, "f1")
        assert demo.app.screen is screen
        await press(pilot, "f1", "escape")
        assert demo.app.screen is screen


@pytest.mark.parametrize("view", VIEWS)
async def test_f10_quits_every_screen(view):
    async with VIEWS[view]() as (demo, pilot):
        await press(pilot, "f10")
        assert not demo.app.is_running


@pytest.mark.parametrize("view", VIEWS)
async def test_f10_quits_from_the_help_overlay(view):
    async with VIEWS[view]() as (demo, pilot):
        await press(pilot, "f1")
        assert isinstance(demo.app.screen, HelpScreen)
        await press(pilot, "f10")
        assert not demo.app.is_running


async def test_f1_and_f10_work_in_the_label_picker():
    async with run_view(nodes=3) as (demo, pilot):
        await press(pilot, "l")
        assert isinstance(demo.app.screen, LabelPicker)
        await press(pilot, "f1")
        assert isinstance(demo.app.screen, HelpScreen)
        await press(pilot, "f1")
        assert isinstance(demo.app.screen, LabelPicker)
        await press(pilot, "f10")
        assert not demo.app.is_running


@pytest.mark.parametrize("view", VIEWS)
async def test_every_footer_fits_60_columns_with_help_and_quit(view):
    async with VIEWS[view](size=(60, 15)) as (demo, pilot):
        line = status(demo.app)
        assert line.startswith(" h help q quit"), line
        assert len(line) == 60


async def test_the_footer_refits_when_the_terminal_narrows():
    async with symon() as (demo, pilot):
        assert " [ sidebar" in status(demo.app)
        await pilot.resize_terminal(60, 20)
        await pilot.pause()
        line = status(demo.app)
        assert line.startswith(" h help q quit") and " [ sidebar" not in line


# -- pause ---------------------------------------------------------------------------------------


def first_chart(app):
    return app.screen.grid.visible_charts()[0][1]


async def test_p_freezes_the_charts_while_samples_keep_arriving_and_resuming_shows_them():
    async with symon() as (demo, pilot):
        app = demo.app
        assert "PAUSED" not in header(app)
        await press(pilot, "p")
        assert "PAUSED" in header(app)
        frozen = first_chart(app).plain_rows()
        processes = app.screen.processes.plain_rows()
        stored = len(demo.source.store.latest_values(demo.source.run))
        demo.feed(10)
        await pilot.pause()
        assert demo.source.time_span is not None and demo.source.store.version() > 0
        assert first_chart(app).plain_rows() == frozen, "a paused chart moved"
        assert app.screen.processes.plain_rows() == processes
        assert len(demo.source.store.latest_values(demo.source.run)) == stored
        await press(pilot, "p")
        assert "PAUSED" not in header(app)
        assert first_chart(app).plain_rows() != frozen, "resuming shows what came meanwhile"


def metric_count(app) -> int:
    found = re.search(r"metrics \d+-\d+ of (\d+)", header(app))
    assert found, header(app)
    return int(found.group(1))


async def test_pausing_the_run_view_holds_new_metrics_back_until_resumed():
    async with run_view(size=(200, 40)) as (demo, pilot):
        app = demo.app
        before = metric_count(app)
        await press(pilot, "p")
        assert "PAUSED" in header(app)
        demo.source.feed([HistoryRow(300 + i, {"zz_new_metric": float(i)}) for i in range(5)])
        await pilot.pause()
        assert metric_count(app) == before
        await press(pilot, "p")
        assert "PAUSED" not in header(app) and metric_count(app) == before + 1


async def test_the_workspace_shows_paused_and_still_answers_keys():
    async with workspace() as (demo, pilot):
        app = demo.app
        await press(pilot, "p")
        assert "PAUSED" in header(app)
        await press(pilot, "g")
        assert "by group" in app.screen.query_one(RunList).plain_rows()[0]
        await press(pilot, "p")
        assert "PAUSED" not in header(app)


# -- the sampling interval -----------------------------------------------------------------------------


async def test_plus_and_minus_change_the_hubs_interval_and_the_header_says_so():
    demo = make_demo(samples=5)
    hub = Hub([], interval=2.0)
    demo.source.hub = hub
    async with demo.app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        assert "every 2s" in header(demo.app)
        await press(pilot, "plus")
        assert hub.interval == 3.0 and "every 3s" in header(demo.app)
        await press(pilot, "minus", "minus", "minus")
        assert hub.interval == 0.5 and "every 0.5s" in header(demo.app)
        for _ in range(5):
            await press(pilot, "minus")
        assert hub.interval == INTERVALS[0] and f"every {INTERVALS[0]:g}s" in header(demo.app)


# -- slash in symon -------------------------------------------------------------------------------------


async def test_slash_filters_the_focused_process_table_else_the_charts():
    async with symon() as (demo, pilot):
        app = demo.app
        bar = app.screen.query_one(FilterBar)
        await press(pilot, "slash")
        assert bar.display and bar.target == "charts"
        await press(pilot, "escape")
        await press(pilot, "tab")
        assert app.screen.processes.has_focus
        await press(pilot, "slash")
        assert bar.display and bar.target == "processes"


# -- help at a small size --------------------------------------------------------------------------------


def test_the_more_note_says_which_way_more_lies():
    assert more_note(0, 0) == ""
    assert more_note(0, 10).startswith("↓ more")
    assert more_note(10, 10).startswith("↑ more")
    assert more_note(5, 10).startswith("↑↓ more")


async def test_help_scrolls_at_60_by_15_and_says_there_is_more():
    async with symon(size=(60, 15)) as (demo, pilot):
        app = demo.app
        await press(pilot, "f1")
        await pilot.pause()
        box = app.screen.query_one("#help-box", VerticalScroll)
        assert box.max_scroll_y > 0 and box.scroll_y == 0
        assert "↓ more" in str(box.border_subtitle)
        await press(pilot, "down")
        assert isinstance(app.screen, HelpScreen) and box.scroll_y > 0
        await press(pilot, "pagedown")
        deeper = box.scroll_y
        assert deeper > 1
        await press(pilot, "end")
        assert box.scroll_y == box.max_scroll_y and "↑ more" in str(box.border_subtitle)
        await press(pilot, "pageup")
        assert box.scroll_y < box.max_scroll_y
        await press(pilot, "home")
        assert box.scroll_y == 0
        await pilot._post_mouse_events([events.MouseScrollDown], box, offset=(2, 2))
        await pilot.pause()
        assert box.scroll_y > 0, "the mouse wheel scrolls"
        await press(pilot, "x")
        assert not isinstance(app.screen, HelpScreen)
