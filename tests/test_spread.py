"""Comparing the nodes of a shared run: spread, the odd node out, and the chart modes that show them."""

from __future__ import annotations

import math
import random

from stored_series import stored

from leet.model.catalog import group
from leet.model.node_spread import find_outlier, node_levels, node_spread
from leet.model.store import SeriesData
from leet.ui.screens.grid_actions import next_mode
from leet.ui.views.charts import chart_view, default_mode, modes_for
from widgets.chartframe import compose_rows, row_text
from widgets.raster import SeriesView

RUN = "run"


def points(t, values) -> SeriesView:
    return SeriesView.points(list(t), list(values))


def steady(level: float, start: float = 0.0, step: float = 2.0, count: int = 60, noise: float = 0.0, seed: int = 0):
    rng = random.Random(seed)
    t = [start + i * step for i in range(count)]
    return points(t, [level + rng.uniform(-noise, noise) for _ in t])


def four_nodes(slow_level: float = 40.0) -> dict[str, list[SeriesView]]:
    """Four nodes of two GPUs each, sampling at their own instants; rank2 lags."""
    nodes = {}
    for rank in range(4):
        level = slow_level if rank == 2 else 95.0
        nodes[f"rank{rank}"] = [steady(level, start=0.37 * rank + gpu * 0.11, noise=1.0, seed=rank * 2 + gpu) for gpu in range(2)]
    return nodes


def outlier_of(nodes, x_range=(0.0, 118.0), **options):
    spread = node_spread(nodes, x_range)
    return find_outlier(node_levels(spread), **options)


# -- spread and outlier --------------------------------------------------------------


def test_a_node_at_40_percent_among_nodes_at_95_is_named_low():
    outlier = outlier_of(four_nodes())
    assert outlier is not None
    assert (outlier.label, outlier.direction) == ("rank2", "low")
    assert abs(outlier.value - 40) < 1.5 and abs(outlier.median - 95) < 1.5
    assert outlier.describe("%") == "rank2 low (40% vs median 95%)"


def test_a_node_running_hot_is_named_high():
    nodes = {f"n{i}": [steady(60.0 + (9.0 if i == 0 else 0.0), noise=0.3, seed=i)] for i in range(5)}
    outlier = outlier_of(nodes)
    assert outlier is not None and (outlier.label, outlier.direction) == ("n0", "high")


def test_nodes_that_agree_up_to_noise_name_no_one():
    nodes = {f"rank{i}": [steady(95.0, noise=3.0, seed=i), steady(94.0, noise=3.0, seed=10 + i)] for i in range(8)}
    assert outlier_of(nodes) is None


def test_two_nodes_never_name_an_outlier():
    nodes = {"rank0": [steady(95.0)], "rank1": [steady(40.0)]}
    spread = node_spread(nodes, (0.0, 118.0))
    assert spread is not None
    assert find_outlier(node_levels(spread)) is None


def test_a_small_gap_is_not_an_outlier_even_when_the_rest_agree_exactly():
    levels = {"a": 95.0, "b": 95.0, "c": 95.0, "d": 92.0}
    assert find_outlier(levels, abs_gap=5.0) is None
    assert find_outlier(levels) is None  # 3 points is under 10 % of 95
    assert find_outlier({**levels, "d": 60.0}).label == "d"


def test_two_camps_are_not_one_outlier():
    assert find_outlier({"a": 95.0, "b": 94.0, "c": 40.0, "d": 41.0}) is None


def test_spread_is_min_median_max_across_nodes_on_common_buckets():
    nodes = {
        "a": [points([0, 10, 20], [10, 10, 10])],
        "b": [points([1, 11, 19], [20, 20, 20])],
        "c": [points([2, 12, 18], [60, 60, 60])],
    }
    spread = node_spread(nodes, (0.0, 20.0))
    assert len(spread.t) == 3  # as many buckets as the densest series has points
    for lo, mid, hi in zip(spread.lo, spread.median, spread.hi):
        assert (lo, mid, hi) == (10, 20, 60)


def test_a_node_is_the_mean_of_its_series():
    nodes = {"a": [points([0, 1], [10, 10]), points([0, 1], [30, 30])], "b": [points([0, 1], [5, 5])]}
    spread = node_spread(nodes, (0.0, 2.0))
    assert all(v == 20 for v in spread.nodes["a"])


def test_nodes_sampled_at_different_instants_are_interpolated_not_dropped():
    # a samples every 5 s, b every 10 s and off a's beat: many buckets hold no point of b.
    nodes = {
        "a": [points(range(1, 101, 5), [50.0] * 20)],
        "b": [points(range(5, 106, 10), [float(t) for t in range(5, 106, 10)])],
    }
    spread = node_spread(nodes, (0.0, 100.0))
    width = 100.0 / len(spread.t)
    assert len(spread.t) == 20
    inside = [i for i, t in enumerate(spread.t) if 10 < t < 90]
    assert all(math.isfinite(spread.nodes["a"][i]) and math.isfinite(spread.nodes["b"][i]) for i in inside)
    for i in inside:
        assert abs(spread.nodes["b"][i] - spread.t[i]) <= width / 2  # b rises 1 per second
    assert all(math.isfinite(v) for v in spread.median)


