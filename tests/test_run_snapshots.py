"""Whole-screen snapshots of the run view (``leet PATH``) on a made-up run.

The run comes from ``leet.testing.demo.make_run_demo``: synthetic events, no file,
no thread, a fixed clock. The SVGs live in
``tests/__snapshots__/test_run_snapshots/``; after a deliberate change to the
view, regenerate them with
``python3 -m pytest tests/test_run_snapshots.py --snapshot-update`` and look
at them before keeping them (see test_snapshots.py for what they depend on).
"""

from __future__ import annotations

from leet.testing.demo import make_run_demo

LARGE = (160, 48)
SMALL = (100, 30)


def test_run_view(snap_compare):
    assert snap_compare(make_run_demo().app, terminal_size=LARGE)


def test_run_view_small_terminal(snap_compare):
    assert snap_compare(make_run_demo().app, terminal_size=SMALL)


def test_run_view_with_console(snap_compare):
    assert snap_compare(make_run_demo().app, terminal_size=LARGE, press=("4",))


def test_run_view_filtered_with_a_chart_in_log_mode(snap_compare):
    keys = ("slash", *"loss", "enter", "d", "y")  # eval/loss and loss; Enter focuses the first, d the second: log Y
    assert snap_compare(make_run_demo().app, terminal_size=LARGE, press=keys)


def test_shared_run_with_every_node(snap_compare):
    """Four writers merged: the system charts hold every node, the slow one named; the console tags lines."""
    assert snap_compare(make_run_demo(nodes=4, slow_node=2).app, terminal_size=LARGE, press=("4",))


def test_shared_run_filtered_to_two_nodes(snap_compare):
    """``--label rank1,rank2``: only those nodes' system metrics and console lines; the header says so."""
    assert snap_compare(make_run_demo(nodes=4, slow_node=2, labels="rank1,rank2").app, terminal_size=LARGE, press=("4",))


def test_shared_run_label_picker(snap_compare):
    assert snap_compare(make_run_demo(nodes=4, slow_node=2).app, terminal_size=LARGE, press=("l", "down", "space"))


def test_run_view_crosshair_readout_on_a_smoothed_zoomed_chart(snap_compare):
    """`d` focuses the first chart, `z` zooms around the newest step, `e` smooths it, `v` and two `,` read it out."""
    keys = ("d", "z", "e", "v", "comma", "comma")
    assert snap_compare(make_run_demo().app, terminal_size=LARGE, press=keys)
