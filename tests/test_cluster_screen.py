"""``leet cluster`` driven by keys and clicks on a made-up cluster: what a person sees change.

The cluster comes from ``leet.testing.cluster_demo``: 64 nodes of 8 GPUs by
default, node22 running hot, node49 idle, node41 down for 3 minutes and
node57 for 40, behind a Prometheus whose URL carries a password.
"""

from __future__ import annotations

from contextlib import asynccontextmanager

import pytest

from leet.model.cluster import CLUSTER_RUN, NodeState, PrometheusStatus
from leet.model.store import SeriesKey
from leet.testing.cluster_demo import DEMO_URL, make_cluster_demo
from leet.ui.bindings import CLUSTER_KEYS, footer_hints, help_sections, screen_keys
from leet.ui.screens.cluster import ClusterScreen, NodeSortPicker
from leet.ui.screens.help import HelpScreen
from leet.ui.screens.label_picker import LabelPicker
from leet.ui.views.cluster import display_url, gpu_key, header_parts, heatmap_model, metric_named, short_age
from widgets.filterbar import FilterBar
from widgets.gpuheatmap import GpuHeatmap
from widgets.nodetable import NodeTable

LARGE = (160, 48)
SMALL = (80, 24)


@asynccontextmanager
async def cluster(size=LARGE, **options):
    demo = make_cluster_demo(**options)
    async with demo.app.run_test(size=size) as pilot:
        await pilot.pause()
        yield demo, pilot


async def press(pilot, *keys: str) -> None:
    await pilot.press(*keys)
    await pilot.pause()


def screen(demo) -> ClusterScreen:
    assert isinstance(demo.app.screen, ClusterScreen)
    return demo.app.screen


def runs_text(runs) -> str:
    return "".join(text for text, _ in runs)


def header(demo) -> str:
    return screen(demo).query_one("#header").plain_rows()[0]


def status(demo) -> str:
    return screen(demo).query_one("#status").plain_rows()[0]


def table_rows(demo) -> list[str]:
    return screen(demo).table.plain_rows()


def table_nodes(demo) -> list[str]:
    return [row.node for row in screen(demo).table.shown]


def table_line(demo, node: str) -> str:
    return next(line for line in table_rows(demo) if line.startswith(node + " "))


def heatmap_text(demo) -> str:
    return "\n".join(screen(demo).heatmap.plain_rows())


def titles(demo) -> list[str]:
    return [chart.view.title for _, chart in screen(demo).grid.visible_charts()]


def chart_named(demo, title: str):
    for _, chart in screen(demo).grid.visible_charts():
        if chart.view.title == title:
            return chart
    raise AssertionError(f"no chart {title!r} among {titles(demo)}")


def chart_labels(demo) -> set[str]:
    """The node labels of every series the visible charts draw from."""
    scr = screen(demo)
    return {info.label for chart_id, _ in scr.grid.visible_charts() for info in scr._spec_by_id[chart_id].series}


# -- the key table --------------------------------------------------------------------------------


@pytest.mark.parametrize("key", screen_keys(CLUSTER_KEYS), ids=lambda key: key.keys)
def test_every_key_names_an_action_of_the_screen(key):
    assert hasattr(ClusterScreen, "action_" + key.action.split("(")[0]), key.action


def test_no_key_is_bound_twice_and_enter_is_the_node_tables_own():
    seen: dict[tuple[str, str], str] = {}
    for key in CLUSTER_KEYS:
        for one in key.keys.split(","):
            assert (key.where, one) not in seen, f"{one!r} bound twice"
            seen[(key.where, one)] = key.action
    assert seen[("screen", "f1")] == "help" and seen[("screen", "f10")] == "quit" and seen[("screen", "p")] == "toggle_pause"
    widget_keys = [key for key in CLUSTER_KEYS if key.where == "nodes"]
    bound = {(binding.key, binding.action) for binding in NodeTable.BINDINGS}
    assert all((key.keys, key.action) in bound for key in widget_keys)
    assert not any(binding.key == "c" for binding in NodeTable.BINDINGS), "c stays the grid's"
    assert any(shown == "enter" for _, rows in help_sections(CLUSTER_KEYS) for shown, _ in rows)
    assert ("l", "nodes") in footer_hints(CLUSTER_KEYS) and ("m", "heatmap") in footer_hints(CLUSTER_KEYS)


