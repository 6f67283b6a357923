"""Rates and ETAs from a run's history marks, config and summary; and from a real SDK run read half-way."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from loading import load

from leet.discovery.probe import RunEntry
from leet.model.progress import ProgressTrail, Total, config_total, duration_text, parse_total, progress_of
from leet.model.run import RunModel, RunState
from leet.runfile.events import HistoryRow
from leet.sources.run_facts import RunFacts
from leet.ui.screens.workspace import run_row
from leet.ui.views.run import header_parts


def trail_of(rows: list[tuple[int, float, dict[str, float]]]) -> ProgressTrail:
    trail = ProgressTrail()
    for step, time, values in rows:
        trail.add(step, time, values)
    return trail


def steady(steps: int, per_second: float, start: float = 1000.0, values=lambda step: {}) -> list[tuple[int, float, dict[str, float]]]:
    return [(step, start + step / per_second, values(step)) for step in range(steps)]


def test_steps_per_second_and_eta_to_max_steps():
    trail = trail_of(steady(100, 4.0))
    progress = progress_of(trail.copy(), {"max_steps": 1000}, {}, last_step=99, finished=False)
    assert progress.steps_per_second == pytest.approx(4.0)
    assert progress.eta_seconds == pytest.approx(901 / 4.0)
    assert progress.parts() == ["4 steps/s", "ETA 3m to max_steps=1000"]


def test_a_pause_is_not_counted():
    rows = steady(50, 2.0) + [(step, 5000.0 + step / 2.0, {}) for step in range(50, 100)]
    trail = trail_of(rows)
    assert trail.copy().rate() == pytest.approx(2.0)
    assert trail.copy().mean_rate() == pytest.approx(2.0)


def test_recent_window_follows_a_change_of_speed():
    rows = steady(200, 1.0) + [(200 + i, 1200.0 + i / 10.0, {}) for i in range(1, 100)]
    assert trail_of(rows).copy().rate() == pytest.approx(10.0)


def test_epoch_total_uses_logged_epoch():
    trail = trail_of(steady(100, 10.0, values=lambda step: {"train/epoch": step / 50}))
    progress = progress_of(trail.copy(), {"num_train_epochs": 3.0, "max_steps": -1}, {}, last_step=99, finished=False)
    assert progress.total == Total("num_train_epochs", 3.0, True)
    assert progress.done == pytest.approx(99 / 50)
    assert progress.eta_seconds == pytest.approx((3 - 99 / 50) / 0.2)


def test_epoch_total_from_summary_epoch_and_step_rate():
    trail = trail_of(steady(100, 10.0))
    progress = progress_of(trail.copy(), {"trainer": {"max_epochs": 4}}, {"epoch": 1}, last_step=99, finished=False)
    assert progress.total is not None and progress.total.key == "trainer.max_epochs"
    assert progress.eta_seconds == pytest.approx(3 / (10.0 / 99))


@pytest.mark.parametrize(("config", "key"), [
    ({"epochs": 3}, "epochs"),
    ({"train.max_steps": 500}, "train.max_steps"),
    ({"train": {"max_steps": 500}, "epochs": 2}, "train.max_steps"),
    ({"total_steps": {"value": 9}}, "total_steps"),
    ({"max_steps": 0, "num_epochs": 2}, "num_epochs"),
    ({"lr": 0.1}, None),
])
def test_total_key_choice(config, key):
    total = config_total(config)
    assert (total.key if total else None) == key


def test_total_override_wins():
    trail = trail_of(steady(20, 1.0, values=lambda step: {"epoch": step / 10}))
    progress = progress_of(trail.copy(), {"max_steps": 99}, {}, last_step=19, finished=False, total=parse_total("epoch=10"))
    assert progress.total == Total("epoch", 10.0, True)
    assert progress.parts()[-1].endswith("to epoch=10")
    with pytest.raises(ValueError):
        parse_total("max_steps")


def test_throughput_logged_and_counted():
    trail = trail_of(steady(60, 2.0, values=lambda step: {"train/samples_per_sec": 64.0, "tokens_seen": step * 1000.0}))
    progress = progress_of(trail.copy(), {}, {}, last_step=59, finished=False)
    assert [(unit, key) for unit, _, key in progress.throughput] == [("samples", "train/samples_per_sec"), ("tokens", "tokens_seen")]
    assert progress.throughput[1][1] == pytest.approx(2000.0)
    assert progress.parts() == ["2 steps/s", "64 samples/s", "2k tokens/s"]


def test_summary_rate_key_for_a_finished_run():
    trail = trail_of(steady(40, 5.0) + [(40, 2000.0, {})])
    progress = progress_of(trail.copy(), {"max_steps": 40}, {"train_samples_per_second": 12.5}, last_step=40, finished=True)
    assert progress.steps_per_second == pytest.approx(5.0)
    assert progress.eta_seconds is None
    assert progress.parts() == ["5 steps/s", "12.5 samples/s", "done (max_steps=40)"]


def test_durations():
    assert [duration_text(s) for s in (45, 720, 4320, 2 * 86400 + 3 * 3600)] == ["45s", "12m", "1h12m", "2d3h"]


def test_a_run_that_ended_short_of_its_total_says_no_done():
    trail = trail_of(steady(10, 1.0))
    progress = progress_of(trail.copy(), {"max_steps": 40}, {}, last_step=9, finished=True)
    assert progress.parts() == ["1 steps/s"]


# ---------------------------------------------------------------- a real SDK run, read half-way

SDK_STEPS = 60
SDK_INTERVAL = 0.05
SDK_SCRIPT = """
import sys, time, wandb
run = wandb.init(mode="offline", project="leet-tests", config={"max_steps": int(sys.argv[1]), "train": {"lr": 0.1}})
for step in range(int(sys.argv[2])):
    run.log({"loss": 1.0 / (step + 1), "tokens_seen": step * 512})
    time.sleep(float(sys.argv[3]))
