"""Whole-screen snapshot of a shared run's system charts in spread mode.

The run comes from ``leet.testing.demo.make_run_demo(nodes=4, slow_node=2)``: four
nodes (``rank0``…``rank3``) of two GPUs each write their system metrics under
their own label, and rank2 runs its GPUs at about 40 % while the rest run at
about 90 %. The SVG lives in ``tests/__snapshots__/test_snapshots_spread/``;
regenerate it with ``python3 -m pytest tests/test_snapshots_spread.py
--snapshot-update`` and look at it before keeping it (see test_snapshots.py
for what snapshots depend on).
"""

from __future__ import annotations

from leet.testing.demo import make_run_demo

LARGE = (160, 48)


def test_gpu_utilization_of_four_nodes_in_spread_mode_names_the_slow_one(snap_compare):
    # The system filter leaves GPU Utilization (8 series from 4 nodes: spread by default) and focuses it.
    keys = ("backslash", *"util", "enter")
    assert snap_compare(make_run_demo(nodes=4, slow_node=2).app, terminal_size=LARGE, press=keys)


def test_y_turns_a_spread_chart_into_one_colour_per_node(snap_compare):
    keys = ("backslash", *"util", "enter", "y")
    assert snap_compare(make_run_demo(nodes=4, slow_node=2).app, terminal_size=LARGE, press=keys)