# -- the header -------------------------------------------------------------------------------------


def test_the_url_is_shown_without_credentials_or_query():
    assert display_url("http://monitor:s3cret@prometheus.internal:9090/") == "http://prometheus.internal:9090"
    assert display_url("https://u@prom:9090/sub/path?token=abc#x") == "https://prom:9090/sub/path"
    assert display_url("prom.lan:9090") == "prom.lan:9090"
    assert display_url("http://p\x1b[2J:9090") == "http://p:9090"
    assert [short_age(s) for s in (None, 4.6, 59, 61, 7200, 90000)] == ["-", "4s", "59s", "1m", "2h", "1d"]


def test_a_narrow_header_puts_the_counts_before_the_host_and_says_less_on_the_right():
    nodes = (NodeState("a", True), NodeState("b", False, since=0.0))
    status = PrometheusStatus(DEMO_URL, reachable=True, last_ok=95.0, last_query_ms=40.0)
    left, right = header_parts(status, nodes, 100.0, 15.0, width=90)
    assert runs_text(left) == " leet cluster · 2 nodes · 1 up · 1 down · prometheus.internal:9090"
    assert runs_text(right) == " answered 5s ago "
    left, _ = header_parts(status, nodes, 100.0, 15.0, width=80)
    assert runs_text(left) == " leet cluster · 2 nodes · 1 up · 1 down · prometheus.internal…", "the host gives way, not the counts"
    left, right = header_parts(status, nodes, 100.0, 15.0, width=160)
    assert runs_text(left).startswith(" leet cluster http://prometheus.internal:9090 · 2 nodes")
    assert runs_text(right) == " answered 5s ago in 40 ms · every 15s "
    waiting = header_parts(PrometheusStatus("http://p:9090"), (), 100.0, 15.0)[1]
    assert runs_text(waiting).startswith(" connecting…")


def test_the_heatmap_model_reads_each_gpu_of_the_chosen_metric_and_leaves_odd_indices_out():
    latest = {
        SeriesKey(CLUSTER_RUN, "gpu.0.powerWatts", "a"): 310.0,
        SeriesKey(CLUSTER_RUN, "gpu.1.powerWatts", "a"): 640.0,
        SeriesKey(CLUSTER_RUN, "gpu.0.gpu", "a"): 99.0,
        SeriesKey(CLUSTER_RUN, "gpu.99999.powerWatts", "a"): 1.0,
        SeriesKey(CLUSTER_RUN, "gpu.0.powerWatts", "b"): float("nan"),
        SeriesKey(CLUSTER_RUN, "cpu", "c"): 50.0,
    }
    nodes = (NodeState("a", True, gpus=2), NodeState("b", False, gpus=1), NodeState("c", True))
    model = heatmap_model(metric_named("power"), latest, nodes, ["a", "b", "c"])
    assert [(node.name, node.values, node.down) for node in model.nodes] == [("a", (310.0, 640.0), False), ("b", (None,), True)]
    assert model.hi == 700.0 and model.unit == "W", "an open scale rounds up to the next 100 W"
    assert model.note == "1 without GPUs"
    assert gpu_key("gpu.99999.gpu") is None and gpu_key("gpu.7.temp") == (7, "temp")


async def test_the_header_names_prometheus_without_its_password_and_counts_nodes_up_and_down():
    async with cluster() as (demo, pilot):
        text = header(demo)
        assert "http://prometheus.internal:9090" in text and "s3cret" not in text and "monitor" not in text
        assert "64 nodes · 62 up · 2 down" in text
        assert "answered 0s ago" in text and "every 15s" in text
        assert "charts 1-9 of" in text
        assert "s3cret" not in status(demo) and " h help q quit" in status(demo)
    assert "s3cret" in DEMO_URL, "the demo's URL does carry one"


async def test_prometheus_going_away_shows_the_error_and_a_retry_countdown_then_clears():
    async with cluster() as (demo, pilot):
        demo.source.lose("connection refused", retry_in=30.0)
        await pilot.pause()
        assert "⚠ connection refused · retry in 30s" in header(demo)
        assert "Prometheus: connection refused" in status(demo)
        demo.clock.advance(12.0)
        screen(demo)._tick()
        await pilot.pause()
        assert "retry in 18s" in header(demo) and "last answer 12s ago" in header(demo)
        demo.source.reach()
        await pilot.pause()
        assert "⚠" not in header(demo) and "⚠" not in status(demo)
        assert "answered 0s ago" in header(demo)


