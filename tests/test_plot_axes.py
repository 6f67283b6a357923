"""``leet inspect RUN --plot``: define_metric axes and a resumed segment's real steps (real SDK runs)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_inspect_plot import in_legend, step_ticks
from test_workspace_axes import TRAINER_DEFINES, trainer_rows
from wandb_runs import MadeRun, ResumedRun, make_resumed_steps_run, make_rows_run

from leet.cli import main


@pytest.fixture(scope="module")
def trainer(tmp_path_factory: pytest.TempPathFactory) -> MadeRun:
    return make_rows_run(tmp_path_factory.mktemp("plot-axes"), trainer_rows(), defines=TRAINER_DEFINES, name="trainer")


@pytest.fixture(scope="module")
def resumed_steps(tmp_path_factory: pytest.TempPathFactory) -> ResumedRun:
    return make_resumed_steps_run(tmp_path_factory.mktemp("plot-resumed"))


def plot(capsys, run_dir: Path, *keys: str) -> str:
    status = main(["inspect", str(run_dir), "--plot", ",".join(keys), "--width", "100", "--height", "30"])
    out, err = capsys.readouterr()
    assert status == 0, err
    return out


def test_a_metric_with_a_step_metric_is_plotted_against_it(trainer: MadeRun, capsys):
    out = plot(capsys, trainer.run_dir, "val/loss")
    assert "trainer · metrics by epoch" in out and in_legend(out, "val/loss")
    assert step_ticks(out)[-1] <= 3, "epochs 1-3, not steps 1-5"
    assert out.splitlines()[-1].strip().endswith("epoch")


def test_metrics_on_different_axes_get_a_plot_each(trainer: MadeRun, capsys):
    out = plot(capsys, trainer.run_dir, "train/loss", "val/loss")
    assert "trainer · metrics by train/global_step" in out and "trainer · metrics by epoch" in out
    assert step_ticks(out)[-1] >= 60, "the first plot is by the global step (10-60)"


def test_a_hidden_metric_is_left_out_of_a_glob_but_drawn_when_named(trainer: MadeRun, capsys):
    out = plot(capsys, trainer.run_dir, "*")
    assert not in_legend(out, "secret") and in_legend(out, "train/loss")
    assert in_legend(plot(capsys, trainer.run_dir, "secret"), "secret")


def test_a_resumed_segment_is_plotted_at_its_real_steps(resumed_steps: ResumedRun, capsys):
    ticks = step_ticks(plot(capsys, resumed_steps.second.run_dir, "loss"))
    assert ticks[-1] >= 59, ticks
    first = step_ticks(plot(capsys, resumed_steps.first.run_dir, "loss"))
    assert first[-1] < 35, first
