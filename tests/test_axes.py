"""define_metric: step metrics, globs, hidden metrics and goals decide the charts."""

from __future__ import annotations

import time

import pytest
from wandb_runs import MadeRun, make_step_metric_run

from leet.model.axes import MetricAxes
from leet.model.keys import axis_key
from leet.model.run import RunState
from leet.model.store import SeriesKey, Store
from leet.runfile.events import MetricDefinition
from leet.sources.shared import open_run
from leet.ui.views.run import metric_specs, overview_lines


def axes_of(*definitions: MetricDefinition) -> MetricAxes:
    axes = MetricAxes()
    for definition in definitions:
        axes.define(definition)
    return axes


def test_a_name_follows_its_own_definition_and_globs_catch_the_rest():
    axes = axes_of(
        MetricDefinition(glob_name="train/*", step_metric="train/global_step"),
        MetricDefinition(glob_name="*", step_metric="epoch"),
        MetricDefinition(name="train/special"),
        MetricDefinition(name="train/special", hidden=True),
    )
    assert axes.axis("train/loss") == "train/global_step", "the first glob that matches"
    assert axes.axis("val/loss") == "epoch"
    assert axes.axis("train/special") == "" and axes.hidden("train/special"), "defined by name: its own rule, merged"
    assert axes.axis("train/global_step") == "", "a metric is never its own axis"


def test_goals_come_from_min_and_max_summaries_or_from_the_goal():
    axes = axes_of(MetricDefinition(name="val/loss", summary=("min",)), MetricDefinition(name="acc", goal="maximize"))
    assert axes.goal("val/loss") == "minimize" and axes.goal("acc") == "maximize" and axes.goal("other") == ""


def test_routing_pairs_each_value_with_its_rows_step_metric_or_the_latest_before():
    axes = axes_of(MetricDefinition(glob_name="train/*", step_metric="train/global_step", step_sync=True))
    routed = axes.route({"train/global_step": ([0.0, 2.0], [10.0, 20.0]), "train/loss": ([0.0, 1.0, 2.0, 3.0], [4.0, 3.0, 2.0, 1.0])})
    assert routed == {"train/global_step": {"train/loss": ([10.0, 10.0, 20.0, 20.0], [4.0, 3.0, 2.0, 1.0])}}
    later = axes.route({"train/loss": ([4.0], [0.5])})
    assert later == {"train/global_step": {"train/loss": ([20.0], [0.5])}}, "the latest value carries over batches"


def test_values_before_any_step_metric_value_have_no_place():
    axes = axes_of(MetricDefinition(name="val/acc", step_metric="epoch"))
    assert axes.route({"val/acc": ([0.0, 1.0], [0.1, 0.2]), "epoch": ([1.0], [1.0])}) == {"epoch": {"val/acc": ([1.0], [0.2])}}
    assert axes_of().route({"loss": ([0.0], [1.0])}) == {}


@pytest.fixture(scope="module")
def trainer_run(tmp_path_factory: pytest.TempPathFactory) -> MadeRun:
    return make_step_metric_run(tmp_path_factory.mktemp("axes"))


def test_a_trainer_run_charts_train_metrics_by_global_step(trainer_run: MadeRun):
    store = Store()
    source = open_run(trainer_run.wandb_path, store)
    deadline = time.monotonic() + 30
    while source.snapshot().state is RunState.LOADING and time.monotonic() < deadline:
        source.step()
    snapshot = source.snapshot()
    assert snapshot.axes["train/loss"] == "train/global_step" and "secret" in snapshot.hidden
    specs = {spec.chart: spec for spec in metric_specs(snapshot.history_keys, "", snapshot.axes, snapshot.hidden)}
    assert "secret" not in specs, "hidden metrics get no chart"
    assert specs["train/loss"].x_axis == "train/global_step" and "by train/global_step" in specs["train/loss"].title
    points = store.snapshot([SeriesKey(axis_key(source.run_key, "train/global_step"), "train/loss", None)])
    (series,) = points.values()
    assert list(series.t) == [10.0, 20.0, 30.0, 40.0, 50.0, 60.0], "x is the global step, not _step"
    goals = [text for text, _ in overview_lines(snapshot, time.time())]
    assert "Goals" in goals and any("val/loss" in line and "minimize · best" in line for line in goals)
