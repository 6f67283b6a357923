"""The workspace's peek panel (``]``): the run under the runs list's cursor, read without opening it.

The panel's pilot tests run on a folder of real SDK runs (the session's
console run and failed run, copied in, and a run directory whose file is
not a W&B file); the reader's asking, debouncing and keeping of runs is
tested on its own with a clock the test moves and a stand-in opener. The
snapshot is the made-up workspace of ``leet.testing.workspace_demo`` with
the panel open on its running run, given fixed system stats and console
lines; regenerate it with
``python3 -m pytest tests/test_workspace_peek.py -k snapshot --snapshot-update``
and look at the SVG before keeping it.
"""

from __future__ import annotations

import math
import os
import threading
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path

import pytest
from pilot_waits import until
from test_workspace import copy_run

from leet.config import Config
from leet.config.remembered import remembered
from leet.model.catalog import group
from leet.model.keys import system_key
from leet.model.run import ConsoleLine
from leet.model.store import SeriesKey, Store
from leet.runfile.locate import RunNotFound
from leet.sources.peek import Peek, RunPeeker, open_peek_source
from leet.sources.workspace import WorkspaceSource
from leet.testing.workspace_demo import SECONDS_PER_STEP, make_workspace_demo
from leet.ui.app import LeetApp
from leet.ui.layout_keeper import LayoutKeeper
from leet.ui.screens.run_peek import RunPeek
from leet.ui.screens.workspace import WorkspaceScreen
from leet.ui.views.run_peek import peek_charts
from widgets.runlist import RunList
from widgets.textpane import TextPane

SIZE = (180, 50)
BROKEN = "offline-run-20200101_000000-broken"
READER_THREADS = ("leet-peek", "leet-run", "leet-shared-run")


# -- a folder of real runs ------------------------------------------------------------


@pytest.fixture
def peek_folder(tmp_path, console_run, failed_run) -> Path:
    """The console run and the failed run, and a run whose file is not a W&B file (the oldest: listed last)."""
    runs = tmp_path / "ws" / "wandb"
    copy_run(console_run.run_dir, runs)
    copy_run(failed_run.run_dir, runs)
    broken = runs / BROKEN / "run-broken.wandb"
    broken.parent.mkdir()
    broken.write_bytes(b"garbage, not a run")
    os.utime(broken, (1577836800, 1577836800))
    return tmp_path / "ws"


@asynccontextmanager
async def running(root: Path, size: tuple[int, int] = SIZE, *, remember: bool = False):
    """The app over the folder ``root``; with ``remember``, keeping its layout in the test's state folder as ``leet`` does."""
    source = WorkspaceSource(root, Store())
    source.refresh()
    app = LeetApp(source, Config(theme="textual-dark"), live=False, screen=lambda: WorkspaceScreen(source))
    if remember:
        app.config, remembering = remembered(app.config)
        assert remembering is not None
        app.layout_keeper = LayoutKeeper(app, remembering, app.config.origin)
    try:
        async with app.run_test(size=size) as pilot:
            await until(pilot, lambda: isinstance(app.screen, WorkspaceScreen), "the workspace")
            yield app, pilot, source
    finally:
        source.stop()


def panel(app) -> RunPeek:
    return app.screen.query_one(RunPeek)


def overview(app) -> str:
    return "\n".join(app.screen.query_one("#peek-overview", TextPane).lines)


def overview_title(app) -> str:
    return app.screen.query_one("#peek-overview", TextPane).plain_rows()[0]


def console(app) -> str:
    return "\n".join(app.screen.query_one("#peek-console", TextPane).lines)


def system_titles(app) -> list[str]:
    return [chart_id for chart_id, _ in app.screen.query_one("#peek-system").visible_charts()]


def reader_threads() -> list[str]:
    return [thread.name for thread in threading.enumerate() if thread.name in READER_THREADS]


async def cursor_to(pilot, app, key: str) -> None:
    keys = [entry.key for entry in app.screen.source.entries()]
    runs = app.screen.query_one(RunList)
    await pilot.press(*["down" if keys.index(key) > keys.index(runs.cursor_key) else "up"] * abs(keys.index(key) - keys.index(runs.cursor_key)))
    await pilot.pause()
    assert runs.cursor_key == key


