"""The run filter language typed at ``f`` in the workspace, and ``P`` / ``A`` / ``X``, on real runs.

Three runs made by the W&B SDK (``wandb.init(mode="offline")``) in one folder:

* ``basic-run`` (the session's basic run, copied in): lr 3e-4, model depth 12,
  tags ``baseline`` and ``test``, a loss of 0.125 in its summary; finished;
* ``wide-run``: lr 1e-2, model depth 24, ``val/loss`` 0.25 last; finished;
* ``broken-run``: lr 1e-3, ``val/loss`` 0.4 last; it exits with code 2.

Tags and state come from the listing; summary values need each file read
whole, which the screen has done on a worker: tests wait for what shows.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from pilot_waits import until
from test_workspace import copy_run
from textual.widgets import Input
from wandb_runs import make_rows_run

from leet.config import Config
from leet.config.remembered import remembered
from leet.model.store import Store
from leet.sources.run_facts import FactsReader
from leet.sources.workspace import WorkspaceSource
from leet.testing.workspace_demo import make_workspace_demo
from leet.ui.app import LeetApp
from leet.ui.screens.run_filter import MAX_FOLDERS, valid_pins
from leet.ui.screens.workspace import WorkspaceScreen
from widgets.filterbar import FilterBar
from widgets.runlist import RunList

SIZE = (160, 40)


@dataclass(frozen=True)
class QueryRuns:
    root: Path
    keys: dict[str, str]  # run name → its directory (its key in the list)


@pytest.fixture(scope="module")
def query_runs(tmp_path_factory, basic_run) -> QueryRuns:
    root = tmp_path_factory.mktemp("query-runs")
    runs = root / "wandb"
    runs.mkdir()
    with ThreadPoolExecutor(2) as pool:
        wide = pool.submit(
            make_rows_run, root, [{"val/loss": 0.5}, {"val/loss": 0.25}], config={"lr": 1e-2, "model": {"depth": 24}}, name="wide-run",
        )
        broken = pool.submit(make_rows_run, root, [{"val/loss": 0.6}, {"val/loss": 0.4}], config={"lr": 1e-3}, name="broken-run", exit_code=2)
        made = {"wide-run": wide.result(), "broken-run": broken.result()}
    keys = {name: run.run_dir.name for name, run in made.items()}
    keys["basic-run"] = copy_run(basic_run.run_dir, runs).name
    return QueryRuns(root, keys)


@asynccontextmanager
async def running(query_runs: QueryRuns, *, remember: bool = False):
    source = WorkspaceSource(query_runs.root, Store())
    source.refresh()
    config, remembering = remembered(Config(theme="textual-dark")) if remember else (Config(theme="textual-dark"), None)
    app = LeetApp(source, config, live=False, screen=lambda: WorkspaceScreen(source), remembering=remembering)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: isinstance(app.screen, WorkspaceScreen) and len(listed(app)) == 3, "the three runs listed")
            yield app, pilot, source
            if remember:
                app.exit()  # as q does: the layout is written on the way out
    finally:
        source.stop()


def listed(app) -> list[str]:
    """The names of the runs listed, in order."""
    return [row[2:].split()[0] for row in app.screen.query_one(RunList).plain_rows()[1:] if row.strip()]


def marks(app) -> dict[str, str]:
    """Each listed run's mark: ● selected, ◆ pinned, ○ neither."""
    return {row[2:].split()[0]: row[0] for row in app.screen.query_one(RunList).plain_rows()[1:] if row.strip()}


def footer(app) -> str:
    return app.screen.query_one("#status").plain_rows()[0]


def header(app) -> str:
    return app.screen.query_one("#header").plain_rows()[0]


async def type_query(pilot, text: str, *, enter: bool = True) -> None:
    await pilot.press("ctrl+f", "f", *text, *(["enter"] if enter else []))
    await pilot.pause()


async def cursor_to(pilot, app, key: str) -> None:
    runs = app.screen.query_one(RunList)
    for _ in range(len(runs.runs)):
        if runs.cursor_key == key:
            return
        await pilot.press("down")
    assert runs.cursor_key == key


async def test_config_tags_and_state_terms_pick_the_runs(query_runs):
    async with running(query_runs) as (app, pilot, source):
        await type_query(pilot, "cfg.lr>=1e-3")
        await until(pilot, lambda: sorted(listed(app)) == ["broken-run", "wide-run"], "the runs with lr ≥ 1e-3")
        assert "filter: cfg.lr>=1e-3" in header(app)

        await type_query(pilot, "tag:baseline")
        await until(pilot, lambda: listed(app) == ["basic-run"], "the tagged run")

        await type_query(pilot, "-tag:baseline state:failed")
        await until(pilot, lambda: listed(app) == ["broken-run"], "the untagged run that failed")

        await type_query(pilot, "state:failed | cfg.model.depth>20")
        await until(pilot, lambda: sorted(listed(app)) == ["broken-run", "wide-run"], "or, and a nested config key")

        await type_query(pilot, "-cfg.model.depth>1")
        await until(pilot, lambda: listed(app) == ["broken-run"], "a run without the key matches its negation")

        await pilot.press("ctrl+f")
        await until(pilot, lambda: len(listed(app)) == 3, "every run again")


