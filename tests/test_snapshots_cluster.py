"""Whole-screen snapshots of ``leet cluster`` on a made-up cluster.

The cluster comes from ``leet.testing.cluster_demo.make_cluster_demo``: 64
nodes of 8 GPUs, node22 running hot, node49 idle, node41 and node57 down, an
hour of history at 15 s on a fake clock. The SVGs live in
``tests/__snapshots__/test_snapshots_cluster/``; regenerate them with
``python3 -m pytest tests/test_snapshots_cluster.py --snapshot-update`` and
look at them before keeping them (see test_snapshots.py for what snapshots
depend on).
"""

from __future__ import annotations

from leet.testing.cluster_demo import make_cluster_demo

LARGE = (160, 48)
SMALL = (80, 24)


def test_64_nodes_of_8_gpus_at_160_by_48(snap_compare):
    assert snap_compare(make_cluster_demo().app, terminal_size=LARGE)


def test_64_nodes_at_80_by_24(snap_compare):
    assert snap_compare(make_cluster_demo().app, terminal_size=SMALL)


def test_gpu_temperature_in_spread_mode_names_the_hot_node(snap_compare):
    # The chart filter leaves GPU Temp (512 series from 64 nodes: spread by default); the heatmap shades temperature.
    keys = ("backslash", *"temp", "enter")
    assert snap_compare(make_cluster_demo(heat_metric="temp").app, terminal_size=LARGE, press=keys)


def test_ascii_without_colour_keeps_the_heatmap_levels_apart(snap_compare):
    assert snap_compare(make_cluster_demo(ascii=True, color=False).app, terminal_size=LARGE)