async def test_the_retry_countdown_moves_on_even_when_the_source_says_it_once():
    async with cluster() as (demo, pilot):
        demo.source.lose("Prometheus at http://prometheus.internal:9090: connection refused", retry_in=30.0)
        said = demo.source.status()
        demo.source.status = lambda: said  # type: ignore[method-assign]  # a source that words its status once
        await pilot.pause()
        assert "retry in 30s" in header(demo)
        assert "⚠ Prometheus at http://prometheus.internal:9090: connection refused" in status(demo), "not 'Prometheus: Prometheus at'"
        demo.clock.advance(12.0)
        screen(demo)._tick()
        await pilot.pause()
        assert "retry in 18s" in header(demo)


# -- the node table ---------------------------------------------------------------------------------


async def test_the_node_table_lists_every_node_with_its_figures_and_down_ones_as_down():
    async with cluster() as (demo, pilot):
        assert table_nodes(demo)[:3] == ["node01", "node02", "node03"]
        assert len(table_nodes(demo)) == 64
        assert table_rows(demo)[0].startswith("Nodes [1-") and "2 down" in table_rows(demo)[0]
        heads = table_rows(demo)[1].split()
        assert heads == ["NODE▲", "STATE", "GPUs", "GPU%", "MEM%", "HOT", "AGE"]
        assert "down 3m" in table_line(demo, "node41")
        hot = table_line(demo, "node22")
        assert "° g" in hot and int(hot.split("°")[0].split()[-1]) >= 90


async def test_f6_sorts_the_nodes_by_any_column_and_lt_gt_step_through_columns():
    async with cluster() as (demo, pilot):
        await press(pilot, "f6")
        assert isinstance(demo.app.screen, NodeSortPicker)
        await press(pilot, "down", "down", "down", "enter")  # node, state, GPUs, GPU%
        assert screen(demo).table.sort == "util"
        utils = [row.gpu_util for row in screen(demo).table.shown if row.gpu_util is not None]
        assert utils == sorted(utils, reverse=True) and table_nodes(demo)[-1] == "node49", "the idle node last"
        assert "GPU%▼" in table_rows(demo)[1]
        await press(pilot, "greater_than_sign")
        assert screen(demo).table.sort == "memory"
        await press(pilot, "less_than_sign", "less_than_sign")
        assert screen(demo).table.sort == "gpus"


async def test_a_click_on_the_hot_heading_puts_the_hot_node_first():
    async with cluster() as (demo, pilot):
        table = screen(demo).table
        x = next(first for first, _, key in table.header_spans(table.size.width) if key == "temp")
        await pilot.click(NodeTable, offset=(x + 1, 1))
        await pilot.pause()
        assert table.sort == "temp" and table_nodes(demo)[0] == "node22"


async def test_f_filters_the_node_table_by_name():
    async with cluster() as (demo, pilot):
        await press(pilot, "f")
        assert screen(demo).query_one(FilterBar).display
        await press(pilot, *"node6", "enter")
        assert table_nodes(demo) == ["node60", "node61", "node62", "node63", "node64"]
        await press(pilot, "ctrl+f")
        assert len(table_nodes(demo)) == 64


async def test_enter_on_a_node_shows_only_it_in_the_charts_and_again_every_node():
    async with cluster() as (demo, pilot):
        await press(pilot, "tab")
        assert screen(demo).table.has_focus
        await press(pilot, "down", "down", "enter")
        assert chart_labels(demo) == {"node03"}
        assert "labels node03 (1 of 64)" in header(demo)
        assert "node03" in heatmap_text(demo) and "node04" not in heatmap_text(demo)
        await press(pilot, "enter")
        assert len(chart_labels(demo)) == 64 and "labels" not in header(demo)