run.finish()
"""


@pytest.fixture(scope="module")
def steady_sdk_run(tmp_path_factory) -> Path:
    """A finished offline run logging at a steady rate, with ``max_steps`` in its config."""
    root = tmp_path_factory.mktemp("steady")
    script = root / "steady.py"
    script.write_text(SDK_SCRIPT)
    env = {**os.environ, "WANDB_MODE": "offline", "WANDB_DIR": str(root), "WANDB_SILENT": "true"}
    args = [str(SDK_STEPS * 10), str(SDK_STEPS), str(SDK_INTERVAL)]
    done = subprocess.run([sys.executable, str(script), *args], env=env, cwd=root, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    (path,) = root.glob("wandb/offline-run-*/run-*.wandb")
    return path


@pytest.fixture(scope="module")
def half_run(steady_sdk_run: Path, tmp_path_factory) -> Path:
    """The run's file cut at half its bytes: a run still going, as a live reader sees it."""
    copy = tmp_path_factory.mktemp("half") / steady_sdk_run.name
    data = steady_sdk_run.read_bytes()
    copy.write_bytes(data[: len(data) // 2])
    return copy


def test_the_run_header_shows_rates_and_the_eta(half_run: Path) -> None:
    snapshot = load(half_run).snapshot()
    assert snapshot.state is RunState.RUNNING
    left, _ = header_parts(snapshot)
    text = "".join(part for part, _ in left)
    assert re.search(r"[\d.]+k? steps/s", text), text
    assert re.search(r"tokens/s · ETA \S+ to max_steps=600", text), text


def test_a_finished_sdk_run_shows_its_mean_rate_and_no_eta(steady_sdk_run: Path) -> None:
    snapshot = load(steady_sdk_run).snapshot()
    left, _ = header_parts(snapshot, None, parse_total("max_steps=9999"))
    text = "".join(part for part, _ in left)
    assert "steps/s" in text and "ETA" not in text


def test_inspect_summary_prints_rates_and_the_eta(half_run: Path) -> None:
    command = [sys.executable, "-m", "leet", "inspect", str(half_run), "--summary"]
    text = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True).stdout
    assert re.search(r"progress +[\d.]+k? steps/s .*ETA \S+ to max_steps=600", text), text
    report = json.loads(subprocess.run([*command, "--json", "--total", "max_steps=90"], capture_output=True, text=True, timeout=120, check=True).stdout)
    progress = report["progress"]
    assert progress["total"] == {"key": "max_steps", "value": 90.0, "epochs": False}
    assert progress["steps_per_second"] > 0 and progress["eta_seconds"] > 0
    assert set(progress) >= {"steps_per_second", "throughput", "total", "done", "eta_seconds", "finished", "text"}


def test_without_row_times_the_summary_runtime_gives_the_mean():
    progress = progress_of(ProgressTrail().copy(), {"max_steps": 100}, {"_step": 50, "_runtime": 25.0, "num_tokens": 5000}, last_step=50, finished=False)
    assert progress.steps_per_second == pytest.approx(2.0)
    assert progress.eta_seconds == pytest.approx(25.0)
    assert progress.throughput == (("tokens", 200.0, "num_tokens"),)


def test_a_workspace_row_shows_rates_from_the_facts_read():
    entry = RunEntry(key="run-1", directory=Path("run-1"), file=Path("run-1/run-1.wandb"), run_id="abc", state=RunState.RUNNING)
    facts = RunFacts(config={"max_steps": 100}, summary={"_step": 50, "_runtime": 25.0})
    assert run_row(entry).detail == ()
    assert run_row(entry, facts=facts).detail == ("2 steps/s · ETA 25s to max_steps=100",)


def test_the_rate_follows_rows_as_a_live_run_gains_them():
    model = RunModel(config={"max_steps": 1000})
    for step in range(20):
        model.apply(HistoryRow(step=step, values={}, timestamp=100.0 + step))
    first = progress_of(model.trail.copy(), model.config, {}, last_step=model.last_step, finished=False)
    for step in range(20, 80):
        model.apply(HistoryRow(step=step, values={}, timestamp=119.0 + (step - 19) / 4))
    later = progress_of(model.trail.copy(), model.config, {}, last_step=model.last_step, finished=False)
    assert first.steps_per_second == pytest.approx(1.0) and later.steps_per_second == pytest.approx(4.0)
    assert later.eta_seconds == pytest.approx((1000 - 79) / 4)
