"""The workspace overlay and the run view draw what each run's files say of their x axes (real SDK runs).

``define_metric``: a metric with a step metric is drawn against it, hidden
metrics stay hidden, and runs that disagree on a metric's axis are drawn by
step with a note. A resumed run's second segment (offline, ``_step`` from 0
again) is drawn after the first: at steps 30–59, not on top of 0–29.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from loading import settled
from pilot_waits import until
from wandb_runs import MadeRun, ResumedRun, make_resumed_steps_run, make_rows_run

from leet.config import Config
from leet.model.store import SeriesKey, Store
from leet.sources.shared import open_run
from leet.sources.workspace import WorkspaceSource
from leet.ui.app import LeetApp
from leet.ui.screens.run import RunScreen
from leet.ui.screens.workspace import WorkspaceScreen

WAIT = 30.0


@dataclass(frozen=True)
class AxesFolder:
    root: Path
    trainers: tuple[MadeRun, MadeRun]  # val/* by epoch, train/* by train/global_step, secret hidden
    plain: MadeRun  # val/loss and epoch logged with no define_metric: val/loss by step


TRAINER_DEFINES = (
    {"name": "train/global_step"},
    {"name": "train/*", "step_metric": "train/global_step", "step_sync": True},
    {"name": "epoch"},
    {"name": "val/loss", "step_metric": "epoch", "summary": "min"},
    {"name": "secret", "hidden": True},
)


def trainer_rows() -> list[dict]:
    """``train/*`` each step (global step 10, 20, …), ``val/loss`` at epochs 1-3 (steps 1, 3, 5)."""
    rows: list[dict] = []
    for step in range(1, 7):
        row = {"train/loss": 1.0 / step, "train/global_step": 10 * step, "secret": step}
        if step % 2 == 0:
            row.update({"epoch": step // 2, "val/loss": 1.0 / step + 0.1})
        rows.append(row)
    return rows


@pytest.fixture(scope="module")
def axes_folder(tmp_path_factory: pytest.TempPathFactory) -> AxesFolder:
    root = tmp_path_factory.mktemp("ws-axes")
    trainers = (make_rows_run(root, trainer_rows(), defines=TRAINER_DEFINES), make_rows_run(root, trainer_rows(), defines=TRAINER_DEFINES))
    plain = make_rows_run(root, [{"val/loss": 1.0 / (step + 1), "epoch": step} for step in range(4)], name="plain")
    return AxesFolder(root, trainers, plain)


@pytest.fixture(scope="module")
def resumed_steps(tmp_path_factory: pytest.TempPathFactory) -> ResumedRun:
    return make_resumed_steps_run(tmp_path_factory.mktemp("ws-resumed"))



@asynccontextmanager
async def workspace_of(root: Path, keys: list[str]):
    """The workspace over ``root`` with exactly the runs ``keys`` selected and loaded."""
    source = WorkspaceSource(root, Store())
    source.refresh()
    screen = WorkspaceScreen(source)
    app = LeetApp(source, Config(theme="textual-dark"), live=False, screen=lambda: screen)
    try:
        async with app.run_test(size=(200, 60)) as pilot:
            await until(pilot, lambda: app.screen is screen and bool(source.selected()), "the first run selected")
            for key in list(source.selected()):
                if key not in keys:
                    source.deselect(key)
            for key in keys:
                source.select(key)

            def loaded() -> bool:
                sources = [source.source(key) for key in keys]
                return all(found is not None and found.snapshot().state.value != "loading" for found in sources)

            await until(pilot, loaded, "the runs loaded")
            screen.update_view(force=True)
            await pilot.pause()
            yield app, pilot, screen
    finally:
        source.stop()


def views(screen) -> dict:
    """Each visible chart's view, by chart id (the metric)."""
    return {chart_id: widget.view for chart_id, widget in screen.grid.visible_charts()}


async def test_the_overlay_draws_each_metric_against_its_step_metric_and_hides_hidden_ones(axes_folder: AxesFolder):
    keys = [run.run_dir.name for run in axes_folder.trainers]
    async with workspace_of(axes_folder.root, keys) as (app, pilot, screen):
        drawn = views(screen)
        assert "secret" not in drawn, "a hidden metric gets no chart"
        val = drawn["val/loss"]
        assert val.title == "val/loss · by epoch" and not val.note
        assert [list(series.t) for series in val.data] == [[1.0, 2.0, 3.0]] * 2, "both runs, at epochs 1-3, not steps"
        assert val.x_range[1] < 6, "the x axis is the epoch's"
        train = drawn["train/loss"]
        assert train.title == "train/loss · by train/global_step"
        assert [list(series.t) for series in train.data] == [[10.0, 20.0, 30.0, 40.0, 50.0, 60.0]] * 2


async def test_runs_that_disagree_on_an_axis_are_drawn_by_step_and_the_chart_says_so(axes_folder: AxesFolder):
    trainer, plain = axes_folder.trainers[0], axes_folder.plain
    async with workspace_of(axes_folder.root, [trainer.run_dir.name, plain.run_dir.name]) as (app, pilot, screen):
        val = views(screen)["val/loss"]
        assert val.title == "val/loss"
        assert val.note == "axes differ: by epoch, by step · drawn by step"
        by_name = dict(zip(val.series_names, val.data))
        assert list(by_name["plain"].t) == [0.0, 1.0, 2.0, 3.0]
        assert len(by_name[next(name for name in val.series_names if name != "plain")].t) == 3, "the trainer's val/loss by its steps"


async def test_a_resumed_segment_is_overlaid_after_the_first(resumed_steps: ResumedRun):
    first, second = resumed_steps.first, resumed_steps.second
    async with workspace_of(first.root, [first.run_dir.name, second.run_dir.name]) as (app, pilot, screen):
        loss = views(screen)["loss"]
        steps = {tuple(series.t) for series in loss.data}
        assert steps == {tuple(float(s) for s in range(30)), tuple(float(s) for s in range(30, 60))}
        assert loss.x_range[1] >= 59


def test_a_resumed_segment_loads_at_its_real_steps(resumed_steps: ResumedRun):
    store = Store()
    source = open_run(resumed_steps.second.run_dir, store)
    snapshot = settled(source)
    assert snapshot.last_step == 29 and snapshot.step_offset == 30, "the file's own steps, and where they really lie"
    (series,) = store.snapshot([SeriesKey(source.run_key, "loss", None)]).values()
    assert list(series.t) == [float(step) for step in range(30, 60)]
    first = open_run(resumed_steps.first.run_dir, Store())
    assert settled(first).step_offset == 0


async def test_the_run_view_draws_a_resumed_segment_at_its_real_steps(resumed_steps: ResumedRun):
    store = Store()
    source = open_run(resumed_steps.second.run_dir, store)
    settled(source)
    screen = RunScreen(source)
    app = LeetApp(source, Config(theme="textual-dark"), live=False, screen=lambda: screen)
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: app.screen is screen and "loss" in views_of_run(screen), "the loss chart")
        loss = views_of_run(screen)["loss"]
        assert list(loss.data[0].t) == [float(step) for step in range(30, 60)]
        assert loss.x_range[0] <= 30 and loss.x_range[1] >= 59
        header = screen.query_one("#header").plain_rows()[0]
        assert "step 59" in header


def views_of_run(screen) -> dict:
    return {chart_id: widget.view for chart_id, widget in screen.query_one("#metrics").visible_charts()}