# -- the panel -------------------------------------------------------------------------


async def test_the_panel_is_hidden_until_the_bracket_and_reads_no_run_meanwhile(peek_folder):
    async with running(peek_folder) as (app, pilot, _source):
        assert not panel(app).display and panel(app).reader is None
        await pilot.press("right_square_bracket")
        assert panel(app).display and panel(app).reader is not None


async def test_the_bracket_shows_the_highlighted_runs_overview_system_charts_and_console(peek_folder, console_run):
    async with running(peek_folder) as (app, pilot, _source):
        await cursor_to(pilot, app, console_run.run_dir.name)
        await pilot.press("right_square_bracket")
        await until(pilot, lambda: "done" in console(app), "the console run's console in the panel")
        assert "starting training" in console(app) and "step 4 loss 0.200" in console(app)
        assert "State" in overview(app) and "finished" in overview(app) and console_run.run_id in overview(app)
        assert overview_title(app).startswith("Run")
        await until(pilot, lambda: system_titles(app), "the run's system charts")
        assert any(title.startswith(("cpu", "memory", "gpu")) for title in system_titles(app)), system_titles(app)


async def test_moving_the_cursor_shows_the_next_runs(peek_folder, console_run, failed_run):
    async with running(peek_folder) as (app, pilot, _source):
        await cursor_to(pilot, app, console_run.run_dir.name)
        await pilot.press("right_square_bracket")
        await until(pilot, lambda: "done" in console(app), "the console run in the panel")
        await cursor_to(pilot, app, failed_run.run_dir.name)
        await until(pilot, lambda: "RuntimeError: boom" in console(app), "the failed run's console in the panel")
        assert "failed (exit 3)" in overview(app) and failed_run.run_id in overview(app)
        assert "starting training" not in console(app)
        # Back to the first: kept open, so shown at once, without opening it again.
        opened = list(panel(app).reader.open_keys())
        await cursor_to(pilot, app, console_run.run_dir.name)
        await until(pilot, lambda: "done" in console(app), "the console run again")
        assert panel(app).reader.open_keys() == opened[::-1]


async def test_a_run_that_cannot_be_read_says_why(peek_folder):
    async with running(peek_folder) as (app, pilot, _source):
        await pilot.press("right_square_bracket")
        await cursor_to(pilot, app, BROKEN)
        await until(pilot, lambda: "not a W&B run file" in overview(app), "why the broken run cannot be read")
        assert "Cannot be read" in overview(app) and console(app) == ""


async def test_a_run_gone_since_it_was_listed_says_why(peek_folder, console_run):
    async with running(peek_folder) as (app, pilot, source):
        key = console_run.run_dir.name
        (peek_folder / "wandb" / key / console_run.wandb_path.name).unlink()
        await cursor_to(pilot, app, key)
        await pilot.press("right_square_bracket")
        await until(pilot, lambda: "Cannot be read" in overview(app), "why the deleted run cannot be read")
        assert "RunNotFound" in overview(app) or "FileNotFoundError" in overview(app), overview(app)


async def test_closing_the_panel_and_leaving_the_workspace_stop_the_reader(peek_folder):
    assert "leet-peek" not in reader_threads()
    async with running(peek_folder) as (app, pilot, _source):
        await until(pilot, lambda: reader_threads() == ["leet-run"], "the workspace reading its newest run")
        await pilot.press("right_square_bracket")
        await until(pilot, lambda: "State" in overview(app), "a run in the panel")
        assert sorted(reader_threads()) == ["leet-peek", "leet-run"], "one thread reads the panel's run: its source starts none"
        await pilot.press("right_square_bracket")
        assert not panel(app).display and reader_threads() == ["leet-run"]
        await pilot.press("right_square_bracket")
        await until(pilot, lambda: "State" in overview(app), "a run in the panel again")
        assert "leet-peek" in reader_threads()
    assert "leet-peek" not in reader_threads(), "leaving the workspace stops the reader"