async def test_moving_the_table_cursor_marks_the_node_in_the_heatmap():
    async with cluster() as (demo, pilot):
        await press(pilot, "tab", "down")
        assert screen(demo).heatmap.model.selected == "node02"
        await press(pilot, "escape")
        await pilot.click(GpuHeatmap, offset=(2, 5))  # a node's name in the heatmap's first block
        await pilot.pause()
        assert screen(demo).heatmap.model.selected == screen(demo).table.selected_node != "node02"


# -- nodes in the charts: the label picker, --label, the chart filter, spread -------------------------


async def test_l_opens_the_label_picker_and_only_this_node_shows_in_charts_and_heatmap():
    async with cluster() as (demo, pilot):
        await press(pilot, "l")
        assert isinstance(demo.app.screen, LabelPicker)
        await press(pilot, "down", "o", "enter")
        assert isinstance(demo.app.screen, ClusterScreen)
        assert chart_labels(demo) == {"node02"}
        assert "labels node02 (1 of 64)" in header(demo)
        assert "1 node, 8 GPUs" in heatmap_text(demo)
        assert len(table_nodes(demo)) == 64, "the table still lists every node"
        await press(pilot, "l", "a", "escape")
        assert len(chart_labels(demo)) == 64


async def test_a_label_filter_given_at_start_shows_only_those_nodes_and_says_which_match_none():
    async with cluster(labels="node1*,gpu-box") as (demo, pilot):
        assert chart_labels(demo) == {f"node{n}" for n in range(10, 20)}
        assert "labels node10,node11" in header(demo) and "(10 of 64)" in header(demo)
        assert "no node gpu-box" in header(demo)
        assert "10 nodes, 80 GPUs" in heatmap_text(demo)


async def test_backslash_filters_charts_by_title_and_the_gpu_temperature_spread_names_the_hot_node():
    async with cluster() as (demo, pilot):
        await press(pilot, "backslash", *"temp", "enter")
        assert titles(demo) == ["GPU Temp"]
        chart = chart_named(demo, "GPU Temp")
        assert chart.view.mode == "spread" and chart.view.band_name == "64 nodes"
        assert "node22 high" in chart.view.note
        assert "node22 high" in chart.plain_rows()[0]
        await press(pilot, "y")
        assert chart_named(demo, "GPU Temp").view.mode == "line"
        await press(pilot, "ctrl+backslash")
        assert len(titles(demo)) > 1


async def test_the_idle_node_is_the_odd_one_of_gpu_utilisation():
    async with cluster() as (demo, pilot):
        chart = chart_named(demo, "GPU Utilization")
        assert chart.view.mode == "spread" and chart.view.note.startswith("node49 low")


# -- the heatmap ---------------------------------------------------------------------------------------


async def test_m_steps_the_heatmap_through_utilisation_temperature_memory_and_power():
    async with cluster() as (demo, pilot):
        seen = [screen(demo).heatmap.model.title]
        for _ in range(4):
            await press(pilot, "m")
            seen.append(screen(demo).heatmap.model.title)
        assert seen == ["GPU utilisation", "GPU temperature", "GPU memory", "GPU power", "GPU utilisation"]


async def test_the_heatmap_shows_all_64_nodes_of_8_gpus_at_160_by_48():
    async with cluster() as (demo, pilot):
        heat = heatmap_text(demo)
        assert all(f"node{n:02d} " in heat for n in range(1, 65))
        assert "64 nodes, 512 GPUs" in heat
        assert "××××××××" in heat, "down nodes crossed out"
        assert screen(demo).heatmap.size.height <= 16
        assert sum(1 for _ in screen(demo).grid.visible_charts()) == 9, "charts keep a 3×3 grid"


async def test_right_bracket_hides_the_heatmap_and_left_bracket_the_table():
    async with cluster() as (demo, pilot):
        await press(pilot, "right_square_bracket")
        assert not screen(demo).heatmap.display
        await press(pilot, "m")
        assert screen(demo).heatmap.display and screen(demo).heatmap.model.title == "GPU temperature"
        await press(pilot, "left_square_bracket")
        assert not screen(demo).query_one("#cluster-sidebar").display
        await press(pilot, "f6", "escape")
        assert screen(demo).query_one("#cluster-sidebar").display, "sorting shows the table"


# -- the cluster changing under the screen -----------------------------------------------------------------


