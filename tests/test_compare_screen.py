"""``D`` in the workspace: the compare view over real SDK runs (three learning rates, one run without ``batch``)."""

from __future__ import annotations

import time
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from pilot_waits import until
from textual.widgets import DataTable
from wandb_runs import MadeRun, make_rows_run

from leet.config import Config
from leet.model.store import Store
from leet.sources.workspace import WorkspaceSource
from leet.ui.app import LeetApp
from leet.ui.bindings import COMPARE_KEYS, screen_keys
from leet.ui.screens.compare import CompareScreen
from leet.ui.screens.help import HelpScreen
from leet.ui.screens.workspace import WorkspaceScreen
from widgets.filterbar import FilterBar
from widgets.runlist import RunList

WAIT = 30.0
LOSS_SCALE = {0.1: 1.0, 0.01: 0.5, 0.001: 2.0}


@dataclass(frozen=True)
class Sweep:
    root: Path
    runs: dict[float, MadeRun]  # by lr


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Sweep:
    root = tmp_path_factory.mktemp("compare")
    runs = {}
    for lr, scale in LOSS_SCALE.items():
        config = {"lr": lr, "model": {"depth": 2}, **({} if lr == 0.001 else {"batch": 32})}
        rows = [{"loss": scale / (step + 1), "acc": 1.0 - scale / (step + 2)} for step in range(5)]
        runs[lr] = make_rows_run(root, rows, config=config, name=f"lr-{lr}")
        time.sleep(1.1)  # a start time each: the newest is listed first
    return Sweep(root, runs)



@asynccontextmanager
async def workspace(sweep: Sweep):
    source = WorkspaceSource(sweep.root, Store())
    source.refresh()
    app = LeetApp(source, Config(theme="textual-dark"), live=False, screen=lambda: WorkspaceScreen(source))
    try:
        async with app.run_test(size=(160, 40)) as pilot:
            await until(pilot, lambda: isinstance(app.screen, WorkspaceScreen) and len(source.selected()) == 1, "the newest run selected")
            yield app, pilot, source
    finally:
        source.stop()


def table_text(app) -> tuple[list[str], dict[str, list[str]]]:
    """(column headers' first lines, {row name: cells}) of the compare table."""
    widget = app.screen.query_one(DataTable)
    headers = [column.label.plain.split("\n")[0] for column in widget.ordered_columns][1:]
    rows = {}
    for row_key in widget.rows:
        cells = [str(cell.plain if hasattr(cell, "plain") else cell) for cell in widget.get_row(row_key)]
        rows[cells[0]] = cells[1:]
    return headers, rows


def best_marks(app, name: str) -> list[bool]:
    widget = app.screen.query_one(DataTable)
    cells = widget.get_row(name)[1:]
    return [any(span.style and getattr(span.style, "bold", False) for span in cell.spans) or bool(cell.style and getattr(cell.style, "bold", False)) for cell in cells]


async def test_d_with_one_run_says_two_are_needed(sweep: Sweep):
    async with workspace(sweep) as (app, pilot, source):
        said: list[str] = []
        app.screen.notify = lambda message, **_: said.append(str(message))  # type: ignore[method-assign]
        await pilot.press("D")
        await pilot.pause()
        assert isinstance(app.screen, WorkspaceScreen) and said and "two runs" in said[0]


async def test_d_compares_the_cursor_run_and_the_selected_ones(sweep: Sweep):
    async with workspace(sweep) as (app, pilot, source):
        runs = app.screen.query_one(RunList)
        await pilot.press("down", "space", "down")  # the second run selected; the cursor on the third
        await pilot.pause()
        assert len(source.selected()) == 2 and runs.cursor_key not in source.selected()
        await pilot.press("D")
        await until(pilot, lambda: isinstance(app.screen, CompareScreen), "the compare view")

        def loaded() -> bool:
            _, rows = table_text(app)
            return "loss · best" in rows and all(cell != "—" for cell in rows["loss · best"])

        await until(pilot, loaded, "every run's values")
        headers, rows = table_text(app)
        assert sorted(headers) == ["lr-0.001", "lr-0.01", "lr-0.1"]
        assert set(source.selected()) == {sweep.runs[lr].run_dir.name for lr in LOSS_SCALE}, "the cursor's run is selected, so it loads"
        by_lr = dict(zip(headers, range(3)))
        assert "model.depth" not in rows, "the same in every run: no row"
        assert rows["lr"][by_lr["lr-0.01"]] == "0.01"
        assert rows["batch"][by_lr["lr-0.001"]] == "—" and rows["batch"][by_lr["lr-0.1"]] == "32"
        assert rows["loss · best"][by_lr["lr-0.01"]] == "0.1 @ 4"
        marks = best_marks(app, "loss · best")
        assert marks[by_lr["lr-0.01"]] and sum(marks) == 1, "the lowest loss is the best"
        assert best_marks(app, "acc · last")[by_lr["lr-0.01"]], "accuracy: the highest"

        table = app.screen.query_one(DataTable)
        table.move_cursor(row=list(rows).index("loss · last"))
        await pilot.press("s")
        await pilot.pause()
        assert table_text(app)[0] == ["lr-0.01", "lr-0.1", "lr-0.001"], "best loss first"
        await pilot.press("S")
        await pilot.pause()
        assert table_text(app)[0] == ["lr-0.001", "lr-0.1", "lr-0.01"]

        await pilot.press("slash")
        await pilot.pause()
        assert app.screen.query_one(FilterBar).display
        await pilot.press("a", "c", "c", "enter")
        await pilot.pause()
        assert list(table_text(app)[1]) == ["acc · last", "acc · best"]

        await pilot.press("h")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen), "help")
        await pilot.press("x")
        await until(pilot, lambda: isinstance(app.screen, CompareScreen), "help closed")
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, WorkspaceScreen), "back to the workspace")


def test_the_compare_screen_binds_every_row_of_its_table():
    bound = {(one, binding.action) for binding in CompareScreen.BINDINGS for one in binding.key.split(",")}
    for key in screen_keys(COMPARE_KEYS):
        assert hasattr(CompareScreen, f"action_{key.action.split('(')[0]}")
        assert all((one, key.action) in bound for one in key.keys.split(","))
    table = {(binding.key, binding.action) for binding in DataTable.BINDINGS}  # type: ignore[union-attr]
    assert all((key.keys, key.action) in table for key in COMPARE_KEYS if key.where == "table")