async def test_running_the_cursor_down_the_list_opens_only_where_it_rests(tmp_path, console_run, monkeypatch):
    runs = tmp_path / "ws" / "wandb"
    for n in range(12):
        copy_run(console_run.run_dir, runs, name=f"{console_run.run_dir.name}-{n}")
    opened: list[str] = []
    readers: set[str] = set()

    def counting(key, files, store):
        opened.append(key)
        readers.add(threading.current_thread().name)
        return open_peek_source(key, files, store)

    monkeypatch.setattr(RunPeek, "opener", staticmethod(counting))
    async with running(tmp_path / "ws") as (app, pilot, source):
        await pilot.press("right_square_bracket")
        await until(pilot, lambda: "done" in console(app), "the first run in the panel")
        await pilot.press(*["down"] * 11)
        last = source.entries()[-1].key
        await until(pilot, lambda: opened[-1:] == [last] and "done" in console(app), "the last run in the panel")
        assert len(opened) <= 4, f"{len(opened)} runs opened for 12 passed over: {opened}"
        assert readers == {"leet-peek"}, "runs are opened off the screen's thread"


async def test_a_live_run_in_the_panel_reads_on_as_it_is_written(live_run):
    live = live_run(seconds=60.0, step_interval=0.1)
    async with running(live.root) as (app, pilot, _source):
        await pilot.press("right_square_bracket")
        await until(pilot, lambda: "step 0" in console(app), "the live run's first line")
        await until(pilot, lambda: "step 10" in console(app), "a line the run wrote after the panel opened")
        assert "running" in overview(app)


async def test_the_panel_is_remembered_with_the_layout(peek_folder):
    async with running(peek_folder) as (app, pilot, _source):
        screen = app.screen
        assert screen.remembered_layout()["peek"] is False
        await pilot.press("right_square_bracket")
        assert screen.remembered_layout()["peek"] is True
        screen.restore_layout({"peek": False})
        assert not panel(app).display and panel(app).reader is None
        screen.restore_layout({"peek": "yes"})  # not a switch: left as it was
        assert not panel(app).display
        screen.restore_layout({"peek": True})
        assert panel(app).display and panel(app).reader is not None


async def test_the_panel_shows_again_at_the_next_start(peek_folder):
    async with running(peek_folder, remember=True) as (app, pilot, _source):
        await pilot.press("right_square_bracket")
        await pilot.pause()
        app.exit()  # the layout is written as leet exits
    async with running(peek_folder, remember=True) as (app, pilot, _source):
        assert panel(app).display
        await until(pilot, lambda: "State" in overview(app), "the remembered panel reading its run")


async def test_the_header_counts_the_charts_the_narrower_grid_shows(monkeypatch):
    demo = make_workspace_demo()
    monkeypatch.setattr(RunPeek, "opener", staticmethod(lambda key, files, store: DemoPeekRun(demo.source.source(key), store)))
    async with demo.app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        grid = demo.app.screen.grid
        assert "metrics 1-6 of 6" in demo.app.screen.query_one("#header").plain_rows()[0]
        await pilot.press("right_square_bracket")
        await until(pilot, lambda: len(system_titles(demo.app)) == 3, "the panel drawn")
        await until(pilot, lambda: grid.page_range() == (1, 3, 6), "the metrics grid fitted beside the panel")
        await pilot.pause()
        assert "metrics 1-3 of 6" in demo.app.screen.query_one("#header").plain_rows()[0]


# -- the reader on its own -------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class StandIn:
    """A run source that reads nothing: what the reader keeps, steps and closes."""

    def __init__(self, key: str) -> None:
        self.run_key = key
        self.system_key = f"{key}#system"
        self.closed = False

    def step(self) -> bool:
        return False

    def finished(self) -> bool:
        return True

    def snapshot(self, console_lines: int = 2000):
        raise AssertionError("the reader never takes snapshots")

    def close(self) -> None:
        self.closed = True


def stand_in_reader(clock: Clock, opened: list[str], made: dict[str, StandIn]) -> RunPeeker:
    def opener(key, files, store):
        if not files:
            raise RunNotFound(f"{key}: no run file")
        opened.append(key)
        made[key] = StandIn(key)
        return made[key]

    return RunPeeker(opener=opener, monotonic=clock)