def test_a_gap_in_one_node_leaves_the_others_in_the_band():
    t = list(range(0, 100, 2))
    gappy = [v if not 40 <= ti < 70 else math.nan for ti, v in zip(t, [30.0] * len(t))]
    nodes = {"a": [points(t, [90.0] * len(t))], "b": [points(t, [80.0] * len(t))], "c": [points(t, gappy)]}
    spread = node_spread(nodes, (0.0, 98.0))
    middle = [i for i, ct in enumerate(spread.t) if 46 <= ct <= 62]
    assert middle and all(math.isnan(spread.nodes["c"][i]) for i in middle)
    assert all(spread.lo[i] == 80.0 and spread.hi[i] == 90.0 for i in middle)
    early = [i for i, ct in enumerate(spread.t) if ct < 30]
    assert all(spread.lo[i] == 30.0 for i in early)


def test_a_node_that_stopped_reporting_is_not_carried_forward():
    nodes = {"a": [points(range(0, 100, 2), [90.0] * 50)], "b": [points(range(0, 40, 2), [10.0] * 20)]}
    spread = node_spread(nodes, (0.0, 98.0))
    late = [i for i, t in enumerate(spread.t) if t > 50]
    assert late and all(math.isnan(spread.nodes["b"][i]) for i in late)
    assert all(spread.lo[i] == 90.0 for i in late)


def test_one_node_or_a_bad_range_has_no_spread():
    assert node_spread({"only": [steady(50.0)]}, (0.0, 118.0)) is None
    assert node_spread({"a": [steady(1.0)], "b": [steady(2.0)]}, (5.0, 5.0)) is None
    empty = node_spread({"a": [], "b": [points([], [])]}, (0.0, 10.0))
    assert empty is not None and all(math.isnan(v) for v in empty.median)
    assert node_levels(empty) == {}


# -- the chart modes -----------------------------------------------------------------


def labelled_chart(nodes: int, gpus: int, slow: int | None = 2):
    """The GPU Utilization chart of a shared run, and store snapshots for it."""
    keys = [f"gpu.{g}.gpu/l:rank{n}" for n in range(nodes) for g in range(gpus)]
    spec = next(s for s in group(stored(keys, run=RUN)) if s.chart == "gpu.gpu")
    snapshots = {}
    for index, (info, key) in enumerate(zip(spec.series, spec.keys)):
        rank = int(info.label[4:])
        level = 41.0 if rank == slow else 95.0
        view = steady(level, start=0.5 * rank, noise=1.0, seed=index)
        snapshots[key] = SeriesData(view.t, view.lo, view.hi, view.mean)
    return spec, snapshots


def test_spread_is_offered_only_for_charts_written_by_several_nodes():
    spec, _ = labelled_chart(4, 2)
    assert "spread" in modes_for(spec)
    single = group(stored(["gpu.0.gpu", "gpu.1.gpu"]))[0]
    assert "spread" not in modes_for(single)
    assert next_mode(single, "heatmap") == "line"  # y skips spread
    assert next_mode(spec, "heatmap") == "spread"
    assert next_mode(spec, "spread") == "line"


def test_many_series_from_several_nodes_open_in_spread_mode():
    assert default_mode(labelled_chart(4, 8)[0]) == "spread"
    assert default_mode(labelled_chart(2, 1)[0]) == "line"
    assert default_mode(labelled_chart(4, 2)[0]) == "spread", "8 series from 4 nodes: an 8-cell heatmap row name cannot say both"
    assert default_mode(labelled_chart(2, 1)[0]) == "line", "2 nodes' lines, one colour each, still read"
    assert default_mode(group(stored([f"gpu.{i}.gpu" for i in range(16)]))[0]) == "heatmap"  # one node


def test_spread_chart_names_the_slow_node_in_its_title_and_legend():
    spec, snapshots = labelled_chart(4, 8)
    view = chart_view(spec, snapshots, (0.0, 120.0), "spread")
    assert view.mode == "spread"
    assert view.series_names == ("rank2",)
    assert view.note.startswith("rank2 low (41% vs median 95%")
    rows = [row_text(row) for row in compose_rows(view, 90, 14)]
    assert "rank2 low (41% vs median 95%)" in rows[0]
    assert "4 nodes" in rows[-1] and "median" in rows[-1] and "rank2" in rows[-1] and "spread" in rows[-1]


def test_spread_chart_of_nodes_that_agree_names_no_one():
    spec, snapshots = labelled_chart(4, 8, slow=None)
    view = chart_view(spec, snapshots, (0.0, 120.0), "spread")
    assert view.note == "" and view.series_names == ()
    assert "rank" not in row_text(compose_rows(view, 90, 14)[0])


def test_spread_on_a_single_node_chart_draws_lines():
    spec = group(stored(["gpu.0.gpu", "gpu.1.gpu"]))[0]
    view = chart_view(spec, {}, (0.0, 1.0), "spread")
    assert view.mode == "line"


def test_line_mode_gives_each_node_one_colour_and_names_nodes():
    spec, snapshots = labelled_chart(4, 2)
    view = chart_view(spec, snapshots, (0.0, 120.0), "line")
    assert view.groups == ("rank0", "rank1", "rank2", "rank3")
    assert [view.groups[g] for g in view.series_group] == [info.label for info in spec.series]
    assert {view.color(i) for i in range(len(view.data))} == {"s0", "s1", "s2", "s3"}
    bottom = row_text(compose_rows(view, 120, 12)[-1])
    assert "rank0" in bottom and "rank3" in bottom and "GPU 0" not in bottom
