"""Whole-screen snapshots of the workspace view (``leet DIR``) on a made-up folder of runs.

The runs come from ``leet.testing.workspace_demo.make_workspace_demo``: nine runs
(running, finished, presumed crashed, failed) in three W&B groups and none,
one of them a shared run with four writers, two of them overlaid; no files,
no threads, a fixed clock. Grouping and job types have their own snapshots
in test_snapshots_workspace_groups.py. The SVGs live in
``tests/__snapshots__/test_workspace_snapshots/``; after a deliberate change
to the view, regenerate them with
``python3 -m pytest tests/test_workspace_snapshots.py --snapshot-update`` and
look at them before keeping them (see test_snapshots.py for what they depend on).
"""

from __future__ import annotations

from leet.testing.workspace_demo import make_workspace_demo

LARGE = (160, 48)
SMALL = (100, 30)


def test_workspace(snap_compare):
    assert snap_compare(make_workspace_demo().app, terminal_size=LARGE)


def test_workspace_small_terminal(snap_compare):
    assert snap_compare(make_workspace_demo().app, terminal_size=SMALL)


def test_workspace_with_a_run_filter_and_a_third_run_selected(snap_compare):
    keys = ("f", *"lr1e", "enter", "space")  # three runs listed; the cursor is on the first, the failed lr1e-2 run: it joins the overlay
    assert snap_compare(make_workspace_demo().app, terminal_size=LARGE, press=keys)