def test_asking_for_runs_in_quick_succession_opens_only_the_last_once_asking_pauses():
    clock, opened, made = Clock(), [], {}
    reader = stand_in_reader(clock, opened, made)
    for n in range(50):
        reader.show(f"run{n}", [Path(f"run{n}.wandb")])
        assert reader.tick() > 0
        clock.now += 0.03
    assert opened == [] and reader.peek().key == "run49" and reader.peek().source is None
    clock.now += reader.debounce
    assert reader.tick() == 0.0
    assert opened == ["run49"] and reader.peek() == Peek("run49", made["run49"])


def test_the_last_runs_shown_stay_open_and_come_back_at_once():
    clock, opened, made = Clock(), [], {}
    reader = stand_in_reader(clock, opened, made)

    def rest_on(key: str) -> None:
        reader.show(key, [Path(f"{key}.wandb")])
        clock.now += reader.debounce
        reader.tick()

    for key in ("a", "b", "c", "d", "e"):
        rest_on(key)
    assert reader.open_keys() == ["b", "c", "d", "e"] and made["a"].closed, "only the last four are kept"
    reader.show("c", [Path("c.wandb")])
    reader.tick()  # no rest needed: it is open
    assert reader.peek().source is made["c"] and opened == ["a", "b", "c", "d", "e"]
    assert reader.open_keys() == ["b", "d", "e", "c"]
    reader.stop()
    assert all(source.closed for source in made.values()) and reader.open_keys() == []


def test_a_run_that_cannot_be_opened_is_shown_with_why_and_asked_for_again_later():
    clock, opened, made = Clock(), [], {}
    reader = stand_in_reader(clock, opened, made)
    reader.show("gone", [])
    clock.now += reader.debounce
    reader.tick()
    assert reader.peek().key == "gone" and reader.peek().source is None and "RunNotFound" in reader.peek().error
    reader.show(None)
    reader.tick()
    assert reader.peek() == Peek()


def test_system_charts_put_gpu_cpu_and_memory_first():
    keys = [SeriesKey("r#system", key, None) for key in ("disk.in", "network.sent", "gpu.0.gpu", "gpu.0.temp", "cpu.0.cpu_percent", "memory_percent")]
    families = [spec.family for spec in peek_charts(group(keys))]
    assert families == ["GPU", "CPU", "Memory"]


# -- the snapshot ----------------------------------------------------------------------

DEMO_CONSOLE = (
    ("stdout", "epoch 14 | step 170 | loss 0.412 | acc 0.871"),
    ("stderr", "warning: dataloader worker 3 slow (2.1 s)"),
    ("stdout", "epoch 14 | step 180 | loss 0.398 | acc 0.876"),
    ("stdout", "saved checkpoint ckpt-180.pt"),
)


class DemoPeekRun:
    """A made-up run of the demo workspace as the panel's reader sees it, with fixed system stats and console."""

    def __init__(self, run, store: Store) -> None:
        self.run = run
        self.run_key = run.key
        self.system_key = system_key(run.key)
        start = run.end - run.spec.steps * SECONDS_PER_STEP
        times = [start + 30.0 * n for n in range(int((run.end - start) // 30.0))]
        store.extend_many(self.system_key, {
            ("gpu.0.gpu", None): (times, [88 + 8 * math.sin(n / 5) for n in range(len(times))]),
            ("cpu.0.cpu_percent", None): (times, [35 + 20 * math.sin(n / 9) for n in range(len(times))]),
            ("memory_percent", None): (times, [40 + n / len(times) * 25 for n in range(len(times))]),
        })

    def step(self) -> bool:
        return False

    def finished(self) -> bool:
        return True

    def snapshot(self, console_lines: int = 2000):
        return replace(self.run.snapshot(), console=tuple(ConsoleLine(stream, text) for stream, text in DEMO_CONSOLE))

    def close(self) -> None:
        pass


def test_snapshot_of_the_workspace_with_the_panel_open(snap_compare, monkeypatch):
    demo = make_workspace_demo()
    monkeypatch.setattr(RunPeek, "opener", staticmethod(lambda key, files, store: DemoPeekRun(demo.source.source(key), store)))

    async def open_panel(pilot) -> None:
        await pilot.press("right_square_bracket")
        await until(pilot, lambda: "saved checkpoint" in console(pilot.app) and len(system_titles(pilot.app)) == 3, "the panel drawn")
        await pilot.pause()

    assert snap_compare(demo.app, terminal_size=(160, 48), run_before=open_panel)