async def test_summary_terms_read_each_file_off_the_screen_thread(query_runs, monkeypatch):
    readers: set[threading.Thread] = set()
    original_poll = FactsReader.poll

    def recorded_poll(self):
        readers.add(threading.current_thread())
        return original_poll(self)

    monkeypatch.setattr(FactsReader, "poll", recorded_poll)
    async with running(query_runs) as (app, pilot, source):
        await type_query(pilot, "tag:baseline")
        await until(pilot, lambda: listed(app) == ["basic-run"], "the tagged run")
        assert not readers, "a query without config or summary terms reads no file"
        await type_query(pilot, "summary.val/loss<0.3")
        await until(pilot, lambda: listed(app) == ["wide-run"], "the run whose last val/loss is under 0.3")
        assert readers and threading.main_thread() not in readers, readers
        await type_query(pilot, "(summary.loss<0.2 | summary.val/loss>0.3)")
        await until(pilot, lambda: sorted(listed(app)) == ["basic-run", "broken-run"], "grouped summary terms")


async def test_a_failure_reading_the_runs_facts_is_said_on_screen(query_runs, monkeypatch):
    def broken_poll(self):
        raise MemoryError("no room for the summary")

    monkeypatch.setattr(FactsReader, "poll", broken_poll)
    async with running(query_runs) as (app, pilot, source):
        await type_query(pilot, "summary.val/loss<0.3")
        await until(
            pilot, lambda: any("no room for the summary" in str(note.message) for note in app._notifications), "the failure told",
        )


async def test_an_invalid_query_says_where_and_the_list_keeps_its_filter(query_runs):
    async with running(query_runs) as (app, pilot, source):
        await type_query(pilot, "tag:baseline")
        await until(pilot, lambda: listed(app) == ["basic-run"], "the tagged run")
        await pilot.press("f", "end", *["backspace"] * len("baseline"))  # each step on the way is valid and matches the same run
        await until(pilot, lambda: "column 4: a value after :" in footer(app), "the error in the footer while typing")
        assert listed(app) == ["basic-run"] and "runs filter: tag:b " in header(app), "the list keeps the last valid query"

        app.screen.query_one(FilterBar).query_one(Input).value = "cfg.lr>="  # pasted
        await until(pilot, lambda: "column 8: a value after >=" in footer(app), "the pasted query's error")
        assert listed(app) == ["basic-run"]
        await pilot.press("enter")
        await pilot.pause()
        assert listed(app) == ["basic-run"] and "runs filter: tag:b " in header(app)
        assert "column 8: a value after >=" in footer(app), "the error stays said after enter"

        await type_query(pilot, "cfg.lr>=1e-2")
        await until(pilot, lambda: listed(app) == ["wide-run"], "a valid query in force")
        assert "column" not in footer(app)


async def test_p_pins_a_selects_the_matches_and_x_keeps_only_the_pinned(query_runs):
    async with running(query_runs) as (app, pilot, source):
        keys = query_runs.keys
        newest = source.selected()
        assert len(newest) == 1, "the newest run is selected at start"
        await type_query(pilot, "cfg.lr>=1e-3")
        await until(pilot, lambda: sorted(listed(app)) == ["broken-run", "wide-run"], "the filter")
        await pilot.press("A")
        await until(pilot, lambda: {keys["wide-run"], keys["broken-run"]} <= set(source.selected()), "both matches selected")

        await cursor_to(pilot, app, keys["wide-run"])
        await pilot.press("P")
        await until(pilot, lambda: marks(app)["wide-run"] == "◆", "the pin mark")
        assert marks(app)["broken-run"] == "●"

        await pilot.press("space")
        await pilot.pause()
        assert keys["wide-run"] in source.selected(), "space leaves a pinned run selected"

        await pilot.press("X")
        await until(pilot, lambda: source.selected() == [keys["wide-run"]], "only the pinned run selected")
        assert marks(app) == {"wide-run": "◆", "broken-run": "○"}

        await pilot.press("P")
        await until(pilot, lambda: marks(app)["wide-run"] == "●", "unpinned, still selected")
        await pilot.press("X")
        await until(pilot, lambda: source.selected() == [], "nothing pinned: every run deselected")


async def test_pins_are_remembered_per_folder_and_selected_again(query_runs):
    key = query_runs.keys["broken-run"]
    async with running(query_runs, remember=True) as (app, pilot, source):
        await cursor_to(pilot, app, key)
        await pilot.press("P")
        await until(pilot, lambda: marks(app)["broken-run"] == "◆", "the pin mark")
        assert app.screen.remembered_layout()["pins"] == {str(source.root): [key]}
    async with running(query_runs, remember=True) as (app, pilot, source):
        await until(pilot, lambda: key in source.selected() and marks(app)["broken-run"] == "◆", "the pinned run selected again")


# -- the snapshot -------------------------------------------------------------------------------
# On the made-up workspace (leet.testing.workspace_demo): the sweep runs that did not fail, the
# fourth of them pinned (◆) and so selected beside the two selected at start. The SVG lives in
# tests/__snapshots__/test_workspace_query/; regenerate it with
# ``python3 -m pytest tests/test_workspace_query.py -k snapshot --snapshot-update`` after a deliberate change.


def test_snapshot_of_a_filtered_list_with_a_pinned_run(snap_compare):
    keys = ("f", *"sweep -state:failed", "enter", "down", "down", "down", "P")
    assert snap_compare(make_workspace_demo().app, terminal_size=(160, 40), press=keys)


def test_remembered_pins_keep_only_what_is_valid():
    assert valid_pins(None) == {} and valid_pins(["a"]) == {}
    assert valid_pins({"/runs": ["a", "a", 3, "", "b"], "/other": "a", "/none": []}) == {"/runs": ["a", "b"]}
    many = {f"/runs{n}": ["a"] for n in range(MAX_FOLDERS + 5)}
    assert list(valid_pins(many)) == list(many)[-MAX_FOLDERS:], "the most recently pinned folders"