async def test_a_node_that_goes_down_stays_listed_as_down_and_comes_back_up():
    async with cluster() as (demo, pilot):
        demo.source.set_down("node05")
        demo.source.feed(1)
        await pilot.pause()
        assert "down 15s" in table_line(demo, "node05")
        assert "63 nodes" not in header(demo) and "61 up · 3 down" in header(demo)
        line = next(line for line in heatmap_text(demo).splitlines() if "node05" in line)
        assert "node05 ××××××××" in line
        demo.source.feed(8)
        await pilot.pause()
        assert "down 2m" in table_line(demo, "node05") and "2m" in table_line(demo, "node05").split()[-1]
        demo.source.set_down("node05", down=False)
        demo.source.feed(1)
        await pilot.pause()
        assert table_line(demo, "node05").split()[1] == "up"
        assert "62 up · 2 down" in header(demo)
        assert "node05 ××" not in heatmap_text(demo)


async def test_a_node_that_joins_gets_a_row_a_heatmap_block_and_its_series_in_the_charts():
    async with cluster() as (demo, pilot):
        demo.source.add_node("node65", 4, index=64)
        demo.source.feed(1)
        await pilot.pause()
        assert "65 nodes · 63 up" in header(demo)
        assert "node65" in table_nodes(demo)
        assert "node65 " in heatmap_text(demo) and "516 GPUs" in heatmap_text(demo)
        assert "node65" in chart_labels(demo)
        assert any(s.label == "node65" for s in demo.source.store.series(CLUSTER_RUN))


async def test_p_holds_the_picture_while_the_cluster_changes():
    async with cluster() as (demo, pilot):
        await press(pilot, "p")
        assert "PAUSED" in header(demo)
        demo.source.set_down("node07")
        await pilot.pause()
        assert table_line(demo, "node07").split()[1] == "up"
        await press(pilot, "p")
        assert "down" in table_line(demo, "node07")


async def test_the_screen_tells_the_source_how_wide_its_charts_are():
    async with cluster() as (demo, pilot):
        widths = [chart.size.width for _, chart in screen(demo).grid.visible_charts()]
        assert demo.source.width == max(widths) > 20


# -- sizes, focus, help ----------------------------------------------------------------------------------


async def test_at_80_by_24_the_table_narrows_the_heatmap_shows_a_window_and_the_footer_fits():
    async with cluster(size=SMALL) as (demo, pilot):
        scr = screen(demo)
        assert scr.query_one("#cluster-sidebar").outer_size.width == 28
        assert table_rows(demo)[1].split() == ["NODE▲", "STATE", "GPU%", "AGE"]
        assert "nodes 1-" in heatmap_text(demo) and "of 64" in heatmap_text(demo)
        assert scr.heatmap.size.height <= 9 and len(list(scr.grid.visible_charts())) >= 1
        assert header(demo).startswith(" leet cluster · 64 nodes · 62 up · 2 down")
        assert len(status(demo)) == 80 and status(demo).startswith(" h help q quit")


async def test_the_heatmap_window_follows_the_table_cursor_at_80_by_24():
    async with cluster(size=SMALL) as (demo, pilot):
        await press(pilot, "tab", "end")
        assert "node64" in heatmap_text(demo) and "node01 " not in heatmap_text(demo)


async def test_tab_moves_focus_from_the_table_to_the_charts_and_escape_leaves():
    async with cluster() as (demo, pilot):
        await press(pilot, "tab")
        assert screen(demo).table.has_focus
        await press(pilot, "tab")
        assert screen(demo).grid.focused_index() == 0
        await press(pilot, "escape")
        assert demo.app.screen.focused is None


async def test_f1_shows_the_cluster_keys():
    async with cluster() as (demo, pilot):
        await press(pilot, "f1")
        assert isinstance(demo.app.screen, HelpScreen)
        await press(pilot, "f1")
        assert isinstance(demo.app.screen, ClusterScreen)
        await press(pilot, "f10")
        assert not demo.app.is_running


async def test_ascii_and_no_colour_draw_the_heatmap_with_the_ascii_shades():
    async with cluster(ascii=True, color=False) as (demo, pilot):
        body = screen(demo).heatmap.plain_rows()[2]
        assert any(char in body for char in "@%#") and "█" not in body
        assert "C g" in table_line(demo, "node22")
